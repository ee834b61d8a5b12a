// Package benchmarks will hold the seeded fleet generator and the
// `poolsolve bench` harness that measures the planner against the greedy
// baseline and external solvers on fleets from three nodes to hundreds.
//
// It is empty for now: the benchmark issue has not been taken yet. The Go
// benchmarks of the solver itself live next to it, in package solver.
package benchmarks
