package mip

import (
	"math"
	"slices"

	"github.com/poolsolve/poolsolve/encode"
)

// Bounds by weak (Lagrangian) duality. Whatever the simplex did (drift,
// a time cap, a suboptimal basis), multipliers y with y_r <= 0 on <=
// rows and y_r >= 0 on >= rows (free on = rows) give
//
//	c·x >= y·b + Σ_j min(0, c_j − y·A_j)   for every feasible x,
//
// since for feasible x each y_r(b_r − a_r·x) is <= 0, and the least of
// d_j·x_j over 0 <= x_j <= 1 is min(0, d_j). The bound is recomputed from
// the integer data with a rounding margin far larger than the float64
// error of the sum, so every bound the solver reports from an LP is
// valid; at an optimal basis it equals the LP optimum.

// FloatRow is sum val[k]·x[idx[k]] op rhs.
type FloatRow struct {
	Idx []int
	Val []float64
	Op  encode.Op
	Rhs float64
}

// Problem is min c·x over the rows with 0 <= x <= 1; len(c) is the
// number of variables.
type Problem struct {
	C    []float64
	Rows []FloatRow
}

// WeakBound is y·b + Σ_j min(0, c_j − y·A_j) from the problem's own
// data, less a rounding margin: a valid lower bound on c·x over the
// feasible set for any y with y_r <= 0 on ≤ rows, >= 0 on ≥ rows (rows
// with the wrong sign get 0). The margin, 1e-9 of the sum of the
// magnitudes of every term, is about 10⁴ times float64's worst-case
// summation error at 10⁵ terms.
func WeakBound(pr *Problem, y []float64) (float64, bool) {
	d, mag := ReducedCosts(pr, y)
	var val float64
	for ri := range pr.Rows {
		val += ClipY(pr.Rows[ri].Op, y[ri]) * pr.Rows[ri].Rhs
	}
	for _, dj := range d {
		if dj < 0 {
			val += dj
		}
	}
	if math.IsNaN(val) || math.IsInf(val, 0) || math.IsNaN(mag) || math.IsInf(mag, 0) {
		return 0, false
	}
	return val - 1e-9*mag, true
}

// ClipY is a multiplier clipped to the sign its row's sense allows: <= 0
// on <= rows, >= 0 on >= rows, free on = rows.
func ClipY(op encode.Op, y float64) float64 {
	if (op == encode.LE && y > 0) || (op == encode.GE && y < 0) {
		return 0
	}
	return y
}

// ReducedCosts is d = c − yA for y clipped by clipY, and the magnitude
// of every term summed (with |y·b|), for lagrangeBound's margin.
func ReducedCosts(pr *Problem, y []float64) ([]float64, float64) {
	d := slices.Clone(pr.C)
	var mag float64
	for _, c := range pr.C {
		mag += math.Abs(c)
	}
	for ri := range pr.Rows {
		w := &pr.Rows[ri]
		yr := ClipY(w.Op, y[ri])
		if yr == 0 {
			continue
		}
		mag += math.Abs(yr * w.Rhs)
		for k, j := range w.Idx {
			t := yr * w.Val[k]
			d[j] -= t
			mag += math.Abs(t)
		}
	}
	return d, mag
}
