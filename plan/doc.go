// Package plan turns a solve's result into a plan an operator can read
// and a program can diff: Build makes the plan as data, WriteText renders
// it like `terraform plan`, WriteJSON writes the versioned
// "poolsolve.plan/v1" document described in docs/plan-json.md, and
// WriteSVG draws it as a picture (docs/plan-svg.md).
//
// A Plan says where each lane runs, with its residency and the memory it
// draws per domain, and how full each domain gets against its admission
// and plan budgets; what serves each demand source first, through which
// route profile, with which fallbacks, expected latency and SLO status;
// each objective level's value, status and bound; and the typed diff from
// the current state (start, stop, move, residency, re-route, and manual
// stop or start for lanes the pool cannot act on), with a reason per
// change where the plan can tell one: an explanation from the solver, a
// pin, an ineligible placement, a domain that is full, or the objective
// level that a change wins.
//
// It does not solve, check or change anything: it reads a model.Pool and a
// solver.Result (only the Result, Level and Explanation types, copied into
// the plan's own Level and Explanation, which are the JSON schema) and
// trusts the result only as far as rendering needs, leaving out what the
// pool does not know. It is a dry run by construction. It never prints endpoints or
// keys: plans hold ids, numbers and reasons, and free text that looks like
// a URL or an API key is blanked.
package plan
