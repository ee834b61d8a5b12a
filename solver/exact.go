package solver

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/localsearch"
	"github.com/poolsolve/poolsolve/solver/mip"
)

// ErrMismatch marks a disagreement between the encoding's objective and
// the independent evaluator's, or a plan from the SAT solver that the
// evaluator rejects: a bug in the encoder or in eval, never an input error.
var ErrMismatch = errors.New("solver: encoding and evaluator disagree")

// ErrNoPlan is returned when not even a first valid plan was found before
// the deadline (the warm start failed and the SAT solver timed out).
var ErrNoPlan = errors.New("solver: no valid plan found before the deadline")

// Per-call caps on gini's wall clock.
const (
	lnsTry     = 200 * time.Millisecond
	fullTryMin = 250 * time.Millisecond
	fullTryMax = 2 * time.Second
	probeTry   = 100 * time.Millisecond
	// seedTry caps the Try that seeds gini's phases with the warm plan:
	// on 96x400 it runs past 2 s, and the levels then search well
	// without the seeding.
	seedTry  = 250 * time.Millisecond
	firstTry = 50 * time.Millisecond
)

// exact solves one part of a pool, level by level.
type exact struct {
	run  *run
	p    *model.Pool
	e    *encode.Encoding
	sym  *symmetry
	chk  *eval.Checker
	rng  *rand.Rand
	ass  []z.Lit // pin and cordon assumptions, always assumed
	best model.Assignment
	obj  model.Objective // the encoding's objective of best
	// shared says the encoding serves other searches too (a what-if's
	// scenarios): what holds only for this search never becomes a
	// clause, so levels freeze by assumption (frozen), symmetry is not
	// broken, and no PB worker starts (each scenario's search is short,
	// and a worker process costs more to start than it would save).
	shared bool
	frozen []z.Lit
	// admit, when set, is asked of every plan eval finds valid: a
	// scenario's forced routes, which eval's pins hold for any lane of
	// the model.
	admit func(model.Assignment) bool
	// rep is eval's report of best.
	rep eval.Report
	// fromWarm is true while the incumbent is still the warm start.
	fromWarm bool
	// encodeTook is how long encode.New took on this part.
	encodeTook time.Duration
	levels     [4]Level
	deadline   time.Time
	nodes      []string // nodes that lanes may use, for LNS neighbourhoods
	calls      int
	at         int    // the level being solved, for progress
	fixGen     uint64 // generation of the reduced-cost fixes in the diagram
	// canon is the canonical re-solve handed ahead to level 4's workers.
	canon *canonAhead
	// canonRoot is level 4's root LP with its cuts, kept for the
	// canonical re-solve by branch and cut.
	canonRoot *canonRoot
	// canonSnap is level 4's cut loop as it was at the last rise of its
	// bound (mip.Snapshot), a candidate root for closedRoot.
	canonSnap *canonRoot
	// lpBound is the bound of the LP's last round, for progress reports
	// while the cut loop runs.
	lpBound int64
	// offerErr is the first mismatch found in a plan offered from an LP
	// vertex, where no error can be returned at once; the level's code
	// returns it.
	offerErr error
	// rootLP is level 4's root LP bound (offset included) once every
	// earlier level is proved, when its simplex reached the optimum:
	// a function of the pool, which picks the canonical re-solve.
	rootLP    int64
	rootLPSet bool
	// rootNonzeros is the size of that LP's presolved model, which the
	// canonical PB job shares.
	rootNonzeros int
	// openLoop is level 4's cut loop stopped by the level's proof between
	// two rounds, for canonicalBC to finish; openOffset its offset.
	openLoop   *mip.CutLoop
	openOffset int64
	// presolveTook is the last level's presolve on a part with linear
	// memory, which a level's time must exceed twice for its workers.
	presolveTook time.Duration
	// presolvedAt is the last level's presolved model, which the next
	// level's is made from.
	presolvedAt *presolvedLevel
}

// levelsProved reports whether the levels before i are proved: only then
// can a canonical re-solve follow.
func (x *exact) levelsProved(i int) bool {
	for _, l := range x.levels[:i] {
		if l.Status != Optimal {
			return false
		}
	}
	return true
}

// The encoding must be done by encodeBy (the run's deadline at the
// latest), else newExact fails with encode.ErrDeadline.
func newExact(r *run, p *model.Pool, deadline, encodeBy time.Time, seed uint64, stop func() bool) (*exact, error) {
	opts := encodeOptions(p, encodeBy)
	opts.Stop = stop
	if r != nil {
		opts.Clock = r.clock
	}
	t := time.Now()
	e, err := encode.New(p, opts)
	if err != nil {
		return nil, err
	}
	x := onEncoding(r, p, e, deadline, seed)
	x.encodeTook = time.Since(t)
	e.Deadline = deadline
	x.sym = findSymmetry(e)
	x.sym.constrain()
	x.ass = e.AssumptionLits()
	return x, nil
}

// newShared is a search of p on e, an encoding other searches share
// (shared), under the standing assumptions ass; plans are checked on p,
// which may differ from e's pool by its pins and down nodes.
func newShared(r *run, p *model.Pool, e *encode.Encoding, ass []z.Lit, deadline time.Time, seed uint64) *exact {
	x := onEncoding(r, p, e, deadline, seed)
	x.shared, x.sym, x.ass = true, &symmetry{e: e}, ass
	return x
}

// onEncoding is the search state of p on e, before its assumptions.
func onEncoding(r *run, p *model.Pool, e *encode.Encoding, deadline time.Time, seed uint64) *exact {
	x := &exact{run: r, p: p, e: e, chk: eval.NewChecker(p), deadline: deadline,
		rng: rand.New(rand.NewPCG(seed, 0x1e0c0de))}
	seen := map[string]bool{}
	for _, l := range e.Lanes {
		if len(l.Cordons) > 0 {
			continue
		}
		for _, n := range l.Nodes {
			if !seen[n] {
				seen[n] = true
				x.nodes = append(x.nodes, n)
			}
		}
	}
	return x
}

// try runs one gini call under the standing assumptions plus ms, capped
// by cap and by the time left.
func (x *exact) try(cap time.Duration, ms ...z.Lit) int {
	left := x.clock().Until(x.deadline)
	if err := x.run.ctx.Err(); err != nil || left <= 0 {
		return 0
	}
	x.calls++
	return x.e.TryUnder(min(cap, left), x.ass, x.frozen, ms)
}

// accept checks a plan with the evaluator and the encoding; it becomes the
// incumbent when it is better. A plan the SAT solver produced must be
// valid and both objectives must agree, else ErrMismatch.
func (x *exact) accept(a model.Assignment, fromSAT bool) (bool, error) {
	rep := x.chk.Check(a)
	if !rep.Valid || x.admit != nil && !x.admit(a) {
		if fromSAT {
			return false, fmt.Errorf("%w: SAT plan invalid: %w (or not what a scenario forces)", ErrMismatch, rep.Err())
		}
		return false, nil
	}
	own, err := x.e.Objective(a)
	if err != nil {
		if fromSAT {
			return false, fmt.Errorf("%w: %w", ErrMismatch, err)
		}
		return false, nil // a plan naming a lane or route the encoding lacks
	}
	// A scenario's eval counts on the pool as the scenario leaves it,
	// the shared encoding on the whole pool: their levels 2 and 4 may
	// differ there (Replan reconciles them).
	if own != rep.Objective && !x.shared {
		return false, fmt.Errorf("%w: objective %v, eval %v", ErrMismatch, own, rep.Objective)
	}
	if x.best.Lanes != nil && !own.Less(x.obj) {
		return false, nil
	}
	x.best, x.obj, x.rep = a, own, rep
	x.fromWarm = !fromSAT
	x.run.firstPlan()
	x.run.progress(x.at, x.obj, x.levels[x.at].LowerBound)
	return true, nil
}

// decodeSAT reads the model right after a SAT answer and offers it.
func (x *exact) decodeSAT() (bool, error) {
	return x.accept(x.e.Decode(), true)
}

// seed makes gini's saved phases follow the incumbent: one Try under the
// incumbent's decision literals. Needed again after
// new variables, which reset the phases.
func (x *exact) seed() {
	lits, err := x.e.Lits(x.best)
	if err != nil {
		return
	}
	x.try(probeTry, lits...)
}

// start finds a first plan: the warm start if the encoding takes it, else
// the SAT solver's first model. It reports false when the hard
// constraints are infeasible.
func (x *exact) start(warm model.Assignment, haveWarm bool) (bool, error) {
	if haveWarm {
		warm = x.sym.canonical(warm)
		if ok, err := x.accept(warm, false); err != nil {
			return false, err
		} else if ok {
			lits, _ := x.e.Lits(warm)
			switch x.try(seedTry, lits...) {
			case 0:
				// Seeding the phases took too long (96x400: the Try under
				// the warm plan's literals runs past 2 s); the plan is in
				// hand all the same, and the search starts without them.
				return true, nil
			case 1:
				return true, nil // phases now follow the warm start
			case -1:
				// Valid for eval, refused by the encoding: only memory
				// rounding may do that (e.Exact false). Keep the plan;
				// the search goes on in the rounded encoding. With exact
				// memory it is a bug that would make UNSAT answers lie.
				if x.e.Exact {
					return false, fmt.Errorf("%w: the encoding refuses a plan eval finds valid", ErrMismatch)
				}
				return true, nil
			}
		}
	}
	// A first plan may use the whole run's time, not only this part's
	// share: without one there is no answer at all.
	share := x.deadline
	x.deadline = x.run.deadline
	defer func() { x.deadline = share }()
	for first := true; ; first = false {
		r := 0
		if first && x.clock().Until(x.deadline) < firstTry && x.run.ctx.Err() == nil {
			// Late parts still get one short look: most answer at once.
			x.calls++
			r = x.e.TryUnder(firstTry, x.ass, x.frozen)
		} else {
			r = x.try(fullTryMax)
		}
		switch r {
		case 1:
			if _, err := x.decodeSAT(); err != nil {
				return false, err
			}
			return true, nil
		case -1:
			if !x.e.Exact {
				// Rounded memory may refuse what fits: no proof of
				// infeasibility.
				return false, fmt.Errorf("%w: no plan fits memory rounded to 1/%d GiB, and the figures are too fine to count exactly", ErrNoPlan, x.e.Scale)
			}
			return false, nil
		}
		if x.clock().Until(x.deadline) <= 0 || x.run.ctx.Err() != nil {
			if x.best.Lanes != nil {
				return true, nil
			}
			return false, ErrNoPlan
		}
	}
}

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
// workers and the LP alone (linear.go): gini's models could break
// memory there.
var linearSteps = []step{
	{"pb workers and lp", (*levelRun).linearRoom, (*levelRun).linear},
}

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
	bc.Poll = func(ub *int64) (bool, error) {
		x.run.progress(i, x.obj, l.lb)
		err := l.poll(l.end, false)
		return l.lb >= *ub || x.run.ctx.Err() != nil, err
	}
	l.gini = false // exact already: gini's diagrams add nothing
	proved, err := bc.Run(x.within(l.end).until(shareBranchAndCut), &l.ub)
	x.run.trace.f("level 4 branch and cut: %d nodes, proved %v, %d..%d", bc.Nodes, proved, l.lb, l.ub)
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

// giniSearch is model-improving search on gini under the level's bound
// literals until giniEnd: a probe at the lower bound, then tries with a
// growing cap, LNS and the LP between them; at level 4 the diagram's
// resolution coarsens when it grows too large.
func (l *levelRun) giniSearch() error {
	x := l.x
	if l.lpRan() {
		// After the LP gini has the first part of what is left.
		l.giniEnd = x.within(l.end).until(shareGini)
	}
	g := &giniRun{b: &bounder{x: x, i: l.i, delta: 1}, end: l.giniEnd}
	g.bl, g.ok = g.b.search(l.ub - 1)
	x.seed()
	if err := l.probeLowerBound(g.b); err != nil {
		return err
	}
	if l.lb < l.ub && g.ok {
		g.bl, g.ok = g.b.search(l.ub - 1)
	}
	cap := fullTryMin
	for g.ok && l.lb < l.ub && x.clock().Now().Before(g.end) && x.run.ctx.Err() == nil {
		next, err := l.giniTry(g, cap)
		if err != nil {
			return err
		}
		if next == giniStop {
			break
		}
		if next == giniAgain {
			continue
		}
		// Timed out (or nothing finer to try): a bound from the LP, a few
		// neighbourhood searches, then a longer try.
		l.askLP()
		if err := l.giniLNS(g); err != nil {
			return err
		}
		cap = min(2*cap, fullTryMax)
	}
	return nil
}

// giniRun is giniSearch's state: the bound literals bl below the
// incumbent (ok when the diagram could be built), searched until end.
type giniRun struct {
	b   *bounder
	bl  []z.Lit
	ok  bool
	end time.Time
}

// giniNext is what giniSearch does after a try.
type giniNext int

const (
	giniAgain giniNext = iota // try again at the same cap
	giniStop                  // stop searching
	giniWiden                 // ask the LP and LNS, then try with a larger cap
)

// probeLowerBound is a cheap try at the lower bound: the optimum is
// often there.
func (l *levelRun) probeLowerBound(b *bounder) error {
	x := l.x
	pl, ok := b.search(l.lb)
	if !ok {
		return nil
	}
	switch x.try(probeTry, pl...) {
	case 1:
		if _, err := x.decodeSAT(); err != nil {
			return err
		}
		l.ub = x.obj[l.i]
	case -1:
		if b.proves() {
			l.lb, l.src = l.lb+1, BoundSATUnsat
		}
	}
	return nil
}

// giniTry takes the workers' news, then tries for a plan below the
// incumbent with the given cap.
func (l *levelRun) giniTry(g *giniRun, cap time.Duration) (giniNext, error) {
	x, i := l.x, l.i
	before := l.ub
	if err := l.poll(l.end, false); err != nil {
		return giniStop, err
	}
	if l.lb >= l.ub {
		return giniStop, nil
	}
	if l.ub < before {
		if g.bl, g.ok = g.b.search(l.ub - 1); !g.ok {
			return giniStop, nil
		}
	}
	x.run.progress(i, x.obj, l.lb)
	switch x.tryUntil(g.end, l.pw.capTry(cap), g.bl...) {
	case 1:
		if _, err := x.decodeSAT(); err != nil {
			return giniStop, err
		}
		l.ub = x.obj[i]
		l.pw.improved(l.ub)
		if l.lb < l.ub {
			g.bl, g.ok = g.b.search(l.ub - 1)
		}
		return giniAgain, nil
	case -1:
		return l.giniRefuted(g, cap)
	}
	return giniWiden, nil
}

// giniRefuted follows a try that found nothing below the incumbent: a
// proof when the diagram is exact, else the coarse relaxation either
// proves the incumbent or asks for a finer resolution.
func (l *levelRun) giniRefuted(g *giniRun, cap time.Duration) (giniNext, error) {
	x, i := l.x, l.i
	if g.b.proves() {
		l.lb, l.src = l.ub, BoundSATUnsat
		return giniAgain, nil
	}
	if g.b.exact() {
		return giniStop, nil // rounded memory holds nothing better; nothing proved
	}
	if rl, rok := g.b.relax(l.ub - 1); rok {
		switch x.tryUntil(g.end, cap, rl...) {
		case -1:
			if x.e.Exact {
				l.lb, l.src = l.ub, BoundSATUnsat
				return giniAgain, nil
			}
		case 1:
			if _, err := x.decodeSAT(); err != nil {
				return giniStop, err
			}
			l.ub = x.obj[i]
		}
	}
	if l.lb < l.ub && g.b.refine() {
		g.bl, g.ok = g.b.search(l.ub - 1)
		return giniAgain, nil
	}
	return giniWiden, nil
}

// giniLNS runs up to four neighbourhood searches below the incumbent.
func (l *levelRun) giniLNS(g *giniRun) error {
	x, i := l.x, l.i
	for range 4 {
		if !x.clock().Now().Before(g.end) || l.lb >= l.ub || x.run.ctx.Err() != nil {
			break
		}
		improved, err := x.lns(i, g.end, g.bl)
		if err != nil {
			return err
		}
		if improved {
			l.ub = x.obj[i]
			if l.lb < l.ub {
				g.bl, g.ok = g.b.search(l.ub - 1)
			}
		}
	}
	return nil
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
	for l.lb < l.ub && x.clock().Now().Before(end) && x.best.Lanes != nil && x.run.ctx.Err() == nil {
		before := x.obj[x.at]
		a := localsearch.ImproveOn(x.run.ctx, x.p, x.best, x.rng.Uint64(), x.clock(), end, localsearch.StaleKicks)
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
func (x *exact) small() bool { return len(x.e.Linear.Vars) < smallVars }

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

// l4MaxNodes caps a level-4 bound diagram; past it the resolution
// coarsens (about 0.3 s of building, measured on the 8x20 benchmark).
const l4MaxNodes = 60000

// bounder gives the bound literals of one level. Levels 1-3 are exact
// totalizer outputs; level 4 works at a resolution delta that starts
// exact and coarsens until the diagram fits l4MaxNodes: search bounds are
// restrictions (weights rounded up), relax bounds relaxations (rounded
// down), the two equal when delta is 1.
type bounder struct {
	x     *exact
	i     int
	delta int64
}

func (b *bounder) exact() bool { return b.i < 3 || b.delta == 1 }

// proves says an UNSAT answer under a search bound is a proof: the bound
// is exact and so is the memory arithmetic (rounded memory may refuse
// plans that fit).
func (b *bounder) proves() bool { return b.exact() && b.x.e.Exact }

func (b *bounder) search(k int64) ([]z.Lit, bool) { return b.bound(k, true) }

func (b *bounder) relax(k int64) ([]z.Lit, bool) { return b.bound(k, false) }

func (b *bounder) bound(k int64, restrict bool) ([]z.Lit, bool) {
	if b.i < 3 {
		return []z.Lit{b.x.e.LevelBound(b.i, k)}, true
	}
	maxSum := b.x.e.L4MaxSum()
	for {
		if l, ok := b.x.e.L4Bound(k, b.delta, restrict, l4MaxNodes); ok {
			return l, true
		}
		if b.delta >= maxSum {
			return nil, false
		}
		b.delta = max(2*b.delta, maxSum/4096)
	}
}

// refine halves the resolution; false when it is already exact.
func (b *bounder) refine() bool {
	if b.exact() {
		return false
	}
	b.x.e.ReleaseBound()
	b.delta /= 2
	return true
}

func (x *exact) tryUntil(end time.Time, cap time.Duration, ms ...z.Lit) int {
	left := x.clock().Until(end)
	if left <= 0 {
		return 0
	}
	return x.try(min(cap, left), ms...)
}

func gap(v, lb int64) float64 {
	if v == 0 || lb >= v {
		return 0
	}
	return float64(v-lb) / float64(v)
}
