// Package catalog builds the planner's model-centric view of a fleet, a
// model.Pool, from the inputs package fleet assembled: LLooM's config,
// fleet profiles, machine profiles, node inventories and status, metrics,
// benchmarks, recipes, and poolsolve's own policy.
//
// It decides what each node offers (platform, archs, accelerators, memory
// domains with their admission budgets), which links exist, which variants
// can serve each model (managed runtimes, unmanaged pool lanes, federated
// targets, and with ConsiderInstalls bundled recipes), their requirements,
// memory (estimate raised to measured RSS) and performance (live metrics,
// else the best matching benchmark), demand per alias, SLOs, pins, cordons
// and the current state. Every derived figure records its source, so
// `poolsolve catalog` can show where it came from. A federated model whose
// runtime the config declares is a name of that runtime's lane, not a
// variant of its own.
//
// It does not read files or talk to gateways (package fleet and the gateway
// client do), and it does not decide anything: placement is the solver's.
package catalog
