package solver

import (
	"math"
	"slices"
	"time"

	"github.com/poolsolve/poolsolve/encode"
)

// This file is a small bounded-variable primal simplex for the LP
// relaxations behind lpBound:
//
//	minimise c·x  subject to  a_r·x (<=, >=, =) b_r,  0 <= x_j <= 1.
//
// The bounds 0 <= x <= 1 are handled by bound flipping, not by rows. The
// tableau is dense over the rows (m × (n + m + artificials)), which is
// fine at a few hundred rows by a few thousand columns; a pivot only
// touches the nonzeros of the pivot row.
//
// The answer that matters is not the primal value but lpResult.bound: a
// lower bound computed from the final row multipliers y by weak
// (Lagrangian) duality,
//
//	c·x >= y·b + Σ_j min(0, c_j − y·A_j)   for every feasible x,
//
// which holds for ANY y with y_r <= 0 on ≤ rows and y_r >= 0 on ≥ rows
// (free on = rows): for feasible x each y_r(b_r − a_r·x) is <= 0, and
// min over 0 <= x_j <= 1 of d_j·x_j is min(0, d_j). The multipliers read
// off the tableau are only clipped to those signs and the bound is then
// recomputed from the original integer data, with a margin far larger
// than the float64 rounding error of that sum. So the bound is valid
// whatever the simplex did (drift, an iteration or time cap, a
// suboptimal basis); at an optimal basis it equals the LP optimum.

// lpRow is sum val[k]·x[idx[k]] op rhs.
type lpRow struct {
	idx []int
	val []float64
	op  encode.Op
	rhs float64
}

// lpProblem is min c·x over the rows with 0 <= x <= 1; len(c) is the
// number of variables. start, when set (len(c) entries), is a 0/1 point
// the simplex starts from: a feasible one (the incumbent) skips phase 1.
type lpProblem struct {
	c     []float64
	rows  []lpRow
	start []bool
	// stop, when set, is asked with the deadline checks: true ends the
	// run as a limit (the PB workers proved the level meanwhile).
	stop func() bool
}

type lpStatus int

const (
	lpOptimal    lpStatus = iota
	lpInfeasible          // phase 1 ended with artificials left
	lpUnbounded           // cannot happen with bounded columns; kept for safety
	lpLimit               // iteration or time cap hit
)

func (s lpStatus) String() string {
	return [...]string{"optimal", "infeasible", "unbounded", "limit"}[s]
}

// lpResult is a simplex run's outcome. bound is valid (see above) when
// hasBound; obj is c·x of the final basis, meaningful when optimal.
type lpResult struct {
	status   lpStatus
	obj      float64
	bound    float64
	hasBound bool
	y        []float64 // multipliers of the caller's rows, signs as above
	x        []float64 // the final basis's primal point (cut separation)
	iters    int
}

// Tolerances. Data are integers (or small multiples), so absolute
// tolerances are fine.
const (
	lpTolCost  = 1e-9  // reduced cost that counts as improving
	lpTolPivot = 1e-9  // smallest pivot / ratio-test entry
	lpTolFeas  = 1e-9  // bound violation still called feasible
	lpTolDrop  = 1e-13 // pivot-row entries below this become exact zeros
	lpTolInf   = 1e-7  // phase-1 objective above this means infeasible
	// lpBlandAfter degenerate pivots in a row switch pricing to Bland's
	// rule (smallest index) until the objective moves again.
	lpBlandAfter = 30
	// lpClockEvery pivots between deadline checks.
	lpClockEvery = 16
)

const (
	stBasic int8 = iota
	stLower
	stUpper
)

type tableau struct {
	stop    func() bool
	m, n, w int       // rows, structural columns, total columns
	t       []float64 // m × w, row-major: B⁻¹·[A | I | artificials]
	beta    []float64 // values of the basic variables
	basis   []int
	stat    []int8
	hi      []float64 // upper bounds; every lower bound is 0
	cost    []float64
	d       []float64 // reduced costs for cost
	nz      []int     // scratch: nonzero columns of the pivot row
	bland   bool
	degen   int
	iters   int
}

func (tb *tableau) row(i int) []float64 { return tb.t[i*tb.w : (i+1)*tb.w] }

// value is a nonbasic column's value.
func (tb *tableau) value(j int) float64 {
	if tb.stat[j] == stUpper {
		return tb.hi[j]
	}
	return 0
}

// price returns an improving nonbasic column and its direction (+1 up,
// −1 down), or −1: Dantzig's largest |d_j|, or the smallest index in
// Bland mode.
func (tb *tableau) price() (int, float64) {
	best, dir, bestV := -1, 0.0, 0.0
	for j, s := range tb.stat {
		if s == stBasic || tb.hi[j] <= 0 {
			continue
		}
		dj := tb.d[j]
		var v, dj0 float64
		switch {
		case s == stLower && dj < -lpTolCost:
			v, dj0 = -dj, 1
		case s == stUpper && dj > lpTolCost:
			v, dj0 = dj, -1
		default:
			continue
		}
		if tb.bland {
			return j, dj0
		}
		if v > bestV {
			best, dir, bestV = j, dj0, v
		}
	}
	return best, dir
}

// ratio returns the leaving row for entering column q moving in dir, or
// −1 for a bound flip of q, and the step; step is +Inf when unbounded.
func (tb *tableau) ratio(q int, dir float64) (int, float64) {
	// Pass 1 (Harris): the largest step that keeps every basic variable
	// within its bounds relaxed by lpTolFeas.
	lim := tb.hi[q]
	for i := 0; i < tb.m; i++ {
		a := dir * tb.t[i*tb.w+q]
		switch {
		case a > lpTolPivot:
			lim = min(lim, (tb.beta[i]+lpTolFeas)/a)
		case a < -lpTolPivot:
			if h := tb.hi[tb.basis[i]]; !math.IsInf(h, 1) {
				lim = min(lim, (h-tb.beta[i]+lpTolFeas)/-a)
			}
		}
	}
	if math.IsInf(lim, 1) {
		return -1, lim
	}
	if tb.hi[q] <= lim {
		return -1, tb.hi[q] // bound flip: no pivot
	}
	// Pass 2: among the rows whose exact ratio is within lim, the largest
	// |pivot| (numerical stability), or in Bland mode the smallest basic
	// index.
	p, pa, step := -1, 0.0, 0.0
	for i := 0; i < tb.m; i++ {
		a := dir * tb.t[i*tb.w+q]
		var r float64
		switch {
		case a > lpTolPivot:
			r = tb.beta[i] / a
		case a < -lpTolPivot:
			h := tb.hi[tb.basis[i]]
			if math.IsInf(h, 1) {
				continue
			}
			r = (h - tb.beta[i]) / -a
		default:
			continue
		}
		if r > lim {
			continue
		}
		better := p < 0
		if !better {
			if tb.bland {
				better = tb.basis[i] < tb.basis[p]
			} else {
				better = math.Abs(a) > pa
			}
		}
		if better {
			p, pa, step = i, math.Abs(a), r
		}
	}
	return p, max(step, 0)
}

// step moves column q by dir·θ, pivoting it into row p unless p < 0.
func (tb *tableau) step(q int, dir float64, p int, theta float64) {
	w := tb.w
	if theta > 0 {
		for i := 0; i < tb.m; i++ {
			if a := tb.t[i*w+q]; a != 0 {
				v := tb.beta[i] - dir*theta*a
				// Clip the Harris overshoot back into the bounds.
				if v < 0 {
					v = 0
				} else if h := tb.hi[tb.basis[i]]; v > h {
					v = h
				}
				tb.beta[i] = v
			}
		}
	}
	if p < 0 {
		if tb.stat[q] == stLower {
			tb.stat[q] = stUpper
		} else {
			tb.stat[q] = stLower
		}
		return
	}
	enter := tb.value(q) + dir*theta
	leave := tb.basis[p]
	if dir*tb.t[p*w+q] > 0 {
		tb.stat[leave] = stLower
	} else {
		tb.stat[leave] = stUpper
	}
	tb.basis[p], tb.stat[q], tb.beta[p] = q, stBasic, min(max(enter, 0), tb.hi[q])
	tb.pivot(p, q)
}

// pivot makes column q the unit vector of row p.
func (tb *tableau) pivot(p, q int) {
	w := tb.w
	rp := tb.row(p)
	inv := 1 / rp[q]
	tb.nz = tb.nz[:0]
	for k, v := range rp {
		if v == 0 {
			continue
		}
		v *= inv
		if math.Abs(v) < lpTolDrop {
			rp[k] = 0
			continue
		}
		rp[k] = v
		tb.nz = append(tb.nz, k)
	}
	rp[q] = 1
	for i := 0; i < tb.m; i++ {
		if i == p {
			continue
		}
		ri := tb.t[i*w : (i+1)*w]
		f := ri[q]
		if f == 0 {
			continue
		}
		for _, k := range tb.nz {
			ri[k] -= f * rp[k]
		}
		ri[q] = 0
	}
	if f := tb.d[q]; f != 0 {
		for _, k := range tb.nz {
			tb.d[k] -= f * rp[k]
		}
		tb.d[q] = 0
	}
}

// reprice recomputes d = cost − cost_B·T from the tableau.
func (tb *tableau) reprice() {
	copy(tb.d, tb.cost)
	for i, b := range tb.basis {
		cb := tb.cost[b]
		if cb == 0 {
			continue
		}
		ri := tb.row(i)
		for k, v := range ri {
			if v != 0 {
				tb.d[k] -= cb * v
			}
		}
	}
	for _, b := range tb.basis {
		tb.d[b] = 0
	}
}

// run iterates to optimality for the current cost, or to a cap.
func (tb *tableau) run(deadline time.Time, maxIter int) lpStatus {
	checks := 0
	for {
		q, dir := tb.price()
		if q < 0 {
			// Confirm against freshly computed reduced costs: the
			// incrementally updated ones drift.
			if checks == 3 {
				return lpOptimal
			}
			checks++
			tb.reprice()
			if q, _ = tb.price(); q < 0 {
				return lpOptimal
			}
			continue
		}
		if tb.iters >= maxIter {
			return lpLimit
		}
		if tb.iters%lpClockEvery == 0 && (time.Now().After(deadline) || tb.stop != nil && tb.stop()) {
			return lpLimit
		}
		tb.iters++
		p, theta := tb.ratio(q, dir)
		if math.IsInf(theta, 1) {
			return lpUnbounded
		}
		if theta*math.Abs(tb.d[q]) <= lpTolFeas {
			if tb.degen++; tb.degen >= lpBlandAfter {
				tb.bland = true
			}
		} else {
			tb.degen, tb.bland = 0, false
		}
		tb.step(q, dir, p, theta)
	}
}

// solveLP minimises p.c·x over p.rows and the box, stopping at the
// deadline or after maxIter pivots (0: a default cap).
func solveLP(pr *lpProblem, deadline time.Time, maxIter int) lpResult {
	n := len(pr.c)
	// Normalise: ≥ rows negated to ≤; rows that hold for every x in the
	// box are dropped (multiplier 0); a row that holds for no x in the
	// box makes the LP infeasible.
	type nrow struct {
		orig int
		sign float64
		r    *lpRow
	}
	var rows []nrow
	for ri := range pr.rows {
		r := &pr.rows[ri]
		sign := 1.0
		if r.op == encode.GE {
			sign = -1
		}
		var lo, hi float64 // activity range of sign·a·x over the box
		for _, v := range r.val {
			if v *= sign; v > 0 {
				hi += v
			} else {
				lo += v
			}
		}
		b := sign * r.rhs
		if lo > b+lpTolFeas || (r.op == encode.EQ && hi < b-lpTolFeas) {
			return lpResult{status: lpInfeasible}
		}
		if r.op != encode.EQ && hi <= b {
			continue
		}
		rows = append(rows, nrow{ri, sign, r})
	}
	m := len(rows)
	x0 := make([]bool, n)
	if len(pr.start) == n {
		copy(x0, pr.start)
	}
	// Residual of each row at x0, and which rows need an artificial.
	resid := make([]float64, m)
	nart := 0
	artOf := make([]int, m)
	for i, nr := range rows {
		v := nr.sign * nr.r.rhs
		for k, j := range nr.r.idx {
			if x0[j] {
				v -= nr.sign * nr.r.val[k]
			}
		}
		resid[i] = v
		artOf[i] = -1
		if v < -lpTolFeas || (nr.r.op == encode.EQ && v > lpTolFeas) {
			artOf[i] = n + m + nart
			nart++
		}
	}
	w := n + m + nart
	tb := &tableau{stop: pr.stop, m: m, n: n, w: w, t: make([]float64, m*w),
		beta: make([]float64, m), basis: make([]int, m), stat: make([]int8, w),
		hi: make([]float64, w), cost: make([]float64, w), d: make([]float64, w)}
	for j := 0; j < n; j++ {
		tb.hi[j], tb.stat[j] = 1, stLower
		if x0[j] {
			tb.stat[j] = stUpper
		}
	}
	for i, nr := range rows {
		s := n + i
		tb.stat[s] = stLower
		if nr.r.op != encode.EQ {
			tb.hi[s] = math.Inf(1)
		}
		// Row i of B⁻¹ is ±e_i: + for a basic slack, sign(resid) for a
		// basic artificial.
		f := 1.0
		if a := artOf[i]; a >= 0 {
			if resid[i] < 0 {
				f = -1
			}
			tb.hi[a], tb.cost[a] = math.Inf(1), 1
			tb.t[i*w+a] = 1
			tb.basis[i], tb.stat[a], tb.beta[i] = a, stBasic, math.Abs(resid[i])
		} else {
			tb.basis[i], tb.stat[s], tb.beta[i] = s, stBasic, max(resid[i], 0)
		}
		ri := tb.row(i)
		for k, j := range nr.r.idx {
			ri[j] += f * nr.sign * nr.r.val[k]
		}
		ri[s] = f
	}
	if maxIter <= 0 {
		maxIter = 50*(m+w) + 1000
	}
	var res lpResult
	if nart > 0 {
		tb.reprice()
		st := tb.run(deadline, maxIter)
		res.iters = tb.iters
		if st != lpOptimal {
			res.status = st
			return res
		}
		var infeas float64
		for i, b := range tb.basis {
			if b >= n+m {
				infeas += tb.beta[i]
			}
		}
		if infeas > lpTolInf {
			res.status = lpInfeasible
			return res
		}
		// Artificials are now fixed at 0: nonbasic ones never enter
		// again, basic ones stay at 0 and leave when a ratio test picks
		// them.
		for a := n + m; a < w; a++ {
			tb.hi[a], tb.cost[a] = 0, 0
		}
		tb.degen, tb.bland = 0, false
	}
	copy(tb.cost, pr.c)
	tb.reprice()
	res.status = tb.run(deadline, maxIter)
	res.iters = tb.iters
	if res.status == lpUnbounded {
		return res
	}
	// Primal point and objective of the final basis.
	res.x = make([]float64, n)
	for j := 0; j < n; j++ {
		if tb.stat[j] == stUpper {
			res.x[j] = 1
		}
	}
	for i, b := range tb.basis {
		if b < n {
			res.x[b] = min(max(tb.beta[i], 0), 1)
		}
	}
	for j, v := range res.x {
		res.obj += pr.c[j] * v
	}
	// Multipliers: the reduced cost of row i's slack (cost 0, column e_i)
	// is −y_i. Clip to the sign the row's sense allows (≤ rows: y <= 0).
	res.y = make([]float64, len(pr.rows))
	for i, nr := range rows {
		y := -tb.d[n+i]
		if nr.r.op != encode.EQ {
			y = min(y, 0)
		}
		res.y[nr.orig] = nr.sign * y // back to the caller's row sense
	}
	res.bound, res.hasBound = lagrangeBound(pr, res.y)
	return res
}

// lagrangeBound is y·b + Σ_j min(0, c_j − y·A_j) from the problem's own
// data, less a rounding margin: a valid lower bound on c·x over the
// feasible set for any y with y_r <= 0 on ≤ rows, >= 0 on ≥ rows (rows
// with the wrong sign get 0). The margin, 1e-9 of the sum of the
// magnitudes of every term, is about 10⁴ times float64's worst-case
// summation error at 10⁵ terms.
func lagrangeBound(pr *lpProblem, y []float64) (float64, bool) {
	d, mag := reducedCosts(pr, y)
	var val float64
	for ri := range pr.rows {
		val += clipY(pr.rows[ri].op, y[ri]) * pr.rows[ri].rhs
	}
	for _, dj := range d {
		if dj < 0 {
			val += dj
		}
	}
	if math.IsNaN(val) || math.IsInf(val, 0) || math.IsNaN(mag) || math.IsInf(mag, 0) {
		return 0, false
	}
	return val - 1e-9*mag, true
}

// clipY is a multiplier clipped to the sign its row's sense allows: <= 0
// on <= rows, >= 0 on >= rows, free on = rows.
func clipY(op encode.Op, y float64) float64 {
	if (op == encode.LE && y > 0) || (op == encode.GE && y < 0) {
		return 0
	}
	return y
}

// reducedCosts is d = c − yA for y clipped by clipY, and the magnitude
// of every term summed (with |y·b|), for lagrangeBound's margin.
func reducedCosts(pr *lpProblem, y []float64) ([]float64, float64) {
	d := slices.Clone(pr.c)
	var mag float64
	for _, c := range pr.c {
		mag += math.Abs(c)
	}
	for ri := range pr.rows {
		w := &pr.rows[ri]
		yr := clipY(w.op, y[ri])
		if yr == 0 {
			continue
		}
		mag += math.Abs(yr * w.rhs)
		for k, j := range w.idx {
			t := yr * w.val[k]
			d[j] -= t
			mag += math.Abs(t)
		}
	}
	return d, mag
}
