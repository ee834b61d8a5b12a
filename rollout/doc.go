// Package rollout orders a plan's changes into steps an operator (or
// `poolsolve apply`) can carry out one after the other on LLooM without
// its admission ever refusing one, keeping aliases covered while lanes
// are replaced.
//
// The state of the fleet between two steps is which lanes run, with which
// residency, and where each alias routes. A step is a lane action (start,
// stop, residency change, or the manual start or stop of a lane the pool
// cannot act on) or a re-route. Memory is counted as LLooM's admission
// counts it: a lane holds its draws from the moment it starts loading
// (LLooM counts a "starting" runtime as loaded), and every memory domain
// obeys the plan's residency rule against the budget LLooM admits
// (AdmitGb). The plan's own headroom is a margin for the steady state; a
// step may borrow it, since LLooM admits up to its budget. A step that
// only frees memory is always allowed, so a fleet that is over a budget
// now can still be brought down to the plan. LLooM counts every loaded
// lane, auto ones too, and makes room for a start by evicting loaded
// lanes that are not keepWarm: by the residency rule only an auto lane
// that happens to be loaded can be evicted so, and it loads again on its
// next request, as auto lanes do.
//
// An alias covered both now and in the plan is uncovered while the lanes
// its route points at are all down: the lanes serving its current model
// until it is re-routed, its planned lane after. A re-route waits until
// its new lane is healthy and is done as soon as it is (doing it later
// never helps), so the order of the lane actions decides everything. The
// cost of an order is the demand-weighted uncovered time: for each such
// alias, its demand times the milliseconds it spends uncovered when the
// steps run one after the other, a start lasting its lane's load time and
// every other step taking no time.
//
// The order is solved, not guessed: with up to ExactLimit lane actions a
// dynamic program over the subsets of actions done (the memory state and
// the uncovered aliases depend only on that subset) finds an order of
// least cost among all orders whose every state is within budget, and the
// rollout's status is "optimal". Among orders of equal cost it takes one
// where sources the plan leaves uncovered lose the least demand-weighted
// time first (a lane the plan drops serves until it must stop): LLooM's
// own admission would rather stop a loaded lane to admit a start than
// refuse it, which a rollout must never leave to LLooM. Past that size, or when no order keeps
// every state within budget (a plan over budget), a greedy order is used
// (start what restores coverage, free memory that costs no coverage,
// start the rest, then the stop losing least), or the stop-everything-
// then-start order when that is cheaper, with status "heuristic".
//
// Steps are then grouped into waves: consecutive steps that do not wait
// for one another (a re-route waits for its lane's start, a stop for the
// re-routes and starts that keep its aliases covered) and whose memory
// holds whatever order they finish in (every start of the wave counted,
// no stop of it) may run in parallel.
//
// Durations come from each lane's load time (the pool's loadTimeMs, or
// the catalog's estimate from its size); LLooM itself gives a start up to
// the runtime's startupTimeoutMs (300000 ms by default) to become healthy.
package rollout
