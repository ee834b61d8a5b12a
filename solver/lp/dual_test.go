package lp

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/gonum/mat"
	glp "gonum.org/v1/gonum/optimize/convex/lp"
)

func far() time.Time { return time.Now().Add(time.Minute) }

func inf() float64 { return math.Inf(1) }

func le(rhs float64, idxVal ...float64) Row { return mkRow(math.Inf(-1), rhs, idxVal) }
func ge(rhs float64, idxVal ...float64) Row { return mkRow(rhs, inf(), idxVal) }
func eq(rhs float64, idxVal ...float64) Row { return mkRow(rhs, rhs, idxVal) }

func mkRow(lo, hi float64, idxVal []float64) Row {
	r := Row{Lo: lo, Hi: hi}
	for k := 0; k < len(idxVal); k += 2 {
		r.Idx = append(r.Idx, int(idxVal[k]))
		r.Val = append(r.Val, idxVal[k+1])
	}
	return r
}

func binary(cost ...float64) *Problem {
	p := &Problem{Cost: cost, Lo: make([]float64, len(cost)), Hi: make([]float64, len(cost))}
	for j := range p.Hi {
		p.Hi[j] = 1
	}
	return p
}

// objective is c·x at the state's point.
func objective(p *Problem, s *State) float64 {
	var v float64
	for j, x := range s.X() {
		v += p.Cost[j] * x
	}
	return v
}

// feasible reports whether the state's point meets every row and bound
// of p within tol.
func feasible(p *Problem, s *State, tol float64) bool {
	x := s.X()
	for j, v := range x {
		if v < p.Lo[j]-tol || v > p.Hi[j]+tol {
			return false
		}
	}
	for _, r := range p.Rows {
		var a float64
		for k, j := range r.Idx {
			a += r.Val[k] * x[j]
		}
		if a < r.Lo-tol || a > r.Hi+tol {
			return false
		}
	}
	return true
}

// dualBound is the Lagrangian bound of the state's duals on p's own
// data: valid for any multipliers of the right signs.
func dualBound(p *Problem, y []float64) float64 {
	d := append([]float64(nil), p.Cost...)
	var v float64
	for i, r := range p.Rows {
		yi := y[i]
		switch {
		case math.IsInf(r.Lo, -1):
			yi = math.Min(yi, 0)
			v += yi * r.Hi
		case math.IsInf(r.Hi, 1):
			yi = math.Max(yi, 0)
			v += yi * r.Lo
		case yi >= 0:
			v += yi * r.Lo
		default:
			v += yi * r.Hi
		}
		for k, j := range r.Idx {
			d[j] -= yi * r.Val[k]
		}
	}
	for j, dj := range d {
		v += math.Min(dj*p.Lo[j], dj*p.Hi[j])
	}
	return v
}

func solve(t *testing.T, p *Problem) (*State, Status) {
	t.Helper()
	s, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	return s, s.Solve(far(), 0)
}

func TestTheDualSimplexSolvesTinyLPsWithKnownOptima(t *testing.T) {
	beale := withRows(binary(-0.75, 20, -0.5, 6), le(0, 0, 0.25, 1, -8, 2, -1, 3, 9), le(0, 0, 0.5, 1, -12, 2, -0.5, 3, 3), le(1, 2, 1))
	cases := []struct {
		name string
		p    *Problem
		want float64
	}{
		{"a fractional vertex", withRows(binary(-1, -1), le(1.5, 0, 1, 1, 1)), -1.5},
		{"both columns flip to their upper bound", withRows(binary(-1, -2), le(5, 0, 1, 1, 1)), -3},
		{"an equality row", withRows(binary(1, 2), eq(1.5, 0, 1, 1, 1)), 2},
		{"a covering row", withRows(binary(3, 2, 4), ge(2, 0, 1, 1, 1, 2, 1)), 5},
		{"a covering row and a packing row", withRows(binary(3, 2, 4), ge(2, 0, 1, 1, 1, 2, 1), le(1, 0, 1, 2, 1)), 5},
		{"a ranged row", withRows(binary(-1, -1, -1), mkRow(0.5, 2.5, []float64{0, 1, 1, 1, 2, 1})), -2.5},
		{"Beale's degenerate cycling example", beale, -1.25},
		{"many rows through one degenerate vertex", withRows(binary(-1, -1, -1),
			le(1, 0, 1, 1, 1), le(1, 1, 1, 2, 1), le(1, 0, 1, 2, 1), le(1.5, 0, 1, 1, 1, 2, 1),
			le(2, 0, 2, 1, 1, 2, 1), ge(0, 0, 1, 1, -1)), -1.5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, st := solve(t, tc.p)
			if st != Optimal {
				t.Fatalf("status %v", st)
			}
			if got := objective(tc.p, s); math.Abs(got-tc.want) > 1e-6 {
				t.Errorf("objective %v, want %v", got, tc.want)
			}
			if b := dualBound(tc.p, s.Duals()); b > tc.want+1e-9 || b < tc.want-1e-5 {
				t.Errorf("dual bound %v, want just below %v", b, tc.want)
			}
		})
	}
}

func withRows(p *Problem, rows ...Row) *Problem {
	p.Rows = rows
	return p
}

func TestAnInfeasibleLPIsReportedWithARay(t *testing.T) {
	p := withRows(binary(1, 1), ge(3, 0, 1, 1, 1))
	s, st := solve(t, p)
	if st != Infeasible {
		t.Fatalf("status %v, want infeasible", st)
	}
	ray := s.Ray()
	if len(ray) != 1 {
		t.Fatalf("ray %v", ray)
	}
	// Along the ray the dual bound grows past any value.
	y := s.Duals()
	for _, sg := range []float64{1, -1} {
		yt := []float64{y[0] + sg*1e6*ray[0]}
		if dualBound(p, yt) > 1e5 {
			return
		}
	}
	t.Errorf("the ray %v does not raise the bound", ray)
}

// gonumOptimum solves p by gonum's dense simplex in standard form: a
// slack per finite row side and per column upper bound.
func gonumOptimum(p *Problem) (float64, error) {
	n := len(p.Cost)
	type eqRow struct {
		a   []float64
		rhs float64
	}
	var rows []eqRow
	slacks := 0
	add := func(a []float64, rhs float64, slack float64) {
		if slack != 0 {
			slacks++
		}
		rows = append(rows, eqRow{a: a, rhs: rhs})
		_ = slack
	}
	var signs []float64
	dense := func(r Row) []float64 {
		a := make([]float64, n)
		for k, j := range r.Idx {
			a[j] += r.Val[k]
		}
		return a
	}
	for _, r := range p.Rows {
		switch {
		case r.Lo == r.Hi:
			add(dense(r), r.Lo, 0)
			signs = append(signs, 0)
		default:
			if !math.IsInf(r.Hi, 1) {
				add(dense(r), r.Hi, 1)
				signs = append(signs, 1)
			}
			if !math.IsInf(r.Lo, -1) {
				add(dense(r), r.Lo, -1)
				signs = append(signs, -1)
			}
		}
	}
	for j := 0; j < n; j++ {
		a := make([]float64, n)
		a[j] = 1
		add(a, p.Hi[j], 1)
		signs = append(signs, 1)
	}
	m := len(rows)
	w := n + slacks
	A := mat.NewDense(m, w, nil)
	b := make([]float64, m)
	s := n
	for i, r := range rows {
		for j, v := range r.a {
			A.Set(i, j, v)
		}
		if signs[i] != 0 {
			A.Set(i, s, signs[i])
			s++
		}
		b[i] = r.rhs
	}
	c := make([]float64, w)
	copy(c, p.Cost)
	opt, _, err := glp.Simplex(c, A, b, 1e-10, nil)
	return opt, err
}

func randomProblem(rng *rand.Rand) *Problem {
	n, m := 2+rng.IntN(7), 1+rng.IntN(6)
	p := binary(make([]float64, n)...)
	for j := range p.Cost {
		p.Cost[j] = float64(rng.IntN(21) - 10)
	}
	for i := 0; i < m; i++ {
		var r Row
		for j := 0; j < n; j++ {
			if rng.IntN(3) > 0 {
				r.Idx = append(r.Idx, j)
				r.Val = append(r.Val, float64(rng.IntN(11)-5))
			}
		}
		rhs := float64(rng.IntN(9) - 2)
		switch k := rng.IntN(6); {
		case i == 0 && k == 0:
			r.Lo, r.Hi = rhs, rhs
		case k == 1:
			r.Lo, r.Hi = rhs, inf()
		default:
			r.Lo, r.Hi = math.Inf(-1), rhs
		}
		p.Rows = append(p.Rows, r)
	}
	return p
}

func TestTheDualSimplexAgreesWithGonumOnRandomSmallLPs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	compared, infeasible := 0, 0
	for trial := 0; trial < 600; trial++ {
		p := randomProblem(rng)
		want, err := gonumOptimum(p)
		s, st := solve(t, p)
		switch {
		case errors.Is(err, glp.ErrInfeasible):
			infeasible++
			if st != Infeasible {
				t.Errorf("trial %d: gonum infeasible, ours %v at %v", trial, st, objective(p, s))
			}
		case err != nil:
			continue // gonum failed (singular, Bland): nothing to compare
		default:
			compared++
			if st != Optimal || math.Abs(objective(p, s)-want) > 1e-6*(1+math.Abs(want)) || !feasible(p, s, 1e-6) {
				t.Errorf("trial %d: gonum %v, ours %v (%v)", trial, want, objective(p, s), st)
			}
			if b := dualBound(p, s.Duals()); b > want+1e-6 || b < want-1e-5*(1+math.Abs(want)) {
				t.Errorf("trial %d: dual bound %v, optimum %v", trial, b, want)
			}
		}
	}
	if compared < 150 || infeasible < 20 {
		t.Errorf("only %d optimal and %d infeasible comparisons", compared, infeasible)
	}
}

// Devex pricing, switched to at the start or part way through a solve,
// reaches the optima steepest edge reaches, fresh and after added rows.
func TestDevexPricingReachesTheSteepestEdgeOptima(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 17))
	compared := 0
	for trial := 0; trial < 400; trial++ {
		p := randomProblem(rng)
		want, wst := solve(t, p)
		s, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		s.Solve(far(), trial%3) // 0: no cap, so Devex from the start
		s.toDevex()
		got := s.Solve(far(), 0)
		if got != wst || got == Optimal && (math.Abs(objective(p, s)-objective(p, want)) > 1e-6 || !feasible(p, s, 1e-6)) {
			t.Fatalf("trial %d: Devex %v %v, steepest edge %v %v", trial, got, objective(p, s), wst, objective(p, want))
		}
		if got != Optimal {
			continue
		}
		compared++
		extra := randomProblem(rng).Rows
		for k := range extra {
			for t := range extra[k].Idx {
				extra[k].Idx[t] %= len(p.Cost)
			}
		}
		all := &Problem{Cost: p.Cost, Lo: p.Lo, Hi: p.Hi, Rows: append(append([]Row(nil), p.Rows...), extra...)}
		fresh, fst := solve(t, all)
		if err := s.AddRows(extra); err != nil {
			t.Fatal(err)
		}
		if got := s.Solve(far(), 0); got != fst || fst == Optimal && math.Abs(objective(all, s)-objective(all, fresh)) > 1e-6 {
			t.Fatalf("trial %d: Devex after rows %v %v, fresh %v %v", trial, got, objective(all, s), fst, objective(all, fresh))
		}
	}
	if compared < 100 {
		t.Errorf("only %d optima compared", compared)
	}
}

// Rows added to a solved LP, re-solved from its basis, give the fresh
// solve's optimum; so do bound changes, removing slack rows, and a clone.
func TestWarmStartsReachTheFreshOptimum(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	checked := 0
	for trial := 0; trial < 300; trial++ {
		p := randomProblem(rng)
		extra := randomProblem(rng).Rows
		for k := range extra {
			for t := range extra[k].Idx {
				extra[k].Idx[t] %= len(p.Cost)
			}
		}
		s, st := solve(t, p)
		if st != Optimal {
			continue
		}
		// Added rows.
		if err := s.AddRows(extra); err != nil {
			t.Fatal(err)
		}
		all := &Problem{Cost: p.Cost, Lo: p.Lo, Hi: p.Hi, Rows: append(append([]Row(nil), p.Rows...), extra...)}
		fresh, fst := solve(t, all)
		wst := s.Solve(far(), 0)
		if wst != fst || (fst == Optimal && math.Abs(objective(all, s)-objective(all, fresh)) > 1e-6) {
			t.Fatalf("trial %d: warm %v %v, fresh %v %v", trial, wst, objective(all, s), fst, objective(all, fresh))
		}
		if fst != Optimal {
			continue
		}
		checked++
		// A clone continues where the original stands.
		c := s.Clone()
		if c.Solve(far(), 0) != Optimal || math.Abs(objective(all, c)-objective(all, s)) > 1e-6 {
			t.Fatalf("trial %d: clone %v, original %v", trial, objective(all, c), objective(all, s))
		}
		// Removing the rows that are slack keeps the optimum of the rest.
		var kept []Row
		if err := s.RemoveRows(func(i int) bool {
			drop := i >= len(p.Rows) && s.Slack(i)
			if !drop {
				kept = append(kept, all.Rows[i])
			}
			return drop
		}); err != nil {
			t.Fatal(err)
		}
		before := objective(all, s)
		if s.Solve(far(), 0) != Optimal || math.Abs(objective(all, s)-before) > 1e-6 {
			t.Fatalf("trial %d: after removing slack rows %v, before %v", trial, objective(all, s), before)
		}
		// Fixing a column re-solves to the fixed problem's optimum.
		j := rng.IntN(len(p.Cost))
		v := float64(rng.IntN(2))
		s.SetBounds(j, v, v)
		fixed := &Problem{Cost: p.Cost, Lo: append([]float64(nil), p.Lo...), Hi: append([]float64(nil), p.Hi...), Rows: kept}
		fixed.Lo[j], fixed.Hi[j] = v, v
		ff, ffst := solve(t, fixed)
		if got := s.Solve(far(), 0); got != ffst || (got == Optimal && math.Abs(objective(fixed, s)-objective(fixed, ff)) > 1e-6) {
			t.Fatalf("trial %d: fixed x%d=%v: warm %v %v, fresh %v %v", trial, j, v, got, objective(fixed, s), ffst, objective(fixed, ff))
		}
	}
	if checked < 50 {
		t.Errorf("only %d warm starts checked", checked)
	}
}

// Every other factorisation reuses the previous one's arrays, of
// another order, as the simplex's refactors do.
func TestTheLUSolvesRandomSparseSystemsFreshOrReused(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	var prev *lu
	checked := [2]int{}
	for trial := 0; trial < 400; trial++ {
		m := 1 + rng.IntN(30)
		// A random sparse matrix: a permuted diagonal plus noise, so it
		// is nonsingular with probability one.
		perm := rng.Perm(m)
		cols := make([][]int, m)
		vals := make([][]float64, m)
		dense := make([][]float64, m)
		for i := range dense {
			dense[i] = make([]float64, m)
		}
		for p := 0; p < m; p++ {
			seen := map[int]bool{}
			put := func(i int, v float64) {
				if seen[i] {
					return
				}
				seen[i] = true
				cols[p] = append(cols[p], i)
				vals[p] = append(vals[p], v)
				dense[i][p] = v
			}
			put(perm[p], 1+rng.Float64()*4)
			for k := 0; k < rng.IntN(3); k++ {
				put(rng.IntN(m), rng.Float64()*2-1)
			}
		}
		var reuse *lu
		if trial%2 == 1 {
			reuse = prev
		}
		f := factor(m, func(p int) ([]int, []float64) { return cols[p], vals[p] }, reuse)
		prev = f
		if len(f.singular) > 0 {
			continue // an unlucky cancellation
		}
		checked[trial%2]++
		a := make([]float64, m)
		for i := range a {
			a[i] = rng.Float64()*2 - 1
		}
		xv := newSvec(m)
		copy(xv.v, a)
		xv.dense()
		f.ftran(xv, newSvec(m))
		x := xv.v
		for i := 0; i < m; i++ {
			var s float64
			for p := 0; p < m; p++ {
				s += dense[i][p] * x[p]
			}
			if math.Abs(s-a[i]) > 1e-8 {
				t.Fatalf("trial %d: (B·x)[%d] = %v, want %v", trial, i, s, a[i])
			}
		}
		yv := newSvec(m)
		for p, v := range a {
			yv.set(p, v) // listed, unlike x: both ways are exercised
		}
		f.btran(yv, newSvec(m))
		y := yv.v
		for p := 0; p < m; p++ {
			var s float64
			for i := 0; i < m; i++ {
				s += dense[i][p] * y[i]
			}
			if math.Abs(s-a[p]) > 1e-8 {
				t.Fatalf("trial %d: (Bᵀ·y)[%d] = %v, want %v", trial, p, s, a[p])
			}
		}
	}
	if checked[0] < 190 || checked[1] < 190 {
		t.Errorf("%d fresh and %d reused factorisations checked of 200 each", checked[0], checked[1])
	}
}

func TestASingularBasisIsReported(t *testing.T) {
	// Columns 0 and 1 are equal.
	cols := [][]int{{0, 1}, {0, 1}, {2}}
	vals := [][]float64{{1, 2}, {1, 2}, {3}}
	f := factor(3, func(p int) ([]int, []float64) { return cols[p], vals[p] }, nil)
	if len(f.singular) != 1 || len(f.singularRow) != 1 {
		t.Fatalf("singular %v rows %v, want one of each", f.singular, f.singularRow)
	}
}

func TestMalformedProblemsAreRefused(t *testing.T) {
	for _, p := range []*Problem{
		{Cost: []float64{1}, Lo: []float64{0}, Hi: []float64{inf()}},
		{Cost: []float64{1}, Lo: []float64{1}, Hi: []float64{0}},
		{Cost: []float64{1, 2}, Lo: []float64{0}, Hi: []float64{1}},
		withRows(binary(1), le(1, 3, 1)),
		withRows(binary(1), mkRow(2, 1, []float64{0, 1})),
	} {
		if _, err := New(p); err == nil {
			t.Errorf("problem %+v accepted", p)
		}
	}
}

// A sparse right-hand side takes the hypersparse path of the triangular
// solves (pivots visited by heap, singleton pivots apart); a dense one
// the plain loop. Both must solve the same system to the same answer,
// on bases shaped like a simplex's: mostly unit columns.
func TestHypersparseAndDenseSolvesAgree(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for trial := 0; trial < 60; trial++ {
		m := 200 + rng.IntN(200)
		perm := rng.Perm(m)
		cols := make([][]int, m)
		vals := make([][]float64, m)
		for p := 0; p < m; p++ {
			cols[p], vals[p] = []int{perm[p]}, []float64{1 + rng.Float64()}
			if rng.IntN(10) < 3 { // a structural column
				for k := 0; k < 1+rng.IntN(4); k++ {
					if i := rng.IntN(m); !slices.Contains(cols[p], i) {
						cols[p] = append(cols[p], i)
						vals[p] = append(vals[p], rng.Float64()*2-1)
					}
				}
			}
		}
		f := factor(m, func(p int) ([]int, []float64) { return cols[p], vals[p] }, nil)
		if len(f.singular) > 0 {
			continue
		}
		if f.kA == 0 || f.kA == len(f.prow) {
			t.Fatalf("trial %d: %d singleton pivots of %d: the test does not reach both kinds", trial, f.kA, len(f.prow))
		}
		for _, nz := range []int{1, 3, 8} {
			a, sparse, full := sparseAndFull(rng, m, nz)
			f.ftran(sparse, newSvec(m))
			denseSolve(func() { f.ftran(full, newSvec(m)) })
			for p := 0; p < m; p++ {
				if math.Abs(sparse.v[p]-full.v[p]) > 1e-12 {
					t.Fatalf("trial %d, %d nonzeros: ftran[%d] = %v hypersparse, %v dense", trial, nz, p, sparse.v[p], full.v[p])
				}
			}
			sparse.clear()
			full.clear()
			for p, v := range a {
				if v != 0 {
					sparse.set(p, v)
				}
			}
			copy(full.v, a)
			full.dense()
			f.btran(sparse, newSvec(m))
			denseSolve(func() { f.btran(full, newSvec(m)) })
			for i := 0; i < m; i++ {
				if math.Abs(sparse.v[i]-full.v[i]) > 1e-12 {
					t.Fatalf("trial %d, %d nonzeros: btran[%d] = %v hypersparse, %v dense", trial, nz, i, sparse.v[i], full.v[i])
				}
			}
		}
	}
}

// sparseAndFull is a random vector of m places with at most nz
// nonzeros, as values, as a listed vector and as a dense one.
func sparseAndFull(rng *rand.Rand, m, nz int) ([]float64, *svec, *svec) {
	a := make([]float64, m)
	sparse := newSvec(m)
	for k := 0; k < nz; k++ {
		i := rng.IntN(m)
		a[i] = rng.Float64()*2 - 1
		sparse.set(i, a[i])
	}
	full := newSvec(m)
	copy(full.v, a)
	full.dense()
	return a, sparse, full
}

// denseSolve runs solve with the hypersparse path off.
func denseSolve(solve func()) {
	saved := hypersparse
	hypersparse = 0
	defer func() { hypersparse = saved }()
	solve()
}

// After basis changes, BTRAN of a sparse vector visits only the etas it
// reaches, and of a dense one reads them all: both must solve Bᵀ·y = c
// for the basis as changed, as FTRAN must solve B·x = a.
func TestSparseAndDenseBTRANAgreeAfterBasisChanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	for trial := 0; trial < 40; trial++ {
		m := 100 + rng.IntN(200)
		perm := rng.Perm(m)
		dense := make([][]float64, m) // dense[p] is column p of B, by rows
		cols := make([][]int, m)
		vals := make([][]float64, m)
		for p := 0; p < m; p++ {
			dense[p] = make([]float64, m)
			cols[p], vals[p] = []int{perm[p]}, []float64{1 + rng.Float64()}
			dense[p][perm[p]] = vals[p][0]
		}
		f := factor(m, func(p int) ([]int, []float64) { return cols[p], vals[p] }, nil)
		if len(f.singular) > 0 {
			t.Fatal("a permuted diagonal is singular")
		}
		b := newBasisInverse(f)
		for step := 0; step < 60; step++ {
			// A new column for a position whose alpha is far from 0.
			a := newSvec(m)
			col := make([]float64, m)
			for k := 0; k < 1+rng.IntN(6); k++ {
				i := rng.IntN(m)
				col[i] = rng.Float64()*4 - 2
			}
			for i, v := range col {
				if v != 0 {
					a.set(i, v)
				}
			}
			b.ftran(a)
			r := -1
			for _, p := range a.list() {
				if math.Abs(a.v[p]) > 0.5 && (r < 0 || p < r) {
					r = p
				}
			}
			if r < 0 {
				continue
			}
			b.update(r, a)
			dense[r] = col
			for _, nz := range []int{1, 4, m} {
				c, sparse, full := sparseAndFull(rng, m, nz)
				b.btran(sparse)
				denseSolve(func() { b.btran(full) })
				for p := 0; p < m; p++ {
					var s float64
					for i := 0; i < m; i++ {
						s += dense[p][i] * sparse.v[i]
					}
					if math.Abs(s-c[p]) > 1e-7 {
						t.Fatalf("trial %d, step %d, %d nonzeros: (Bᵀ·y)[%d] = %v, want %v", trial, step, nz, p, s, c[p])
					}
				}
				for i := 0; i < m; i++ {
					if math.Abs(sparse.v[i]-full.v[i]) > 1e-9 {
						t.Fatalf("trial %d, step %d, %d nonzeros: y[%d] = %v sparse, %v dense", trial, step, nz, i, sparse.v[i], full.v[i])
					}
				}
			}
		}
	}
}

// A pricing weight that overflowed to +Inf scores its row zero; the row
// must still be chosen while it is the only infeasible one, or Solve
// says Optimal at a point outside the bounds. Every weight is set to
// +Inf after a bound change that breaks the basis; the warm solve must
// still meet the fresh one.
func TestARowOfInfiniteWeightIsStillPriced(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 23))
	checked := 0
	for trial := 0; trial < 300; trial++ {
		p := randomProblem(rng)
		s, st := solve(t, p)
		if st != Optimal {
			continue
		}
		x := s.X()
		j := rng.IntN(len(p.Cost))
		v := 1 - math.Round(x[j])
		s.SetBounds(j, v, v)
		for k := range s.w {
			s.w[k] = math.Inf(1)
		}
		fixed := &Problem{Cost: p.Cost, Lo: slices.Clone(p.Lo), Hi: slices.Clone(p.Hi), Rows: p.Rows}
		fixed.Lo[j], fixed.Hi[j] = v, v
		ff, ffst := solve(t, fixed)
		got := s.Solve(far(), 0)
		if got != ffst || got == Optimal && (!feasible(fixed, s, 1e-6) || math.Abs(objective(fixed, s)-objective(fixed, ff)) > 1e-6) {
			t.Fatalf("trial %d: x%d=%v with infinite weights: %v %v (feasible %v), fresh %v %v", trial, j, v, got, objective(fixed, s), feasible(fixed, s, 1e-6), ffst, objective(fixed, ff))
		}
		if got == Optimal {
			checked++
		}
	}
	if checked < 100 {
		t.Errorf("only %d re-solves checked", checked)
	}
}
