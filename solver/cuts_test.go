package solver

import (
	"slices"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/solver/mip"
)

// A cut loop stopped between two rounds and run again ends where one
// never stopped does: the same solves, rows, bound and vertex. The
// canonical re-solve finishes level 4's loop this way when the level's
// proof stopped it.
func TestAStoppedCutLoopResumesOnTheSamePath(t *testing.T) {
	resumed := 0
	for seed := uint64(1); seed <= shortOr(6, 2); seed++ {
		x, res := lpFixture(t, seed, 12, 40, 10*time.Second)
		if res.Infeasible || !allOptimal(res) {
			continue
		}
		rel := func() *mip.Relaxation {
			r, ok := presolvedRelaxation(x, 3, time.Now().Add(time.Minute))
			if !ok {
				t.Fatalf("pool %d: no relaxation", seed)
			}
			return r
		}
		_, _, _, whole, _, _ := mip.SparseRounds(rel(), time.Now().Add(time.Minute), nil, nil, nil)
		if whole == nil || !whole.Complete {
			t.Fatalf("pool %d: the loop did not complete", seed)
		}
		for stopAt := 1; stopAt < whole.Solves; stopAt++ {
			solves, stopNow := 0, false
			_, _, _, cl, _, _ := mip.SparseRounds(rel(), time.Now().Add(time.Minute), func() bool { return stopNow }, nil,
				func(float64, []float64) { solves++; stopNow = solves == stopAt })
			if cl.Complete || !cl.Resumable {
				t.Fatalf("pool %d: stopped after solve %d, complete %v, resumable %v", seed, stopAt, cl.Complete, cl.Resumable)
			}
			cl.Run(time.Now().Add(time.Minute), nil, nil)
			resumed++
			if !cl.Complete || cl.Solves != whole.Solves || cl.Best != whole.Best || len(cl.Rows) != len(whole.Rows) ||
				!slices.Equal(cl.St.X(), whole.St.X()) {
				t.Errorf("pool %d, stopped after solve %d: resumed loop ends at %d solves, bound %v, %d rows; unstopped at %d, %v, %d",
					seed, stopAt, cl.Solves, cl.Best, len(cl.Rows), whole.Solves, whole.Best, len(whole.Rows))
			}
		}
	}
	if resumed < int(shortOr(4, 1)) {
		t.Errorf("only %d loops resumed", resumed)
	}
}
