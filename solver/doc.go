// Package solver plans a pool: Solve returns a complete model.Assignment,
// its lexicographic objective, and per level how much of it is proved
// (optimal, bounded with a lower bound, or heuristic). It also explains,
// in operator terms, pins that cannot hold together and sources left
// uncovered.
//
// It does not parse files, render plans or act on a fleet; it reads a
// model.Pool and trusts nothing it produces until package eval, the
// independent evaluator, has checked it. A plan eval rejects, or whose
// objective differs from the encoding's own, is a bug and an error
// (ErrMismatch), never a result.
//
// # Rooms
//
// The driver is this package: one level loop (level.go's solve), run
// by every search: each part of a pool, each what-if scenario (on an
// encoding the scenarios share, with levels frozen by assumption), and
// so each explanation that weighs the best plan taking an option. A
// level asks a list of steps in turn for bounds and plans (giniSteps:
// presolve and backbone with the PB workers, the LP with its cuts,
// branch and cut, the workers alone, gini under the LP's reduced-cost
// fixings, gini's search (gini.go), then the workers' last answers and
// local search's polish; linearSteps for parts with linear memory:
// presolve, backbone, the PB workers, local search mending a worker's
// plan on the later levels, the LP beside them, their last answers;
// local search alone on a level with no time for its workers),
// each under its share of the time from one table (budget.go, with its
// reason). The math the
// steps ask for bounds lives below the driver: package mip (relaxation,
// presolve, cuts, weak-duality and Lagrangian bounds, branch and cut),
// package lp (the sparse dual simplex), package pb (the
// pseudo-boolean worker and its processes), package localsearch (greedy
// and local search). A new bounding technique has its math in mip (or a
// room of its own beside it), its step in the driver's list with its
// share in budget.go, and its name in BoundSource.
//
// # Pipeline
//
//  1. Warm start: package localsearch's Greedy and Improve (10 stale
//     kicks, not 60: it is only the first incumbent) within 5% of the
//     time, or on the wall clock until the parts are encoded beside
//     it, when that is later; a plan still invalid then (typically a pin) gets more rounds
//     of Improve, up to half the time,
//     while each round repairs something. With Options.Solver Greedy
//     that plan is the result (levels heuristic, or optimal where the
//     trivial bound meets them).
//  2. Parts: the pool splits into the connected components of its
//     variable interaction graph (a variant joins the nodes it may run on,
//     a source the variants that may serve it, a route pin its members'
//     variants); every part first gets a first plan (or is found
//     infeasible), then each is searched apart with a time share by size,
//     and the plans merge. The lexicographic optimum of a sum of independent parts
//     is the sum of the parts' optima, level by level.
//  3. Per part: package encode builds the CNF; interchangeable nodes, and
//     alike GPUs of one node where a lane may take any of them, get
//     lex-leader symmetry breaking under one variable order (symmetry.go);
//     the warm start, made
//     canonical for the symmetry constraints, seeds gini's phases with one
//     Try under its literals (gini has no phase API).
//  4. Per level, in order: a lower bound (the level's constant part, the
//     level-4 group bound, and an LP relaxation of the linear mirror when
//     small), a cheap probe at it, then model-improving linear search
//     under assumptions (Try with a growing cap up to 2 s), interleaved
//     with SAT-based LNS (4 random nodes freed, every other lane held at
//     the incumbent, Try 200 ms). Every model is decoded before any clause
//     is added (adding one wipes it) and offered to the evaluator. The
//     level is then frozen at its value, proved or not (a unit clause; an
//     assumption on a shared encoding).
//     Level 4 runs the pseudo-boolean portfolio and the strengthened LP
//     first (below), then the gini search: its diagram starts exact and
//     coarsens its resolution when it passes 60,000 nodes: a rounded-up
//     bound finds real improvements, a rounded-down one gives real
//     proofs, and the resolution halves when they disagree.
//  5. Only Try(time left) is ever called, never Solve: after a Try that
//     timed out, gini's Solve inherits the expired deadline (the stale
//     deadline trap). The deadline (Options.TimeLimit,
//     default 5 s, or the context's) bounds every call, LP included; the
//     level time split is 15/25/15/45%, and a level that proves early
//     leaves its time to the next. A cancelled context (plan's first
//     Ctrl-C) stops the search as the deadline would: local search, the
//     LP, the PB workers and the level loops end, parts not yet encoded
//     keep their warm plan, and a gini Try under way ends with its cap
//     (at most 2 s); each level keeps the status its bound gives.
//
// # Bounds and status
//
// Optimal means an UNSAT answer one below the value, or a lower bound
// equal to it. A level frozen while only bounded makes the later levels'
// "optimal" mean optimal given that freeze. A freeze caps a level, it
// does not fix it: a later level's plan may be better there, and the
// level then takes its value (its bound, proved under the earlier
// freezes, still holds). BoundSource is "sat-unsat", "lp" (the LP with
// its cuts), "branch-and-cut" (the search from it ended), "lagrangian"
// (the subgradient bound of models too large for the simplex), "pb" (a
// PB worker's search ended), "reduced-cost" (gini's UNSAT under the LP's
// reduced-cost fixings), "relaxation" (level 4's group bound), "presolve"
// (what a linear part's presolve forced, the rest at its cheapest), "trivial",
// or for merged parts the distinct non-trivial sources joined with "+". Where memory figures were too fine for the
// encoding to count exactly (encode's Exact false), no UNSAT answer, LP
// or PB worker proves anything, since the rounding may refuse plans that
// fit: such levels are bounded by the trivial and group bounds only (PB
// models still count as plans, checked by eval), and an UNSAT first plan
// is ErrNoPlan, not infeasibility.
//
// Result.Stop is the run's reason, read off the result rather than kept
// as the search goes, so that every path reports one: infeasible, proved
// (every level optimal, even when an interrupt came after), interrupted
// (the context was cancelled), heuristic (the greedy solver), else
// deadline (the limit, or a level's share of it, ran out).
//
// # Level 4: the cut loop, branch and cut, and the PB portfolio
//
// Package mip presolves level i's linear model (mip.Presolve) (the encoding's mirror with
// the assumptions true and the earlier levels at their frozen values):
// bounds propagation of each row, Savelsbergh coefficient tightening of
// the auto rule's rows and the memory rows, and route ∧ residency rows that
// stop a fractional route from paying nothing. Every step keeps every
// 0/1 point of the rows, so every valid plan's intended values stay
// feasible.
//
// mip.CutLoop then runs the root of a branch and cut. The LP is solved by
// the sparse dual simplex of package lp; each round separates, at its
// vertex, lifted cover cuts of the knapsack rows (Balas 1975), probing
// cuts (mip's prober: each column set to 1 and to 0 and the rows
// propagated; implications, fixings and rows lifted by the slack a
// setting leaves, over the rows and the short cuts found so far), and
// Gomory mixed-integer cuts of the fractional basic columns
// (mip's gmi), then re-solves from the same basis, dropping the cuts
// left slack. Gomory cuts are computed from rounded multipliers in exact
// 128-bit integer arithmetic, so every cut holds for every integer point
// whatever the simplex's floating-point error. The loop ends when two
// rounds raise the bound by less than half a unit or less than a
// hundredth of the loop's rise so far, when no cut is found,
// after 60 rounds, or at its deadline (three quarters of the level's time, 8 s at
// most). On 64x250 it lifts level 4's bound from 89,720 (the LP) to the
// optimum 93,870 in four rounds; CBC's root needs Gomory and knapsack
// cuts to do the same.
//
// The bound itself comes from the final multipliers by weak duality,
// recomputed from the integer data with a rounding margin (mip.WeakBound), so
// it is valid even when the simplex stops early. The same multipliers
// give reduced costs d: any plan better than the cutoff U keeps each
// column whose |d_j| exceeds U − L at its cheap bound, and meets the
// knapsack Σ_j floor(|d_j|·K / (U − L))·[x_j moved] <= K, K = 256.
//
// mip.BranchCut searches on from the root: depth first, branching on the
// column whose pseudo-costs (the mean rise of the node bound per unit of
// change, learnt from the children solved so far) promise most, each
// node re-solved by the dual simplex from the last basis, pruned only by the weak-
// duality bound over the node's box (or that bound pushed along the dual
// ray of an infeasible node); an integral vertex is decoded into a plan
// and offered to the evaluator. A node that branches fixes, for its
// subtree, each column whose reduced cost alone lifts its bound to the
// incumbent. Each new incumbent the tree sees (a vertex, a worker's plan)
// is polished by local search before the next node, so the tree prunes
// against the better plan: on 64x250 seed 85101 that took it from
// 134,347 to the optimum 134,317, and the tree, 355 nodes with 10,212
// fixings, proved it; with the polish alone or neither, 1,000-1,230
// nodes had not. An exhausted tree proves the incumbent
// ("branch-and-cut").
//
// The PB portfolio (portfolio.go, over package pb) runs gophersat, whose CDCL propagates weight constraints
// natively, on the presolved model below the incumbent: one worker with
// clause learning and, where a third core is free for it beside the LP
// (pbSecondWorker), one with cutting planes. On parts too large to
// start at once they run from the level's start, beside the LP; the LP's
// reduced-cost fixings and knapsack restart the clause-learning worker,
// as does every better incumbent. Every streamed model is decoded,
// checked by eval and offered like a SAT model; a clause-learning
// worker's search ending proves its last model optimal (or its cutoff +
// 1). A cutting-planes worker's end proves nothing: on a backbone job of
// 256x1000 (pb's testdata) gophersat's cutting planes ended with no model
// in 0.4 s where clause learning found one that meets every row; a
// clause-learning worker then starts in its place when none runs. A plan
// below a proved value is ErrMismatch. gophersat cannot be interrupted, so a
// worker is this executable re-run with POOLSOLVE_PB_WORKER=1 and killed
// at the deadline; on Linux the kernel kills it too when poolsolve ends
// in any other way (Pdeathsig). The executable answers as a worker only
// when its main (or a test binary's TestMain) calls pb.ServeIfWorker first;
// a program that imports this package without calling it plans without
// PB workers, and Stats.Workers says so. One worker process is started ahead of its job
// (pb.Spares): when the parts are encoded, if one is large enough for
// workers, and at the end of each of levels 1-3; it waits for its job on
// stdin, so its exec and runtime start overlap the solver's own work.
// Jobs travel flat and are checked on arrival (pb.ReadJob). gophersat
// v1.4.0 keeps a weight constraint's degree in 30 bits and silently cuts
// a larger one down, answering models that break the row (memory in
// 10^-7 GiB on a ~100 GiB domain is past it): a job with a row whose
// weights sum past 2^30 starts no worker (pb.Job's width check), and gini and
// the LP prove without one. Where the LP
// could not be solved (rounded memory), gini's diagrams search as in
// levels 1-3.
//
// Past fitsSparse's size (256x1000's level 4 is 53,000 rows and 765,000
// nonzeros), the sparse LP bounds level 4 alone when it has 1.5 s or
// more (lgSkipLeft); with less, mip.Lagrangian bounds it first: disjoint
// Σ x <= 1 and Σ x = 1 rows stay as groups of the subproblem, every other row is
// priced by a multiplier, and a subgradient ascent with Polyak steps
// toward the incumbent raises the bound. It starts from a dual ascent
// over the implication rows (a route needs a latency column, that column
// its residency). Any multipliers give a valid bound, and their reduced
// costs fix columns as the LP's do. The ascent is the fallback and has
// at most 0.5 s; then the sparse LP and its cut loop get what is left of
// 7/8 of the level (its duals bound the level wherever it
// stops), and the better bound is kept. When the LP runs alone and fails
// early, the ascent runs after it. The LP starts from the model
// alone, so it takes the same path in every run, and without its short
// implications (mip.LazyRows, on models of 25,000 rows and more): the
// ones its vertex violates join it solve after solve, and then with
// each round's cuts. On 256x1000 seed 42 (112,200 rows) the LP so
// reached 323,252 in 1.0 s, where the whole model's first solve took over
// a minute to its optimum, 323,321. Its rounds there
// separate half as many cuts, and Gomory cuts of at most 50 nonzeros
// until the loop stalls (largeCaps). At level 4 the polish of a
// worker's level-3 plan runs on a goroutine beside the LP (besideLP);
// on two cores one PB worker, with cutting planes, starts when the
// polish ends, below the level-3 plan, and searches beside the LP (the
// clause-learning one found no plan there and slowed each round), and
// both start on its fixings when it ends. The simplex keeps such sizes
// in reach with hypersparse triangular solves, a BTRAN that visits only
// the etas it reaches, and a refactor interval that grows with the rows
// (package lp). The polish before each level of such a part has at most
// a second (linearPolishMax): at 30 s the three had taken 8.5 s before
// level 4's LP could start. At levels 2 and 3 one worker starts first
// and the polish runs beside it on a goroutine, cancelled when the
// worker proves the level (polishBeside). Each level's presolved model
// is made from the last level's by the row that freezes it (nextLevel),
// not built afresh.
//
// Before level 4's LP, of any size, the earlier levels' backbone is
// fixed (backbone.go): the terms of levels 1-3 that every plan at their
// frozen values sets as the incumbent does, found by PB searches for a
// point of the model that flips at least one of them (a point drops the
// terms it flips; none proves the rest), with at most half the time
// left and 3.5 s. Level 4's model holds those levels by one sum row each,
// which the LP spreads over the terms dearest at level 4; on
// 256x1000-tight it left a source uncovered that no plan at level 1's
// optimum leaves, and fixing 935 of 941 terms took its root from
// 242,244 to 441,598 and its first cut round to 1,105,246 (optimum
// 1,130,205).
//
// In the last part of level 4, while the workers run, local search
// (package localsearch) polishes the incumbent in rounds.
//
// The package reads no environment. Options.Trace gets the search's
// timeline, Options.DumpRelax writes each presolved model as CPLEX LP
// and Options.DumpPB each PB worker's job (mip.Relaxation.DumpLP, dumpJob;
// BenchmarkDumpedPBJob times a dumped job's search alone), and
// Options.Cores plans the PB workers as if that many cores were free
// (for measuring the portfolio on another machine). The CLI sets them
// from POOLSOLVE_TRACE=1, POOLSOLVE_DUMP_RELAX, POOLSOLVE_DUMP_PB and
// POOLSOLVE_PB_CORES.
//
// # Explanations
//
// Infeasible pins: Solve assumes every pin and cordon literal, and on
// UNSAT shrinks gini's Why by deletion to a minimal set (dropping any one
// member makes the rest satisfiable), worded like "pin X needs 40 GiB;
// spark-node-02 unified:0 budget 115.6 GiB - headroom 4 = 111.6 GiB holds
// 108 GiB of always-resident lanes (pins …)". A pin on a fixed runtime
// that names other nodes says the runtime is fixed, and names a recipe
// that could go there.
//
// Uncovered sources, and aliases served by a later member while an
// earlier one cannot run at all, are explained option by option
// (whynot.go): each candidate model through each lane on each placement,
// with every eligibility rule it breaks (model.Ineligible), then every
// disjoint minimal set of pins and cordons that rules it out (Why shrunk
// by deletion, removed, asked again), then, per residency, minimal sets
// of the plan's own lanes it does not fit next to, worded with the full
// domain's figures. The search stops min(limit/10, 500 ms) before the
// limit, and explaining may use that time; when the encoding does not
// fit in that, only the eligibility reasons are given, without SAT
// checks. Where they are known to be given so (a part encoded with
// linear memory or not encoded in time), the search keeps all but
// min(limit/50, 100 ms) of that time (staticExplanations).
//
// # What if, and why not
//
// WhatIf (whatif.go) encodes a pool once for questions about a plan of
// it. Replan re-plans under a Scenario — nodes or links taken away, lanes
// or routes forced — as assumption literals on that encoding: the base
// plan repaired by local search is the warm start, pins whose lane can
// run nowhere give way, and the levels are searched under assumptions
// (bounds assumed, never frozen), each proved by an UNSAT answer one
// below its value; level 4 uses the exact diagram below its node cap,
// else local search, and is bounded by the LP with its cuts on the
// scenario's relaxation (its assumptions true, the earlier levels at most
// their values; 250 ms at most), which often meets the incumbent. WhyRoute and
// WhyLane weigh every option of an alias, or every placement of a runtime
// on a node, as above, and price each possible one with a forced Replan.
// Package answer turns them into `poolsolve resilience` and `poolsolve
// explain`.
//
// # Big pools
//
// The parts are encoded on a goroutine of their own (ahead.go) while
// local search improves the greedy plan, and that search goes on until
// they are encoded (on 1024x4000, 3-11 s past its share). Not during the
// greedy pass itself, which the encoding slowed by 60%. A solve whose
// answer will be its warm plan encodes nothing and searches it as the
// greedy solver does; one that finds so only after the warm start (less
// time left than it took) gives the time left to local search from the
// warm plan (warmToDeadline). Parts are then searched smallest first: a
// small part proves in milliseconds and leaves the rest to the large
// one.
//
// encode.New stops at its Options.Deadline (encode.ErrDeadline). A part
// whose encoding does not finish in time (with a valid warm plan, a
// little before the deadline: min(limit/10, 500 ms)) keeps its warm plan,
// every level heuristic with the trivial bound 0.
//
// # Determinism
//
// The same pool and options give the same plan, byte for byte, when every
// level is proved: the plan is then re-derived with the four optima fixed
// (canonicalize), a function of the pool alone. Which re-solve runs is
// chosen by level 4's root LP bound, itself a function of the pool, and
// never by which prover finished first (that race once gave 24x60-tight
// two plans, 7 runs in 10 one and 3 the other): where the root is
// farther than 10% from the optimum and the model small (under 5,000
// nonzeros), the first model of the canonical PB job on the presolved
// model without cuts or reduced costs, which the worker that proved
// level 4 often ran already; else the first plan at the optimum of a
// depth-first branch and cut from the root as the cut loop stood at its
// first solve that reached the optimum, or at its own end when none did
// (the loop the proof stopped is run on to that point; one that ran past
// it kept a copy of itself at each rise of its bound). Each falls back on the
// other when it finds nothing in time, and then runs may differ; so they
// may when a level is only bounded, where the clock stopped the search
// decides the plan. A proved level's BoundSource names the prover that
// finished first, and may differ between runs where two finish close
// together; the plan and every value and bound do not. Randomness (LNS
// neighbourhoods, the warm start's ties, the LP's cost perturbation)
// comes from PCG generators with fixed seeds.
//
// Under a work limit (Options.WorkLimit, --work-limit) every plan is the
// same on every run, proved or not: the run reads a counted clock
// (internal/clock) instead of the wall clock, so every deadline and
// share above is read in work. gini's calls become budgets of its ticks
// (encode.TryUnder), the LP charges each dual simplex iteration, the
// Lagrangian each of its steps, local search each evaluation of a move,
// and the encoding each variable it adds; what is not charged (presolve,
// checks) still ends on its own. The search stays on one goroutine:
// parts are encoded before it, no PB worker process starts, and only
// small canonical PB jobs run, in-process and to their end. The unit
// (WorkUnit) is about a millisecond of one core of a 2-vCPU machine: on
// the machine of docs/benchmarks.md a 24-node pool at 40 units took
// 54 ms, a 64-node pool at 1,000 units 1.1 s.
//
// What-if re-plans under a work budget (WhatIf.ReplanWork) read a
// counted clock of their own, charged as a work limit's plan is, plus
// each scenario's fixed costs (work.go): each gini call has a budget of
// propagation ticks (20,000 propagations each; encode's TryTicks). gini
// is deterministic given the same calls, so a series of re-plans on one
// encoding is the same on every run until the deadline, a safety cap,
// cuts the search short (Replan.ClockCut).
//
// # Measured (BenchmarkSolve, pooltest.Random(1, nodes, variants), 5 s limit, 2 vCPUs, idle)
//
//	size   vars  clauses  levels proved  time
//	3x10    241      457  4 of 4          97 ms
//	8x20    594    1,126  4 of 4          45 ms
//	24x60  1284    2,593  4 of 4         178 ms
//
// Clauses are the hard constraints and the diagrams built; before the
// sparse LP, its cuts and branch and cut (2026-12-01) these pools ended
// at 5 s with level 4 bounded (gaps of 55% and 70% on 8x20 and 24x60).
// The bench suite's figures against CBC, HiGHS and clasp are in
// docs/benchmarks.md.
package solver
