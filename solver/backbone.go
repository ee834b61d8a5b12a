package solver

import (
	"slices"
	"time"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/solver/mip"
	"github.com/poolsolve/poolsolve/solver/pb"
)

// The earlier levels' backbone. Level 4's model holds levels 1-3 by one
// row each (Σ uncovered <= 22, ...), and the LP spreads those sums over
// whichever terms are dearest at level 4: on 256x1000-tight its root
// leaves chat-335 uncovered, saving the 492,753 that source costs in the
// optimum (1,130,205), although no plan at level 1's optimum leaves it
// uncovered. Which terms such plans set is mostly fixed (the backbone),
// and a PB search proves it in a few calls: ask for a point of the model
// where at least one candidate term differs from the incumbent; a point
// drops the terms it flips, and no point proves every term left. There,
// 935 of 941 terms in 3 calls (1 s), and the root LP goes from 242,244
// to 441,598, its first cut round from 286,356 to 1,105,246.

// backboneMaxTime caps the search for the backbone. At 2 s (and 2/5 of
// the level) it ended without a proof on three of ten 256x1000 fleets at
// 10 s, the UNSAT call cut short after three or four points; with 30 s
// those proofs took 2.0-3.0 s. At 3.5 s (and half the level) it was
// fixed there in five 10 s runs of six, and level 4's bound rose from
// 193,000-203,000 to 314,000-424,000 (-tight seed 26411's gap 64.8% ->
// 25.4%), the other fleets unchanged.
const backboneMaxTime = 3500 * time.Millisecond

// backboneMinTime is the least time the backbone is given a try in: its
// proofs on 256x1000 took 1.4-3.0 s, and below a second (a 5 s limit
// leaves level 4 about one) it spent 0.5-0.6 s and fixed nothing, time
// the LP lacked: on 256x1000-tight seed 3187 and seed 26411 at 5 s,
// level 4's bound rose from 176,874 to 264,928 and from 178,852 to
// 288,450 in one run of two each, and stood in the other.
const backboneMinTime = time.Second

// backboneFixings returns the level terms before level i that every
// point of r gives the incumbent's value, as (column, value) pairs; none
// when time runs out before the proof.
func (x *exact) backboneFixings(r *mip.Relaxation, i int, until time.Time) (cols []int, vals []int64, calls int) {
	inc := x.phase(r)
	if i == 0 || inc == nil {
		return nil, nil, 0
	}
	var cand []int
	for l := range i {
		for _, t := range x.e.Linear.Objectives[l] {
			if c, ok := r.Column(t.Var); ok && r.Lo[c] != r.Hi[c] {
				cand = append(cand, c)
			}
		}
	}
	slices.Sort(cand)
	cand = slices.Compact(cand)
	for len(cand) > 0 && x.clock().Until(until) > 0 && x.run.ctx.Err() == nil {
		// Σ flips >= 1: x_c where the incumbent has 0, 1 − x_c where 1.
		flip := mip.Row{Op: encode.GE, Rhs: 1}
		for _, c := range cand {
			flip.Idx = append(flip.Idx, c)
			if inc[c] {
				flip.Val = append(flip.Val, -1)
				flip.Rhs--
			} else {
				flip.Val = append(flip.Val, 1)
			}
		}
		calls++
		job := pb.RowsJob(r, []mip.Row{flip})
		// From the incumbent, which meets every row but the flip row:
		// the search starts next to the points it looks for.
		job.Phase = inc
		m, none := x.firstAnswer(job, until)
		if none {
			for _, c := range cand {
				v := int64(0)
				if inc[c] {
					v = 1
				}
				cols, vals = append(cols, c), append(vals, v)
			}
			return cols, vals, calls
		}
		if m == nil {
			return nil, nil, calls
		}
		x.tracer().f("level %d backbone: call %d, a point flips some of %d terms", i+1, calls, len(cand))
		cand = slices.DeleteFunc(cand, func(c int) bool { return m[c] != inc[c] })
	}
	return nil, nil, calls
}

// fixBackbone fixes the backbone of the levels before i in sr's
// presolved model and presolves it again; sr stays as it was when
// nothing was proved.
func (x *exact) fixBackbone(sr *strongResult, i int, until time.Time) {
	if x.clock().Until(until) < backboneMinTime {
		x.tracer().f("level %d backbone: %v is too short", i+1, x.clock().Until(until).Round(time.Millisecond))
		return
	}
	start := time.Now()
	cols, vals, calls := x.backboneFixings(sr.rel, i, until)
	x.tracer().f("level %d backbone: %d terms fixed, %d calls, %v", i+1, len(cols), calls, time.Since(start).Round(time.Millisecond))
	if len(cols) == 0 {
		return
	}
	n := sr.rel.Clone()
	for k, c := range cols {
		n.Lo[c], n.Hi[c] = vals[k], vals[k]
	}
	n, ok := mip.Presolve(n, x.clock().Now().Add(time.Second))
	if !ok {
		return // impossible for a model the incumbent meets
	}
	sr.rel, sr.pre = n, n.Fixed()
	sr.offset = n.Constant + x.e.Linear.Offsets[i]
}
