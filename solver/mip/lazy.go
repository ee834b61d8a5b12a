package mip

import (
	"cmp"
	"slices"

	"github.com/poolsolve/poolsolve/encode"
)

// Lazy rows: on a large model most rows are implications between two to
// five columns (a route needs its lane, a split needs its residency), and
// at the LP's optimum almost none of them binds: on level 4 of 256x1000
// seed 42, 1,721 of 112,200 rows have a nonzero dual in CLP's optimal
// basis. The cut loop starts its LP without them and adds the ones its
// vertex violates, solve after solve, from the same basis. Every bound
// stays valid (fewer rows relax the LP), and each solve is one of a
// model of 6,000-20,000 rows instead of 112,000: there the LP's bound
// reached 323,252 after 12 solves and 1.0 s, where the whole model's
// first solve takes over a minute to its optimum, 323,321.
//
// A vertex that violates a lazy row is not a point of the model: branch
// and cut adds the rows before it branches on or accepts a vertex.

// LazyRows are a model's rows its LP leaves out until a point violates
// them. They stay in the relaxation's Rows (the PB workers and probing
// read every row); the pool only names them.
type LazyRows struct {
	rows []Row
}

// LazyMinRows is the size of a presolved model (in rows) from which its
// LP starts without the lazy rows. Below it the whole model solves in
// tenths of a second, and the canonical re-solve and branch and cut,
// which prove small models, keep every row in the LP. A variable so
// that tests can send small models either way.
var LazyMinRows = 25000

// lazyTol is how far past its side a point must be for a lazy row to
// count as violated: well past the simplex's primal tolerance (1e-7 on
// rows scaled by their largest coefficient, 1 here), so that a row the
// LP holds is never added twice.
const lazyTol = 1e-5

// lazyCandidate says whether w may wait outside the LP: a short <= row
// with unit coefficients of both signs, an implication between columns.
// Sums to one, clauses, memory and objective rows stay in.
func lazyCandidate(w *Row) bool {
	if w.Op != encode.LE || len(w.Idx) < 2 || len(w.Idx) > probeMaxCutLen {
		return false
	}
	neg := 0
	for _, v := range w.Val {
		switch v {
		case -1:
			neg++
		case 1:
		default:
			return false
		}
	}
	return neg > 0 && neg < len(w.Val)
}

// splitLazy returns the rows the LP starts with and the pool of the
// others, nil when the model is below LazyMinRows or has no candidate.
func splitLazy(rows []Row) ([]Row, *LazyRows) {
	if len(rows) < LazyMinRows {
		return rows, nil
	}
	load := make([]Row, 0, len(rows)/8)
	lz := &LazyRows{}
	for k := range rows {
		if lazyCandidate(&rows[k]) {
			lz.rows = append(lz.rows, rows[k])
		} else {
			load = append(load, rows[k])
		}
	}
	if len(lz.rows) == 0 {
		return rows, nil
	}
	return load, lz
}

// Len is the number of rows in the pool.
func (lz *LazyRows) Len() int {
	if lz == nil {
		return 0
	}
	return len(lz.rows)
}

// Violated returns the pool's rows xs violates by more than lazyTol, in
// pool order; past max (0: no cap) only the max most violated.
func (lz *LazyRows) Violated(xs []float64, max int) []Row {
	if lz == nil {
		return nil
	}
	type hit struct {
		k  int
		by float64
	}
	var hits []hit
	for k := range lz.rows {
		w := &lz.rows[k]
		var act float64
		for q, j := range w.Idx {
			act += float64(w.Val[q]) * xs[j]
		}
		if by := act - float64(w.Rhs); by > lazyTol {
			hits = append(hits, hit{k, by})
		}
	}
	if max > 0 && len(hits) > max {
		slices.SortStableFunc(hits, func(a, b hit) int { return cmp.Compare(b.by, a.by) })
		hits = hits[:max]
		slices.SortFunc(hits, func(a, b hit) int { return a.k - b.k })
	}
	out := make([]Row, len(hits))
	for q, h := range hits {
		out[q] = lz.rows[h.k]
	}
	return out
}
