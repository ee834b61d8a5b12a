package solver

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/localsearch"
	"github.com/poolsolve/poolsolve/solver/mip"
)

// On random pools, the strengthened LP never bounds level 4 above its
// proved optimum, and the optimal plan keeps every fixing and the
// reduced-cost knapsack that fixesFor gives at its value: they are
// implied by "level 4 <= optimum" and must not cut the optimum off.
func TestStrongBoundAndReducedCostFixingsKeepTheOptimum(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows int
		late time.Duration
		skip time.Duration // lgSkipLeft
		// source must bound at least one pool.
		source BoundSource
	}{
		{"by the sparse LP with cuts", mip.SparseMaxRows, sparseLateMin, lgSkipLeft, BoundLP},
		{"by the Lagrangian ascent alone", 0, time.Hour, time.Hour, BoundLagrangian},
		{"by the Lagrangian ascent and then the sparse LP", 0, sparseLateMin, time.Hour, BoundLP},
		{"past fitsSparse, by the sparse LP alone when it has the time", 0, sparseLateMin, lgSkipLeft, BoundLP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			savedRows, savedLate, savedSkip := mip.SparseMaxRows, sparseLateMin, lgSkipLeft
			mip.SparseMaxRows, sparseLateMin, lgSkipLeft = tc.rows, tc.late, tc.skip
			defer func() { mip.SparseMaxRows, sparseLateMin, lgSkipLeft = savedRows, savedLate, savedSkip }()
			if sources := strongBoundKeepsTheOptimum(t); sources[tc.source] == 0 {
				t.Errorf("no pool was bounded by %s: %v", tc.source, sources)
			}
		})
	}
}

func strongBoundKeepsTheOptimum(t *testing.T) map[BoundSource]int {
	sources := map[BoundSource]int{}
	checked, fixed := 0, 0
	for seed := uint64(1); seed <= shortOr(16, 4); seed++ {
		nodes, variants := 2+int(seed%4), 4+int(seed%9)
		x, res := lpFixture(t, seed, nodes, variants, 10*time.Second)
		if res.Infeasible || res.Levels[3].Status != Optimal {
			continue
		}
		for i := 0; i < 3; i++ {
			if res.Levels[i].Status != Optimal {
				t.Fatalf("pool %d: level %d not proved", seed, i+1)
			}
		}
		opt := res.Objective[3]
		sr, ok := strongLP(x, 3, opt, time.Now().Add(time.Minute))
		if !ok {
			t.Errorf("pool %d (%dx%d): no strengthened LP", seed, nodes, variants)
			continue
		}
		checked++
		sources[sr.source]++
		if sr.noLP {
			t.Errorf("pool %d (%dx%d): no bound", seed, nodes, variants)
		}
		if !sr.noLP && sr.bound > opt {
			t.Errorf("pool %d (%dx%d): strengthened LP bound %d above the optimum %d", seed, nodes, variants, sr.bound, opt)
		}
		vals, err := x.e.Values(res.Assignment)
		if err != nil {
			t.Fatalf("pool %d: values: %v", seed, err)
		}
		val := func(m z.Lit) bool { return vals[m.Var()] == m.IsPos() }
		fixes, knap, ok := sr.fixesFor(opt)
		if !ok {
			t.Errorf("pool %d: fixesFor(%d) says no plan reaches the optimum", seed, opt)
			continue
		}
		fixed += len(fixes)
		for _, m := range fixes {
			if !val(m) {
				t.Errorf("pool %d: the optimal plan breaks the fixing %s", seed, x.e.VarName(m.Var()))
			}
		}
		var sum int64
		for _, g := range knap {
			if val(g.Branches[0].Lit) {
				sum += g.Branches[0].W
			}
		}
		if sum > rcScale {
			t.Errorf("pool %d: the optimal plan weighs %d in the reduced-cost knapsack, capacity %d", seed, sum, rcScale)
		}
		for _, w := range sr.rel.Rows {
			if !rowHoldsFor(sr.rel, w, vals) {
				t.Errorf("pool %d: the optimal plan breaks a presolved row or cut %+v", seed, w)
				break
			}
		}
	}
	if checked < int(shortOr(8, 3)) || fixed == 0 {
		t.Errorf("checked %d pools, %d fixings: the test does not reach the rule", checked, fixed)
	}
	return sources
}

func rowHoldsFor(r *mip.Relaxation, w mip.Row, vals []bool) bool {
	return w.Holds(func(c int) bool { return vals[r.Vars[c]] })
}

// TestTheDualStartLiftsTheLagrangianAndStaysBelowTheOptimum: the start
// moves latency costs onto routes, so its bound is at least u = 0's and,
// like every multiplier's, at most the optimum.
func TestTheDualStartLiftsTheLagrangianAndStaysBelowTheOptimum(t *testing.T) {
	lifted := 0
	for seed := uint64(1); seed <= 12; seed++ {
		x, res := lpFixture(t, seed, 3+int(seed%5), 6+int(seed%11), 10*time.Second)
		if res.Infeasible || !allOptimal(res) {
			continue
		}
		x.run = &run{ctx: context.Background(), start: time.Now(), deadline: time.Now().Add(time.Minute)}
		r := newRelaxation(x, 3)
		r.Propagate(x.run.deadline)
		if r.Dead {
			t.Fatalf("pool %d: presolve finds no point", seed)
		}
		r.Substitute()
		lg := mip.NewLagrangian(r)
		n := len(lg.C)
		d, xs := make([]float64, n), make([]bool, n)
		zero, _ := lg.Eval(make([]float64, len(lg.Rows)), d, xs)
		started, mag := lg.Eval(lg.Start(), d, xs)
		offset := float64(r.Constant + x.e.Linear.Offsets[3])
		if started-1e-9*mag+offset > float64(res.Objective[3])+1e-6 {
			t.Errorf("pool %d: the start bounds level 4 by %.1f, above the optimum %d", seed, started+offset, res.Objective[3])
		}
		if started < zero-1e-6 {
			t.Errorf("pool %d: the start's bound %.1f is below u = 0's %.1f", seed, started, zero)
		}
		if started > zero+1e-6 {
			lifted++
		}
	}
	if lifted == 0 {
		t.Error("the start lifted no pool's bound: the test does not reach it")
	}
}

// A level-4 model past the sparse LP's size takes its own path: the
// Lagrangian ascent, then the sparse LP with its duals wherever it stops,
// and on two cores a cutting-planes worker beside it and both workers on
// its fixings after. On random pools that path proves the same optimum as
// the usual one, and its plans pass the evaluator.
func TestLevelFourPastTheSparseSizeProvesTheSameOptimum(t *testing.T) {
	proved := 0
	for seed := uint64(1); seed <= shortOr(10, 3); seed++ {
		p := pooltest.Random(seed, 6+int(seed%4), 24+int(seed%17))
		usual, err := Solve(context.Background(), p, Options{Seed: 1, TimeLimit: 10 * time.Second, Cores: 2})
		if err != nil {
			t.Fatalf("pool %d: %v", seed, err)
		}
		saved := mip.SparseMaxRows
		mip.SparseMaxRows = 0
		past, err := Solve(context.Background(), p, Options{Seed: 1, TimeLimit: 10 * time.Second, Cores: 2})
		mip.SparseMaxRows = saved
		if err != nil {
			t.Fatalf("pool %d past the sparse size: %v", seed, err)
		}
		if usual.Infeasible || past.Infeasible {
			if usual.Infeasible != past.Infeasible {
				t.Errorf("pool %d: infeasible %v one way, %v the other", seed, usual.Infeasible, past.Infeasible)
			}
			continue
		}
		if rep := eval.Check(p, past.Assignment); !rep.Valid || rep.Objective != past.Objective {
			t.Errorf("pool %d: the plan past the sparse size is valid %v, objective %v, claimed %v", seed, rep.Valid, rep.Objective, past.Objective)
		}
		all := func(r *Result) bool {
			for _, l := range r.Levels {
				if l.Status != Optimal {
					return false
				}
			}
			return true
		}
		if all(usual) && all(past) {
			proved++
			if usual.Objective != past.Objective {
				t.Errorf("pool %d: proved %v the usual way and %v past the sparse size", seed, usual.Objective, past.Objective)
			}
		}
	}
	if proved < int(shortOr(5, 1)) {
		t.Errorf("both ways proved only %d pools: the test does not reach the rule", proved)
	}
}

// TestTheNextLevelsModelMadeFromTheLastHoldsTheSamePlans: level i's
// presolved model made from level i-1's by one row (nextLevel) keeps
// exactly the plans the model built afresh keeps, at the same objective.
func TestTheNextLevelsModelMadeFromTheLastHoldsTheSamePlans(t *testing.T) {
	compared, above := 0, 0
	for seed := uint64(1); seed <= 12; seed++ {
		x, res := lpFixture(t, seed, 3+int(seed%4), 6+int(seed%9), 5*time.Second)
		if res.Infeasible {
			continue
		}
		// The optimum, greedy's plans and local search's from them
		// (plans above the frozen levels and at them), and the optimum
		// with its lanes dropped one by one (plans above them, or not
		// plans at all, which both must reject).
		plans := []model.Assignment{res.Assignment}
		for k := range res.Assignment.Lanes {
			a := res.Assignment
			a.Lanes = slices.Delete(slices.Clone(a.Lanes), k, k+1)
			plans = append(plans, a)
		}
		for s := uint64(1); s <= 4; s++ {
			g := localsearch.Greedy(x.p, s)
			plans = append(plans, g, localsearch.ImproveUntilStale(x.p, g, s, time.Now().Add(time.Second), 3))
		}
		far := time.Now().Add(time.Minute)
		for i := 1; i < 4; i++ {
			prev, ok := mip.Presolve(newRelaxation(x, i-1), far)
			if !ok {
				t.Fatalf("pool %d: level %d has no plan", seed, i)
			}
			fresh, okFresh := mip.Presolve(newRelaxation(x, i), far)
			chained, okChained := mip.Presolve(prev.NextLevel(x.e, i, x.obj[i-1]), far)
			if okFresh != okChained || !okFresh {
				t.Fatalf("pool %d level %d: a plan afresh %v, chained %v", seed, i+1, okFresh, okChained)
			}
			for k, a := range plans {
				vals, err := x.e.Values(a)
				if err != nil {
					continue // a route to a lane the plan drops
				}
				hf, vf := keeps(fresh, vals)
				hc, vc := keeps(chained, vals)
				if hf != hc || hf && vf != vc {
					t.Errorf("pool %d level %d plan %d: afresh keeps %v at %d, chained %v at %d", seed, i+1, k, hf, vf, hc, vc)
				}
				compared++
				if rep := eval.Check(x.p, a); rep.Valid && x.obj.Less(rep.Objective) && frozenBefore(rep.Objective, i) != frozenBefore(x.obj, i) {
					above++ // only the frozen levels' rows reject it
				}
			}
		}
	}
	if compared < 100 || above == 0 {
		t.Errorf("%d plans compared, %d of them valid plans above the frozen levels: the test does not reach the rule", compared, above)
	}
}

// keeps says whether r keeps the point vals (its fixings and rows hold)
// and gives r's objective there.
func keeps(r *mip.Relaxation, vals []bool) (bool, int64) {
	obj := r.Constant
	for j, v := range r.Vars {
		x := int64(0)
		if vals[v] {
			x = 1
		}
		if x < r.Lo[j] || x > r.Hi[j] {
			return false, 0
		}
		obj += r.C[j] * x
	}
	for _, w := range r.Rows {
		if !rowHoldsFor(r, w, vals) {
			return false, 0
		}
	}
	return true, obj
}
