package solver

import (
	"math"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
)

// lpMaxCells caps the dense tableau (rows × columns, 8 bytes each, so
// 64 MiB): pooltest.Random(1, 24, 60) has about 900 rows × 900 variables,
// a 2.5M-cell tableau solved in about 25 ms.
const lpMaxCells = 1 << 23

// lpBound is a lower bound on level i from the LP relaxation of the linear
// mirror, with every earlier level held at its frozen value and every
// assumption (pin, cordon) true: ceil(LP bound - 1e-6) plus the level's
// offset. It reports false when the LP is too large or infeasible, or
// the time left is short.
//
// The LP is solved by solveLP (simplex.go), started from the incumbent
// (feasible, so phase 1 is usually empty). Its bound comes from the final
// row multipliers by weak duality, recomputed from the integer data with a
// rounding margin, so it is a valid lower bound even when the simplex
// stops at its time cap before optimality (it is then only weaker); see
// simplex.go. The ceiling is valid because level i is an integer.
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
	pr := &lpProblem{}
	add := func(ts []encode.Term, op encode.Op, rhs int64) {
		r := lpRow{op: op, rhs: float64(rhs)}
		for _, t := range ts {
			if val, ok := fixed[t.Var]; ok {
				if val {
					r.rhs -= float64(t.Coef)
				}
				continue
			}
			r.idx = append(r.idx, colOf(t.Var))
			r.val = append(r.val, float64(t.Coef))
		}
		if len(r.idx) == 0 {
			return // constant row: holds for the incumbent
		}
		pr.rows = append(pr.rows, r)
	}
	for _, r := range lin.Rows {
		add(r.Terms, r.Op, r.RHS)
	}
	for j := 0; j < i; j++ {
		add(lin.Objectives[j], encode.LE, x.obj[j]-lin.Offsets[j])
	}
	var constant int64
	var obj []encode.Term
	for _, t := range lin.Objectives[i] {
		if val, ok := fixed[t.Var]; ok {
			if val {
				constant += t.Coef
			}
			continue
		}
		colOf(t.Var)
		obj = append(obj, t)
	}
	pr.c = make([]float64, len(vars))
	for _, t := range obj {
		pr.c[col[t.Var]] += float64(t.Coef)
	}
	if m := len(pr.rows); m == 0 || m*(len(vars)+2*m) > lpMaxCells {
		return 0, false
	}
	if x.best.Lanes != nil {
		if vals, err := x.e.Values(x.best); err == nil {
			pr.start = make([]bool, len(vars))
			for c, v := range vars {
				pr.start[c] = int(v) < len(vals) && vals[v]
			}
		}
	}
	budget := min(time.Until(end)/10, lpMaxTime)
	res := solveLP(pr, time.Now().Add(budget), 0)
	if !res.hasBound {
		return 0, false
	}
	return int64(math.Ceil(res.bound-1e-6)) + constant + lin.Offsets[i], true
}

// lpMaxTime caps one LP.
const lpMaxTime = 500 * time.Millisecond
