// Package model holds the planner's view of a pool: nodes with memory
// domains and links, variants that can serve models, aliases with their
// route profiles, demand, SLOs, pins, the current state, and the settings
// that weigh the objective. It also owns the one memory-budget helper
// (LLooM's admission formula plus poolsolve's headroom) and the static
// eligibility rules that say whether a lane may sit on a placement at all
// (Eligible, and Ineligible with every rule broken, each a named Rule).
//
// A Pool is plain data. It is built by package catalog from LLooM's own
// files, read by package encode to build the SAT model, and read by package
// eval to re-check a plan without trusting the encoding. It does not parse
// files, talk to gateways, or solve anything.
//
// Words follow docs/problem.md: a variant is one way to serve a model; a lane
// is a variant at one concrete placement (a node, or a linked clique of
// nodes); residency is always, preferred or auto.
package model
