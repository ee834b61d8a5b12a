package solver

import (
	"time"

	"github.com/poolsolve/poolsolve/internal/clock"
)

// A run's time is handed out from one table. A budget owns a deadline
// and the clock it is read on (the wall clock, or counted work under a
// work limit); each technique asks it for its share (budget.until), and
// the run asks for the parts of its limit that come before and after the
// search (run.ofLimit). Each share is written once, in shares, with its
// reason in terms of the technique; no code computes a fraction of the
// time left itself.

// share names one technique's claim on the time left.
type share int

const (
	shareBackbone     share = iota // fixing the LP's backbone before the search
	shareWorkersFirst              // the PB workers alone, before gini's diagrams
	shareFixedSearch               // gini under the LP's reduced-cost fixings
	shareGini                      // gini's model-improving search at level 4
	shareBranchAndCut              // branch and cut over the cut loop's LP
	shareWorkersLast               // the workers' last answers, before the polish
	sharePolishLast                // local search on the level's final incumbent
	shareFixingBuild               // encoding the fixings' knapsack diagram
	shareMend                      // local search mending later levels of a worker's plan
	shareFinalQuarter              // what runs before the final polish's last quarter
	shareStrongLP                  // the strengthened LP of a level
	shareSparseLP                  // the sparse cut loop, past the dense LP's size
	shareLagrangian                // the Lagrangian ascent before the sparse LP
	shareScenarioWarm              // a what-if scenario's repaired base plan
	shareCanonicalPB               // the canonical PB job, when branch and cut is the fallback

	// Parts of the whole limit, from the run's start (run.ofLimit).
	shareWarm       // the warm start's local search
	shareWarmRepair // more local search for a warm plan that breaks a rule
	shareExplain    // explanations, past the search's deadline
	shareMerge      // merging and checking parts, when explanations are static
)

// shareRule is part of the time left (or of the whole limit, for the
// run's own shares), capped at max when max > 0; with leave set, the
// technique runs until that part is left instead. A share of the limit
// is at least floor, when that is at most floorPart of the limit.
type shareRule struct {
	part      float64
	leave     bool
	max       time.Duration
	floor     time.Duration
	floorPart float64
	why       string
}

var shares = [...]shareRule{
	shareBackbone: {part: 1.0 / 2, max: backboneMaxTime,
		why: "the backbone is proved by its last call alone, an UNSAT answer: a cap that cuts that call short wastes the calls before it; the other half of the level is the LP's, which the fixings strengthen"},
	shareWorkersFirst: {part: 2.0 / 5,
		why: "the workers hold both cores while they run alone; gini's diagrams need the rest of the level once they are built"},
	shareFixedSearch: {part: 1.0 / 3,
		why: "a search under fixings that only hold below the incumbent proves the gap or fails fast; a third leaves the open search its time"},
	shareGini: {part: 1.0 / 2,
		why: "gini improves the incumbent in the first half; the second belongs to the bound's side (workers, branch and cut) and the polish"},
	shareBranchAndCut: {part: 3.0 / 4,
		why: "branch and cut proves or stops; the last quarter is the final polish's, which must run even when the tree is not exhausted"},
	shareWorkersLast: {part: 1.0 / 3, leave: true,
		why: "where gini searched, the workers' answers come in until a third is left for local search on their incumbent"},
	sharePolishLast: {part: 1.0 / 8, leave: true,
		why: "the polish stops with an eighth left, for the workers' last answers and the level's freeze"},
	shareFixingBuild: {part: 1.0 / 3,
		why: "building the fixings' diagram is worth a third at most: it only speeds up a search that must still run"},
	shareMend: {part: 1.0 / 5, max: linearPolishMax,
		why: "mending a worker's plan on later levels is local search from a good start: short rounds suffice, and the level's own search comes first"},
	shareFinalQuarter: {part: 1.0 / 4, leave: true,
		why: "the final polish takes the level's last quarter; what runs beside it stops there"},
	shareStrongLP: {part: 3.0 / 4, max: strongMaxTime,
		why: "the LP's bound and fixings serve the search that follows it in the same level, which needs the last quarter"},
	shareSparseLP: {part: 7.0 / 8,
		why: "on models past the dense LP's size the sparse cut loop is the only bound; an eighth stays for turning its multipliers into fixings"},
	shareLagrangian: {part: 1.0 / 4, max: lgMaxTime,
		why: "the ascent gives a first valid bound fast and stalls soon; the sparse LP that follows is stronger given time"},
	shareScenarioWarm: {part: 1.0 / 10,
		why: "repairing the base plan is a first incumbent for the scenario, not its search"},
	shareCanonicalPB: {part: 1.0 / 2,
		why: "far from the LP's root the PB job's first model is the likely re-solve; branch and cut, its fallback, needs the other half"},
	shareWarm: {part: 1.0 / 20, floor: 500 * time.Millisecond, floorPart: 1.0 / 4,
		why: "the warm plan is the exact search's first incumbent, not its search, and the greedy solver's answer; on a short limit local search is what improves it most (256x1000 at 2 s: 27 uncovered sources after half a second of it, 41 after a twentieth of the limit), and on a small pool it ends sooner, when its kicks go stale"},
	shareWarmRepair: {part: 1.0 / 2,
		why: "a valid plan in hand lets every later phase stop at the deadline; past half the limit the exact search, not local search, must explain the pins that cannot hold"},
	shareExplain: {part: 1.0 / 10, max: 500 * time.Millisecond,
		why: "explaining the uncovered sources encodes the whole pool again and asks SAT per source: gini overshoots a call by up to a tick, and past this the explanations fall back to the static reasons"},
	shareMerge: {part: 1.0 / 50, max: 100 * time.Millisecond,
		why: "static explanations need no SAT: merging and checking the parts is what is left (256x1000 at 10 s: 30-50 ms)"},
}

// levelShare is each level's share of the time left when it starts
// (L1 50%, then L2 29%, L3 25% and L4 all of what is left); a level that
// proves early leaves its time to the next. Level 1 gets half, as with
// linear memory (linearShare): one uncovered source outweighs every
// later level. At 15%, 64x250-tight seed 85101 at 10 s ended level 1's
// gini search at 6 uncovered sources in 3 runs of 10, where 5 is the
// optimum, and spent the 8 s left on level 4; at half it reached 5 in 6
// of 6. Proof times on the suite and on ten 64x250 seeds did not move
// past their run-to-run spread.
var levelShare = [4]float64{0.5, 0.25 / 0.85, 0.15 / 0.60, 1}

// linearShare is levelShare for parts whose memory is linear, searched
// by the PB workers alone. Level 1 gets nearly all: one uncovered source
// outweighs every later level, its workers answer 0.3-0.9 s after they
// start on 256 nodes, and at a 2 s limit that is about what the search
// has left. With 0.6, level 1 stopped them first on all of ten 256-node
// fleets (the suite's, seed 42 and three random seeds, each -tight too);
// on the five of them where 0.85 still did in some runs, 0.95 reached
// the optimum in 11 runs of 15, 0.85 in 8. A level proved sooner leaves
// its time to the next.
var linearShare = [4]float64{0.95, 0.4, 0.5, 1}

// budget is a deadline and the clock it is read on.
type budget struct {
	clock *clock.Clock
	end   time.Time
}

// left is the time left before the deadline.
func (b budget) left() time.Duration { return b.clock.Until(b.end) }

// until is the deadline technique s may use: until(b.clock, b.end, s).
func (b budget) until(s share) time.Time { return until(b.clock, b.end, s) }

// level is level i's deadline when it starts at now, by shareOf.
func (b budget) level(now time.Time, i int, shareOf [4]float64) time.Time {
	return now.Add(time.Duration(float64(b.end.Sub(now)) * shareOf[i]))
}

// part is weight's part of the time left, of total (partOf).
func (b budget) part(weight, total int) time.Duration { return partOf(b.clock, b.end, weight, total) }

// ofLimit is share s of a whole limit.
func ofLimit(limit time.Duration, s share) time.Duration {
	r := shares[s]
	d := time.Duration(float64(limit) * r.part)
	if r.floor > 0 {
		d = max(d, min(r.floor, time.Duration(float64(limit)*r.floorPart)))
	}
	if r.max > 0 {
		d = min(d, r.max)
	}
	return d
}

// until is the deadline technique s may use before end: now plus its
// part of the time left (at most its cap), or end less the part it
// leaves.
func until(c *clock.Clock, end time.Time, s share) time.Time {
	r := shares[s]
	now := c.Now()
	left := end.Sub(now)
	if left <= 0 {
		return end
	}
	d := time.Duration(float64(left) * r.part)
	if r.leave {
		return end.Add(-d)
	}
	if r.max > 0 {
		d = min(d, r.max)
	}
	return now.Add(d)
}

// partOf is weight's part of the time left before end, of total: parts
// of a pool by size, alternatives of an answer evenly, each taking its
// part of what the ones before it left.
func partOf(c *clock.Clock, end time.Time, weight, total int) time.Duration {
	left := c.Until(end)
	if left <= 0 {
		return 0
	}
	return time.Duration(float64(left) * float64(weight) / float64(max(1, total)))
}
