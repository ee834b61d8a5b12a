package mip

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/poolsolve/poolsolve/encode"
)

// withLazyRows sends every model, whatever its size, to the LP without
// its lazy rows, for one test.
func withLazyRows(t *testing.T) {
	t.Helper()
	old := LazyMinRows
	LazyMinRows = 0
	t.Cleanup(func() { LazyMinRows = old })
}

// implicationModel is randomRelaxation with short implications added,
// the rows the LP leaves out: x_p <= x_q, x_p + x_q <= 1 + x_r and
// x_p <= x_q + x_r, with x_p's cost negative so that the LP wants them
// broken.
func implicationModel(rng *rand.Rand, n int) *Relaxation {
	r := randomRelaxation(rng, n)
	for k := 2 + rng.IntN(6); k > 0; k-- {
		p, q, s := rng.IntN(n), rng.IntN(n), rng.IntN(n)
		if p == q || p == s || q == s {
			continue
		}
		r.C[p] = -1 - rng.Int64N(30)
		var w Row
		switch rng.IntN(3) {
		case 0:
			w = Row{Idx: []int{p, q}, Val: []int64{1, -1}, Op: encode.LE, Rhs: 0}
		case 1:
			w = Row{Idx: []int{p, q, s}, Val: []int64{1, 1, -1}, Op: encode.LE, Rhs: 1}
		default:
			w = Row{Idx: []int{p, q, s}, Val: []int64{1, -1, -1}, Op: encode.LE, Rhs: 0}
		}
		r.Rows = append(r.Rows, w)
	}
	return r
}

// bruteOptimum is the least c·x over the 0/1 points of r's rows, and
// false when there is none.
func bruteOptimum(r *Relaxation) (int64, bool) {
	best, any := int64(math.MaxInt64), false
	for _, p := range integerPoints(r, r.Rows) {
		var v int64
		for j := range r.C {
			if p>>uint(j)&1 == 1 {
				v += r.C[j]
			}
		}
		best, any = min(best, v), true
	}
	return best, any
}

func TestBranchAndCutProvesTheOptimumOfAModelWhoseLPLacksItsLazyRows(t *testing.T) {
	withLazyRows(t)
	rng := rand.New(rand.NewPCG(7, 31))
	tried, proved, reached, infeasible := 0, 0, 0, 0
	for trial := 0; trial < 300; trial++ {
		n := 5 + rng.IntN(7)
		r := implicationModel(rng, n)
		model := append([]Row(nil), r.Rows...)
		best, feasible := bruteOptimum(r)
		// No cut rounds: the root's vertex, not a round, meets the
		// lazy rows first.
		cl, ok := NewCutLoop(r)
		if !ok {
			t.Fatal("no cut loop")
		}
		if cl.Lazy() == nil {
			continue // every implication drawn named a column twice
		}
		tried++
		loaded := len(cl.Rows)
		b := NewBranchCut(cl.St, cl.Problem(), 0, r.Lo, r.Hi)
		b.Lazy = cl.Lazy()
		b.Load = func(rows []Row) bool { return cl.LoadRows(rows, len(rows)) }
		found := int64(math.MaxInt64)
		b.Offer = offerIfPoint(r, model, &found)
		ub := int64(math.MaxInt64 / 4)
		ok, err := b.Run(lpFar(), &ub)
		if err != nil {
			t.Fatal(err)
		}
		if len(cl.Rows) > loaded {
			reached++ // a node's vertex broke a lazy row
		}
		if !feasible {
			if found != math.MaxInt64 {
				t.Fatalf("trial %d: a plan of %d in an infeasible model", trial, found)
			}
			infeasible++
			continue
		}
		if !ok {
			continue // a node the simplex calls infeasible, its ray not a proof
		}
		if found != best {
			t.Fatalf("trial %d: branch and cut found %d, brute force %d", trial, found, best)
		}
		proved++
	}
	if proved < 150 || reached < tried/2 {
		t.Errorf("of %d models with lazy rows (%d infeasible), %d proved, %d with lazy rows added by branch and cut", tried, infeasible, proved, reached)
	}
}

func TestTheLazyRoundsBoundTheModelAndMeetItsLPOptimumWhenNoRowIsLeftBroken(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 17))
	met := 0
	for trial := 0; trial < 300; trial++ {
		n := 5 + rng.IntN(7)
		r := implicationModel(rng, n)
		whole, ok := NewCutLoop(r.Clone())
		if !ok || whole.lazy != nil {
			t.Fatal("the whole model's loop")
		}
		if whole.St.Solve(lpFar(), 0) != 0 {
			continue
		}
		opt, _ := WeakBound(whole.Problem(), whole.St.Duals())
		old := LazyMinRows
		LazyMinRows = 0
		cl, ok := NewCutLoop(r.Clone())
		LazyMinRows = old
		if !ok {
			t.Fatal("no cut loop")
		}
		var b float64
		for {
			if cl.St.Solve(lpFar(), 0) != 0 {
				t.Fatalf("trial %d: the LP without lazy rows is not optimal", trial)
			}
			b, _ = WeakBound(cl.Problem(), cl.St.Duals())
			cl.Bounds = append(cl.Bounds, b)
			if b > opt+1e-6*(1+math.Abs(opt)) {
				t.Fatalf("trial %d: bound %v above the LP optimum %v", trial, b, opt)
			}
			if !cl.lazyRound() {
				break
			}
		}
		if cl.lazy != nil && len(cl.lazy.Violated(cl.St.X(), 0)) == 0 {
			if math.Abs(b-opt) > 1e-6*(1+math.Abs(opt)) {
				t.Fatalf("trial %d: no lazy row broken, bound %v, LP optimum %v", trial, b, opt)
			}
			if cl.lazyRounds > 0 {
				met++
			}
		}
	}
	if met < 50 {
		t.Errorf("only %d models had lazy rows added until none was broken", met)
	}
}
