package mip

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/encode"
)

// holds reports whether the 0/1 point bits (bit j = column j) meets w.
func holds(w Row, bits uint) bool {
	return w.Holds(func(c int) bool { return bits>>uint(c)&1 == 1 })
}

func randomRow(rng *rand.Rand, n int) Row {
	w := Row{Op: []encode.Op{encode.LE, encode.GE, encode.LE}[rng.IntN(3)]}
	var pos, neg int64
	for j := 0; j < n; j++ {
		if rng.IntN(4) == 0 {
			continue
		}
		v := rng.Int64N(21) - 10
		if v == 0 {
			v = 7
		}
		w.Idx, w.Val = append(w.Idx, j), append(w.Val, v)
		if v > 0 {
			pos += v
		} else {
			neg += v
		}
	}
	w.Rhs = neg + rng.Int64N(pos-neg+1)
	return w
}

func TestTighteningKeepsExactlyTheIntegerPointsOfARow(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	changed := 0
	for trial := 0; trial < 3000; trial++ {
		n := 2 + rng.IntN(5)
		w := randomRow(rng, n)
		if len(w.Idx) == 0 {
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
		if keep && tw.Rhs != lw.Rhs {
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
		if len(w.Idx) < 2 {
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
		r := &Relaxation{Lo: make([]int64, n), Hi: make([]int64, n)}
		for j := range r.Hi {
			r.Hi[j] = 1
		}
		for k := 0; k < 1+rng.IntN(3); k++ {
			r.Rows = append(r.Rows, randomRow(rng, n))
		}
		r.Propagate(time.Now().Add(time.Second))
		for bits := uint(0); bits < 1<<uint(n); bits++ {
			ok := true
			for _, w := range r.Rows {
				ok = ok && holds(w, bits)
			}
			if !ok {
				continue
			}
			if r.Dead {
				t.Fatalf("rows %+v called infeasible, but %b meets them", r.Rows, bits)
			}
			for j := 0; j < n; j++ {
				if v := int64(bits >> uint(j) & 1); v < r.Lo[j] || v > r.Hi[j] {
					t.Fatalf("rows %+v: column %d fixed to [%d,%d], but %b meets every row", r.Rows, j, r.Lo[j], r.Hi[j], bits)
				}
			}
		}
		for j := 0; j < n; j++ {
			if r.Lo[j] == r.Hi[j] {
				fixedSeen++
			}
		}
	}
	if fixedSeen < 100 {
		t.Errorf("only %d columns fixed: the test does not reach propagation", fixedSeen)
	}
}

func TestTheFloorIsTheCheapestPointOfThePresolvedBoxAndBoundsEveryPlan(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	fixedSeen := 0
	for trial := 0; trial < 2000; trial++ {
		n := 2 + rng.IntN(5)
		r := &Relaxation{Lo: make([]int64, n), Hi: make([]int64, n), C: make([]int64, n)}
		for j := range r.Hi {
			r.Hi[j], r.C[j] = 1, rng.Int64N(11)-5
		}
		for k := 0; k < rng.IntN(4); k++ {
			r.Rows = append(r.Rows, randomRow(rng, n))
		}
		rows, c := r.Rows, append([]int64(nil), r.C...)
		// Propagated alone, the fixed columns keep their costs.
		q := r.Clone()
		q.Propagate(time.Now().Add(time.Second))
		p, ok := Presolve(r, time.Now().Add(time.Second))
		if !ok {
			continue
		}
		if q.Floor() != p.Floor() {
			t.Fatalf("rows %+v, costs %v: floor %d propagated, %d presolved", rows, c, q.Floor(), p.Floor())
		}
		cost := func(bits uint) int64 {
			var s int64
			for j := range n {
				s += c[j] * int64(bits>>uint(j)&1)
			}
			return s
		}
		floor := p.Floor()
		boxMin := int64(1 << 62)
		for bits := uint(0); bits < 1<<uint(n); bits++ {
			inBox := true
			for j := range n {
				v := int64(bits >> uint(j) & 1)
				inBox = inBox && v >= p.Lo[j] && v <= p.Hi[j]
			}
			if inBox {
				boxMin = min(boxMin, cost(bits))
			}
			meets := true
			for _, w := range rows {
				meets = meets && holds(w, bits)
			}
			if meets && cost(bits) < floor {
				t.Fatalf("rows %+v, costs %v: point %b costs %d, below the floor %d", rows, c, bits, cost(bits), floor)
			}
		}
		if floor != boxMin {
			t.Fatalf("rows %+v, costs %v: floor %d, but the presolved box's cheapest point costs %d", rows, c, floor, boxMin)
		}
		for j := range n {
			if p.Lo[j] == p.Hi[j] && c[j] != 0 {
				fixedSeen++
			}
		}
	}
	if fixedSeen < 100 {
		t.Errorf("only %d costed columns fixed: the test does not reach the constant", fixedSeen)
	}
}
