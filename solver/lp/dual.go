package lp

import (
	"errors"
	"math"
	"slices"
	"time"
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
	s.pertCost = perturbCosts(p.Cost)
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
		if (s.iters-start)%clockEvery == 0 && (time.Now().After(deadline) || s.Stop != nil && s.Stop()) {
			return Limit
		}
		if maxIter > 0 && s.iters-start >= maxIter {
			return Limit
		}
		if !s.devexOn && s.m >= devexMinRows && s.tauFill > devexFill {
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

// chooseRow is dual steepest-edge pricing: the basic variable of the
// largest infeasibility² / weight, or −1 when all are feasible.
func (s *State) chooseRow() int {
	best, bestV := -1, 0.0
	keep := s.infeasible[:0]
	for _, p := range s.infeasible {
		k := s.head[p]
		v := s.x[k]
		var inf float64
		if v < s.lo[k]-tolPrimal {
			inf = s.lo[k] - v
		} else if v > s.hi[k]+tolPrimal {
			inf = v - s.hi[k]
		} else {
			s.onList[p] = false
			continue
		}
		keep = append(keep, p)
		if sc := inf * inf / s.w[p]; sc > bestV {
			best, bestV = p, sc
		}
	}
	s.infeasible = keep
	return best
}

type iterResult int

const (
	iterOK iterResult = iota
	iterInfeasible
	iterRefactor
)

// iterate does one dual simplex iteration with row r leaving.
func (s *State) iterate(r int) iterResult {
	leave := s.head[r]
	xr := s.x[leave]
	var delta, bound float64
	if xr < s.lo[leave] {
		delta, bound = xr-s.lo[leave], s.lo[leave]
	} else {
		delta, bound = xr-s.hi[leave], s.hi[leave]
	}
	s.pivotRow(r)
	defer func() {
		for _, j := range s.touched {
			s.alpha[j] = 0
		}
	}()
	q, flips := s.ratioTest(delta)
	if q < 0 {
		s.ray = make([]float64, s.m)
		for i, v := range s.rho.v {
			s.ray[i] = v * s.rowScale[i]
		}
		return iterInfeasible
	}
	aq := s.alpha[q]
	// FTRAN of the entering column.
	colv := s.col
	colv.clear()
	idx, val := s.basisColumn(q)
	for t, i := range idx {
		colv.set(i, val[t])
	}
	s.inv.ftran(colv)
	col := colv.v
	if math.Abs(col[r]-aq) > 1e-7*(1+math.Abs(aq)) || math.Abs(col[r]) < tolPivot {
		return iterRefactor
	}
	// Dual update.
	thetaD := s.d[q] / aq
	for _, j := range s.touched {
		if a := s.alpha[j]; a != 0 {
			s.d[j] -= thetaD * a
		}
	}
	s.d[q] = 0
	s.d[leave] = -thetaD
	s.flip(flips)
	// Primal step.
	thetaP := (s.x[leave] - bound) / col[r]
	cols := colv.list()
	for _, p := range cols {
		if v := col[p]; v != 0 {
			s.x[s.head[p]] -= thetaP * v
		}
	}
	s.x[q] += thetaP
	s.x[leave] = bound
	if s.devexOn {
		s.devexUpdate(r, cols)
	} else {
		s.steepestEdge(r, cols)
	}
	// Basis change.
	s.inv.update(r, colv)
	s.pos[leave] = -1
	s.pos[q] = r
	s.head[r] = q
	for _, p := range cols {
		s.check(p)
	}
	return iterOK
}

// pivotRow computes ρ = B⁻ᵀ·e_r into s.rho and the pivot row α_j = ρ·M_j
// over the nonbasic variables into s.alpha (listed in s.touched), and
// sets row r's steepest-edge weight to ‖ρ‖², which ρ gives exactly.
func (s *State) pivotRow(r int) {
	n := s.n
	rhov := s.rho
	rhov.clear()
	rhov.set(r, 1)
	s.inv.btran(rhov)
	rho := rhov.v
	var rhoNorm float64
	alpha := s.alpha
	s.touched = s.touched[:0]
	for _, i := range rhov.list() {
		ri := rho[i]
		if ri == 0 {
			continue
		}
		rhoNorm += ri * ri
		if s.pos[n+i] < 0 {
			alpha[n+i] = -ri
			s.touched = append(s.touched, n+i)
		}
		for t := s.rStart[i]; t < s.rStart[i+1]; t++ {
			j := s.rIdx[t]
			if s.pos[j] >= 0 {
				continue
			}
			if alpha[j] == 0 {
				s.touched = append(s.touched, j)
			}
			alpha[j] += ri * s.rVal[t]
			if alpha[j] == 0 {
				alpha[j] = 1e-300 // keep it marked as touched
			}
		}
	}
	if !s.devexOn {
		s.w[r] = math.Max(rhoNorm, 1e-12)
	}
}

// flip moves the ratio test's boxed variables to their other bound and
// the basic values with them: x_B −= B⁻¹·Σ M_j·Δx_j.
func (s *State) flip(flips []int) {
	if len(flips) == 0 {
		return
	}
	fvv := s.flipv
	fvv.clear()
	fv := fvv.v
	for _, j := range flips {
		var dx float64
		if s.x[j] == s.lo[j] {
			dx = s.hi[j] - s.lo[j]
			s.x[j] = s.hi[j]
		} else {
			dx = s.lo[j] - s.hi[j]
			s.x[j] = s.lo[j]
		}
		fi, fval := s.basisColumn(j)
		for t, i := range fi {
			fv[i] += fval[t] * dx
			fvv.add(i)
		}
	}
	s.inv.ftran(fvv)
	fv = fvv.v
	for _, p := range fvv.list() {
		if v := fv[p]; v != 0 {
			s.x[s.head[p]] -= v
			s.check(p)
		}
	}
}

// steepestEdge updates the dual steepest-edge weights of the positions
// the entering column (s.col, nonzero at cols) touches, with τ = B⁻¹·ρ,
// for the basis change at row r.
func (s *State) steepestEdge(r int, cols []int) {
	col := s.col.v
	tauv := s.tau
	tauv.clear()
	for _, i := range s.rho.list() {
		tauv.set(i, s.rho.v[i])
	}
	s.inv.ftran(tauv)
	s.tauFill += (float64(len(tauv.list()))/float64(s.m) - s.tauFill) / 64
	tau := tauv.v
	wr := s.w[r]
	for _, p := range cols {
		if p == r {
			continue
		}
		if v := col[p]; v != 0 {
			ratio := v / col[r]
			s.w[p] = math.Max(s.w[p]-2*ratio*tau[p]+ratio*ratio*wr, 1e-12)
		}
	}
	s.w[r] = math.Max(wr/(col[r]*col[r]), 1e-12)
}

// devexFill is the share of nonzeros in the FTRAN of ρ from which
// dual steepest edge costs more than it saves: on 256x1000's level-4
// model it is 1-3% at the root and 17-20% once cuts are in, where it
// took three fifths of an iteration. devexMinRows keeps smaller models,
// where that FTRAN is cheap, on steepest edge throughout.
const (
	devexFill    = 0.05
	devexMinRows = 10000
)

// toDevex switches the pricing to Devex from here on, with every
// position's reference weight 1.
func (s *State) toDevex() {
	s.devexOn = true
	for p := range s.w {
		s.w[p] = 1
	}
}

// devexUpdate updates the Devex reference weights of the positions the
// entering column (s.col, nonzero at cols) touches, for the basis change
// at row r: w_p = max(w_p, (α_p/α_r)²·w_r), and the entering variable's
// max(w_r/α_r², 1). No FTRAN of ρ is needed.
func (s *State) devexUpdate(r int, cols []int) {
	col := s.col.v
	wr := s.w[r]
	ar := col[r]
	for _, p := range cols {
		if p == r {
			continue
		}
		if v := col[p]; v != 0 {
			ratio := v / ar
			s.w[p] = math.Max(s.w[p], ratio*ratio*wr)
		}
	}
	s.w[r] = math.Max(wr/(ar*ar), 1)
}

// cand is a breakpoint of the ratio test: column j, its ratio d_j/|α_j|
// and |α_j|.
type cand struct {
	j     int
	ratio float64
	abs   float64
}

// ratioTest is the bound-flipping ratio test with Harris' tolerance: it
// passes breakpoints (flipping boxed variables) while the dual objective
// still rises, then picks, among the ratios within the relaxed bound,
// the largest |α|. It returns the entering variable and the flips, or
// q = −1 when the dual is unbounded.
func (s *State) ratioTest(delta float64) (int, []int) {
	alpha := s.alpha
	cs := s.cands[:0]
	defer func() { s.cands = cs[:0] }()
	for _, j := range s.touched {
		a := alpha[j]
		if s.lo[j] == s.hi[j] {
			continue
		}
		at := a
		if delta < 0 {
			at = -a
		}
		if math.Abs(at) < tolPivot {
			continue
		}
		atLo := s.x[j] == s.lo[j]
		if atLo && at > 0 || !atLo && at < 0 {
			cs = append(cs, cand{j, math.Max(s.d[j]/at, 0), math.Abs(at)})
		}
	}
	slope := math.Abs(delta)
	flips := s.flips[:0]
	defer func() { s.flips = flips[:0] }()
	for len(cs) > 0 {
		// Harris: the largest step within the tolerance-relaxed ratios.
		lim := math.Inf(1)
		for _, c := range cs {
			lim = math.Min(lim, c.ratio+tolDual/c.abs)
		}
		best := -1
		var passSlope float64
		for k, c := range cs {
			if c.ratio > lim {
				continue
			}
			if best < 0 || c.abs > cs[best].abs {
				best = k
			}
			w := s.hi[c.j] - s.lo[c.j]
			passSlope += c.abs * w
		}
		if slope-passSlope > tolPrimal && !math.IsInf(passSlope, 1) {
			// Every breakpoint up to lim can be passed: flip them.
			slope -= passSlope
			keep := cs[:0]
			for _, c := range cs {
				if c.ratio > lim {
					keep = append(keep, c)
				} else {
					flips = append(flips, c.j)
				}
			}
			cs = keep
			continue
		}
		return cs[best].j, flips
	}
	return -1, nil
}

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
