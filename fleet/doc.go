// Package fleet reads everything poolsolve knows about one fleet into
// Inputs: LLooM's config.json (with poolsolve's "pool" block), fleet
// profiles, poolsolve's own policy (pool.toml, docs/policy.md), per-node
// machine profiles, inventories and /gateway/node statuses, a metrics
// snapshot or history file, benchmark suites and recipes.
//
// The same fleet can be given as one file, a fleet bundle
// (docs/fleet-bundle.md, LoadBundle), or as separate files (Load). Both
// give the same Inputs, and Inputs.Bundle writes a bundle back,
// deterministically and optionally with secrets redacted. Errors name the
// file and the JSON path (or the TOML key) at fault; Inputs.Validate
// reports every cross-reference problem at once.
//
// LLooM's documents are parsed by package lloom and inventories by package
// inventory; fleet adds the bundle envelope, the policy, the config pool
// block and the checks that span documents. It does not interpret the
// documents — which lanes exist, what runs now, demand, budgets — that is
// package catalog's work, and it never talks to a gateway.
package fleet
