package lp

import (
	"errors"
	"math"
	"slices"
	"time"

	"github.com/poolsolve/poolsolve/internal/clock"
)

// Row is lo <= Σ val[k]·x[idx[k]] <= hi; ±Inf leaves a side open.
type Row struct {
	Idx    []int
	Val    []float64
	Lo, Hi float64
}

// Problem is: minimise Cost·x subject to Rows, with Lo <= x <= Hi.
// Every column must have finite bounds: the dual simplex starts from the
// all-logical basis, which is then dual feasible at once.
type Problem struct {
	Cost   []float64
	Lo, Hi []float64
	Rows   []Row
}

// Status is how a Solve ended.
type Status int

const (
	// Optimal: primal and dual feasible within tolerance.
	Optimal Status = iota
	// Infeasible: the dual is unbounded along a ray (no point meets the rows).
	Infeasible
	// Limit: the deadline, the stop function or the iteration cap.
	Limit
	// Failed: numerical trouble the solver could not recover from.
	Failed
)

func (s Status) String() string {
	return [...]string{"optimal", "infeasible", "limit", "failed"}[s]
}

// Tolerances, on the scaled problem.
const (
	tolPrimal  = 1e-7
	tolDual    = 1e-7
	tolPivot   = 1e-7
	clockEvery = 8
)

// refactorEvery is how many basis changes rebuild the LU: the etas grow
// and the values drift, but a rebuild costs a pass over the basis. On
// 256x1000's 53,000 rows (level 4) it is worth about 660 changes since
// a BTRAN visits only the etas it reaches: the root LP in 1.56-1.60 s
// with 660-1,760, 1.94-1.95 s with 420, 2.02-2.25 s with 211 (the
// rule before, m/250, set when every BTRAN read every eta: 80 took
// 7.2 s to that root, 160-320 5.5 s). Past about 660 the etas grow
// heavy first (basisInverse.heavy).
func refactorEvery(m int) int { return min(max(m/80, 80), 1000) }

// minusOne is a logical column's only value.
var minusOne = []float64{-1}

// State is a dual simplex on one problem, kept between solves so that
// rows (cuts) and bound changes can be added and the basis reused.
type State struct {
	n, m     int
	cost     []float64 // n+m, scaled; perturbed while perturbed (logicals 0)
	lo, hi   []float64 // n+m, scaled
	rowScale []float64
	colScale []float64

	// trueCost and pertCost are the structurals' costs, scaled, without
	// and with the perturbation; perturbed says which cost holds.
	trueCost, pertCost []float64
	perturbed          bool
	// A scaled, by rows and by columns.
	rStart []int
	rIdx   []int
	rVal   []float64
	cStart []int
	cIdx   []int
	cVal   []float64
	// colsStale: the rows changed and cStart.. are to be rebuilt
	// (columns).
	colsStale bool

	head []int     // basis position -> variable
	pos  []int     // variable -> basis position, or −1
	x    []float64 // every variable's value
	d    []float64 // reduced costs; 0 on basic variables
	w    []float64 // edge weights, per position: steepest edge or Devex
	inv  *basisInverse
	// logical[i] is i: the row index of logical column n+i, as a slice.
	logical []int
	// dirty: the basis must be refactored and x, d recomputed; stale:
	// only the values must be (bounds moved).
	dirty, stale bool
	// ray is ρ of the row that proved infeasibility, unscaled.
	ray []float64

	iters int
	// devexOn: the edge weights are Devex's (reference weights, updated
	// from the entering column alone), not dual steepest edge's, whose
	// update costs an FTRAN of ρ; tauFill is the recent share of nonzeros
	// in that FTRAN's result.
	devexOn bool
	tauFill float64
	// Stop, when set, is asked with the deadline: true ends Solve with Limit.
	Stop func() bool
	// Clock is the time Solve reads against its deadline; a counted one
	// is charged iterCost for each iteration (nil: the wall clock).
	Clock *clock.Clock

	rho, col, tau, flipv *svec
	// tab, tabIdx and tabVal are TableauMultipliers' scratch.
	tab    *svec
	tabIdx []int
	tabVal []float64
	// infeasible lists the basis positions whose values may be out of
	// their bounds (onList marks them): pricing looks at these only.
	infeasible []int
	onList     []bool
	alpha      []float64 // n+m
	touched    []int
	// cands and flips are the ratio test's scratch; the flips it
	// returns are good until the next iteration.
	cands []cand
	flips []int
}

// New sets up the problem; no iteration is done yet.
func New(p *Problem) (*State, error) {
	n := len(p.Cost)
	if len(p.Lo) != n || len(p.Hi) != n {
		return nil, errors.New("lp: bounds and costs differ in length")
	}
	for j := 0; j < n; j++ {
		if math.IsInf(p.Lo[j], 0) || math.IsInf(p.Hi[j], 0) || math.IsNaN(p.Lo[j]) || math.IsNaN(p.Hi[j]) || p.Lo[j] > p.Hi[j] {
			return nil, errors.New("lp: every column needs finite bounds lo <= hi")
		}
	}
	s := &State{n: n}
	s.colScale = make([]float64, n)
	for j := range s.colScale {
		s.colScale[j] = 1
	}
	s.lo = append([]float64(nil), p.Lo...)
	s.hi = append([]float64(nil), p.Hi...)
	s.trueCost = append([]float64(nil), p.Cost...)
	s.pertCost = perturbCosts(p.Cost, len(p.Rows))
	s.cost = append([]float64(nil), s.pertCost...)
	s.perturbed = true
	s.head = nil
	s.x = make([]float64, n)
	s.d = make([]float64, n)
	s.pos = make([]int, n)
	for j := range s.pos {
		s.pos[j] = -1
	}
	s.alpha = make([]float64, n)
	if err := s.AddRows(p.Rows); err != nil {
		return nil, err
	}
	// Nonbasic columns at the bound their cost prefers: dual feasible.
	for j := 0; j < n; j++ {
		if s.cost[j] >= 0 {
			s.x[j] = s.lo[j]
		} else {
			s.x[j] = s.hi[j]
		}
	}
	return s, nil
}

// AddRows appends rows, each with its logical basic: the basis stays
// dual feasible, and the next Solve restores primal feasibility.
func (s *State) AddRows(rows []Row) error {
	n := s.n
	// Grown once: appended row by row, 256x1000's 765,000 nonzeros took
	// 0.26 s of copying.
	nnz := 0
	for _, r := range rows {
		nnz += len(r.Idx)
	}
	s.rIdx, s.rVal = slices.Grow(s.rIdx, nnz), slices.Grow(s.rVal, nnz)
	for _, r := range rows {
		if len(r.Idx) != len(r.Val) || math.IsNaN(r.Lo) || math.IsNaN(r.Hi) || r.Lo > r.Hi {
			return errors.New("lp: malformed row")
		}
		var big float64
		for k, j := range r.Idx {
			if j < 0 || j >= n || math.IsNaN(r.Val[k]) || math.IsInf(r.Val[k], 0) {
				return errors.New("lp: malformed row")
			}
			big = math.Max(big, math.Abs(r.Val[k]*s.colScale[j]))
		}
		sc := 1.0
		if big > 0 {
			sc = 1 / big
		}
		if len(s.rStart) == 0 {
			s.rStart = append(s.rStart, 0)
		}
		var act float64
		start := len(s.rIdx)
		for k, j := range r.Idx {
			v := r.Val[k] * s.colScale[j] * sc
			if v == 0 {
				continue
			}
			// A column named twice in a row counts once, summed.
			if p := s.alpha[j]; p > 0 {
				s.rVal[start+int(p)-1] += v
				act += v * s.x[j]
				continue
			}
			s.rIdx = append(s.rIdx, j)
			s.rVal = append(s.rVal, v)
			s.alpha[j] = float64(len(s.rIdx) - start)
			act += v * s.x[j]
		}
		for _, j := range s.rIdx[start:] {
			s.alpha[j] = 0
		}
		s.rStart = append(s.rStart, len(s.rIdx))
		s.rowScale = append(s.rowScale, sc)
		s.cost = append(s.cost, 0)
		s.lo = append(s.lo, r.Lo*sc)
		s.hi = append(s.hi, r.Hi*sc)
		s.x = append(s.x, act)
		s.d = append(s.d, 0)
		s.pos = append(s.pos, len(s.head))
		s.head = append(s.head, n+s.m)
		s.w = append(s.w, 1)
		s.alpha = append(s.alpha, 0)
		s.m++
	}
	s.resized()
	return nil
}

// resized follows a change of the rows: the column copy of A, the
// scratch vectors and the factorisation are made anew.
func (s *State) resized() {
	s.colsStale = true
	if len(s.logical) < s.m {
		s.logical = make([]int, s.m)
		for i := range s.logical {
			s.logical[i] = i
		}
	}
	s.rho, s.col, s.tau, s.flipv = newSvec(s.m), newSvec(s.m), newSvec(s.m), newSvec(s.m)
	s.onList = make([]bool, s.m)
	s.infeasible = s.infeasible[:0]
	s.dirty = true
}

// columns rebuilds the column-wise copy of A when the rows changed
// since: a cut round removes rows and then adds them, and on 256x1000's
// 765,000 nonzeros each rebuild took about 40 ms.
func (s *State) columns() {
	if s.colsStale {
		s.buildColumns()
		s.colsStale = false
	}
}

// buildColumns rebuilds the column-wise copy of A.
func (s *State) buildColumns() {
	cnt := make([]int, s.n+1)
	for _, j := range s.rIdx {
		cnt[j+1]++
	}
	for j := 0; j < s.n; j++ {
		cnt[j+1] += cnt[j]
	}
	s.cStart = cnt
	s.cIdx = make([]int, len(s.rIdx))
	s.cVal = make([]float64, len(s.rIdx))
	fill := make([]int, s.n)
	copy(fill, cnt[:s.n])
	for i := 0; i < s.m; i++ {
		for t := s.rStart[i]; t < s.rStart[i+1]; t++ {
			j := s.rIdx[t]
			s.cIdx[fill[j]] = i
			s.cVal[fill[j]] = s.rVal[t]
			fill[j]++
		}
	}
}

// SetBounds changes column j's bounds (fixing it when lo == hi).
func (s *State) SetBounds(j int, lo, hi float64) {
	lo /= s.colScale[j]
	hi /= s.colScale[j]
	s.lo[j], s.hi[j] = lo, hi
	if s.pos[j] < 0 {
		if s.d[j] >= 0 {
			s.x[j] = lo
		} else {
			s.x[j] = hi
		}
	}
	s.stale = true
}

// Ray is, after Solve said Infeasible, the multipliers ρ of the row that
// proved it (unscaled): y + t·ρ or y − t·ρ raises the dual bound without
// end as t grows.
func (s *State) Ray() []float64 { return s.ray }

// basisColumn returns variable k's column of [A | −I].
func (s *State) basisColumn(k int) ([]int, []float64) {
	if k >= s.n {
		i := k - s.n
		return s.logical[i : i+1], minusOne[:1]
	}
	return s.cIdx[s.cStart[k]:s.cStart[k+1]], s.cVal[s.cStart[k]:s.cStart[k+1]]
}

// refactor rebuilds the LU, repairs a singular basis with logicals, and
// recomputes the basic values and reduced costs.
func (s *State) refactor() {
	var old *lu
	if s.inv != nil {
		old = s.inv.lu
	}
	col := func(p int) ([]int, []float64) { return s.basisColumn(s.head[p]) }
	f := factor(s.m, col, old)
	if len(f.singular) > 0 {
		for t, p := range f.singular {
			old := s.head[p]
			s.pos[old] = -1
			s.x[old] = s.nonbasicValue(old)
			k := s.n + f.singularRow[t]
			if s.pos[k] >= 0 {
				continue // cannot happen: a basic logical has its row pivoted
			}
			s.head[p] = k
			s.pos[k] = p
			s.w[p] = 1
		}
		f = factor(s.m, col, f)
	}
	if s.inv != nil {
		s.inv.reset(f) // of another order after a cut round: its arrays serve
	} else {
		s.inv = newBasisInverse(f)
	}
	s.recompute()
	s.dirty, s.stale = false, false
}

// nonbasicValue is the bound a nonbasic variable sits at for its
// reduced cost.
func (s *State) nonbasicValue(k int) float64 {
	if s.d[k] < 0 && !math.IsInf(s.hi[k], 1) {
		return s.hi[k]
	}
	if math.IsInf(s.lo[k], -1) {
		return s.hi[k]
	}
	return s.lo[k]
}

// recompute sets the basic values from the nonbasic ones, the duals and
// reduced costs from the costs, and makes the basis dual feasible again:
// a boxed variable on the wrong bound flips, any other gets its cost
// shifted by the violation (the caller bounds with the true costs).
func (s *State) recompute() {
	for pass := 0; pass < 2; pass++ {
		// Duals.
		yv := s.rho
		yv.clear()
		for p, k := range s.head {
			yv.v[p] = s.cost[k]
		}
		yv.dense()
		s.inv.btran(yv)
		y := yv.v
		changed := false
		for k := 0; k < s.n+s.m; k++ {
			if s.pos[k] >= 0 {
				s.d[k] = 0
				continue
			}
			var dk float64
			if k >= s.n {
				dk = s.cost[k] + y[k-s.n]
			} else {
				dk = s.cost[k]
				for t := s.cStart[k]; t < s.cStart[k+1]; t++ {
					dk -= y[s.cIdx[t]] * s.cVal[t]
				}
			}
			s.d[k] = dk
			lo, hi := s.lo[k], s.hi[k]
			switch {
			case lo == hi:
				s.x[k] = lo
			case s.x[k] == lo && dk < -tolDual:
				if !math.IsInf(hi, 1) {
					s.x[k] = hi
				} else {
					s.cost[k] -= dk
					s.d[k] = 0
					changed = true
				}
			case s.x[k] == hi && dk > tolDual:
				if !math.IsInf(lo, -1) {
					s.x[k] = lo
				} else {
					s.cost[k] -= dk
					s.d[k] = 0
					changed = true
				}
			case s.x[k] != lo && s.x[k] != hi:
				s.x[k] = s.nonbasicValue(k)
			}
		}
		if !changed {
			break
		}
	}
	// Basic values: x_B = −B⁻¹·(N·x_N).
	rv := s.col
	rv.clear()
	r := rv.v
	for k := 0; k < s.n+s.m; k++ {
		if s.pos[k] >= 0 || s.x[k] == 0 {
			continue
		}
		if k >= s.n {
			r[k-s.n] -= s.x[k]
			continue
		}
		for t := s.cStart[k]; t < s.cStart[k+1]; t++ {
			r[s.cIdx[t]] += s.cVal[t] * s.x[k]
		}
	}
	rv.dense()
	s.inv.ftran(rv)
	r = rv.v
	s.infeasible = s.infeasible[:0]
	for p, k := range s.head {
		s.x[k] = -r[p]
		s.onList[p] = false
		s.check(p)
	}
	rv.clear()
}

// check lists position p when its value is out of its bounds.
func (s *State) check(p int) {
	k := s.head[p]
	if v := s.x[k]; (v < s.lo[k]-tolPrimal || v > s.hi[k]+tolPrimal) && !s.onList[p] {
		s.onList[p] = true
		s.infeasible = append(s.infeasible, p)
	}
}

// iterCost is what an iteration stands for on a counted clock: its
// pricing, ratio test and update each pass over the rows, and the
// factor's etas grow with them.
func (s *State) iterCost() time.Duration {
	return time.Duration(300+20*s.m) * time.Nanosecond
}

// Solve runs the dual simplex until optimal, infeasible, the deadline
// or maxIter iterations (0: no cap).
func (s *State) Solve(deadline time.Time, maxIter int) Status {
	start := s.iters
	confirmed := false
	s.ray = nil
	s.columns()
	s.setCosts(true)
	for {
		if s.dirty || s.inv == nil || s.inv.updates() >= refactorEvery(s.m) || s.inv.heavy() {
			s.refactor()
		} else if s.stale {
			s.recompute()
			s.stale = false
		}
		if (s.iters-start)%clockEvery == 0 {
			s.Clock.Charge(clockEvery * s.iterCost())
			if s.Clock.Now().After(deadline) || s.Stop != nil && s.Stop() {
				return Limit
			}
		}
		if maxIter > 0 && s.iters-start >= maxIter {
			return Limit
		}
		if !s.devexOn && s.m >= largeRows && s.tauFill > devexFill {
			s.toDevex()
		}
		r := s.chooseRow()
		if r < 0 {
			if (confirmed || s.iters == start) && s.perturbed {
				// Optimal for the perturbed costs: restore the true ones
				// and re-optimise from this basis, so that the values and
				// duals reported are those of the problem asked.
				s.setCosts(false)
				s.recompute()
				s.stale = false
				confirmed = false
				continue
			}
			if confirmed || s.iters == start {
				return Optimal
			}
			// Confirm on values recomputed from the factors, free of the
			// drift of the updates.
			s.recompute()
			confirmed = true
			continue
		}
		confirmed = false
		switch s.iterate(r) {
		case iterInfeasible:
			if s.inv.updates() == 0 {
				return Infeasible
			}
			s.dirty = true
		case iterRefactor:
			if s.inv.updates() == 0 {
				return Failed
			}
			s.dirty = true
		}
		s.iters++
	}
}
