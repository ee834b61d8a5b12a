package solver

import (
	"time"

	"github.com/poolsolve/poolsolve/internal/clock"
)

// A level's techniques share the time left before its deadline. Each
// share is written once, in shares, with its reason in terms of the
// technique; code asks until(clock, end, share) for the deadline it may use and
// computes no fraction of the time left itself.

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
	shareScenarioLP                // a what-if scenario's LP bound at level 4
)

// shareRule is part of the time left, capped at max when max > 0; with
// leave set, the technique runs until that part is left instead.
type shareRule struct {
	part  float64
	leave bool
	max   time.Duration
	why   string
}

var shares = [...]shareRule{
	shareBackbone: {part: 2.0 / 5, max: backboneMaxTime,
		why: "backbone probing is one SAT call per fractional column: it pays while it fixes many, and must leave most of the level to the search it speeds up"},
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
	shareScenarioLP: {part: 1.0 / 2, max: scenarioLPMax,
		why: "a scenario's LP bound may prove level 4, but half its time stays for the search that must find the plan"},
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
