package mip

import (
	"math"
	"math/big"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/solver/lp"
)

func TestInt128ArithmeticAgreesWithBigIntegers(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 28))
	toBig := func(a i128) *big.Int {
		v := new(big.Int).SetInt64(a.hi)
		v.Lsh(v, 64)
		return v.Add(v, new(big.Int).SetUint64(a.lo))
	}
	lim := new(big.Int).Lsh(big.NewInt(1), 127)
	fits := func(v *big.Int) bool { return v.Cmp(lim) < 0 && v.Cmp(new(big.Int).Neg(lim)) >= 0 }
	rnd := func() int64 {
		switch rng.IntN(4) {
		case 0:
			return rng.Int64N(100) - 50
		case 1:
			return rng.Int64() >> rng.IntN(63)
		case 2:
			return -(rng.Int64() >> rng.IntN(63))
		}
		return rng.Int64() - rng.Int64()
	}
	for k := 0; k < 20000; k++ {
		a := i128of(rnd())
		for m := rng.IntN(3); m > 0; m-- {
			if p, ok := a.mul64(rnd()); ok {
				a = p
			}
		}
		b, c := i128of(rnd()), rnd()
		A, B, C := toBig(a), toBig(b), big.NewInt(c)
		if s, ok := a.add(b); ok != fits(new(big.Int).Add(A, B)) || ok && toBig(s).Cmp(new(big.Int).Add(A, B)) != 0 {
			t.Fatalf("%v + %v = %v (%v)", A, B, toBig(s), ok)
		}
		if p, ok := a.mul64(c); ok != fits(new(big.Int).Mul(A, C)) || ok && toBig(p).Cmp(new(big.Int).Mul(A, C)) != 0 {
			t.Fatalf("%v · %v = %v (%v)", A, C, toBig(p), ok)
		}
		if d := rng.Int64N(1<<40) + 1; true {
			D := big.NewInt(d)
			q, okq := a.floorDiv(d)
			wantQ := new(big.Int).Div(A, D) // Euclidean: floor for d > 0
			if okq && big.NewInt(q).Cmp(wantQ) != 0 {
				t.Fatalf("⌊%v / %v⌋ = %v, want %v", A, d, q, wantQ)
			}
			if qc, ok := a.ceilDiv(d); ok {
				want := new(big.Int).Neg(new(big.Int).Div(new(big.Int).Neg(A), D))
				if big.NewInt(qc).Cmp(want) != 0 {
					t.Fatalf("⌈%v / %v⌉ = %v, want %v", A, d, qc, want)
				}
			}
			if r, ok := a.floorMod(d); ok && big.NewInt(r).Cmp(new(big.Int).Mod(A, D)) != 0 {
				t.Fatalf("%v mod %v = %v, want %v", A, d, r, new(big.Int).Mod(A, D))
			}
		}
	}
}

// randomRelaxation is a small 0/1 model with knapsack, covering and
// choice rows, like a pool's; its costs are integers.
func randomRelaxation(rng *rand.Rand, n int) *Relaxation {
	r := &Relaxation{}
	for j := 0; j < n; j++ {
		r.ColOf(z.Var(j + 2))
	}
	r.C = make([]int64, n)
	for j := range r.C {
		r.C[j] = rng.Int64N(40) - 30
	}
	r.Lo, r.Hi = make([]int64, n), make([]int64, n)
	for j := range r.Hi {
		r.Hi[j] = 1
	}
	m := 2 + rng.IntN(5)
	for i := 0; i < m; i++ {
		w := Row{Op: encode.LE}
		switch rng.IntN(3) {
		case 0: // a knapsack
			var sum int64
			for j := 0; j < n; j++ {
				if rng.IntN(2) == 0 {
					v := 1 + rng.Int64N(20)
					w.Idx, w.Val = append(w.Idx, j), append(w.Val, v)
					sum += v
				}
			}
			w.Rhs = sum / 2
		case 1: // a covering row, as <=
			for j := 0; j < n; j++ {
				if rng.IntN(3) == 0 {
					w.Idx, w.Val = append(w.Idx, j), append(w.Val, -1)
				}
			}
			w.Rhs = -1
		default: // an implication x_p <= Σ x_q
			p := rng.IntN(n)
			w.Idx, w.Val = []int{p}, []int64{1}
			for j := 0; j < n; j++ {
				if j != p && rng.IntN(3) == 0 {
					w.Idx, w.Val = append(w.Idx, j), append(w.Val, -1)
				}
			}
		}
		if len(w.Idx) > 0 {
			r.Rows = append(r.Rows, w)
		}
	}
	return r
}

// integerPoints lists the 0/1 points of r's rows.
func integerPoints(r *Relaxation, rows []Row) []uint {
	n := len(r.Vars)
	var out []uint
	for bits := uint(0); bits < 1<<uint(n); bits++ {
		ok := true
		for _, w := range rows {
			if !holds(w, bits) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, bits)
		}
	}
	return out
}

func TestEveryCutOfTheLoopKeepsEveryIntegerPoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	gomory, probing := 0, 0
	for trial := 0; trial < 300; trial++ {
		n := 6 + rng.IntN(7)
		r := randomRelaxation(rng, n)
		orig := append([]Row(nil), r.Rows...)
		pts := integerPoints(r, orig)
		cl, ok := NewCutLoop(r)
		if !ok {
			t.Fatal("no cut loop")
		}
		for round := 0; round < 5; round++ {
			if cl.St.Solve(lpFar(), 0) != 0 {
				break
			}
			xs := cl.St.X()
			g := gomoryCuts(r, cl.Rows, cl.St, xs, 50, gmiMaxLen)
			gomory += len(g)
			before := len(cl.Rows)
			if !cl.round() {
				break
			}
			probing += len(cl.Rows) - before - len(g)
		}
		for _, w := range cl.R.Rows {
			for _, p := range pts {
				if !holds(w, p) {
					t.Fatalf("trial %d: cut %+v cuts off the integer point %b of %+v", trial, w, p, orig)
				}
			}
		}
	}
	if gomory < 200 || probing < 200 {
		t.Errorf("%d Gomory and %d other cuts: the test does not reach the separators", gomory, probing)
	}
}

// Probing keeps only the max most violated cuts it finds: the first max
// of the list it gives when it keeps them all, in that order.
func TestProbingKeepsTheMostViolatedCutsInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 21))
	compared := 0
	for trial := 0; trial < 200; trial++ {
		r := randomRelaxation(rng, 6+rng.IntN(7))
		cl, ok := NewCutLoop(r)
		if !ok {
			t.Fatal("no cut loop")
		}
		if cl.St.Solve(lpFar(), 0) != 0 {
			continue
		}
		xs := cl.St.X()
		all := probingCuts(newProber(r.Rows, r.Lo, r.Hi), xs, true, 1<<30)
		for _, max := range []int{1, 3, 10} {
			kept := probingCuts(newProber(r.Rows, r.Lo, r.Hi), xs, true, max)
			want := all[:min(max, len(all))]
			if !reflect.DeepEqual(kept, want) {
				t.Fatalf("trial %d, max %d: kept %+v, the first of all %+v", trial, max, kept, want)
			}
			if len(all) > max {
				compared++
			}
		}
	}
	if compared < 100 {
		t.Errorf("only %d comparisons left cuts out", compared)
	}
}
func TestBranchAndCutFindsAndProvesTheOptimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	proved := 0
	for trial := 0; trial < 300; trial++ {
		n := 4 + rng.IntN(8)
		r := randomRelaxation(rng, n)
		pts := integerPoints(r, r.Rows)
		best, _ := bruteOptimum(r)
		b, found, ok := branchAndCutFrom(t, r, math.MaxInt64/4)
		if len(pts) == 0 {
			if found != math.MaxInt64 {
				t.Fatalf("trial %d: a plan of %d in an infeasible model", trial, found)
			}
			continue
		}
		if !ok {
			t.Fatalf("trial %d: not proved (%d nodes)", trial, b.Nodes)
		}
		if found != best {
			t.Fatalf("trial %d: branch and cut found %d, brute force %d", trial, found, best)
		}
		proved++
	}
	if proved < 150 {
		t.Errorf("only %d models proved", proved)
	}
}

// A probe that finds its setting impossible stops with rows still
// queued; the next probe must still propagate over them.
func TestProbeAfterARefutedProbeStillPropagates(t *testing.T) {
	rows := []Row{
		{Idx: []int{0}, Val: []int64{1}, Op: encode.LE, Rhs: 0},             // x0 can never be 1
		{Idx: []int{0, 1, 2}, Val: []int64{1, 1, 1}, Op: encode.LE, Rhs: 1}, // at most one of x0, x1, x2
	}
	p := newProber(rows, []int64{0, 0, 0}, []int64{1, 1, 1})
	if _, _, ok := p.probe(0, 1, probeBudget, nil, nil, nil); ok {
		t.Fatal("x0 = 1 was not refuted")
	}
	cols, vals, ok := p.probe(1, 1, probeBudget, nil, nil, nil)
	if !ok {
		t.Fatal("x1 = 1 was refuted")
	}
	found := false
	for k, c := range cols {
		found = found || c == 2 && vals[k] == 0
	}
	if !found {
		t.Errorf("x1 = 1 fixed %v to %v, want x2 = 0 among them", cols, vals)
	}
}

// A loop with Snapshots keeps a copy at the last solve that raised the
// bound's ceiling: its bounds are the loop's up to that solve, and
// branch and cut from the copy finds the same optimum as from the loop.
func TestTheSnapshotIsTheLoopAtTheLastRiseOfItsBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	checked := 0
	for trial := 0; trial < 200; trial++ {
		r := randomRelaxation(rng, 6+rng.IntN(8))
		cl, ok := NewCutLoop(r)
		if !ok {
			continue
		}
		cl.Snapshots = true
		cl.Run(lpFar(), nil, nil)
		if cl.Snap == nil {
			continue
		}
		last := -1
		for k, b := range cl.Bounds {
			if k == 0 || math.Ceil(b-1e-6) > math.Ceil(slices.Max(cl.Bounds[:k])-1e-6) {
				last = k
			}
		}
		if cl.Snap.Solve != last {
			t.Fatalf("trial %d: snapshot at solve %d, the last rise at %d (bounds %v)", trial, cl.Snap.Solve, last, cl.Bounds)
		}
		if !slices.Equal(cl.Snap.Bounds, cl.Bounds[:last+1]) {
			t.Fatalf("trial %d: snapshot bounds %v, the loop's %v", trial, cl.Snap.Bounds, cl.Bounds)
		}
		solve := func(st *lp.State, rows []Row) int64 {
			pr := &Problem{C: make([]float64, len(r.C))}
			for j, c := range r.C {
				pr.C[j] = float64(c)
			}
			for _, w := range rows {
				pr.Rows = append(pr.Rows, FloatRowOf(w))
			}
			b := NewBranchCut(st.Clone(), pr, 0, r.Lo, r.Hi)
			b.Offer = func(xs []float64, ub *int64) bool {
				var v int64
				for j, x := range xs {
					if x > 0.5 {
						v += r.C[j]
					}
				}
				*ub = min(*ub, v)
				return true
			}
			ub := int64(math.MaxInt64)
			b.Run(lpFar(), &ub)
			return ub
		}
		if a, b := solve(cl.Snap.St, cl.Snap.Rows), solve(cl.St, cl.Rows); a != b {
			t.Fatalf("trial %d: branch and cut from the snapshot gives %d, from the loop %d", trial, a, b)
		}
		checked++
	}
	if checked < 50 {
		t.Errorf("only %d loops had a snapshot", checked)
	}
}

func TestPseudoCostsFallBackOnWhatIsKnown(t *testing.T) {
	var pc pseudoCosts
	for dir := range 2 {
		pc.sum[dir], pc.n[dir] = make([]float64, 3), make([]int, 3)
	}
	if got := pc.mean(0, 0); got != 1 {
		t.Errorf("with nothing learnt a column costs %v, want 1", got)
	}
	pc.add(1, 0, 4)
	pc.add(1, 0, 2)
	pc.add(2, 0, 6)
	tests := []struct {
		name   string
		j, dir int
		want   float64
	}{
		{"a column tried twice costs its mean", 1, 0, 3},
		{"a column never tried costs the mean of all tries", 0, 0, 4},
		{"a direction never tried costs 1", 1, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := pc.mean(tt.j, tt.dir); got != tt.want {
				t.Errorf("mean(%d, %d) = %v, want %v", tt.j, tt.dir, got, tt.want)
			}
		})
	}
}

// offerIfPoint is a BranchCut.Offer for tests: it takes a vertex that is
// a 0/1 point of rows, lowering *found and *ub to its value.
func offerIfPoint(r *Relaxation, rows []Row, found *int64) func([]float64, *int64) bool {
	return func(xs []float64, ub *int64) bool {
		var v int64
		var bits uint
		for j, x := range xs {
			if x > 0.5 {
				v += r.C[j]
				bits |= 1 << uint(j)
			}
		}
		for _, w := range rows {
			if !holds(w, bits) {
				return false
			}
		}
		*found = min(*found, v)
		*ub = min(*ub, v)
		return true
	}
}

// Started from an incumbent just above the optimum (or at it), branch
// and cut fixes columns by reduced cost at its nodes and still finds the
// optimum (or proves nothing is better); every fixing is given back by
// the time the tree is exhausted.
func TestReducedCostFixingKeepsTheOptimumAndIsUndone(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 31))
	proved, fixed := 0, 0
	for trial := 0; trial < 400; trial++ {
		n := 10 + rng.IntN(6)
		r := randomRelaxation(rng, n)
		pts := integerPoints(r, r.Rows)
		if len(pts) == 0 {
			continue
		}
		best, _ := bruteOptimum(r)
		for _, start := range []int64{best + 1, best} {
			b, found, ok := branchAndCutFrom(t, r, start)
			if !ok {
				continue
			}
			proved++
			fixed += b.Fixed
			if start > best && found != best {
				t.Fatalf("trial %d: from %d branch and cut found %d, brute force %d", trial, start, found, best)
			}
			if start == best && found < best {
				t.Fatalf("trial %d: a plan of %d below the optimum %d", trial, found, best)
			}
			if !slices.Equal(b.lo, r.Lo) || !slices.Equal(b.hi, r.Hi) || len(b.trail) != 0 {
				t.Fatalf("trial %d: box %v..%v after the search, root %v..%v", trial, b.lo, b.hi, r.Lo, r.Hi)
			}
		}
	}
	if proved < 300 || fixed < 100 {
		t.Errorf("%d searches proved, %d columns fixed: the test does not reach the fixing", proved, fixed)
	}
}

// branchAndCutFrom runs branch and cut on r from its cut loop's root
// with the incumbent ub: the search, the best point it found (MaxInt64
// for none) and whether it proved its answer.
func branchAndCutFrom(t *testing.T, r *Relaxation, ub int64) (*BranchCut, int64, bool) {
	t.Helper()
	_, _, _, cl, _, _ := SparseRounds(r, lpFar(), nil, nil, nil)
	if cl == nil {
		t.Fatal("no cut loop")
	}
	b := NewBranchCut(cl.St, cl.Problem(), 0, r.Lo, r.Hi)
	found := int64(math.MaxInt64)
	b.Offer = offerIfPoint(r, r.Rows, &found)
	ok, err := b.Run(lpFar(), &ub)
	if err != nil {
		t.Fatal(err)
	}
	return b, found, ok
}
