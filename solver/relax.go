package solver

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/mip"
)

// newRelaxation builds level i's model from the encoding's linear
// mirror, with the assumptions true and the earlier levels at the
// incumbent's values (they are frozen there).
func newRelaxation(x *exact, i int) *mip.Relaxation {
	r := mip.NewRelaxation(x.e, x.obj, x.ass, i)
	r.Clock = x.clock()
	return r
}

// presolvedRelaxation is level i's model presolved by deadline: bounds
// propagated and fixed columns substituted out. False when a row holds
// for no point (the model has no plan).
//
// The last level's presolved model is kept (x.presolvedAt) and the next
// level's is made from it by one row, where a fresh one took 0.1-0.2 s
// a level on 256x1000.
func presolvedRelaxation(x *exact, i int, deadline time.Time) (*mip.Relaxation, bool) {
	var r *mip.Relaxation
	var ok bool
	switch k := x.presolvedAt; {
	case k != nil && k.level == i && k.obj == frozenBefore(x.obj, i):
		return k.r.Clone(), true
	case k != nil && k.level == i-1 && k.obj == frozenBefore(x.obj, i-1):
		r, ok = mip.Presolve(k.r.NextLevel(x.e, i, x.obj[i-1]), deadline)
	default:
		r, ok = mip.Presolve(newRelaxation(x, i), deadline)
	}
	if ok {
		x.presolvedAt = &presolvedLevel{level: i, obj: frozenBefore(x.obj, i), r: r.Clone()}
	}
	return r, ok
}

// presolvedLevel is level's presolved model, made with the levels before
// it frozen at obj.
type presolvedLevel struct {
	level int
	obj   model.Objective
	r     *mip.Relaxation
}

// frozenBefore is obj with the levels from i on cleared: the part of an
// objective that level i's model depends on.
func frozenBefore(obj model.Objective, i int) model.Objective {
	var f model.Objective
	copy(f[:i], obj[:i])
	return f
}

// strongResult is the strengthened LP's answer for one level.
type strongResult struct {
	bound int64 // lower bound on the level, offset included
	// pre are presolve's fixings: they hold in every plan.
	pre    []z.Lit
	vars   []z.Var
	d      []float64 // reduced costs of the free columns (0 for fixed)
	lp     float64   // the LP bound before rounding, without offset
	offset int64
	mag    float64 // magnitude of the sums behind d, for the margin
	rounds int
	cuts   int
	rel    *mip.Relaxation // the presolved rows and cuts, for the PB worker
	// uncut says rel is the presolved model alone (presolved's result),
	// which the canonical job and the LP may start from.
	uncut bool
	// loop is the sparse LP with its cuts, solved: branch and cut goes
	// on from it.
	loop *mip.CutLoop
	noLP bool // the LP was too large: bound, lp and d are unset
	// dead says presolve proved the model has no point (relax then
	// reports false): no plan meets the hard rules and earlier levels.
	dead bool
	// source names the bound: "lp" (the dense simplex) or "lagrangian"
	// (the subgradient ascent, on models too large for the simplex).
	source BoundSource
}

// rcScale is the capacity the reduced-cost knapsack is scaled to: larger
// is tighter and makes a larger diagram.
const rcScale = 256

// fixesFor returns what every plan of value <= cutoff keeps: presolve's
// fixings and the columns whose reduced cost alone passes the slack
// cutoff − bound, and, for the columns left, the knapsack
// Σ_j floor(|d_j|·K/slack)·[x_j off its cheap bound] <= K (K = rcScale)
// as single-branch groups. Each follows from c·x >= L + Σ|d_j|·dev_j.
func (sr *strongResult) fixesFor(cutoff int64) (fixes []z.Lit, knap []encode.Group, ok bool) {
	slack := float64(cutoff-sr.offset) - sr.lp + 1e-9*sr.mag + 1e-6
	if slack < 0 {
		return nil, nil, false // the bound already proves cutoff impossible
	}
	fixes = slices.Clone(sr.pre)
	if sr.noLP {
		return fixes, nil, true
	}
	for j, v := range sr.vars {
		dj := sr.d[j]
		off := v.Pos() // the literal of moving off the cheap bound
		if dj < 0 {
			off = v.Neg()
		}
		a := math.Abs(dj)
		switch {
		case a > slack:
			fixes = append(fixes, off.Not())
		case slack > 0 && a*rcScale/slack >= 1:
			w := int64(a * rcScale / slack)
			knap = append(knap, encode.Group{Branches: []encode.Branch{{Lit: off, W: w}}})
		}
	}
	return fixes, knap, true
}

// asRows writes fixes and a knapsack from fixesFor as rows over the
// relaxation's columns; literals on other variables are left out.
func (sr *strongResult) asRows(fixes []z.Lit, knap []encode.Group) []mip.Row {
	r := sr.rel
	var out []mip.Row
	for _, m := range fixes {
		c, ok := r.Column(m.Var())
		if !ok {
			continue
		}
		v := int64(0)
		if m.IsPos() {
			v = 1
		}
		out = append(out, mip.Row{Idx: []int{c}, Val: []int64{1}, Op: encode.EQ, Rhs: v})
	}
	if len(knap) > 0 {
		k := mip.Row{Op: encode.LE, Rhs: rcScale}
		for _, g := range knap {
			b := g.Branches[0]
			c, ok := r.Column(b.Lit.Var())
			if !ok {
				continue
			}
			if b.Lit.IsPos() {
				k.Idx, k.Val = append(k.Idx, c), append(k.Val, b.W)
			} else { // w·(1 − x)
				k.Idx, k.Val = append(k.Idx, c), append(k.Val, -b.W)
				k.Rhs -= b.W
			}
		}
		out = append(out, k)
	}
	return out
}

// strongLP bounds level i by the strengthened relaxation and keeps the
// reduced costs for fixing. It reports false when the model is too large
// for the dense simplex or time is short.
func strongLP(x *exact, i int, cutoff int64, end time.Time) (strongResult, bool) {
	return relax(x, i, cutoff, end, true, nil, nil, nil)
}

// strongLPUnless is strongLP that gives up between rounds once stop says
// so (the PB workers proved the level meanwhile). pre, when not nil, is
// the level's presolved model (from presolved), which it then need not
// build again.
//
// stop ends the cut loop between two rounds; interrupt, when set, is
// what may also stop an LP solve midway (nil: stop does).
func strongLPUnless(x *exact, i int, cutoff int64, end time.Time, stop, interrupt func() bool, pre *mip.Relaxation) (strongResult, bool) {
	return relax(x, i, cutoff, end, true, stop, interrupt, pre)
}

// presolved is level i's presolved model alone, without the LP: what
// the PB workers start on while the LP is solved.
func presolved(x *exact, i int, end time.Time) (strongResult, bool) {
	return relax(x, i, 0, end, false, nil, nil, nil)
}

func relax(x *exact, i int, cutoff int64, end time.Time, withLP bool, stop, interrupt func() bool, pre *mip.Relaxation) (strongResult, bool) {
	var out strongResult
	if interrupt == nil {
		interrupt = stop
	}
	if x.run != nil {
		// An interrupted solve stops the LP as its deadline would.
		until, hard := stop, interrupt
		stop = func() bool { return x.run.ctx.Err() != nil || until != nil && until() }
		interrupt = func() bool { return x.run.ctx.Err() != nil || hard != nil && hard() }
	}
	if x.clock().Until(end) < 50*time.Millisecond {
		return out, false
	}
	deadline := x.within(end).until(shareStrongLP)
	var r *mip.Relaxation
	if pre != nil {
		r = pre.Clone()
	} else {
		var ok bool
		if r, ok = presolvedRelaxation(x, i, deadline); !ok {
			out.dead = true
			return out, false
		}
	}
	if d := x.options().DumpRelax; d != "" && withLP {
		r.DumpLP(fmt.Sprintf("%s-l%d-%d.lp", d, i+1, len(r.Rows)))
	}
	m, n := len(r.Rows), len(r.Vars)
	offset := r.Constant + x.e.Linear.Offsets[i]
	if x.tracer().on() {
		x.tracer().f("level %d presolved: %d rows, %d columns, %d nonzeros", i+1, m, n, r.Nonzeros())
	}
	out.offset, out.vars, out.rel, out.pre = offset, r.Vars, r, r.Fixed()
	out.noLP = true
	out.bound, out.lp = math.MinInt64, math.Inf(-1)
	if !withLP || m == 0 {
		// The presolved model alone, for the PB workers.
		out.uncut = true
		return out, true
	}
	if mip.FitsSparse(r) {
		sp := x.sparseBound(out, i, r, offset, deadline, stop, interrupt)
		return sp, !sp.noLP
	}
	// Too large for the simplex to be sure of finishing: the sparse LP,
	// whose duals bound the level wherever it stops; with little time
	// (under lgSkipLeft), the Lagrangian bound first, at a small share of
	// the budget, then the LP with what is left, keeping the better.
	// Here the LP is what can prove the level, so strongMaxTime does
	// not cap it, and it gets 7/8 of the level. Before the backbone
	// (backbone.go) its later rounds were worth most of the level: in
	// 30 s runs of 256x1000, 3/4 stopped it early in a round (gaps 34-36%
	// in two of three), and at 10 s 31/32 let the fifth solve end. With
	// the backbone fixed, 256x1000-tight's first cut round lifts the
	// bound to 1.06 M within 1.5 s and later iterations add little,
	// while the final polish needs time: at 10 s, 31/32 left that
	// instance at 1,162,875 or 1,157,068 in 7 runs of 10 (gap 4.5-5.0%)
	// and 7/8 at 1,131,068-1,132,925 in 10 of 10 (2.3-2.5%); 256x1000
	// went from 0.5-1.5% to 0.6-1.1%.
	// The ascent separates no cuts here: they depended on when the
	// workers improved the incumbent (its target), so the LP started
	// from other rows in each run and took 23,000-32,000 iterations to
	// its root and 3-8 s to its first round; without them the LP takes
	// the same path in every run.
	deadline = x.within(end).until(shareSparseLP)
	triedLP := false
	if x.clock().Until(deadline) >= lgSkipLeft {
		// Time enough for the LP: its duals bound the level wherever it
		// stops, better than the ascent's (see lgSkipLeft).
		sp := x.sparseBound(out, i, r, offset, deadline, stop, interrupt)
		if !sp.noLP || stop != nil && stop() {
			return sp, true
		}
		triedLP = true // it failed early: the ascent's bound, then
	}
	lgEnd := x.within(deadline).until(shareLagrangian)
	lg := mip.NewLagrangian(r)
	target := func() float64 { return float64(x.obj[i] - offset) }
	res, ok := lg.Ascend(float64(cutoff-offset+1)-1e-6, target, lgEnd, stop)
	x.tracer().f("level %d Lagrangian: bound %.1f + %d after %d steps, %d groups, %d rows relaxed",
		i+1, res.Bound, offset, res.Iters, len(lg.Groups), len(lg.Rows))
	if ok {
		out.noLP, out.source = false, BoundLagrangian
		out.lp, out.mag, out.d = res.Bound, res.Mag, res.D
		out.bound = int64(math.Ceil(res.Bound-1e-6)) + offset
		out.rounds = 1
	}
	if triedLP || x.clock().Until(deadline) < sparseLateMin || stop != nil && stop() || ok && out.bound >= cutoff+1 {
		return out, true
	}
	if sp := x.sparseBound(out, i, r, offset, deadline, stop, interrupt); !sp.noLP && (out.noLP || sp.lp > out.lp) {
		return sp, true
	}
	return out, true
}

// sparseBound runs the cut loop on r and returns out with the LP's
// bound, or out unchanged when the LP gave none.
func (x *exact) sparseBound(out strongResult, i int, r *mip.Relaxation, offset int64, deadline time.Time, stop, interrupt func() bool) strongResult {
	// Each round's bound is valid: the progress reports show it rise.
	floor := out.lp
	round := 0
	onBound := func(b float64, xs []float64) {
		round++
		if round == 1 && xs != nil && i == 3 && !x.rootLPSet && x.levelsProved(3) {
			x.rootLP, x.rootLPSet = int64(math.Ceil(b-1e-6))+offset, true
			x.rootNonzeros = r.Nonzeros()
		}
		if x.run != nil { // a solve, not a bound measured alone
			x.offerVertex(r, xs)
		}
		if x.e.Exact && (out.noLP || b > floor) {
			x.lpBound = min(int64(math.Ceil(b-1e-6))+offset, x.obj[i])
			if x.run != nil {
				x.run.progress(i, x.obj, x.lpBound)
			}
		}
	}
	loop, ok := mip.NewCutLoop(r)
	if !ok {
		return out
	}
	loop.SetTrace(x.tracer().f)
	// Level 4's loop keeps a copy at each rise of its bound, for the
	// canonical re-solve: its root is the loop at the first solve that
	// reached the optimum, and the proof's loop may have gone past it.
	loop.Snapshots = i == 3 && x.levelsProved(3)
	if mip.FitsSparse(r) {
		// A solve of a model this size ends soon: a proof waits for it.
		// Past it a root solve may take seconds, and stop cuts it.
		loop.Interrupt = interrupt
	}
	loop.Run(deadline, stop, onBound)
	loop.Interrupt = nil // the level's; a canonical re-solve sets its own stop
	best, y, pr, cuts := loop.Result()
	rounds := loop.Solves
	if loop.Snapshots && loop.Snap != nil {
		x.canonSnap = &canonRoot{r: r, rows: loop.Snap.Rows, lazy: loop.Snap.Lazy, st: loop.Snap.St, offset: offset, bound: closedBound(loop.Snap.Best, offset), bounds: loop.Snap.Bounds}
	}
	if i == 3 && x.levelsProved(3) {
		switch {
		case loop.Complete:
			x.canonRoot = &canonRoot{r: r, rows: slices.Clone(loop.Rows), lazy: loop.Lazy(), st: loop.St.Clone(), offset: offset, bound: closedBound(best, offset), bounds: slices.Clone(loop.Bounds)}
		case loop.Resumable && x.canonRoot == nil:
			// Stopped by the level's proof between two rounds: the
			// canonical re-solve finishes it instead of starting over
			// (64x250: 0.5 s). Not a copy: a copy refactors its basis,
			// and its Gomory cuts would differ. Branch and cut, which
			// moves the loop's bounds, takes it back (newBranchCut).
			x.openLoop, x.openOffset = loop, offset
		}
	}
	x.tracer().f("level %d LP: bound %.2f + %d, %d rounds, %d cuts", i+1, best, offset, rounds, cuts)
	if pr == nil {
		return out
	}
	out.noLP, out.source = false, BoundLP
	out.lp, out.rounds, out.cuts, out.loop = best, rounds, cuts, loop
	out.d, out.mag = mip.ReducedCosts(pr, y)
	for j := range r.Vars {
		if r.Lo[j] == r.Hi[j] {
			out.d[j] = 0
		}
	}
	out.bound = int64(math.Ceil(best-1e-6)) + offset
	return out
}

// strongMaxTime caps the LP and its cuts (three quarters of the level's
// time at most: on large parts they are what proves the level).
const strongMaxTime = 8 * time.Second

// sparseLateMin is the least time left for the sparse LP to follow the
// Lagrangian bound on a model past fitsSparse: 256x1000's root LP alone
// takes about 5 s. A variable so that tests can keep the Lagrangian's
// own result.
var sparseLateMin = time.Second

// lgSkipLeft is the time left from which the sparse LP runs alone on a
// model past fitsSparse, without the Lagrangian ascent first: on
// 256x1000 the LP stopped after 1.5 s bounds level 4 at 263,000, the
// ascent at 186,000 after 0.5 s, and since the ascent separates no cuts
// it only delays the LP. A variable so that tests can keep the ascent.
var lgSkipLeft = 1500 * time.Millisecond

// lgMaxTime caps the Lagrangian ascent ahead of the sparse LP. On
// 256x1000 it gives 186,000 after 0.5 s and 218,000 after 2 s, and the
// LP stopped after 1.5 s already gives 263,000 (its root 267,545): a
// longer ascent only delays the LP.
const lgMaxTime = 500 * time.Millisecond
