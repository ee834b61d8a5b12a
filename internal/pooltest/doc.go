// Package pooltest builds model.Pool values for tests of any package: small
// builders that read like the problem (Node, Link, Variant, Alias, Running,
// PinLane ...), a seeded random generator (Random) of small but varied
// pools, and an exhaustive reference optimiser (BruteForce) that checks
// every assignment with the independent evaluator.
//
// Pools built here are valid by construction: budgets come from
// model.ComputeBudget, placements draw on each node's primary domain (plus
// its device domain for device memory), settings start at
// model.DefaultSettings, and every slice is sorted. The package does not
// solve anything beyond brute force, and nothing outside tests should
// import it.
package pooltest
