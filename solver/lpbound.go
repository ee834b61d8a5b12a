package solver

import (
	"errors"
	"math"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

// LP size caps. gonum's Simplex is dense (an LU solve per pivot): 183 rows
// took 0.8 s and 281 rows over 10 s when measured, so only small LPs run,
// and each also stops at lpMaxTime.
const (
	lpMaxRows  = 200
	lpMaxCells = 200 * 800
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
	for ri := range b {
		// Loosen every row a little: it breaks the degeneracy that makes
		// the simplex cycle, and a looser LP still bounds from below.
		b[ri] += 1e-7 * float64(1+ri%7)
		// Negative right sides: flip the row, slack included, for phase one.
		if b[ri] < 0 {
			for k := 0; k < n+m; k++ {
				A.Set(ri, k, -A.At(ri, k))
			}
			b[ri] = -b[ri]
		}
	}
	budget := min(time.Until(end)/10, lpMaxTime)
	opt, err := simplex(c, A, b, time.Now().Add(budget))
	if err != nil || math.IsNaN(opt) || math.IsInf(opt, 0) {
		return 0, false
	}
	return int64(math.Ceil(opt+constant-1e-6)) + lin.Offsets[i], true
}

// lpMaxTime caps one LP.
const lpMaxTime = 500 * time.Millisecond

// errLPTime aborts a simplex run that outlives its deadline.
var errLPTime = errors.New("solver: LP time cap")

// simplex runs gonum's lp.Simplex with a deadline. gonum has no iteration
// limit and no cancellation (and its Dantzig steps can cycle on
// degenerate rows), so the matrix it reads checks the clock on every
// thousandth read and panics past the deadline; the panic is recovered
// here and reported as errLPTime.
func simplex(c []float64, A *mat.Dense, b []float64, deadline time.Time) (opt float64, err error) {
	defer func() {
		if r := recover(); r != nil {
			if r != errLPTime { //nolint:errorlint // our own sentinel value
				panic(r)
			}
			opt, err = 0, errLPTime
		}
	}()
	opt, _, err = lp.Simplex(c, &clockedMatrix{d: A, deadline: deadline}, b, 1e-10, nil)
	return opt, err
}

// clockedMatrix is a mat.Matrix that stops the simplex at a deadline.
type clockedMatrix struct {
	d        *mat.Dense
	deadline time.Time
	reads    int
}

func (m *clockedMatrix) Dims() (int, int) { return m.d.Dims() }
func (m *clockedMatrix) T() mat.Matrix    { return mat.Transpose{Matrix: m} }
func (m *clockedMatrix) At(i, j int) float64 {
	m.reads++
	if m.reads&1023 == 0 && time.Now().After(m.deadline) {
		panic(errLPTime)
	}
	return m.d.At(i, j)
}
