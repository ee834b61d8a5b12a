package solver

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/localsearch"
)

// holds reports whether the 0/1 point bits (bit j = column j) meets w.
func holds(w irow, bits uint) bool {
	return rowHolds(w, func(c int) bool { return bits>>uint(c)&1 == 1 })
}

// rowHolds reports whether w holds where column c is val(c).
func rowHolds(w irow, val func(c int) bool) bool {
	var s int64
	for k, j := range w.idx {
		if val(j) {
			s += w.val[k]
		}
	}
	switch w.op {
	case encode.LE:
		return s <= w.rhs
	case encode.GE:
		return s >= w.rhs
	}
	return s == w.rhs
}

func randomRow(rng *rand.Rand, n int) irow {
	w := irow{op: []encode.Op{encode.LE, encode.GE, encode.LE}[rng.IntN(3)]}
	var pos, neg int64
	for j := 0; j < n; j++ {
		if rng.IntN(4) == 0 {
			continue
		}
		v := rng.Int64N(21) - 10
		if v == 0 {
			v = 7
		}
		w.idx, w.val = append(w.idx, j), append(w.val, v)
		if v > 0 {
			pos += v
		} else {
			neg += v
		}
	}
	w.rhs = neg + rng.Int64N(pos-neg+1)
	return w
}

func TestTighteningKeepsExactlyTheIntegerPointsOfARow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	changed := 0
	for trial := 0; trial < 3000; trial++ {
		n := 2 + rng.IntN(5)
		w := randomRow(rng, n)
		if len(w.idx) == 0 {
			continue
		}
		lw := asLE(w)[0]
		tw, keep := tighten(lw)
		for bits := uint(0); bits < 1<<uint(n); bits++ {
			before := holds(w, bits)
			after := !keep || holds(tw, bits)
			if before != after {
				t.Fatalf("row %+v tightened to %+v (keep %v): point %b was %v, is %v", w, tw, keep, bits, before, after)
			}
		}
		if keep && tw.rhs != lw.rhs {
			changed++
		}
	}
	if changed < 100 {
		t.Errorf("only %d rows were tightened: the test does not reach the rule", changed)
	}
}

func TestCoverCutsKeepEveryIntegerPointOfTheirRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	cuts := 0
	for trial := 0; trial < 5000; trial++ {
		n := 3 + rng.IntN(5)
		w := randomRow(rng, n)
		if len(w.idx) < 2 {
			continue
		}
		w = asLE(w)[0]
		xs := make([]float64, n)
		for j := range xs {
			xs[j] = rng.Float64()
			if rng.IntN(3) == 0 {
				xs[j] = float64(rng.IntN(2))
			}
		}
		c, vio, ok := coverCut(w, xs)
		if !ok {
			continue
		}
		cuts++
		if vio <= 0 {
			t.Fatalf("cut %+v reported with violation %v", c, vio)
		}
		for bits := uint(0); bits < 1<<uint(n); bits++ {
			if holds(w, bits) && !holds(c, bits) {
				t.Fatalf("cover cut %+v of row %+v cuts off the integer point %b", c, w, bits)
			}
		}
	}
	if cuts < 200 {
		t.Errorf("only %d cuts found: the test does not reach the separation", cuts)
	}
}

func TestPropagationFixesOnlyWhatEveryIntegerPointAgreesOn(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	fixedSeen := 0
	for trial := 0; trial < 2000; trial++ {
		n := 2 + rng.IntN(5)
		r := &relaxation{lo: make([]int64, n), hi: make([]int64, n)}
		for j := range r.hi {
			r.hi[j] = 1
		}
		for k := 0; k < 1+rng.IntN(3); k++ {
			r.rows = append(r.rows, randomRow(rng, n))
		}
		r.propagate(time.Now().Add(time.Second))
		for bits := uint(0); bits < 1<<uint(n); bits++ {
			ok := true
			for _, w := range r.rows {
				ok = ok && holds(w, bits)
			}
			if !ok {
				continue
			}
			if r.dead {
				t.Fatalf("rows %+v called infeasible, but %b meets them", r.rows, bits)
			}
			for j := 0; j < n; j++ {
				if v := int64(bits >> uint(j) & 1); v < r.lo[j] || v > r.hi[j] {
					t.Fatalf("rows %+v: column %d fixed to [%d,%d], but %b meets every row", r.rows, j, r.lo[j], r.hi[j], bits)
				}
			}
		}
		for j := 0; j < n; j++ {
			if r.lo[j] == r.hi[j] {
				fixedSeen++
			}
		}
	}
	if fixedSeen < 100 {
		t.Errorf("only %d columns fixed: the test does not reach propagation", fixedSeen)
	}
}

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
		{"by the sparse LP with cuts", sparseMaxRows, sparseLateMin, lgSkipLeft, BoundLP},
		{"by the Lagrangian ascent alone", 0, time.Hour, time.Hour, BoundLagrangian},
		{"by the Lagrangian ascent and then the sparse LP", 0, sparseLateMin, time.Hour, BoundLP},
		{"past fitsSparse, by the sparse LP alone when it has the time", 0, sparseLateMin, lgSkipLeft, BoundLP},
	} {
		t.Run(tc.name, func(t *testing.T) {
			savedRows, savedLate, savedSkip := sparseMaxRows, sparseLateMin, lgSkipLeft
			sparseMaxRows, sparseLateMin, lgSkipLeft = tc.rows, tc.late, tc.skip
			defer func() { sparseMaxRows, sparseLateMin, lgSkipLeft = savedRows, savedLate, savedSkip }()
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
		for _, w := range sr.rel.rows {
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

func rowHoldsFor(r *relaxation, w irow, vals []bool) bool {
	return rowHolds(w, func(c int) bool { return vals[r.vars[c]] })
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
		r.propagate(x.run.deadline)
		if r.dead {
			t.Fatalf("pool %d: presolve finds no point", seed)
		}
		r.substitute()
		lg := newLagrangian(r)
		n := len(lg.c)
		d, xs := make([]float64, n), make([]bool, n)
		zero, _ := lg.eval(make([]float64, len(lg.rows)), d, xs)
		started, mag := lg.eval(lg.start(), d, xs)
		offset := float64(r.constant + x.e.Linear.Offsets[3])
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
		saved := sparseMaxRows
		sparseMaxRows = 0
		past, err := Solve(context.Background(), p, Options{Seed: 1, TimeLimit: 10 * time.Second, Cores: 2})
		sparseMaxRows = saved
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
			prev, ok := presolve(newRelaxation(x, i-1), far)
			if !ok {
				t.Fatalf("pool %d: level %d has no plan", seed, i)
			}
			fresh, okFresh := presolve(newRelaxation(x, i), far)
			chained, okChained := presolve(prev.nextLevel(x.e, i, x.obj[i-1]), far)
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
func keeps(r *relaxation, vals []bool) (bool, int64) {
	obj := r.constant
	for j, v := range r.vars {
		x := int64(0)
		if vals[v] {
			x = 1
		}
		if x < r.lo[j] || x > r.hi[j] {
			return false, 0
		}
		obj += r.c[j] * x
	}
	for _, w := range r.rows {
		if !rowHoldsFor(r, w, vals) {
			return false, 0
		}
	}
	return true, obj
}
