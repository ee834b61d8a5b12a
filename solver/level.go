package solver

import (
	"fmt"
	"math"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/localsearch"
	"github.com/poolsolve/poolsolve/solver/mip"
)

// solve is the lexicographic loop over the four levels, the one every
// search runs (a part's, a what-if scenario's): each level starts at
// its bounds, asks the part's techniques in turn for better bounds and
// plans under its share of the time left, and is settled and frozen.
func (x *exact) solve() error {
	steps, shareOf := giniSteps, levelShare
	if x.e.LinearMemory {
		steps, shareOf = linearSteps, linearShare
		// The last level's presolve; before level 1's, half the
		// encoding's time stands for it (256x1000: encoded in 0.2-0.25 s
		// beside the warm start's local search, presolved in 0.1-0.14 s).
		x.presolveTook = x.encodeTook / 2
		if x.clock().Counted() {
			x.presolveTook = 0 // wall time: no part of a counted search
		}
	}
	for i := range x.levels {
		now := x.clock().Now()
		end := x.within(x.deadline).level(now, i, shareOf)
		if err := x.level(i, end, steps); err != nil {
			return err
		}
		x.levels[i].Elapsed = x.clock().Since(now)
	}
	return x.syncLevels()
}

// A step is one technique a level asks for bounds (l.lb) and plans
// (l.ub, the incumbent), until l.end: when says whether it runs on the
// level as the steps before it left it. A new technique is a step in
// these lists, its share of the level in budget.go, and the name of
// what it proves in BoundSource.
type step struct {
	name string
	when func(l *levelRun) bool
	run  func(l *levelRun) error
}

// giniSteps search a part encoded with memory diagrams: at level 4 the
// LP with its cuts, branch and cut and the PB workers first (it rarely
// closes by SAT), then gini's model-improving search (most levels close
// there in milliseconds), then the workers' last answers and the polish.
var giniSteps = []step{
	{"presolve, backbone and pb workers", func(l *levelRun) bool { return l.i == 3 && l.open() && !l.x.small() }, (*levelRun).presolveFirst},
	{"lp with cuts", func(l *levelRun) bool { return l.i == 3 && l.open() }, (*levelRun).cutLoop},
	{"branch and cut", func(l *levelRun) bool {
		return l.lpRan() && l.sr.loop != nil && l.lb < l.ub && l.x.e.Exact
	}, (*levelRun).branchAndCut},
	{"pb workers alone", func(l *levelRun) bool { return l.lpRan() && l.pw.alive() && l.gini }, (*levelRun).workersFirst},
	{"reduced-cost fixings", func(l *levelRun) bool {
		return l.lpRan() && smallGap(l.lb, l.ub) && l.lb < l.ub && !l.pw.alive() && !l.sr.noLP && l.x.e.Exact
	}, (*levelRun).fixingsFirst},
	{"gini", func(l *levelRun) bool { return l.gini && l.open() }, (*levelRun).giniSearch},
	{"last answers and polish", func(*levelRun) bool { return true }, (*levelRun).finish},
}

// linearSteps search a part encoded with linear memory, on the PB
// workers, local search and the LP alone (linear.go): gini's models
// could break memory there. Each level starts with its model presolved,
// when there is time for that and a worker; the level's value is the
// incumbent's.
var linearSteps = []step{
	{"presolve", (*levelRun).linearRoom, (*levelRun).linearPresolve},
	{"local search alone", func(l *levelRun) bool { return l.model == nil && l.open() }, (*levelRun).searchAlone},
	{"backbone", func(l *levelRun) bool { return l.linearOn() && l.i == 3 }, (*levelRun).linearBackbone},
	{"lp beside the mending, then pb workers", func(l *levelRun) bool {
		return l.linearOn() && l.pastSparse() && l.x.e.Exact && !l.x.fromWarm
	}, (*levelRun).linearBesideLP},
	{"pb workers early", func(l *levelRun) bool { return l.linearOn() && l.workersEarly() }, (*levelRun).startWorkers},
	{"mending the later levels", func(l *levelRun) bool { return l.linearOn() && l.i > 0 && !l.x.fromWarm }, (*levelRun).mendLater},
	{"pb workers", func(l *levelRun) bool { return l.linearOn() && !l.workersEarly() }, (*levelRun).startWorkers},
	{"lp beside the workers", func(l *levelRun) bool { return l.linearOn() && l.i == 3 && l.x.e.Exact }, (*levelRun).linearLP},
	{"last answers and polish", (*levelRun).linearOn, (*levelRun).lastAnswers},
	{"incumbent's value", func(*levelRun) bool { return true }, (*levelRun).incumbentValue},
}

// linearOn says a level of a part with linear memory has its model and
// has not ended.
func (l *levelRun) linearOn() bool { return l.model != nil && !l.ended }

// syncLevels gives every settled level the incumbent's value. A plan
// found at a later level is lexicographically better, but may differ at
// an earlier level that was only bounded: the rows freezing it cap it at
// its value, they do not fix it (a PB model at level 3 may have fewer
// external routes than level 2's search found; 256x1000-tight once
// failed its final check so). Each bound stays valid, since a level's
// lower bound holds for every plan under the earlier freezes, and the
// incumbent meets them; a value below a bound is a bug.
func (x *exact) syncLevels() error {
	for k := range x.levels {
		lv := &x.levels[k]
		if lv.Index == 0 || lv.Value == x.obj[k] {
			continue
		}
		if x.obj[k] < lv.LowerBound {
			return fmt.Errorf("%w: level %d has a plan of %d below its bound %d (%s)", ErrMismatch, k+1, x.obj[k], lv.LowerBound, lv.BoundSource)
		}
		lv.Value = x.obj[k]
		switch {
		case lv.LowerBound >= lv.Value:
			lv.Status = Optimal
		case lv.Status == Optimal:
			lv.Status = Bounded
		}
		lv.Gap = gap(lv.Value, lv.LowerBound)
	}
	return nil
}

// levelRun is one level's search: its bounds, and the LP and PB workers
// beside gini.
type levelRun struct {
	x      *exact
	i      int
	end    time.Time
	lb, ub int64
	src    BoundSource
	pw     *pbLevel
	sr     *strongResult
	// pre is the presolved model the workers started on, uncut, for
	// the cut loop to start from.
	pre *mip.Relaxation
	// model is a linear-memory level's presolved model; ended says its
	// steps end before the list does.
	model *strongResult
	ended bool
	// lpAsked: the LP has been solved for this level.
	lpAsked bool
	// gini: gini's diagrams search the level, until giniEnd.
	gini    bool
	giniEnd time.Time
}

// level searches level i until end with steps, proves what it can, and
// freezes it.
func (x *exact) level(i int, end time.Time, steps []step) error {
	x.at = i
	lv := &x.levels[i]
	lv.Index, lv.Name = i+1, model.LevelNames[i]
	l := &levelRun{x: x, i: i, end: end, lb: x.e.Offset(i), src: BoundTrivial, ub: x.obj[i], gini: true, giniEnd: end}
	if i == 3 {
		if b := x.e.GroupBound(x.obj[0], x.obj[1]); b > l.lb {
			l.lb, l.src = b, BoundRelaxation
		}
	}
	defer func() { l.pw.stop() }()
	for _, st := range steps {
		if !st.when(l) {
			continue
		}
		t := time.Now()
		if err := st.run(l); err != nil {
			return err
		}
		x.tracer().f("level %d %s: %d..%d in %v", i+1, st.name, l.lb, l.ub, time.Since(t))
	}
	if x.offerErr != nil {
		return x.offerErr // from an LP asked between gini's tries
	}
	x.settle(i, l.lb, l.ub, l.src)
	x.freeze(i, l.ub)
	return nil
}

// open says the level is neither proved nor interrupted.
func (l *levelRun) open() bool { return l.lb < l.ub && l.x.run.ctx.Err() == nil }

// freeze holds level i at v or better from the next level on: a clause
// on the part's own encoding, an assumption on a shared one. Parts with
// linear memory hold it in the next level's model alone (gini does not
// search them, and a totalizer over 256 nodes' terms costs seconds).
func (x *exact) freeze(i int, v int64) {
	switch {
	case x.e.LinearMemory:
	case x.shared:
		x.e.ReleaseBound()
		if i < 3 {
			x.frozen = append(x.frozen, x.e.LevelBound(i, v))
		}
	default:
		// Decoding is done: the clauses may wipe the model.
		x.e.ReleaseBound()
		x.e.Freeze(i, v)
	}
}

// presolveFirst starts level 4 of a part past small: its presolved
// model, its backbone fixed, and the PB workers on it, which then search
// beside the LP.
func (l *levelRun) presolveFirst() error {
	x, i, end := l.x, l.i, l.end
	if r, ok := presolved(x, i, end); ok {
		x.fixBackbone(&r, i, x.within(end).until(shareBackbone))
		l.pre = r.rel // uncut: presolved's
		l.pw = x.startPB(i, &r, l.ub-1, end)
	}
	return nil
}

// cutLoop bounds level 4 by the LP with its cuts, the workers answering
// between its solves; its reduced-cost fixings then restart the
// clause-learning worker (or start the workers, after a small part's
// LP, which takes milliseconds and often proves it).
func (l *levelRun) cutLoop() error {
	x, i, end := l.x, l.i, l.end
	l.lpAsked = true
	var pollErr error
	x.lpBound = l.lb
	stop := func() bool {
		if pollErr == nil {
			pollErr = l.poll(end, false)
		}
		// A cut round's integral vertex may have lowered the incumbent
		// to the round's bound (offerVertex).
		l.ub = min(l.ub, x.obj[i])
		x.run.progress(i, x.obj, max(l.lb, x.lpBound))
		return pollErr != nil || x.offerErr != nil || l.lb >= l.ub || x.lpBound >= l.ub
	}
	// A worker's proof ends the cut loop after the solve under way, not
	// in it: a loop stopped between rounds is the canonical re-solve's to
	// go on with, one stopped midway is rebuilt (24x60-tight seed 70821:
	// 78 ms of re-solve after a proof in 46).
	interrupt := func() bool { return stop() && (pollErr != nil || x.offerErr != nil) }
	r, ok := strongLPUnless(x, i, l.ub-1, end, stop, interrupt, l.pre)
	if pollErr != nil {
		return pollErr
	}
	if x.offerErr != nil {
		return x.offerErr
	}
	l.ub = min(l.ub, x.obj[i])
	if !ok {
		return nil
	}
	l.sr = &r
	x.run.trace.f("level 4 LP: bound %d, %d rounds, %d cuts", r.bound, r.rounds, r.cuts)
	if !r.noLP && r.bound > l.lb && x.e.Exact {
		l.lb, l.src = min(r.bound, l.ub), r.source
		x.run.progress(i, x.obj, l.lb)
	}
	if err := l.poll(end, false); err != nil {
		return err
	}
	if l.lb < l.ub && !r.noLP {
		if l.pw == nil {
			l.pw = x.startPB(i, l.sr, l.ub-1, end)
		} else {
			l.pw.withLP(l.sr, l.ub)
		}
	}
	// Too large for the simplex is too large for gini's diagrams too:
	// the time goes to the workers and local search instead.
	l.gini = r.source != BoundLagrangian
	return nil
}

// workersFirst gives the PB workers both cores for the first part of
// the level, before gini builds its own diagrams.
func (l *levelRun) workersFirst() error {
	return l.poll(l.x.within(l.end).until(shareWorkersFirst), true)
}

// fixingsFirst searches under the LP's reduced-cost fixings when the gap
// is already small and no worker runs.
func (l *levelRun) fixingsFirst() error {
	return l.fixedSearch(l.x.within(l.end).until(shareFixedSearch))
}

// lpRan says the cut loop reached its LP's end at this level.
func (l *levelRun) lpRan() bool { return l.sr != nil }

// branchAndCut searches on from the LP's root, the workers answering
// between nodes, for three quarters of the time left.
func (l *levelRun) branchAndCut() error {
	x, i := l.x, l.i
	bc := newBranchCut(x, i, l.sr)
	bcEnd := x.within(l.end).until(shareBranchAndCut)
	polished := l.ub
	bc.Poll = func(ub *int64) (bool, error) {
		x.run.progress(i, x.obj, l.lb)
		err := l.poll(l.end, false)
		if err == nil && *ub < polished {
			// A new incumbent, from a vertex or a worker: local search
			// from it, whose plans lower the bound the tree prunes by.
			// The polish lowers l.ub, which *ub is, itself.
			err = l.polish(bcEnd, true)
			polished = l.ub
		}
		return l.lb >= *ub || x.run.ctx.Err() != nil, err
	}
	l.gini = false // exact already: gini's diagrams add nothing
	proved, err := bc.Run(bcEnd, &l.ub)
	x.run.trace.f("level 4 branch and cut: %d nodes, %d iterations, %d reduced-cost fixings, proved %v, %d..%d", bc.Nodes, bc.Iterations, bc.Fixed, proved, l.lb, l.ub)
	if err == nil {
		err = x.offerErr
	}
	if err != nil {
		return err
	}
	if proved && l.lb < l.ub {
		l.lb, l.src = l.ub, BoundBranchAndCut
	}
	return nil
}

// askLP bounds the level by the LP with its cuts, once: asked when gini's
// search times out.
func (l *levelRun) askLP() {
	if l.lpAsked || l.lb >= l.ub || !l.x.e.Exact {
		return
	}
	l.lpAsked = true
	sr, ok := strongLP(l.x, l.i, l.ub-1, l.end)
	l.ub = min(l.ub, l.x.obj[l.i]) // a cut round's vertex may be a better plan
	if ok && !sr.noLP && sr.bound > l.lb {
		l.lb, l.src = min(sr.bound, l.ub), sr.source
	}
}

// finish is level 4's end: the workers' incumbent polished by local
// search while they go on (64x250: 94,378 -> 94,037 before branch and
// cut found the optimum), their last answers, and gini's exact diagram
// over the columns the reduced costs leave free when the gap is small.
func (l *levelRun) finish() error {
	x, end := l.x, l.end
	if l.i == 3 && l.pw.alive() && l.lb < l.ub {
		// Where gini searched, the workers get two thirds of what is left
		// first; where it could not, local search starts at once.
		if l.gini {
			if err := l.poll(x.within(end).until(shareWorkersLast), true); err != nil {
				return err
			}
		}
		before := l.ub
		if err := l.polish(x.within(end).until(sharePolishLast), false); err != nil {
			return err
		}
		if l.ub < before {
			l.pw.improved(l.ub)
		}
	}
	if err := l.poll(end, l.pw.alive()); err != nil {
		return err
	}
	if sr := l.sr; sr != nil && !sr.noLP && l.lb < l.ub && smallGap(l.lb, l.ub) && !l.pw.alive() && x.e.Exact {
		x.e.ReleaseBound()
		if err := l.fixedSearch(end); err != nil {
			return err
		}
	}
	return nil
}

// polish runs local search from the incumbent until end and offers the
// result; the level's value follows when it is better.
func (l *levelRun) polish(end time.Time, untilStale bool) error {
	x := l.x
	// Rounds from the best plan with fresh seeds until end: a round ends
	// when its kicks go stale, often well before end. The workers'
	// answers are taken between rounds: one may prove the level. With
	// untilStale, a round that gains under polishStale of the level
	// ends it too: mending a worker's plan before the level's own
	// search needs a round or two, and on 256x1000 each takes a second.
	for l.lb < l.ub && x.clock().Now().Before(end) && x.polishRoom(end) && x.best.Lanes != nil && x.run.ctx.Err() == nil {
		before := x.obj[x.at]
		a := x.searcher().ImproveOn(x.run.ctx, x.best, x.rng.Uint64(), x.clock(), end, localsearch.StaleKicks)
		if _, err := x.acceptPolished(a); err != nil {
			return err
		}
		x.tracer().f("level %d polished: %v", x.at+1, x.obj)
		l.ub = x.obj[x.at]
		if err := l.poll(end, false); err != nil {
			return err
		}
		if untilStale && float64(before-x.obj[x.at]) <= polishStale*math.Abs(float64(before)) {
			return nil
		}
	}
	return nil
}

// acceptPolished offers local search's plan; the incumbent keeps where
// it came from (a polished incumbent is the search's).
func (x *exact) acceptPolished(a model.Assignment) (bool, error) {
	fromWarm := x.fromWarm
	ok, err := x.accept(a, false)
	if ok {
		x.fromWarm = fromWarm
	}
	return ok, err
}

// polishStale is the least relative gain of a round for polishing
// before a level's search to go on.
const polishStale = 1e-3

// settle records level i's outcome: its value, bound and status.
func (x *exact) settle(i int, lb, ub int64, src BoundSource) {
	lv := &x.levels[i]
	lv.Value = ub
	lv.LowerBound, lv.BoundSource = min(lb, ub), src
	x.run.trace.f("level %d: %d, bound %d (%s)", i+1, ub, min(lb, ub), src)
	switch {
	case lb >= ub:
		lv.Status = Optimal
	case x.fromWarm && (src == BoundTrivial || src == ""):
		// Heuristic says nothing was proved: a warm plan the search
		// did not better, under a bound the search did prove, is
		// bounded like any other.
		lv.Status = Heuristic
	default:
		lv.Status = Bounded
	}
	lv.Gap = gap(ub, lv.LowerBound)
	x.run.progress(i, x.obj, lv.LowerBound)
}

// small is true for parts whose LP takes milliseconds and whose
// canonical re-solve gini does at once: starting a worker process costs
// more there than it saves.
func (x *exact) small() bool { return x.e.Linear.Vars < smallVars }

// smallVars: 8-node fleets of 30 variants have parts of about 720
// variables; with the worker started after the LP their median proof
// over three runs of five seeds fell from 14-25 ms to 13-19 ms. A
// variable so that tests can send small pools to the workers.
var smallVars = 1000

// fixedSearch looks for level-4 plans better than ub among those that
// keep the reduced-cost fixes and knapsack (every better plan does, see
// mip.Relaxation), with the exact diagram over the groups the fixes leave
// free. UNSAT proves ub; a timeout or a diagram past its cap leaves lb
// and ub as they are.
func (l *levelRun) fixedSearch(end time.Time) error {
	x, sr := l.x, l.sr
	defer x.e.ReleaseBound()
	for l.lb < l.ub && x.clock().Now().Before(end) && x.run.ctx.Err() == nil {
		fixes, knap, ok := sr.fixesFor(l.ub - 1)
		if !ok {
			l.lb, l.src = l.ub, sr.source
			return nil
		}
		x.fixGen++
		// Building may use a third of the time left, no more.
		saved := x.e.Deadline
		x.e.Deadline = x.within(end).until(shareFixingBuild)
		lits, ok := x.e.L4BoundFixed(l.ub-1, x.fixGen, fixes, l4FixedMaxNodes)
		var kl []z.Lit
		if ok && len(knap) > 0 {
			kl, ok = x.e.SumBound(x.fixGen, knap, rcScale, l4FixedMaxNodes)
		}
		x.e.Deadline = saved
		if !ok {
			return nil
		}
		x.run.progress(3, x.obj, l.lb)
		lits = append(append(lits, kl...), fixes...)
		switch x.tryUntil(end, x.clock().Until(end), lits...) {
		case 1:
			if _, err := x.decodeSAT(); err != nil {
				return err
			}
			l.ub = x.obj[3]
		case -1:
			l.lb, l.src = l.ub, BoundReducedCost
		default:
			return nil
		}
	}
	return nil
}

// l4FixedMaxNodes caps the diagram over the columns reduced-cost fixing
// leaves free.
const l4FixedMaxNodes = 100000

// smallGap says when reduced-cost fixing is worth a diagram: with a
// wider gap too few columns are fixed and the diagram only costs time.
func smallGap(lb, ub int64) bool { return ub-lb <= max(ub/20, 1) }
