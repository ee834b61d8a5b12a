package lp

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/internal/clock"
	"gonum.org/v1/gonum/mat"
	glp "gonum.org/v1/gonum/optimize/convex/lp"
)

// agreeTol is the contract's tolerance on an optimal objective, relative
// to 1+|optimum|: the cost perturbation and the primal tolerance
// together stay well inside it.
const agreeTol = 1e-6

// FuzzTheDualSimplexAgreesWithGonum compares the optimum and the
// infeasibility verdict with gonum's dense simplex, an independent
// implementation, on random small boxed LPs drawn from the fuzzed seed.
func FuzzTheDualSimplexAgreesWithGonum(f *testing.F) {
	for _, seed := range []uint64{0, 1, 7, 42, 1 << 40, math.MaxUint64} {
		f.Add(seed, uint64(3))
	}
	f.Fuzz(func(t *testing.T, seed, stream uint64) {
		p := randomProblem(rand.New(rand.NewPCG(seed, stream)))
		want, err := gonumOptimum(p)
		s, st := solve(t, p)
		switch {
		case errors.Is(err, glp.ErrInfeasible):
			if st != Infeasible {
				t.Fatalf("gonum says infeasible, ours %v at %v", st, objective(p, s))
			}
		case err != nil:
			t.Skip("gonum failed:", err) // singular or cycling: nothing to compare
		default:
			if st != Optimal {
				t.Fatalf("gonum optimum %v, ours %v", want, st)
			}
			if got := objective(p, s); math.Abs(got-want) > agreeTol*(1+math.Abs(want)) || !feasible(p, s, 1e-6) {
				t.Fatalf("gonum optimum %v, ours %v", want, got)
			}
			if b := dualBound(p, s.Duals()); b > want+1e-6 {
				t.Fatalf("the duals bound %v above the optimum %v", b, want)
			}
		}
	})
}

// seededLP is a random boxed LP of m rows over n columns, k nonzeros a
// row, whose rows all hold at a random point x0 inside the box: it is
// feasible by construction, a mix of <=, >=, ranged and equality rows.
func seededLP(seed uint64, m, n, k int) (*Problem, []float64) {
	rng := rand.New(rand.NewPCG(seed, uint64(m)))
	p := &Problem{Cost: make([]float64, n), Lo: make([]float64, n), Hi: make([]float64, n)}
	x0 := make([]float64, n)
	for j := range p.Cost {
		p.Cost[j] = float64(rng.IntN(41) - 20)
		p.Hi[j] = float64(1 + rng.IntN(4))
		x0[j] = rng.Float64() * p.Hi[j]
	}
	for i := 0; i < m; i++ {
		var r Row
		var act float64
		for t := 0; t < k; t++ {
			j := rng.IntN(n)
			v := float64(rng.IntN(19) - 9)
			if v == 0 {
				v = 1
			}
			r.Idx = append(r.Idx, j)
			r.Val = append(r.Val, v)
			act += v * x0[j]
		}
		slack := rng.Float64()
		switch rng.IntN(8) {
		case 0:
			r.Lo, r.Hi = act, act
		case 1, 2:
			r.Lo, r.Hi = act-slack, act+rng.Float64()
		case 3, 4:
			r.Lo, r.Hi = act-slack, inf()
		default:
			r.Lo, r.Hi = math.Inf(-1), act+slack
		}
		p.Rows = append(p.Rows, r)
	}
	return p, x0
}

// At hundreds to thousands of rows the LU is rebuilt many times and the
// solves run hypersparse; the optimum is certified independently of
// the simplex by weak duality: the Lagrangian bound of the reported
// duals on the true data meets the objective of the reported point.
func TestLargeSeededLPsReachACertifiedOptimumAcrossRefactorisations(t *testing.T) {
	cases := []struct {
		name    string
		m, n, k int
	}{
		{"three hundred rows over four hundred columns", 300, 400, 6},
		{"a thousand rows over eight hundred columns", 1000, 800, 5},
		{"two and a half thousand rows over three thousand columns", 2500, 3000, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _ := seededLP(uint64(c.m*7+c.n), c.m, c.n, c.k)
			s, st := solve(t, p)
			if st != Optimal {
				t.Fatalf("status %v after %d iterations", st, s.Iterations())
			}
			if !feasible(p, s, 1e-6) {
				t.Fatal("the point is not feasible")
			}
			if s.Iterations() < 2*refactorEvery(c.m) {
				t.Fatalf("%d iterations: the LU was never rebuilt twice (every %d)", s.Iterations(), refactorEvery(c.m))
			}
			obj, b := objective(p, s), dualBound(p, s.Duals())
			if b > obj+1e-6*(1+math.Abs(obj)) {
				t.Fatalf("the dual bound %v exceeds the primal objective %v", b, obj)
			}
			if gap := (obj - b) / (1 + math.Abs(obj)); gap > agreeTol {
				t.Fatalf("primal %v, dual bound %v: relative gap %.3g", obj, b, gap)
			}
		})
	}
}

// Limit ends a solve at an iteration cap, a past deadline or a Stop
// that says so, and the State continues from there to the optimum a
// fresh solve reaches.
func TestLimitAndStopEndASolveThatThenResumesToTheOptimum(t *testing.T) {
	p, _ := seededLP(5, 400, 500, 5)
	fresh, st := solve(t, p)
	if st != Optimal {
		t.Fatal(st)
	}
	want := objective(p, fresh)
	cases := []struct {
		name     string
		deadline time.Time
		maxIter  int
		stop     func() bool
		iters    int // at most this many iterations before Limit
	}{
		{"an iteration cap of five stops after five", far(), 5, nil, 5},
		{"a deadline already past stops before the first", time.Now().Add(-time.Second), 0, nil, 0},
		{"a stop that says yes stops before the first", far(), 0, func() bool { return true }, 0},
		{"a stop that says yes on its third call stops within three clock checks", far(), 0, countdown(3), 2 * clockEvery},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(p)
			if err != nil {
				t.Fatal(err)
			}
			s.Stop = c.stop
			if got := s.Solve(c.deadline, c.maxIter); got != Limit {
				t.Fatalf("status %v, want limit", got)
			}
			if s.Iterations() > c.iters {
				t.Fatalf("%d iterations before the limit, want at most %d", s.Iterations(), c.iters)
			}
			s.Stop = nil
			if got := s.Solve(far(), 0); got != Optimal {
				t.Fatalf("resumed: %v", got)
			}
			if got := objective(p, s); math.Abs(got-want) > agreeTol*(1+math.Abs(want)) {
				t.Fatalf("resumed to %v, fresh %v", got, want)
			}
		})
	}
}

// A counted clock reads only the iterations charged to it: a deadline
// on it ends the solve at the same iteration on every run, however fast
// the machine, and the clock has moved by what those iterations stand for.
func TestACountedClockEndsTheSolveAtTheSameIterationOnEveryRun(t *testing.T) {
	p, _ := seededLP(5, 400, 500, 5)
	origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) // long past on the wall clock
	var iters []int
	for range 2 {
		s, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		s.Clock = clock.Counted(origin)
		deadline := origin.Add(40 * clockEvery * s.iterCost())
		if got := s.Solve(deadline, 0); got != Limit {
			t.Fatalf("status %v after %d iterations, want limit", got, s.Iterations())
		}
		if s.Iterations() < 30*clockEvery || s.Iterations() > 40*clockEvery {
			t.Fatalf("%d iterations before a deadline of %d iterations' work", s.Iterations(), 40*clockEvery)
		}
		iters = append(iters, s.Iterations())
	}
	if iters[0] != iters[1] {
		t.Errorf("two runs ended at iterations %d and %d", iters[0], iters[1])
	}
}

func countdown(n int) func() bool {
	return func() bool { n--; return n <= 0 }
}

// A basis whose columns are dependent is repaired at refactorisation:
// the dependent column leaves for the logical of the row it could not
// pivot, and the solve goes on to gonum's optimum.
func TestASingularBasisIsRepairedWithLogicalsAndSolved(t *testing.T) {
	cases := []struct {
		name string
		p    *Problem
		cols []int // structurals forced into the first positions
	}{
		{"two equal columns", withRows(binary(-1, -2, 1),
			le(2, 0, 1, 1, 1, 2, 1), le(3, 0, 2, 1, 2), ge(0, 2, 3)), []int{0, 1}},
		{"a column the sum of two others", withRows(binary(-3, -1, -1, 2),
			le(2, 0, 1, 1, 1), le(2, 0, 1, 2, 1), le(1, 3, 1)), []int{0, 1, 2}},
		{"a column of zeros in the rows", withRows(binary(-1, 1, -1),
			le(1, 0, 1, 2, 1), ge(0, 0, 1, 2, -1)), []int{1, 0}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.p)
			if err != nil {
				t.Fatal(err)
			}
			s.columns()
			for p, j := range c.cols {
				old := s.head[p]
				s.pos[old] = -1
				s.x[old] = s.nonbasicValue(old)
				s.head[p], s.pos[j] = j, p
			}
			s.dirty = true
			s.refactor()
			logicals := 0
			for p, k := range s.head {
				if s.pos[k] != p {
					t.Fatalf("position %d holds %d, which thinks it is at %d", p, k, s.pos[k])
				}
				if k >= s.n {
					logicals++
				}
			}
			if logicals == s.m-len(c.cols) {
				t.Fatal("no logical came back into the basis: nothing was repaired")
			}
			if st := s.Solve(far(), 0); st != Optimal {
				t.Fatalf("status %v", st)
			}
			want, err := gonumOptimum(c.p)
			if err != nil {
				t.Fatal(err)
			}
			if got := objective(c.p, s); math.Abs(got-want) > agreeTol*(1+math.Abs(want)) || !feasible(c.p, s, 1e-6) {
				t.Fatalf("gonum %v, ours %v", want, got)
			}
		})
	}
}

// TableauMultipliers ρ of a basis position p give the tableau row
// ρᵀ·[A | −I]: 0 on every other basic variable, and proportional to
// row p of B⁻¹·[A | −I] from a dense solve, with factor 1 when the
// basic variable is a column and the row's scale when it is a logical.
func TestTableauMultipliersReproduceTheDenseTableauRow(t *testing.T) {
	cases := []struct {
		name string
		seed uint64
		m, n int
	}{
		{"twelve rows over fifteen columns", 1, 12, 15},
		{"forty rows over thirty columns", 2, 40, 30},
		{"sixty rows over eighty columns", 3, 60, 80},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _ := seededLP(c.seed, c.m, c.n, 4)
			s, st := solve(t, p)
			if st != Optimal {
				t.Fatal(st)
			}
			m, n := c.m, c.n
			// Unscaled [A | −I] and B, dense.
			M := mat.NewDense(m, n+m, nil)
			for i, r := range p.Rows {
				for k, j := range r.Idx {
					M.Set(i, j, M.At(i, j)+r.Val[k])
				}
				M.Set(i, n+i, -1)
			}
			B := mat.NewDense(m, m, nil)
			for q, k := range s.head {
				for i := 0; i < m; i++ {
					B.Set(i, q, M.At(i, k))
				}
			}
			var T mat.Dense // B⁻¹·[A | −I]
			if err := T.Solve(B, M); err != nil {
				t.Fatal(err)
			}
			structural := 0
			for q, kq := range s.head {
				idx, val := s.TableauMultipliers(q)
				rho := make([]float64, m)
				for t2, i := range idx {
					rho[i] = val[t2]
				}
				row := make([]float64, n+m)
				for k := range row {
					for i := 0; i < m; i++ {
						row[k] += rho[i] * M.At(i, k)
					}
				}
				f, wantF := row[kq], 1.0
				if kq < n {
					structural++
				} else {
					wantF = s.rowScale[kq-n]
				}
				if math.Abs(f-wantF) > 1e-9*wantF {
					t.Fatalf("position %d: the basic variable's coefficient is %v, want %v", q, f, wantF)
				}
				for k := range row {
					if want := f * T.At(q, k); math.Abs(row[k]-want) > 1e-8*(1+math.Abs(want)) {
						t.Fatalf("position %d, variable %d: %v, the dense tableau %v (factor %v)", q, k, row[k], want, f)
					}
				}
			}
			if structural == 0 {
				t.Fatal("no column was basic: nothing was checked")
			}
		})
	}
}

// The perturbation that breaks dual degeneracy is gone from an optimal
// answer: the duals' Lagrangian bound on the true data meets the
// objective of the point to the primal tolerance, where perturbed
// duals leave a gap of the perturbation's size.
func TestAnOptimalAnswerCarriesNoCostPerturbation(t *testing.T) {
	cases := []struct {
		name    string
		m, n, k int
	}{
		{"three hundred rows", 300, 400, 6},
		{"a thousand rows", 1000, 800, 5},
		{"two and a half thousand rows", 2500, 3000, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, _ := seededLP(uint64(c.m*7+c.n), c.m, c.n, c.k)
			s, st := solve(t, p)
			if st != Optimal {
				t.Fatal(st)
			}
			obj, b := objective(p, s), dualBound(p, s.Duals())
			gap := (obj - b) / (1 + math.Abs(obj))
			t.Logf("objective %.9g, dual bound %.9g, relative gap %.3g", obj, b, gap)
			if gap > 1e-8 || gap < -1e-8 {
				t.Fatalf("relative gap %.3g between the objective and the duals' bound", gap)
			}
		})
	}
}
