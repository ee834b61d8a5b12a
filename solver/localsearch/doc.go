// Package localsearch plans a pool by heuristics: Greedy, LLooM's
// original first-fit planner, and Improve, first-improvement local search
// with ejections, demotions, clearings and seeded kicks (iterated local
// search).
// Package solver starts from them (the warm start), polishes its level-4
// incumbents with them, and returns them alone when Options.Solver is
// solver.Greedy.
//
// A descent visits the variants whose sources cost most first, so that
// one cut short by its deadline has spent it where it gains most.
//
// The search cost is lexicographic: broken hard constraints first, then
// the four objective levels, each term rounded as package eval rounds it
// (eval.Units, model's latency rule), so a move the search calls better
// is better for eval. It proves nothing and keeps no bound: what it
// returns is checked by eval (Improve never returns a plan eval rates
// worse than its start), and the exact solver decides how good it is.
//
// It does not encode, call a SAT solver or read files. Randomness comes
// from PCG generators seeded by the caller: the same pool, plan and seed
// give the same result unless the deadline cuts the search short;
// ImproveOn's counted clock, charged for each evaluation of a move, ends
// it at the same move on every machine.
package localsearch
