package mip

import (
	"math"
	"slices"
	"time"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/internal/clock"
)

// The Lagrangian bound, for presolved models too large for the dense
// simplex (64x250 has 5,000 rows by 5,000 columns, 256x1000 53,000 by
// 43,000; the tableau would be 10^8 to 10^9 cells).
//
// Disjoint rows Σ x_j <= 1 and Σ x_j = 1 (a variant's options, a
// source's routes) stay as groups; every other row r, as a_r·x <= b_r
// (or =), is moved into the objective with a multiplier u_r (>= 0 on <=
// rows, free on = rows):
//
//	L(u) = −u·b + Σ_groups min_{j∈G} d_j (or min(0, ·) for <= 1)
//	            + Σ_{j ungrouped} min(0, d_j),     d = c + uA.
//
// Every feasible x meets u·(Ax − b) <= 0 and its groups, so c·x >= L(u)
// for ANY such u: the bound is valid wherever the ascent stops, and is
// recomputed with a rounding margin as lagrangeBound does. Since the
// groups' polytope is integral, max_u L(u) is the LP bound of the same
// rows. The ascent is the subgradient method with Polyak steps toward the
// incumbent (Held, Wolfe, Crowder 1974; Fisher 1981), its factor halved
// when the bound stalls.
//
// Reduced costs for fixing: for x feasible, c·x >= L + Σ_j (d_j − m_G)·x_j
// over grouped columns (m_G the group's minimum, or min(0, ·)) plus
// Σ_j |d_j|·dev_j over the others, dropping a nonnegative term for a
// group left empty. So d'_j = d_j − m_G (never negative) plays the role
// of the LP's reduced cost in strongResult.fixesFor.

// lgRow is Σ val·x[idx] <= rhs, or = rhs when eq.
type lgRow struct {
	idx []int
	val []float64
	rhs float64
	eq  bool
}

type Lagrangian struct {
	C      []float64
	Rows   []lgRow
	Groups [][]int // kept rows: at most one column (exactly one when exact)
	exact  []bool
	inGrp  []int // column's group, or −1
	free   []bool
	clock  *clock.Clock // the relaxation's
}

// NewLagrangian splits r's rows into groups and relaxed rows.
func NewLagrangian(r *Relaxation) *Lagrangian {
	n := len(r.Vars)
	lg := &Lagrangian{C: make([]float64, n), inGrp: make([]int, n), free: make([]bool, n), clock: r.Clock}
	for j := range n {
		lg.C[j] = float64(r.C[j])
		lg.inGrp[j] = -1
		lg.free[j] = r.Lo[j] != r.Hi[j]
	}
	// Equalities first: a source's exactly-one is the stronger group.
	order := make([]int, len(r.Rows))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int {
		ea, eb := r.Rows[a].Op == encode.EQ, r.Rows[b].Op == encode.EQ
		switch {
		case ea && !eb:
			return -1
		case eb && !ea:
			return 1
		}
		return 0
	})
	for _, k := range order {
		w := r.Rows[k]
		if g, exact, ok := groupRow(w); ok && lg.disjoint(g) {
			for _, j := range g {
				lg.inGrp[j] = len(lg.Groups)
			}
			lg.Groups = append(lg.Groups, g)
			lg.exact = append(lg.exact, exact)
			continue
		}
		lg.addRow(w)
	}
	return lg
}

// addRow relaxes w, scaled so that its largest coefficient is 1: memory
// rows in units would otherwise dwarf every other row's subgradient.
func (lg *Lagrangian) addRow(w Row) {
	row := lgRow{idx: w.Idx, val: make([]float64, len(w.Val)), rhs: float64(w.Rhs), eq: w.Op == encode.EQ}
	for t, v := range w.Val {
		row.val[t] = float64(v)
	}
	sign := 1.0
	if w.Op == encode.GE {
		sign = -1
	}
	var big float64
	for _, v := range row.val {
		big = math.Max(big, math.Abs(v))
	}
	for t := range row.val {
		row.val[t] *= sign / big
	}
	row.rhs *= sign / big
	lg.Rows = append(lg.Rows, row)
}

// groupRow reports whether w is Σ x_j <= 1 or Σ x_j = 1 over free
// columns (either sign written), and its columns.
func groupRow(w Row) ([]int, bool, bool) {
	if len(w.Idx) < 2 {
		return nil, false, false
	}
	s := w.Val[0]
	if s != 1 && s != -1 {
		return nil, false, false
	}
	for _, v := range w.Val {
		if v != s {
			return nil, false, false
		}
	}
	switch {
	case w.Op == encode.EQ && w.Rhs == s:
		return w.Idx, true, true
	case w.Op == encode.LE && s == 1 && w.Rhs == 1, w.Op == encode.GE && s == -1 && w.Rhs == -1:
		return w.Idx, false, true
	}
	return nil, false, false
}

func (lg *Lagrangian) disjoint(g []int) bool {
	for _, j := range g {
		if lg.inGrp[j] >= 0 || !lg.free[j] {
			return false
		}
	}
	return true
}

// Eval computes d = c + uA, the subproblem's minimiser into x, and L(u)
// with the magnitude of its terms (for the rounding margin).
func (lg *Lagrangian) Eval(u, d []float64, x []bool) (float64, float64) {
	copy(d, lg.C)
	var val, mag float64
	for _, cj := range lg.C {
		mag += math.Abs(cj)
	}
	for ri := range lg.Rows {
		ur := u[ri]
		if ur == 0 {
			continue
		}
		w := &lg.Rows[ri]
		val -= ur * w.rhs
		mag += math.Abs(ur * w.rhs)
		for k, j := range w.idx {
			t := ur * w.val[k]
			d[j] += t
			mag += math.Abs(t)
		}
	}
	for j := range x {
		x[j] = false
		if lg.free[j] && lg.inGrp[j] < 0 && d[j] < 0 {
			x[j] = true
			val += d[j]
		}
	}
	for gi, g := range lg.Groups {
		best := -1
		for _, j := range g {
			if best < 0 || d[j] < d[best] {
				best = j
			}
		}
		if lg.exact[gi] || d[best] < 0 {
			x[best] = true
			val += d[best]
		}
	}
	return val, mag
}

// reduced returns d' (see above): d_j less its group's minimum for
// grouped columns, d_j for the others, 0 for fixed ones.
func (lg *Lagrangian) reduced(d []float64) []float64 {
	out := slices.Clone(d)
	for gi, g := range lg.Groups {
		m := math.Inf(1)
		for _, j := range g {
			m = min(m, d[j])
		}
		if !lg.exact[gi] {
			m = min(m, 0)
		}
		for _, j := range g {
			out[j] = d[j] - m
		}
	}
	for j := range out {
		if !lg.free[j] {
			out[j] = 0
		}
	}
	return out
}

// Start is a dual ascent for the rows x_p <= Σ_q x_q (a route needs
// one of its latency columns, a latency column its lane's residency):
// in row order, each such row takes u = min_q d_q, which moves the
// cheapest cost of the q's onto p, until a source's group pays its
// cheapest route's latency. u >= 0 on <= rows keeps the bound valid. Where
// the subproblem would otherwise leave every latency column at 0 (u = 0
// bounds 256x1000 by 0), this starts the ascent at about level 4's group
// minima.
func (lg *Lagrangian) Start() []float64 {
	u := make([]float64, len(lg.Rows))
	d := slices.Clone(lg.C)
	// Costs move along chains (residency -> latency -> route): two
	// passes in row order settle a chain whose rows come in either order.
	for range 2 {
		for ri := range lg.Rows {
			w := &lg.Rows[ri]
			p, ok := implication(w)
			if !ok {
				continue
			}
			m := math.Inf(1)
			for k, j := range w.idx {
				if j != p {
					m = min(m, d[j]/-w.val[k])
				}
			}
			if m <= 0 || math.IsInf(m, 1) {
				continue
			}
			u[ri] += m
			for k, j := range w.idx {
				d[j] += m * w.val[k]
			}
		}
	}
	return u
}

// implication reports whether w is x_p − Σ_q x_q <= 0 (scaled), and p.
func implication(w *lgRow) (int, bool) {
	if w.eq || w.rhs != 0 || len(w.idx) < 2 {
		return 0, false
	}
	p := -1
	for k, v := range w.val {
		switch {
		case v > 0 && p < 0:
			p = w.idx[k]
		case v > 0:
			return 0, false
		}
	}
	return p, p >= 0
}

// LagrangeResult is the best point of an ascent.
type LagrangeResult struct {
	Bound float64 // L(u) less its rounding margin: valid for every plan
	Mag   float64
	D     []float64 // d' at the best u
	Iters int
}

// Ascend runs the subgradient method until deadline, stop, a bound of
// at least proves (nothing better than the incumbent exists), or a step
// factor too small to move. target is the incumbent's value, asked again
// as the search improves it.
func (lg *Lagrangian) Ascend(proves float64, target func() float64, deadline time.Time, stop func() bool) (LagrangeResult, bool) {
	n := len(lg.C)
	u := lg.Start()
	d := make([]float64, n)
	x := make([]bool, n)
	s := make([]float64, len(lg.Rows))
	best := LagrangeResult{Bound: math.Inf(-1)}
	var bestD []float64
	theta, stale := 1.0, 0
	for it := 0; ; it++ {
		if it%8 == 0 {
			// An iteration evaluates every column and relaxed row once.
			lg.clock.Charge(8 * time.Duration(100+10*(n+len(lg.Rows))) * time.Nanosecond)
			if lg.clock.Now().After(deadline) || stop != nil && stop() {
				break
			}
		}
		val, mag := lg.Eval(u, d, x)
		if math.IsNaN(val) || math.IsInf(val, 0) {
			break
		}
		best.Iters = it + 1
		if b := val - 1e-9*mag; bestD == nil || b > best.Bound+1e-9*math.Abs(best.Bound) {
			best.Bound, best.Mag = b, mag
			bestD = slices.Clone(d)
			stale = 0
		} else if stale++; stale >= lgStale {
			theta, stale = theta/2, 0
			if theta < lgMinTheta {
				break
			}
		}
		if best.Bound >= proves {
			break
		}
		// Subgradient s = Ax − b, projected: a <= row at u = 0 with
		// s < 0 cannot move.
		var norm float64
		for ri := range lg.Rows {
			w := &lg.Rows[ri]
			v := -w.rhs
			for k, j := range w.idx {
				if x[j] {
					v += w.val[k]
				}
			}
			if !w.eq && u[ri] == 0 && v < 0 {
				v = 0
			}
			s[ri] = v
			norm += v * v
		}
		if norm == 0 {
			// x is feasible for every relaxed row with complementary
			// multipliers: L(u) is the optimum of the relaxation.
			break
		}
		tg := min(target(), proves)
		gapT := math.Max(tg-val, 1e-6*math.Max(1, math.Abs(tg)))
		t := theta * gapT / norm
		for ri := range u {
			u[ri] += t * s[ri]
			if !lg.Rows[ri].eq && u[ri] < 0 {
				u[ri] = 0
			}
		}
	}
	if bestD == nil {
		return best, false
	}
	best.D = lg.reduced(bestD)
	return best, true
}

const (
	// lgStale iterations without a better bound halve the step factor.
	lgStale = 60
	// lgMinTheta ends the ascent: steps are too short to matter.
	lgMinTheta = 1e-6
)
