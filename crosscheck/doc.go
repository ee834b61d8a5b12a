// Package crosscheck is a test suite, and holds no code: `go test
// ./crosscheck/` proves poolsolve's solver right against external solvers
// on the example fleets and on seeded random pools.
//
// For every instance it solves with poolsolve, then, level by level and
// only for levels poolsolve reports optimal, exports the level's objective
// with the earlier levels fixed at poolsolve's values (package export),
// and solves that with CBC (LP), z3, minisat+ and clasp (OPB), and clasp
// on the WCNF. Each external optimum must equal poolsolve's value; each
// external answer, decoded into a plan, must pass the independent
// evaluator (package eval) with poolsolve's vector on the levels fixed and
// minimised. It also feeds poolsolve's own plan, as JSON, to the plan
// reader and the evaluator (`poolsolve check` for the example fleets), and
// solves the flattened objective (CBC, clasp, and HiGHS when its npm
// package is in bin/npm) and the hard-constraint CNF (clasp) once each.
//
// clasp is run, and minisat+'s and clasp's output read, by
// benchmarks.RunClasp and benchmarks.ParseCompetition, which `poolsolve
// bench` uses too.
//
// A solver that is not installed is skipped with a message; with CI=true
// a missing solver fails the suite, because .ci/run installs them all
// (coinor-cbc, z3, minisat+, clasp). HiGHS is optional everywhere.
package crosscheck
