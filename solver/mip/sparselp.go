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
	// lazy are the model's rows the LP started without (lazy.go);
	// lazyIn names the ones it holds since, by their first index's
	// address, so that probing reads each row once. lazyRounds counts
	// the solves whose vertex added lazy rows alone, lazyDone that
	// those rounds have ended.
	lazy       *LazyRows
	lazyIn     map[*int]bool
	lazyRounds int
	lazyDone   bool
}

// Snapshot is a cut loop as it was after one solve: Solve indexes
// Bounds, whose last entry is that solve's.
type Snapshot struct {
	St     *lp.State
	Rows   []Row
	Lazy   *LazyRows
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
	load, lazy := splitLazy(r.Rows)
	for _, w := range load {
		prob.Rows = append(prob.Rows, lpRowOf(w))
	}
	st, err := lp.New(prob)
	if err != nil {
		return nil, false
	}
	st.Clock = r.Clock
	cl := &CutLoop{R: r, St: st, Rows: slices.Clone(load), nOrig: len(load), caps: smallCaps, Best: math.Inf(-1),
		fr: make([]FloatRow, 0, len(load)), fc: make([]float64, n), lazy: lazy}
	if lazy != nil {
		cl.lazyIn = map[*int]bool{}
	}
	for _, w := range load {
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
//
// The rise is counted from the first solve past the lazy rounds: theirs
// is the LP's own, not the cuts' (256x1000 seed 42: 119,574 to 323,252
// in 12 solves, which made every cut round look stalled).
func (cl *CutLoop) stallRise() float64 {
	k := cl.lazyRounds
	if len(cl.Bounds) < k+2 || math.IsInf(cl.Bounds[k], -1) || math.IsInf(cl.Best, -1) {
		return sparseStall
	}
	return max(sparseStall, sparseStallFrac*(cl.Best-cl.Bounds[k]))
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
					cl.Snap = &Snapshot{St: cl.St.Clone(), Rows: slices.Clone(cl.Rows), Lazy: cl.lazy, Best: b, Bounds: slices.Clone(cl.Bounds), Solve: cl.Solves - 1}
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
			if cl.lazyRound() {
				if cl.St.Clock.Now().After(deadline) || (stop != nil && stop()) {
					return
				}
				continue
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
		if cl.stall >= 2 || cl.Solves-cl.lazyRounds >= sparseRoundsMax || !cl.round() {
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
	prows := make([]Row, 0, len(cl.Rows)+cl.lazy.Len())
	for i, w := range cl.Rows {
		if i < cl.nOrig || len(w.Idx) <= probeMaxCutLen && (len(w.Idx) == 0 || !cl.lazyIn[&w.Idx[0]]) {
			prows = append(prows, w)
		}
	}
	if cl.lazy != nil {
		prows = append(prows, cl.lazy.rows...)
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
	// The vertex may still violate lazy rows the lazy rounds left out
	// once the bound stopped rising with them; the worst go in with the
	// cuts, as the model's rows they are.
	lz := cl.lazy.Violated(xs, cl.caps.probing)
	if cl.lazy != nil {
		cl.tracef("  %d cover cuts, %d probing cuts, %d gomory cuts, %d lazy rows", len(cv), len(pc), len(gm), len(lz))
	} else {
		cl.tracef("  %d cover cuts, %d probing cuts, %d gomory cuts", len(cv), len(pc), len(gm))
	}
	if len(cs) == 0 && len(lz) == 0 {
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
	if !cl.LoadRows(append(lz, cs...), len(lz)) {
		return false
	}
	cl.R.Rows = append(cl.R.Rows, cs...)
	cl.cuts += len(cs)
	return true
}

// LoadRows adds rows to the LP and to Rows, the first lazy of them rows
// of the lazy pool; false when the LP refused them.
func (cl *CutLoop) LoadRows(rows []Row, lazy int) bool {
	add := make([]lp.Row, 0, len(rows))
	for _, w := range rows {
		add = append(add, lpRowOf(w))
	}
	if cl.St.AddRows(add) != nil {
		return false
	}
	cl.Rows = append(cl.Rows, rows...)
	for k, w := range rows {
		cl.fr = append(cl.fr, FloatRowOf(w))
		if k < lazy {
			cl.lazyIn[&w.Idx[0]] = true
		}
	}
	return true
}

// Lazy is the loop's pool of lazy rows, nil when its LP holds every row.
func (cl *CutLoop) Lazy() *LazyRows { return cl.lazy }

// lazyRound adds the lazy rows the last solve's vertex violates, while
// that adds to the bound: true when it added some, and the loop then
// solves again before any separation. The rounds end for good at the
// first vertex that violates none, or once a solve lifts the bound by
// less than lazyRise: the rows left out then move the vertex more than
// the bound (256x1000 seed 42: 323,242 after 11 solves, 0.9 s, and a
// further 26 in 9 s, each slower, for the last 26 of the 323,268 the
// rows give).
func (cl *CutLoop) lazyRound() bool {
	if cl.lazy == nil || cl.lazyDone {
		return false
	}
	if k := len(cl.Bounds); cl.lazyRounds >= lazyMinRounds && k >= 2 {
		if rise := cl.Bounds[k-1] - cl.Bounds[k-2]; !(rise >= lazyRise(cl.Bounds[0], cl.Bounds[k-1])) {
			cl.lazyDone = true
			return false
		}
	}
	add := cl.lazy.Violated(cl.St.X(), 0)
	if len(add) == 0 || !cl.LoadRows(add, len(add)) {
		cl.lazyDone = true
		return false
	}
	cl.lazyRounds++
	cl.tracef("  %d lazy rows", len(add))
	return true
}

// lazyMinRounds: the first lazy rounds go on whatever their rise (the
// first solves' bounds may stand still while their vertex moves).
const lazyMinRounds = 2

// lazyRise is the least rise of the bound, at b after starting at
// first, for a lazy round to be followed by another: a ten-thousandth
// of b and a thousandth of the rise so far, at least half a unit. On
// 256x1000-tight seed 1 the rounds went on from 278,915 to 279,448 over
// seven solves (1 s) with a ten-thousandth alone.
func lazyRise(first, b float64) float64 {
	return max(0.5, 1e-4*math.Abs(b), 1e-3*(b-first))
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
