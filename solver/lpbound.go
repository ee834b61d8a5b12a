package solver

import (
	"math"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// LP size caps. gonum's Simplex is dense (a solve per pivot) and cannot be
// cancelled, so the cap is on size, set from measurements: the largest
// allowed LP takes well under 100 ms on one core.
const (
	lpMaxRows  = 160
	lpMaxCells = 160 * 700
)

// lpBound is a lower bound on level i from the LP relaxation of the linear
// mirror, with every earlier level held at its frozen value and every
// assumption (pin, cordon) true: ceil(LP optimum - 1e-6) plus the level's
// offset. It reports false when the LP is too large, fails, or the time
// left is short. Standard form is built by hand as [G | I] with a slack
// per row (gonum's Convert would split free variables, solver-notes §6.4);
// an equality becomes two inequalities so the matrix keeps full row rank.
func lpBound(x *exact, i int, end time.Time) (int64, bool) {
	if time.Until(end) < 50*time.Millisecond {
		return 0, false
	}
	lin := &x.e.Linear
	fixed := map[z.Var]bool{}
	for _, m := range lin.Assumed {
		fixed[m.Var()] = m.IsPos()
	}
	col := map[z.Var]int{}
	var vars []z.Var
	colOf := func(v z.Var) int {
		c, ok := col[v]
		if !ok {
			c = len(vars)
			col[v] = c
			vars = append(vars, v)
		}
		return c
	}
	type row struct {
		cols []int
		coef []float64
		rhs  float64 // sum <= rhs
	}
	var rows []row
	add := func(ts []encode.Term, sign, rhs float64) {
		r := row{rhs: sign * rhs}
		for _, t := range ts {
			if val, ok := fixed[t.Var]; ok {
				if val {
					r.rhs -= sign * float64(t.Coef)
				}
				continue
			}
			r.cols = append(r.cols, colOf(t.Var))
			r.coef = append(r.coef, sign*float64(t.Coef))
		}
		if len(r.cols) == 0 {
			return // constant row: holds for the incumbent
		}
		rows = append(rows, r)
	}
	for _, r := range lin.Rows {
		switch r.Op {
		case encode.LE:
			add(r.Terms, 1, float64(r.RHS))
		case encode.GE:
			add(r.Terms, -1, float64(r.RHS))
		default:
			add(r.Terms, 1, float64(r.RHS))
			add(r.Terms, -1, float64(r.RHS))
		}
		if len(rows) > lpMaxRows {
			return 0, false
		}
	}
	for j := 0; j < i; j++ {
		add(lin.Objectives[j], 1, float64(x.obj[j]-lin.Offsets[j]))
	}
	// Variables with no row but an objective term sit at their best bound.
	var constant float64
	objCol := map[int]float64{}
	for _, t := range lin.Objectives[i] {
		if val, ok := fixed[t.Var]; ok {
			if val {
				constant += float64(t.Coef)
			}
			continue
		}
		if c, ok := col[t.Var]; ok {
			objCol[c] += float64(t.Coef)
		} else if t.Coef < 0 {
			constant += float64(t.Coef)
		}
	}
	m, n := len(rows), len(vars)
	if m == 0 || m > lpMaxRows || m*(n+m) > lpMaxCells {
		return 0, false
	}
	A := mat.NewDense(m, n+m, nil)
	b := make([]float64, m)
	for ri, r := range rows {
		for k, c := range r.cols {
			A.Set(ri, c, A.At(ri, c)+r.coef[k])
		}
		A.Set(ri, n+ri, 1)
		b[ri] = r.rhs
	}
	c := make([]float64, n+m)
	for ci, w := range objCol {
		c[ci] = w
	}
	// Negative right sides: flip the row, slack included, for phase one.
	for ri := range b {
		if b[ri] < 0 {
			for k := 0; k < n+m; k++ {
				A.Set(ri, k, -A.At(ri, k))
			}
			b[ri] = -b[ri]
		}
	}
	opt, _, err := lp.Simplex(c, A, b, 1e-10, nil)
	if err != nil || math.IsNaN(opt) {
		return 0, false
	}
	return int64(math.Ceil(opt+constant-1e-6)) + lin.Offsets[i], true
}
