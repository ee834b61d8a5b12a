package lp

import (
	"errors"
	"slices"
)

// Iterations is the number of simplex iterations so far.
func (s *State) Iterations() int { return s.iters }

// Rows is the number of rows.
func (s *State) Rows() int { return s.m }

// X returns the structural values (unscaled).
func (s *State) X() []float64 {
	out := make([]float64, s.n)
	for j := range out {
		out[j] = s.x[j] * s.colScale[j]
	}
	return out
}

// Duals returns y = B⁻ᵀ·c_B per row, unscaled: d_j = c_j − y·A_j. On a
// <= row at its bound y <= 0, on a >= row y >= 0.
func (s *State) Duals() []float64 {
	yv := newSvec(s.m)
	for p, k := range s.head {
		yv.v[p] = s.cost[k]
	}
	yv.dense()
	s.inv.btran(yv)
	y := yv.v
	for i := range y {
		y[i] *= s.rowScale[i]
	}
	return y
}

// Basic reports the variable at each basis position (columns first,
// then n+i for row i's logical).
func (s *State) Basic() []int { return append([]int(nil), s.head...) }

// AtUpper reports whether nonbasic variable k sits at its upper bound.
func (s *State) AtUpper(k int) bool {
	return s.pos[k] < 0 && s.x[k] == s.hi[k] && s.lo[k] != s.hi[k]
}

// IsBasic reports whether variable k is basic.
func (s *State) IsBasic(k int) bool { return s.pos[k] >= 0 }

// TableauMultipliers returns ρ with Σ_i ρ_i·(a_i·x − s_i) = 0 the
// tableau row of basis position p, on the unscaled rows: every other
// basic variable has coefficient 0, and its own 1 when it is a column
// (a basic logical s_i gets row i's scale, 1 over the row's largest
// |coefficient|: the factor is that of B⁻¹ on the scaled rows). It gives the
// rows where ρ may be nonzero, in increasing order, and ρ there; both
// are the State's and change at the next call.
func (s *State) TableauMultipliers(p int) ([]int, []float64) {
	if s.tab == nil || len(s.tab.v) != s.m {
		s.tab = newSvec(s.m)
	}
	rv := s.tab
	rv.clear()
	rv.set(p, 1)
	s.inv.btran(rv)
	s.tabIdx = append(s.tabIdx[:0], rv.list()...)
	slices.Sort(s.tabIdx)
	s.tabVal = s.tabVal[:0]
	for _, i := range s.tabIdx {
		s.tabVal = append(s.tabVal, rv.v[i]*s.rowScale[i])
	}
	return s.tabIdx, s.tabVal
}

// Slack reports whether row i's logical is basic (the row is not tight
// at the basis).
func (s *State) Slack(i int) bool { return s.pos[s.n+i] >= 0 }

// RemoveRows deletes the rows for which drop is true; each must have its
// logical basic (see Slack), so the basis stays a basis and keeps its
// values and duals.
func (s *State) RemoveRows(drop func(i int) bool) error {
	n := s.n
	keep := make([]int, 0, s.m) // new row -> old row
	for i := 0; i < s.m; i++ {
		if drop(i) {
			if s.pos[n+i] < 0 {
				return errors.New("lp: removing a row whose logical is nonbasic")
			}
			continue
		}
		keep = append(keep, i)
	}
	if len(keep) == s.m {
		return nil
	}
	newOf := make([]int, s.m)
	for i := range newOf {
		newOf[i] = -1
	}
	for ni, oi := range keep {
		newOf[oi] = ni
	}
	// Rows.
	nnz := 0
	for _, oi := range keep {
		nnz += s.rStart[oi+1] - s.rStart[oi]
	}
	rStart := make([]int, 1, len(keep)+1)
	rIdx, rVal := make([]int, 0, nnz), make([]float64, 0, nnz)
	for _, oi := range keep {
		rIdx = append(rIdx, s.rIdx[s.rStart[oi]:s.rStart[oi+1]]...)
		rVal = append(rVal, s.rVal[s.rStart[oi]:s.rStart[oi+1]]...)
		rStart = append(rStart, len(rIdx))
	}
	s.rStart, s.rIdx, s.rVal = rStart, rIdx, rVal
	// Variables n.. and the basis.
	m2 := len(keep)
	varNew := func(k int) int {
		if k < n {
			return k
		}
		return n + newOf[k-n]
	}
	cost := append([]float64(nil), s.cost[:n]...)
	lo := append([]float64(nil), s.lo[:n]...)
	hi := append([]float64(nil), s.hi[:n]...)
	x := append([]float64(nil), s.x[:n]...)
	d := append([]float64(nil), s.d[:n]...)
	rowScale := make([]float64, 0, m2)
	for _, oi := range keep {
		k := n + oi
		cost, lo, hi = append(cost, s.cost[k]), append(lo, s.lo[k]), append(hi, s.hi[k])
		x, d = append(x, s.x[k]), append(d, s.d[k])
		rowScale = append(rowScale, s.rowScale[oi])
	}
	var head []int
	var w []float64
	for p, k := range s.head {
		if k >= n && newOf[k-n] < 0 {
			continue
		}
		head = append(head, varNew(k))
		w = append(w, s.w[p])
	}
	pos := make([]int, n+m2)
	for k := range pos {
		pos[k] = -1
	}
	for p, k := range head {
		pos[k] = p
	}
	s.cost, s.lo, s.hi, s.x, s.d, s.rowScale = cost, lo, hi, x, d, rowScale
	s.head, s.w, s.pos = head, w, pos
	s.m = m2
	s.alpha = make([]float64, n+m2)
	s.resized()
	return nil
}

// Clone returns an independent copy that continues from the same basis
// (its factorisation is rebuilt on its first Solve).
func (s *State) Clone() *State {
	s.columns()
	c := *s
	c.cost = append([]float64(nil), s.cost...)
	c.lo = append([]float64(nil), s.lo...)
	c.hi = append([]float64(nil), s.hi...)
	c.rowScale = append([]float64(nil), s.rowScale...)
	c.colScale = append([]float64(nil), s.colScale...)
	c.rStart = append([]int(nil), s.rStart...)
	c.rIdx = append([]int(nil), s.rIdx...)
	c.rVal = append([]float64(nil), s.rVal...)
	c.cStart = append([]int(nil), s.cStart...)
	c.cIdx = append([]int(nil), s.cIdx...)
	c.cVal = append([]float64(nil), s.cVal...)
	c.head = append([]int(nil), s.head...)
	c.pos = append([]int(nil), s.pos...)
	c.x = append([]float64(nil), s.x...)
	c.d = append([]float64(nil), s.d...)
	c.w = append([]float64(nil), s.w...)
	c.inv, c.dirty, c.stale = nil, true, false
	c.tab, c.tabIdx, c.tabVal = nil, nil, nil
	c.Stop = nil
	c.rho, c.col, c.tau, c.flipv = newSvec(s.m), newSvec(s.m), newSvec(s.m), newSvec(s.m)
	c.onList = make([]bool, s.m)
	c.infeasible = nil
	c.alpha = make([]float64, s.n+s.m)
	c.touched = nil
	c.cands, c.flips = nil, nil
	c.ray = nil
	return &c
}
