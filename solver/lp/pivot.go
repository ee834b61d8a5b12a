package lp

import (
	"math"
)

// chooseRow is dual steepest-edge pricing: the basic variable of the
// largest infeasibility² / weight, or −1 when all are feasible. A score
// that underflows to zero still leaves its row the choice when no other
// scores: an infeasible basic variable is never left for Optimal.
func (s *State) chooseRow() int {
	best, bestV := -1, 0.0
	worst, worstInf := -1, 0.0
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
		if inf > worstInf {
			worst, worstInf = p, inf
		}
	}
	s.infeasible = keep
	if best < 0 {
		return worst
	}
	return best
}

// maxWeight caps a pricing weight. An update of steepest edge or Devex
// by a tiny pivot can overflow to +Inf, and a row of infinite weight
// scored zero: on 64x250 seed 85101's level 4, solves ended Optimal
// with basic columns of a 0/1 model at -10.8 and 56,086, so that cut
// rounds stopped short of the LP's optimum and branch and cut offered
// vertices that were no plans.
const maxWeight = 1e30

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
			s.w[p] = min(math.Max(s.w[p]-2*ratio*tau[p]+ratio*ratio*wr, 1e-12), maxWeight)
		}
	}
	s.w[r] = min(math.Max(wr/(col[r]*col[r]), 1e-12), maxWeight)
}

// devexFill is the share of nonzeros in the FTRAN of ρ from which
// dual steepest edge costs more than it saves: on 256x1000's level-4
// model it is 1-3% at the root and 17-20% once cuts are in, where it
// took three fifths of an iteration. Models under largeRows, where that
// FTRAN is cheap, stay on steepest edge throughout.
const devexFill = 0.05

// largeRows is the size from which a model is solved in the ways that
// pay only on large ones: Devex pricing once steepest edge fills in,
// and zero costs perturbed past the dual tolerance (perturbCosts).
const largeRows = 10000

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
			s.w[p] = min(math.Max(s.w[p], ratio*ratio*wr), maxWeight)
		}
	}
	s.w[r] = min(math.Max(wr/(ar*ar), 1), maxWeight)
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
