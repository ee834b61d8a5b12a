// Package benchmarks measures the planner: a seeded generator of fleet
// bundles from three nodes to hundreds, the committed fixture suite, and
// the harness behind `poolsolve bench` that runs the exact solver, the
// greedy baseline and, when installed, CBC and HiGHS (on the exported LP)
// and clasp (on the exported OPB) on the same instance, and reports
// values, proofs, times and a verdict per instance (Judge) as text,
// markdown or JSON, a chart of time against size, and a trace of the
// exact solver's level-4 incumbent and bound over time.
//
// Generate writes ordinary fleet bundles (docs/fleet-bundle.md): LLooM's
// own documents, with placeholder endpoints, so `poolsolve plan --fleet`
// reads them like any fleet. The harness reads instances through the same
// fleet and catalog packages as the CLI and checks every plan with the
// independent evaluator; it does not solve anything itself, and it never
// edits the pool it is given.
//
// Go benchmarks BenchmarkPlan/<nodes>x<variants> run the exact solver on
// the same sizes; docs/benchmarks.md records the numbers.
package benchmarks
