// Package answer turns the solver's what-if re-plans and why-not
// weighings into answers an operator reads: `poolsolve resilience` (what
// the plan becomes when a node or a link is lost) and `poolsolve
// explain` (why an alias routes where it does, why a runtime is not on a
// node).
//
// Resilience re-plans the pool once per scenario: every node taken away
// alone, then every link, or the node and link sets the caller names
// (ParseScenario reads `--scenario 'a,b'`). All scenarios share one
// encoding of the pool (solver.WhatIf): a scenario is a set of
// assumption literals, and each re-plan starts from the base plan. The
// report says, per scenario, which sources lose coverage, which aliases
// go to the cloud, which SLOs break, how level 4 moves, what the re-plan
// changes against the base plan (as package plan words a diff), the pins
// that give way, and whether every level is proved; worst scenario first.
// It is written as text, as the versioned JSON document
// "poolsolve.resilience/v1" (docs/resilience-json.md), or as the worst
// scenario's plan drawn by plan.WriteSVG.
//
// Explain weighs every option of an alias (each candidate model, through
// each lane that serves it, on each placement) or every placement of a
// runtime on a node, with every reason the plan does not take it
// (eligibility, minimal sets of pins and cordons, minimal sets of the
// plan's own lanes, the SLO, latency) and what the best plan that takes
// it would cost; as text or as "poolsolve.explain/v1" JSON
// (docs/explain-json.md).
//
// The package solves nothing itself and reads no files: the caller builds
// the pool and the base plan. The same pool, plan and options give the
// same bytes on every run: Resilience turns its time limit into a work
// budget (solver.WhatIf.ReplanWork), so a search ends at the same step
// however fast the machine; the clock is only a safety cap, and a
// scenario it cuts is marked (Scenario.ClockCut), with every later one.
package answer
