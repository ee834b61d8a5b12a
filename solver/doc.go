// Package solver plans a pool: Solve returns a model.Assignment with its
// lexicographic objective and, per level, how much of it is proved.
package solver
