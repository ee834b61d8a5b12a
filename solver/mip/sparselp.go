package mip

import (
	"math"
	"slices"
	"time"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/solver/lp"
)

// lpRowOf writes an irow for package lp.
func lpRowOf(w Row) lp.Row {
	row := lp.Row{Idx: w.Idx, Val: make([]float64, len(w.Val)), Lo: math.Inf(-1), Hi: math.Inf(1)}
	for k, v := range w.Val {
		row.Val[k] = float64(v)
	}
	switch w.Op {
	case encode.LE:
		row.Hi = float64(w.Rhs)
	case encode.GE:
		row.Lo = float64(w.Rhs)
	default:
		row.Lo, row.Hi = float64(w.Rhs), float64(w.Rhs)
	}
	return row
}

func FloatRowOf(w Row) FloatRow {
	row := FloatRow{Op: w.Op, Rhs: float64(w.Rhs), Idx: w.Idx, Val: make([]float64, len(w.Val))}
	for k, v := range w.Val {
		row.Val[k] = float64(v)
	}
	return row
}

// CutLoop is the root of a branch-and-cut without the branching: the LP
// of a relaxation solved by the sparse dual simplex, rounds of cover and
// Gomory cuts separated at its vertex and re-solved from the same basis,
// inactive cuts dropped.
type CutLoop struct {
	R  *Relaxation
	St *lp.State
	// Rows mirrors the LP's Rows: the relaxation's Rows, then the cuts
	// in the LP now. Gomory cuts read the tableau against them.
	Rows  []Row
	nOrig int
	// fr and fc are rows and r.c as floats, for the bound after each
	// solve (problem): converted once, not at every solve.
	fr   []FloatRow
	fc   []float64
	cuts int
	// Complete: the loop ended by its own rule, not by a clock.
	Complete bool
	prober   *prober
	trace    Tracef
	rounds   int // separation rounds so far
	// caps are what a round separates, by the model's size.
	caps cutCaps
	// The loop's progress: LP Solves so far, the best bound with its
	// multipliers and rows, rounds without a rise, whether the last
	// solve rose, and resumable: the last solve reached the optimum and
	// its separation is still to come (run stopped in between).
	Solves int
	// Bounds is each solve's bound, -Inf where it gave none.
	Bounds    []float64
	Best      float64
	bestY     []float64
	bestPr    *Problem
	stall     int
	improved  bool
	Resumable bool
	// Snapshots keeps Snap: a copy of the loop after the last solve that
	// raised the bound's ceiling, taken before its separation.
	Snapshots bool
	Snap      *Snapshot
	// Interrupt, when set, is what stops an LP solve midway; Run's stop
	// then ends the loop between solves only.
	Interrupt func() bool
}

// Snapshot is a cut loop as it was after one solve: Solve indexes
// Bounds, whose last entry is that solve's.
type Snapshot struct {
	St     *lp.State
	Rows   []Row
	Best   float64
	Bounds []float64
	Solve  int
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

func NewCutLoop(r *Relaxation) (*CutLoop, bool) {
	n := len(r.Vars)
	prob := &lp.Problem{Cost: make([]float64, n), Lo: make([]float64, n), Hi: make([]float64, n)}
	for j := range n {
		prob.Cost[j] = float64(r.C[j])
		prob.Lo[j], prob.Hi[j] = float64(r.Lo[j]), float64(r.Hi[j])
	}
	for _, w := range r.Rows {
		prob.Rows = append(prob.Rows, lpRowOf(w))
	}
	st, err := lp.New(prob)
	if err != nil {
		return nil, false
	}
	st.Clock = r.Clock
	cl := &CutLoop{R: r, St: st, Rows: append([]Row(nil), r.Rows...), nOrig: len(r.Rows), caps: smallCaps, Best: math.Inf(-1),
		fr: make([]FloatRow, 0, len(r.Rows)), fc: make([]float64, n)}
	for _, w := range r.Rows {
		cl.fr = append(cl.fr, FloatRowOf(w))
	}
	for j, c := range r.C {
		cl.fc[j] = float64(c)
	}
	if !FitsSparse(r) {
		cl.caps = largeCaps
	}
	return cl, true
}

// stallRise is the least rise of the bound for a solve to count: a
// round that lifts the bound by less than a hundredth of what the loop
// has lifted it so far is a tail that buys little, and where the root is far from
// the optimum such tails ran 24x60-tight's canonical loop 22 rounds
// (0.5 s) to lift it 0.1%.
func (cl *CutLoop) stallRise() float64 {
	if len(cl.Bounds) < 2 || math.IsInf(cl.Bounds[0], -1) || math.IsInf(cl.Best, -1) {
		return sparseStall
	}
	return max(sparseStall, sparseStallFrac*(cl.Best-cl.Bounds[0]))
}

// SetTrace sends the loop's rounds to tr.
func (cl *CutLoop) SetTrace(tr Tracef) { cl.trace = tr }

// Problem is the float Problem of the LP's rows now, for the bound.
func (cl *CutLoop) Problem() *Problem {
	return &Problem{C: cl.fc, Rows: cl.fr[:len(cl.fr):len(cl.fr)]}
}

// SparseRounds runs the cut loop until it stalls, finds no cut, or
// reaches its round cap (the loop is then complete: what it did depends
// on the relaxation alone, so a canonical re-solve can start from it),
// or until the deadline or stop. It returns the best bound with its
// multipliers and the rows they belong to.
func SparseRounds(r *Relaxation, deadline time.Time, stop func() bool, tr Tracef, onBound func(float64, []float64)) (best float64, bestY []float64, bestPr *Problem, cl *CutLoop, rounds, cuts int) {
	cl, ok := NewCutLoop(r)
	if !ok {
		return math.Inf(-1), nil, nil, nil, 0, 0
	}
	cl.SetTrace(tr)
	cl.Run(deadline, stop, onBound)
	return cl.Best, cl.bestY, cl.bestPr, cl, cl.Solves, cl.cuts
}

// Result is the loop's best bound with its multipliers and the rows
// they belong to, and how many cuts it added.
func (cl *CutLoop) Result() (best float64, y []float64, pr *Problem, cuts int) {
	return cl.Best, cl.bestY, cl.bestPr, cl.cuts
}

// Run solves and separates until the loop is complete, the deadline or
// stop. Stopped between a round's solve and its separation, the loop is
// resumable: Run again goes on exactly as if it had not stopped.
func (cl *CutLoop) Run(deadline time.Time, stop func() bool, onBound func(float64, []float64)) {
	cl.St.Stop = stop
	if cl.Interrupt != nil {
		cl.St.Stop = cl.Interrupt
	}
	defer func() { cl.St.Stop = nil }()
	for !cl.Complete {
		if !cl.Resumable {
			status := cl.St.Solve(deadline, 0)
			cl.Solves++
			y := cl.St.Duals()
			pr := cl.Problem()
			b, ok := WeakBound(pr, y)
			if ok {
				cl.Bounds = append(cl.Bounds, b)
			} else {
				cl.Bounds = append(cl.Bounds, math.Inf(-1))
			}
			cl.tracef("LP round %d: %v after %d iterations, bound %.2f, %d rows", cl.Solves-1, status, cl.St.Iterations(), b, cl.St.Rows())
			cl.improved = ok && b > cl.Best+cl.stallRise()
			if ok && b > cl.Best {
				rose := math.Ceil(b-1e-6) > math.Ceil(cl.Best-1e-6)
				cl.Best, cl.bestY, cl.bestPr = b, y, pr
				if cl.Snapshots && rose && status == lp.Optimal {
					cl.Snap = &Snapshot{St: cl.St.Clone(), Rows: slices.Clone(cl.Rows), Best: b, Bounds: slices.Clone(cl.Bounds), Solve: cl.Solves - 1}
				}
			}
			if onBound != nil && ok {
				var xs []float64
				if status == lp.Optimal {
					xs = cl.St.X()
				}
				onBound(b, xs)
			}
			if status != lp.Optimal {
				return
			}
			cl.Resumable = true
			if cl.St.Clock.Now().After(deadline) || (stop != nil && stop()) {
				return
			}
		}
		cl.Resumable = false
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
		if cl.stall >= 2 || cl.Solves >= sparseRoundsMax || !cl.round() {
			cl.Complete = true
		}
	}
}

// round drops the cuts the vertex leaves slack, separates new ones and
// adds them; false when none was found.
func (cl *CutLoop) round() bool {
	st := cl.St
	xs := st.X()
	// Probing propagates over the rows and the short cuts found so far:
	// a cut that no single row implies (a probing lift, a fixing) makes
	// the next round's propagation reach further.
	prows := make([]Row, 0, len(cl.Rows))
	for i, w := range cl.Rows {
		if i < cl.nOrig || len(w.Idx) <= probeMaxCutLen {
			prows = append(prows, w)
		}
	}
	lo, hi := cl.R.Lo, cl.R.Hi
	if cl.prober != nil {
		lo, hi = cl.prober.baseLo, cl.prober.baseHi
	}
	cl.prober = newProber(prows, lo, hi)
	// Probing every free column costs seconds a round on 256x1000's
	// 43,000 columns, where its cuts barely move the bound; there only
	// the fractional ones are probed.
	pc := probingCuts(cl.prober, xs, len(xs) <= probeEveryColumnMax, cl.caps.probing)
	cl.rounds++
	gm := gomoryCuts(cl.R, cl.Rows, st, xs, cl.caps.gomory, cl.caps.gomoryLen)
	cv := cl.R.Separate(xs, cl.caps.covers)
	cs := append(append(cv, pc...), gm...)
	cl.tracef("  %d cover cuts, %d probing cuts, %d gomory cuts", len(cv), len(pc), len(gm))
	if len(cs) == 0 {
		return false
	}
	// Slack cuts leave the LP (they stay in the relaxation's rows, valid
	// for the PB workers).
	drop := func(i int) bool {
		return i >= cl.nOrig && len(cl.Rows[i].Idx) > probeMaxCutLen && st.Slack(i) && cl.slack(i, xs) > 1e-6
	}
	rows := make([]Row, 0, len(cl.Rows)+len(cs))
	fr := make([]FloatRow, 0, len(cl.Rows)+len(cs))
	for i, w := range cl.Rows {
		if !drop(i) {
			rows = append(rows, w)
			fr = append(fr, cl.fr[i])
		}
	}
	if st.RemoveRows(drop) != nil {
		return false
	}
	cl.Rows, cl.fr = rows, fr
	add := make([]lp.Row, 0, len(cs))
	for _, w := range cs {
		add = append(add, lpRowOf(w))
	}
	if st.AddRows(add) != nil {
		return false
	}
	cl.Rows = append(cl.Rows, cs...)
	for _, w := range cs {
		cl.fr = append(cl.fr, FloatRowOf(w))
	}
	cl.R.Rows = append(cl.R.Rows, cs...)
	cl.cuts += len(cs)
	return true
}

// slack is row i's slack at xs (<= rows as written by the cuts).
func (cl *CutLoop) slack(i int, xs []float64) float64 {
	w := &cl.Rows[i]
	var act float64
	for k, j := range w.Idx {
		act += float64(w.Val[k]) * xs[j]
	}
	switch w.Op {
	case encode.LE:
		return float64(w.Rhs) - act
	case encode.GE:
		return act - float64(w.Rhs)
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
	// sparseStall is the bound's least rise for a round to count, and
	// sparseStallFrac that rise as a fraction of the loop's rise so far.
	sparseStall     = 0.5
	sparseStallFrac = 0.01
)

// Up to these sizes (64x250's level 4 is 5,000 rows and 30,000
// nonzeros) the sparse LP bounds a level alone; past them (256x1000's
// is 53,000 rows and 765,000 nonzeros) the Lagrangian ascent goes first
// and the LP follows with the time left, and level 4's workers change
// (startPB, withLP). Variables so that tests can send small models
// either way.
var (
	SparseMaxRows     = 25000
	sparseMaxNonzeros = 250000
)

// FitsSparse says whether a presolved model is small enough for the
// sparse LP.
func FitsSparse(r *Relaxation) bool {
	return len(r.Rows) <= SparseMaxRows && r.Nonzeros() <= sparseMaxNonzeros
}

// Tracef writes one line of a solve's trace; nil writes nothing.
type Tracef func(format string, args ...any)

func (cl *CutLoop) tracef(format string, args ...any) {
	if cl.trace != nil {
		cl.trace(format, args...)
	}
}
