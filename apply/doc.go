// Package apply carries out a saved plan's rollout on the live fleet,
// through each node's own LLooM admin API:
//
//	GET  /gateway/runtimes/plan?runtime=ID  LLooM's admission plan, asked
//	                                        before every start
//	POST /gateway/runtimes/ID/start         answers once the runtime is healthy
//	POST /gateway/runtimes/ID/stop
//	GET  /gateway/node                      each step verified by polling
//	GET  /gateway/routing                   a re-route verified on each node
//
// and the config file the gateways read (routes and keepWarm), written
// atomically with the previous version kept beside it: LLooM reloads
// config.json when it changes.
//
// The fleet between two steps is a State: the lanes that run, on which
// nodes, the residency of lanes a step changes, and the route of aliases
// a step re-routes. Expected gives the state after each prefix of the
// rollout; Match finds which one the live fleet is in, so an apply that
// stopped part way resumes after the steps already done, and a fleet in
// none of them is a stale plan.
//
// A start is made only when LLooM's admission plan for it starts that
// runtime alone: LLooM would rather evict a loaded lane than refuse, and
// an eviction the rollout did not order is a disagreement, so the step
// fails instead. Steps run one after the other, waves included; the
// rollout proved every state between two steps valid, and a failed step
// leaves the fleet in the state before it (a failed start is stopped
// again).
package apply
