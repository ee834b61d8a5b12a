package solver

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/encode"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/optimize/convex/lp"
)

func lpFar() time.Time { return time.Now().Add(time.Minute) }

func row(op encode.Op, rhs float64, idxVal ...float64) lpRow {
	r := lpRow{op: op, rhs: rhs}
	for k := 0; k < len(idxVal); k += 2 {
		r.idx = append(r.idx, int(idxVal[k]))
		r.val = append(r.val, idxVal[k+1])
	}
	return r
}

// checkOptimum asserts an optimal status, the primal value and a bound
// within 1e-6 below it.
func checkOptimum(t *testing.T, res lpResult, want float64) {
	t.Helper()
	if res.status != lpOptimal {
		t.Fatalf("status %v, want optimal", res.status)
	}
	if math.Abs(res.obj-want) > 1e-7 {
		t.Errorf("objective %v, want %v", res.obj, want)
	}
	if !res.hasBound || res.bound > want+1e-9 || res.bound < want-1e-6 {
		t.Errorf("bound %v (ok %v), want just below %v", res.bound, res.hasBound, want)
	}
}

func TestSimplexSolvesTinyLPsWithKnownOptima(t *testing.T) {
	cases := []struct {
		name string
		pr   lpProblem
		want float64
	}{
		{"a fractional vertex", lpProblem{c: []float64{-1, -1},
			rows: []lpRow{row(encode.LE, 1.5, 0, 1, 1, 1)}}, -1.5},
		{"both variables flip to their upper bound", lpProblem{c: []float64{-1, -2},
			rows: []lpRow{row(encode.LE, 5, 0, 1, 1, 1)}}, -3},
		{"an equality row", lpProblem{c: []float64{1, 2},
			rows: []lpRow{row(encode.EQ, 1.5, 0, 1, 1, 1)}}, 2},
		{"a covering row from an all-zero start", lpProblem{c: []float64{3, 2, 4},
			rows: []lpRow{row(encode.GE, 2, 0, 1, 1, 1, 2, 1)}}, 5},
		{"a covering row started at an infeasible point", lpProblem{c: []float64{3, 2, 4},
			rows:  []lpRow{row(encode.GE, 2, 0, 1, 1, 1, 2, 1), row(encode.LE, 1, 0, 1, 2, 1)},
			start: []bool{true, false, true}}, 5},
		// Beale's example, which cycles under the textbook Dantzig rule.
		{"Beale's degenerate cycling example", lpProblem{c: []float64{-0.75, 20, -0.5, 6},
			rows: []lpRow{
				row(encode.LE, 0, 0, 0.25, 1, -8, 2, -1, 3, 9),
				row(encode.LE, 0, 0, 0.5, 1, -12, 2, -0.5, 3, 3),
				row(encode.LE, 1, 2, 1),
			}}, -1.25},
		{"many rows through one degenerate vertex", lpProblem{c: []float64{-1, -1, -1},
			rows: []lpRow{
				row(encode.LE, 1, 0, 1, 1, 1), row(encode.LE, 1, 1, 1, 2, 1),
				row(encode.LE, 1, 0, 1, 2, 1), row(encode.LE, 1.5, 0, 1, 1, 1, 2, 1),
				row(encode.LE, 2, 0, 2, 1, 1, 2, 1), row(encode.GE, 0, 0, 1, 1, -1),
			}}, -1.5},
		{"level rows with an earlier level held at its optimum", lpProblem{c: []float64{5, 1, 1},
			rows: []lpRow{row(encode.GE, 1, 0, 1, 1, 1), row(encode.GE, 1, 0, 1, 2, 1),
				row(encode.LE, 0, 1, 1, 2, 1)}}, 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkOptimum(t, solveLP(&tc.pr, lpFar(), 0), tc.want)
		})
	}
}

func TestSimplexReportsInfeasibleLPsWithoutABound(t *testing.T) {
	cases := map[string]lpProblem{
		"a row no box point meets": {c: []float64{1, 1},
			rows: []lpRow{row(encode.GE, 3, 0, 1, 1, 1)}},
		"two rows that each hold somewhere": {c: []float64{1, 1},
			rows: []lpRow{row(encode.GE, 1.5, 0, 1, 1, 1), row(encode.LE, 1, 0, 1, 1, 1)}},
		"an equality against a covering row": {c: []float64{1, -1, 0},
			rows: []lpRow{row(encode.EQ, 0, 0, 1, 1, 1, 2, 1), row(encode.GE, 1, 0, 1, 2, 1)}},
	}
	for name, pr := range cases {
		t.Run(name, func(t *testing.T) {
			res := solveLP(&pr, lpFar(), 0)
			if res.status != lpInfeasible || res.hasBound {
				t.Fatalf("status %v, bound %v (ok %v); want infeasible, no bound", res.status, res.bound, res.hasBound)
			}
		})
	}
}

// gonumLP solves the same LP with gonum's lp.Simplex in standard form:
// x, an upper-bound slack per variable, a slack per inequality.
func gonumLP(pr *lpProblem) (opt float64, err error) {
	defer func() {
		if r := recover(); r != nil { // gonum panics on some shapes
			err = errors.New("gonum panicked")
		}
	}()
	n := len(pr.c)
	ineq := 0
	for _, r := range pr.rows {
		if r.op != encode.EQ {
			ineq++
		}
	}
	m, w := len(pr.rows)+n, 2*n+ineq
	A := mat.NewDense(m, w, nil)
	b := make([]float64, m)
	c := make([]float64, w)
	copy(c, pr.c)
	s := 2 * n
	for i, r := range pr.rows {
		for k, j := range r.idx {
			A.Set(i, j, A.At(i, j)+r.val[k])
		}
		switch r.op {
		case encode.LE:
			A.Set(i, s, 1)
			s++
		case encode.GE:
			A.Set(i, s, -1)
			s++
		}
		b[i] = r.rhs
	}
	for j := 0; j < n; j++ {
		A.Set(len(pr.rows)+j, j, 1)
		A.Set(len(pr.rows)+j, n+j, 1)
		b[len(pr.rows)+j] = 1
	}
	opt, _, err = lp.Simplex(c, A, b, 1e-10, nil)
	return opt, err
}

func TestSimplexAgreesWithGonumOnRandomSmallLPs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	ops := []encode.Op{encode.LE, encode.GE, encode.EQ}
	compared, infeasible := 0, 0
	for trial := 0; trial < 400; trial++ {
		n, m := 2+rng.IntN(7), 1+rng.IntN(6)
		pr := lpProblem{c: make([]float64, n)}
		for j := range pr.c {
			pr.c[j] = float64(rng.IntN(21) - 10)
		}
		for i := 0; i < m; i++ {
			r := lpRow{op: ops[rng.IntN(len(ops))]}
			if i > 0 && rng.IntN(4) > 0 {
				r.op = encode.LE // keep enough instances feasible
			}
			for j := 0; j < n; j++ {
				if rng.IntN(3) > 0 {
					r.idx = append(r.idx, j)
					r.val = append(r.val, float64(rng.IntN(11)-5))
				}
			}
			r.rhs = float64(rng.IntN(9) - 2)
			pr.rows = append(pr.rows, r)
		}
		if rng.IntN(2) == 0 {
			pr.start = make([]bool, n)
			for j := range pr.start {
				pr.start[j] = rng.IntN(2) == 0
			}
		}
		want, err := gonumLP(&pr)
		res := solveLP(&pr, lpFar(), 0)
		switch {
		case errors.Is(err, lp.ErrInfeasible):
			infeasible++
			if res.status != lpInfeasible {
				t.Errorf("trial %d: gonum infeasible, ours %v obj %v", trial, res.status, res.obj)
			}
		case err != nil:
			continue // gonum failed (singular basis, Bland): nothing to compare
		default:
			compared++
			if res.status != lpOptimal || math.Abs(res.obj-want) > 1e-6*(1+math.Abs(want)) {
				t.Errorf("trial %d: gonum %v, ours %v (%v)", trial, want, res.obj, res.status)
			}
			if !res.hasBound || res.bound > want+1e-9 || res.bound < want-1e-5*(1+math.Abs(want)) {
				t.Errorf("trial %d: bound %v (ok %v), gonum optimum %v", trial, res.bound, res.hasBound, want)
			}
			// Stopped early by the iteration cap, the bound is weaker
			// but still valid.
			capped := solveLP(&pr, lpFar(), 1+trial%3)
			if capped.hasBound && capped.bound > want+1e-9 {
				t.Errorf("trial %d: bound %v after %d pivots (%v), above the optimum %v",
					trial, capped.bound, capped.iters, capped.status, want)
			}
		}
	}
	if compared < 100 || infeasible < 20 {
		t.Errorf("only %d optimal and %d infeasible comparisons", compared, infeasible)
	}
}

// Any multipliers give a valid bound; wrong signs are ignored.
func TestLagrangeBoundIsValidForArbitraryMultipliers(t *testing.T) {
	pr := lpProblem{c: []float64{3, 2, 4},
		rows: []lpRow{row(encode.GE, 2, 0, 1, 1, 1, 2, 1), row(encode.LE, 1, 0, 1, 2, 1)}}
	rng := rand.New(rand.NewPCG(3, 5))
	for k := 0; k < 1000; k++ {
		y := []float64{rng.Float64()*20 - 10, rng.Float64()*20 - 10}
		if b, ok := lagrangeBound(&pr, y); !ok || b > 5 {
			t.Fatalf("y %v: bound %v (ok %v) above the optimum 5", y, b, ok)
		}
	}
}
