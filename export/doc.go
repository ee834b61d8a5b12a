// Package export writes the problem poolsolve encodes for a pool as files
// that other solvers read, so that anyone can solve the same instance with
// another tool and compare: OPB (pseudo-boolean competition format), CPLEX
// LP (for CBC, GLPK, HiGHS), classic WCNF (MaxSAT), DIMACS CNF (the hard
// constraints alone) and JSON (the linear model with every variable's
// meaning). docs/export-formats.md describes each format with an example.
//
// Every format is written from one encode.Encoding: OPB, LP and JSON from
// its linear mirror (encode.Linear), CNF and WCNF from its clause log,
// which holds the clauses of the pseudo-boolean encodings too. Variables
// keep the encoding's numbers in every format, so x17 in an OPB file is
// variable 17 of the CNF and the JSON; comment lines say what each stands
// for (which lane, node, alias). An Instance also decodes a solver's
// answer back into a model.Assignment, for the independent evaluator.
//
// Pins and cordons, which a normal solve assumes, are fixed to true in
// every format. The output is deterministic: the same pool and options
// give the same bytes.
//
// The package does not solve anything beyond a feasibility check
// (Feasibility, on the encoding's own gini solver), does not run external
// solvers, and does not read their output; the cross-check suite (package
// crosscheck) and the bench harness (package benchmarks) do that.
package export
