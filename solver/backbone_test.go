package solver

import (
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/mip"
	"github.com/poolsolve/poolsolve/solver/pb"
)

// Every term the backbone fixes must keep its value in every point of
// level 4's model: asked alone, with the other value forced, the model
// has no point. The fixings must also hold in the proved optimum, and
// some pool must have fixings at all, or the test shows nothing.
func TestTheBackboneFixesOnlyTermsEveryPlanAtTheEarlierOptimaKeeps(t *testing.T) {
	total := 0
	for _, p := range []*model.Pool{pooltest.Random(1, 8, 20), pooltest.Random(3, 12, 30), pooltest.Random(6, 16, 40), pooltest.Random(1, 24, 60)} {
		res := solve(t, p, Options{Seed: 1})
		if res.Infeasible {
			continue
		}
		for _, l := range res.Levels[:3] {
			if l.Status != Optimal {
				t.Fatalf("levels 1-3 not proved: %+v", res.Levels)
			}
		}
		x := exactFor(t, p)
		x.at = 3
		if ok, err := x.accept(res.Assignment, false); !ok || err != nil {
			t.Fatalf("the optimum not accepted: %v", err)
		}
		rel, ok := presolvedRelaxation(x, 3, x.deadline)
		if !ok {
			t.Fatal("level 4's model has no point")
		}
		cols, vals, calls := x.backboneFixings(rel, 3, time.Now().Add(time.Minute))
		t.Logf("%d fixings in %d calls", len(cols), calls)
		total += len(cols)
		opt := x.phase(rel)
		for k, c := range cols {
			if opt[c] != (vals[k] == 1) {
				t.Errorf("column %d fixed to %d, the optimum has %v", c, vals[k], opt[c])
			}
			other := mip.Row{Idx: []int{c}, Val: []int64{1}, Op: encode.EQ, Rhs: 1 - vals[k]}
			job := pb.RowsJob(rel, []mip.Row{other})
			job.First = true
			if _, got, err := pb.Search(job, func(pb.Answer) error { return nil }); got || err != nil {
				t.Errorf("column %d (%s) fixed to %d, yet a point has %d (err %v)", c, x.e.VarName(rel.Vars[c]), vals[k], 1-vals[k], err)
			}
		}
	}
	if total == 0 {
		t.Error("no pool had a fixing: the test shows nothing")
	}
}
