// Package encode turns a model.Pool into CNF for the gini SAT solver, by
// the rules of docs/objective.md: the hard constraints as clauses, the
// four objective levels as literals and weighted groups, and bound
// encodings ("level i <= k") built on demand. It is the only package that
// imports gini's solver: the Encoding owns it, and packages solver and
// export reach it only through sat.go (TryUnder, TryTicks, Why, Value,
// MaxVar). They, and benchmarks, import gini/z only, for the literal and
// variable types the Encoding speaks.
//
// A call is bounded by time (TryUnder) or by gini's propagation ticks
// (TryTicks), which end it at the same point on every machine. An
// encoding made with a counted clock (Options.Clock) turns TryUnder's
// time into ticks and charges them, and its own variables, to that
// clock, so that a search under a work limit reads the same time on
// every run. An encoding made with Options.NoSAT (the solver's parts with
// memory as linear rows only, which gini never searches) keeps gini out:
// the same variables and clause log, without gini's arrays; its calls
// answer nothing.
//
// It does not search, choose bounds or decide anything: package solver
// drives the solver. It does not check plans either: package eval does,
// independently, and the two must agree (tests enumerate every plan of
// small pools and compare validity and objective with eval.Check).
//
// # Variables
//
// Eligibility runs first, in Go (model.Eligible), so that a variable exists
// only for a placement that could hold. Then:
//
//   - x[v@nodes], one per variant and eligible placement, at most one per
//     variant (pairwise up to 6, else a sequential register), and
//     placed[v] ⇔ some x; fixed variants whose only trouble is a cordoned
//     node also get an x, held off by the cordon's assumption, so that a
//     pin on it and the cordon can be named together;
//   - res[v]=always|preferred|auto, exactly one iff placed; unmanaged and
//     federated variants are always (their res literal is placed itself);
//   - route[s->m@v] per demand source s and candidate model m with a
//     variant v that has a lane (external models have no v), and
//     uncovered[s]: exactly one per source; a route needs its lane placed;
//   - external[s] (level 2) where a local candidate could run, slo[s]
//     (level 3), latency[s->m@v]=ρ (a route with the lane's residency,
//     level 4, only where the residency changes the cost), start[v],
//     stop[v@nodes], change[v@nodes], reroute[s] and keep[v@nodes]=ρ
//     (churn);
//   - pin[label] and cordon[node]: named assumption literals that imply
//     their clauses, assumed in every normal solve, so gini's Why names
//     the pins and cordons behind an infeasibility.
//
// Derived literals are one-sided where a minimising search cannot profit
// from setting them wrongly (a term forced true when its condition holds),
// and exact where a bound would otherwise be unsound (keep, available).
// Values gives every variable its intended value for a plan; tests check
// that those values satisfy every clause exactly when eval finds the plan
// valid, which is the completeness argument in executable form.
//
// # Memory
//
// Per domain, the resident lanes fit the plan budget, and each auto lane
// fits with the always lanes. Both are interval-reduced monotone diagrams
// (Abío, Nieuwenhuis, Oliveras, Rodríguez-Carbonell, JAIR 45, 2012) over
// per-variant groups, with one-sided clauses: the resident sum is one root
// asserted true; the always sum is one diagram whose interval memo serves
// every auto lane's bound B - w (the root is implied by x ∧ auto).
//
// Weights are whole memory units, and exact: a figure is read as the
// decimal it is written as (the shortest that reads back as the same
// float64, as eval reads it), and Scale is 10^k units per GiB, k the most
// decimal places of any draw. Every draw is then a whole number of units,
// so rounding a budget down to whole units changes no fit (a sum of whole
// numbers is at most B exactly when it is at most floor(B)).
//
// The one limit is size: a domain's draws must stay under 2^50 units, so
// that every memory row (and the auto rule's row) stays below 2^53,
// where int64 sums are safe and LP readers that read doubles are exact;
// a budget past the cap is clamped to the domain's total draw. Only when
// the figures are too fine for that does k shrink; draws are then rounded
// up and budgets down, which never overcommits but may refuse an exact
// fit, and Exact is false: the solver then claims no proof from an UNSAT
// answer or the LP, and eval re-checks every plan exactly.
//
// # Objective bounds
//
// Levels 1-3 count literals. LevelBound builds a k-bounded one-directional
// totalizer (inputs imply outputs; ¬out[k] asserts "at most k") whose cap
// is the first k asked plus one; outputs are assumptions, and a level is
// frozen with a unit clause on one.
//
// Level 4 is a sum of at-most-one groups: one per source (a branch per
// route and residency, weighted by round(D·E_ft/unit) plus the re-route
// hysteresis) and one per variant (unplaced, a fresh placement: load time
// plus h, or the current node set with each residency), with each term
// rounded exactly as the contract says, so the encoded value is eval's
// value. L4Bound encodes "level 4 <= k" as a lane-MDD, one layer per
// group (Bofill, Coll, Suy, Villaret, AI Review 2020), interval-reduced,
// one-sided clauses: (¬node ∨ ¬branch ∨ child(K-w)) per branch and
// (¬node ∨ branches… ∨ child(K-else)) for the rest.
//
// Why this encoding, measured with BenchmarkL4Bound on pooltest.Random
// pools (one exact bound at half the largest sum):
//
//	size   lane-MDD nodes/clauses   term-BDD nodes/clauses   GTE outputs/clauses
//	3x10     4,075 /    26,658        54,155 /   106,734      18,124 / 11.8 M
//	8x20    39,083 /   165,351       233,601 /   461,615      61,733 /  119 M
//	24x60  315,841 / 2,538,921     > 2 M (capped) / > 4 M    265,113 /  999 M
//
// The groups' at-most-one structure keeps the MDD 4-13x smaller than a
// term-BDD over the linear mirror's terms; a generalized totalizer (counted,
// not built) explodes with the many distinct sums of large, varied
// latency weights; a unary totalizer would need one input per unit (sums
// reach 30,000 units). So level 4 is a lane-MDD.
//
// Each diagram is per resolution and persistent: its interval memo is
// shared by every bound asked of it, so a new k adds only the nodes it
// does not share (rebuilding per k cost about 0.3 s a bound at 8x20). Each
// batch of new clauses gets its own activation literal (ActivateWith), and
// ReleaseBound deactivates them all when the search changes resolution or
// moves on, so old diagrams leave the solver, learnt clauses included. A
// batch per bound, rather than one literal per diagram, is forced by gini:
// a guarded clause must not be true or empty at level 0 (gini panics), and
// only opening a guard brings the solver back to level 0 to check that.
//
// When a diagram would pass a node cap (or the Deadline), L4Bound fails
// and the caller coarsens the resolution delta: weights rounded up with
// the bound rounded down give a restriction (a SAT answer is a real
// improvement), weights rounded down a relaxation (an UNSAT answer is a
// real proof) — varying resolution after Demirović and Stuckey (CP 2019).
// GroupBound is a cheap level-4 lower bound from the groups' minima once
// levels 1-2 are frozen. L4BoundFixed builds the exact diagram over the
// groups that a set of fixed literals leaves free (a group with a branch
// fixed true is a constant), for the solver's reduced-cost fixings, and
// SumBound any caller's sum of groups (their knapsack); both are released
// with the other diagrams. Route.Split names the latency literal per
// residency, for the solver's disaggregated relaxation rows.
//
// # Linear mirror and clause log
//
// Linear keeps every hard constraint as a named row over the same 0/1
// variables (clauses as Σ lits >= 1, cardinalities, memory rows in units,
// the auto rule as one row per domain over the always draws and a ladder
// of the largest auto draw) and the four levels as weighted sums plus
// offsets, for the LP relaxation and for the OPB/LP/WCNF/JSON exporters.
// Bound encodings are not mirrored. ClauseLog keeps every clause as
// written, with its family tag and guard (gini's own Write prints its
// simplified database, which loses both).
//
// # Names
//
// Inside the package, m and n are literals, v and vi variants, li lanes,
// si sources, e the encoding, and Res is indexed like model.Residencies.
// Determinism: the encoding depends only on the pool (no map order
// reaches a variable or clause), so the same pool gives the same CNF.
package encode
