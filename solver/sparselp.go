package solver

import (
	"math"
	"time"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/solver/lp"
)

// lpRowOf writes an irow for package lp.
func lpRowOf(w irow) lp.Row {
	row := lp.Row{Idx: w.idx, Val: make([]float64, len(w.val)), Lo: math.Inf(-1), Hi: math.Inf(1)}
	for k, v := range w.val {
		row.Val[k] = float64(v)
	}
	switch w.op {
	case encode.LE:
		row.Hi = float64(w.rhs)
	case encode.GE:
		row.Lo = float64(w.rhs)
	default:
		row.Lo, row.Hi = float64(w.rhs), float64(w.rhs)
	}
	return row
}

func floatRow(w irow) lpRow {
	row := lpRow{op: w.op, rhs: float64(w.rhs), idx: w.idx, val: make([]float64, len(w.val))}
	for k, v := range w.val {
		row.val[k] = float64(v)
	}
	return row
}

// cutLoop is the root of a branch-and-cut without the branching: the LP
// of a relaxation solved by the sparse dual simplex, rounds of cover and
// Gomory cuts separated at its vertex and re-solved from the same basis,
// inactive cuts dropped.
type cutLoop struct {
	r  *relaxation
	st *lp.State
	// rows mirrors the LP's rows: the relaxation's rows, then the cuts
	// in the LP now. Gomory cuts read the tableau against them.
	rows  []irow
	nOrig int
	// fr and fc are rows and r.c as floats, for the bound after each
	// solve (problem): converted once, not at every solve.
	fr   []lpRow
	fc   []float64
	cuts int
	// complete: the loop ended by its own rule, not by a clock.
	complete bool
	prober   *prober
	trace    tracer
	rounds   int // separation rounds so far
	// caps are what a round separates, by the model's size.
	caps cutCaps
	// The loop's progress: LP solves so far, the best bound with its
	// multipliers and rows, rounds without a rise, whether the last
	// solve rose, and resumable: the last solve reached the optimum and
	// its separation is still to come (run stopped in between).
	solves    int
	best      float64
	bestY     []float64
	bestPr    *lpProblem
	stall     int
	improved  bool
	resumable bool
}

// cutCaps caps a round's cuts of each family, and a Gomory cut's
// nonzeros.
type cutCaps struct {
	gomory, covers, probing, gomoryLen int
}

// Past fitsSparse a round separates half as many cuts, and Gomory cuts
// are short until the loop stalls. Each cut the LP point violates costs
// re-solve iterations, and there they are dense: on 256x1000-tight's
// level-4 model the first round took 9,900 iterations at 1.3 ms, and
// with half the cuts the loop's bound after 30 s was 564,000-593,000
// on two LP paths against 350,000-503,000 (256x1000's: 466,000 against
// 469,000 after 20 s). Short cuts: see gmiMaxLenLarge.
var (
	smallCaps = cutCaps{gomory: 300, covers: 400, probing: 400, gomoryLen: gmiMaxLen}
	largeCaps = cutCaps{gomory: 150, covers: 200, probing: 200, gomoryLen: gmiMaxLenLarge}
)

func newCutLoop(r *relaxation) (*cutLoop, bool) {
	n := len(r.vars)
	prob := &lp.Problem{Cost: make([]float64, n), Lo: make([]float64, n), Hi: make([]float64, n)}
	for j := range n {
		prob.Cost[j] = float64(r.c[j])
		prob.Lo[j], prob.Hi[j] = float64(r.lo[j]), float64(r.hi[j])
	}
	for _, w := range r.rows {
		prob.Rows = append(prob.Rows, lpRowOf(w))
	}
	st, err := lp.New(prob)
	if err != nil {
		return nil, false
	}
	cl := &cutLoop{r: r, st: st, rows: append([]irow(nil), r.rows...), nOrig: len(r.rows), caps: smallCaps, best: math.Inf(-1),
		fr: make([]lpRow, 0, len(r.rows)), fc: make([]float64, n)}
	for _, w := range r.rows {
		cl.fr = append(cl.fr, floatRow(w))
	}
	for j, c := range r.c {
		cl.fc[j] = float64(c)
	}
	if !fitsSparse(r) {
		cl.caps = largeCaps
	}
	return cl, true
}

// problem is the float problem of the LP's rows now, for the bound.
func (cl *cutLoop) problem() *lpProblem {
	return &lpProblem{c: cl.fc, rows: cl.fr[:len(cl.fr):len(cl.fr)]}
}

// sparseRounds runs the cut loop until it stalls, finds no cut, or
// reaches its round cap (the loop is then complete: what it did depends
// on the relaxation alone, so a canonical re-solve can start from it),
// or until the deadline or stop. It returns the best bound with its
// multipliers and the rows they belong to.
func sparseRounds(r *relaxation, deadline time.Time, stop func() bool, tr tracer, onBound func(float64, []float64)) (best float64, bestY []float64, bestPr *lpProblem, cl *cutLoop, rounds, cuts int) {
	cl, ok := newCutLoop(r)
	if !ok {
		return math.Inf(-1), nil, nil, nil, 0, 0
	}
	cl.trace = tr
	cl.run(deadline, stop, onBound)
	return cl.best, cl.bestY, cl.bestPr, cl, cl.solves, cl.cuts
}

// run solves and separates until the loop is complete, the deadline or
// stop. Stopped between a round's solve and its separation, the loop is
// resumable: run again goes on exactly as if it had not stopped.
func (cl *cutLoop) run(deadline time.Time, stop func() bool, onBound func(float64, []float64)) {
	cl.st.Stop = stop
	defer func() { cl.st.Stop = nil }()
	for !cl.complete {
		if !cl.resumable {
			status := cl.st.Solve(deadline, 0)
			cl.solves++
			y := cl.st.Duals()
			pr := cl.problem()
			b, ok := lagrangeBound(pr, y)
			cl.trace.f("LP round %d: %v after %d iterations, bound %.2f, %d rows", cl.solves-1, status, cl.st.Iterations(), b, cl.st.Rows())
			cl.improved = ok && b > cl.best+sparseStall
			if ok && b > cl.best {
				cl.best, cl.bestY, cl.bestPr = b, y, pr
			}
			if onBound != nil && ok {
				var xs []float64
				if status == lp.Optimal {
					xs = cl.st.X()
				}
				onBound(b, xs)
			}
			if status != lp.Optimal {
				return
			}
			cl.resumable = true
			if time.Now().After(deadline) || (stop != nil && stop()) {
				return
			}
		}
		cl.resumable = false
		if !cl.improved {
			cl.stall++
		} else {
			cl.stall = 0
		}
		if cl.stall >= 2 && cl.caps.gomoryLen < gmiMaxLen {
			// The short Gomory cuts are spent: longer ones still lift
			// the bound (256x1000's loop stalls at 469,332 without them
			// and goes on to 471,066 with them).
			cl.caps.gomoryLen, cl.stall = gmiMaxLen, 0
		}
		if cl.stall >= 2 || cl.solves >= sparseRoundsMax || !cl.round() {
			cl.complete = true
		}
	}
}

// round drops the cuts the vertex leaves slack, separates new ones and
// adds them; false when none was found.
func (cl *cutLoop) round() bool {
	st := cl.st
	xs := st.X()
	// Probing propagates over the rows and the short cuts found so far:
	// a cut that no single row implies (a probing lift, a fixing) makes
	// the next round's propagation reach further.
	prows := make([]irow, 0, len(cl.rows))
	for i, w := range cl.rows {
		if i < cl.nOrig || len(w.idx) <= probeMaxCutLen {
			prows = append(prows, w)
		}
	}
	lo, hi := cl.r.lo, cl.r.hi
	if cl.prober != nil {
		lo, hi = cl.prober.baseLo, cl.prober.baseHi
	}
	cl.prober = newProber(prows, lo, hi)
	// Probing every free column costs seconds a round on 256x1000's
	// 43,000 columns, where its cuts barely move the bound; there only
	// the fractional ones are probed.
	pc := probingCuts(cl.prober, xs, len(xs) <= probeEveryColumnMax, cl.caps.probing)
	cl.rounds++
	gm := gomoryCuts(cl.r, cl.rows, st, xs, cl.caps.gomory, cl.caps.gomoryLen)
	cv := cl.r.separate(xs, cl.caps.covers)
	cs := append(append(cv, pc...), gm...)
	cl.trace.f("  %d cover cuts, %d probing cuts, %d gomory cuts", len(cv), len(pc), len(gm))
	if len(cs) == 0 {
		return false
	}
	// Slack cuts leave the LP (they stay in the relaxation's rows, valid
	// for the PB workers).
	drop := func(i int) bool {
		return i >= cl.nOrig && len(cl.rows[i].idx) > probeMaxCutLen && st.Slack(i) && cl.slack(i, xs) > 1e-6
	}
	rows := make([]irow, 0, len(cl.rows)+len(cs))
	fr := make([]lpRow, 0, len(cl.rows)+len(cs))
	for i, w := range cl.rows {
		if !drop(i) {
			rows = append(rows, w)
			fr = append(fr, cl.fr[i])
		}
	}
	if st.RemoveRows(drop) != nil {
		return false
	}
	cl.rows, cl.fr = rows, fr
	add := make([]lp.Row, 0, len(cs))
	for _, w := range cs {
		add = append(add, lpRowOf(w))
	}
	if st.AddRows(add) != nil {
		return false
	}
	cl.rows = append(cl.rows, cs...)
	for _, w := range cs {
		cl.fr = append(cl.fr, floatRow(w))
	}
	cl.r.rows = append(cl.r.rows, cs...)
	cl.cuts += len(cs)
	return true
}

// slack is row i's slack at xs (<= rows as written by the cuts).
func (cl *cutLoop) slack(i int, xs []float64) float64 {
	w := &cl.rows[i]
	var act float64
	for k, j := range w.idx {
		act += float64(w.val[k]) * xs[j]
	}
	switch w.op {
	case encode.LE:
		return float64(w.rhs) - act
	case encode.GE:
		return act - float64(w.rhs)
	}
	return 0
}

const (
	sparseRoundsMax = 60
	// probeMaxCutLen: longer cuts (Gomory's, mostly) stay out of probing.
	probeMaxCutLen = 5
	// probeEveryColumnMax: up to this many columns, probing tries
	// every free column, not only the fractional ones.
	probeEveryColumnMax = 10000
	// sparseStall is the bound's least rise for a round to count.
	sparseStall = 0.5
)

// Up to these sizes (64x250's level 4 is 5,000 rows and 30,000
// nonzeros) the sparse LP bounds a level alone; past them (256x1000's
// is 53,000 rows and 765,000 nonzeros) the Lagrangian ascent goes first
// and the LP follows with the time left, and level 4's workers change
// (startPB, withLP). Variables so that tests can send small models
// either way.
var (
	sparseMaxRows     = 25000
	sparseMaxNonzeros = 250000
)

// fitsSparse says whether a presolved model is small enough for the
// sparse LP.
func fitsSparse(r *relaxation) bool {
	return len(r.rows) <= sparseMaxRows && r.nonzeros() <= sparseMaxNonzeros
}
