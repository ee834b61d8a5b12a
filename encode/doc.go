// Package encode turns a model.Pool into CNF for the gini SAT solver.
package encode
