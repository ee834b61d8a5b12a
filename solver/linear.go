package solver

import (
	"context"
	"math"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/localsearch"
	"github.com/poolsolve/poolsolve/solver/mip"
)

// A part too large for gini's memory diagrams (256 nodes × 1,000
// variants: 2.8 M clauses, most of a 10 s limit to build) is encoded with
// memory as linear rows only (encode.Options.LinearMemory), and every
// level is searched and proved by the PB workers alone: gini's models
// could break memory there and are never used. Levels get a larger share
// of the time than in the gini loop: the workers' start (the model is
// tens of thousands of rows) is most of a level's cost.

// linearPartLanes is the part size, in lanes (variant placements),
// from which a part is encoded with linear memory: the diagrams grow
// with the lanes on a domain, and past this they take seconds. A
// variable so that tests can send small parts this way.
var linearPartLanes = 20000

// linearPolishMax caps the polish before a level. A round there takes
// about as long as the polish may, so at 30 s on 256x1000 the polishes
// before levels 2-4 took 8.5 s (2.1, 2.4 and 4.0) and left the level-4
// LP 9.5 s; the workers prove levels 2 and 3 in 0.6 s once started.
const linearPolishMax = time.Second

// encodeOptions picks the encoding of part p.
func encodeOptions(p *model.Pool, deadline time.Time) encode.Options {
	lanes := 0
	for vi := range p.Variants {
		lanes += len(p.Variants[vi].Placements)
	}
	// Such a part is never searched by gini: its encoding keeps gini out
	// (1024x4000: 1.3 M variables, about 300 MB of gini's arrays).
	linear := lanes >= linearPartLanes
	return encode.Options{Deadline: deadline, LinearMemory: linear, NoSAT: linear}
}

// startLinear finds a first plan without gini: the warm start when it is
// valid, else the first model of a PB worker on level 1.
func (x *exact) startLinear(warm model.Assignment, haveWarm bool) (bool, error) {
	if haveWarm {
		if ok, err := x.accept(x.sym.canonical(warm), false); err != nil || ok {
			return ok, err
		}
	}
	r, ok := presolved(x, 0, x.run.deadline)
	if !ok {
		if r.dead && x.e.Exact {
			// Propagation over exact rows found no point: the pins
			// and cordons cannot hold together, as gini proves it
			// on a part encoded with memory diagrams.
			return false, nil
		}
		return false, ErrNoPlan
	}
	l := &levelRun{x: x, i: 0, ub: math.MaxInt64 / 4}
	if l.pw = x.startPB(0, &r, l.ub, x.run.deadline); l.pw == nil {
		return false, ErrNoPlan
	}
	defer l.pw.stop()
	for x.best.Lanes == nil && l.pw.alive() && x.clock().Now().Before(x.run.deadline) {
		if err := l.poll(x.clock().Now().Add(20*time.Millisecond), true); err != nil {
			return false, err
		}
	}
	if x.best.Lanes != nil {
		return true, nil
	}
	if !l.pw.alive() && x.e.Exact {
		return false, nil // the search ended without a model: infeasible
	}
	return false, ErrNoPlan
}

// linearRoom says whether level l has time for a presolve and its
// workers: a level starts with a presolve that does not stop at the
// deadline (on the 256-node parts 0.1-0.14 s afresh, 0.03-0.1 s made
// from the last level's), then starts its workers (0.03-0.05 s): one
// that would end past the deadline is not started. At a 2 s limit
// 256x1000-tight's level 4 started with less than a presolve's time
// left ran 0.1-0.2 s past the limit, and at 1 s one started with less
// than twice that, 0.03-0.12 s.
func (l *levelRun) linearRoom() bool {
	return l.open() && l.x.clock().Until(l.end) > 2*l.x.presolveTook
}

// linearPresolve starts a level of a part with linear memory: its
// model presolved (made from the last level's where it can be).
func (l *levelRun) linearPresolve() error {
	x := l.x
	t := x.clock().Now()
	r, ok := presolved(x, l.i, l.end)
	x.presolveTook = x.clock().Since(t)
	if ok {
		l.model = &r
		// The workers may not prove the level in time (1024x4000's
		// level 1 at 30 s); what presolve forced bounds it meanwhile,
		// unless memory was rounded, which may force a lane off that fits.
		if b := x.e.Linear.Offsets[l.i] + r.rel.Floor(); b > l.lb && x.e.Exact {
			l.lb, l.src = b, BoundPresolve
		}
		if l.i == 0 && x.e.Exact {
			x.unavoidable = x.uncoveredIn(r.pre)
		}
	}
	return nil
}

// searchAlone is a level with no time for a presolve and its workers:
// local search on the incumbent, until its rounds go stale before level
// 4, which takes the rest of the time. On 256x1000 at 2 s, level 1's
// worker proved its level with 0.3 s left, a plan 4% worse at level 4
// than the warm start's, and nothing else ran.
func (l *levelRun) searchAlone() error {
	return l.polish(l.end, l.i < 3)
}

// linearBackbone fixes level 4's model where every plan at the earlier
// levels' values agrees (backbone.go).
func (l *levelRun) linearBackbone() error {
	l.x.fixBackbone(l.model, l.i, l.x.within(l.end).until(shareBackbone))
	return nil
}

// pastSparse says level 4's model is past the size the sparse LP fits.
func (l *levelRun) pastSparse() bool { return l.i == 3 && !mip.FitsSparse(l.model.rel) }

// linearBesideLP is level 4 past fitsSparse from a worker's plan: the
// polish runs beside the LP, the worker starts after it, and the level
// ends with the workers' last answers (besideLP).
func (l *levelRun) linearBesideLP() error {
	l.ended = true
	return l.besideLP(l.model)
}

// workersEarly says the level's workers start before its polish and run
// beside it: levels 2 and 3 (on 256x1000 and -tight they ended 0.3-0.8 s
// sooner), and level 4 past fitsSparse (on 256x1000 it needs about two
// seconds to its first plan).
func (l *levelRun) workersEarly() bool { return l.i == 1 || l.i == 2 || l.pastSparse() }

// startWorkers starts the level's PB workers on its model; the level
// ends when none starts (too little time left for one), after local
// search on its incumbent (searchAlone; 256x1000 at 2 s: a fifth of the
// search's time, unused before).
func (l *levelRun) startWorkers() error {
	if l.pw = l.x.startPB(l.i, l.model, l.ub-1, l.end); l.pw == nil {
		l.ended = true
		return l.searchAlone()
	}
	return nil
}

// mendLater mends the later levels of the last level's plan, which came
// from a worker that looked at that level alone: local search does it in
// moments (256x1000: [14 17 57 ..] from the level-1 worker, [14 4 5 ..]
// from greedy and its search), beside the workers where they started
// early.
func (l *levelRun) mendLater() error {
	polishEnd := l.x.within(l.end).until(shareMend)
	var err error
	if l.workersEarly() && l.i < 3 {
		err = l.polishBeside(polishEnd, polishStale)
	} else {
		err = l.polish(polishEnd, true)
	}
	l.ended = l.lb >= l.ub // proved by a worker meanwhile
	return err
}

// linearLP bounds level 4 by the LP with its cuts beside the workers.
func (l *levelRun) linearLP() error { return l.lpBeside(l.model, nil) }

// incumbentValue gives a level of a part with linear memory the
// incumbent's value.
func (l *levelRun) incumbentValue() error {
	l.ub = l.x.obj[l.i]
	return nil
}

// lpBeside bounds the level by the LP with its cuts beside the workers
// l.pw, and restarts them on its fixings. each, when not nil, runs
// between LP iterations (false) and once after the LP (true); it may
// start l.pw.
func (l *levelRun) lpBeside(r *strongResult, each func(after bool) error) error {
	x, i, end := l.x, l.i, l.end
	var pollErr error
	stop := func() bool {
		if pollErr == nil && each != nil {
			pollErr = each(false)
		}
		if pollErr == nil {
			pollErr = l.poll(end, false)
		}
		l.ub = min(l.ub, x.obj[i]) // offerVertex's plans
		return pollErr != nil || x.offerErr != nil || l.lb >= l.ub || x.lpBound >= l.ub
	}
	sr, ok := strongLPUnless(x, i, l.ub-1, end, stop, nil, r.rel)
	if pollErr == nil && each != nil {
		pollErr = each(true)
	}
	if pollErr != nil {
		return pollErr
	}
	if x.offerErr != nil {
		return x.offerErr
	}
	l.ub = min(l.ub, x.obj[i])
	if ok && !sr.noLP {
		if sr.bound > l.lb {
			l.lb, l.src = min(sr.bound, l.ub), sr.source
		}
		if l.lb < l.ub && l.pw != nil && x.clock().Until(end) > fixingsMinLeft {
			l.pw.withLP(&sr, l.ub)
		}
	}
	return nil
}

// fixingsMinLeft is the least time left in the level for the workers to
// restart on the LP's fixings: on 256x1000 building the job and starting
// the process took about 0.1 s, which at a 5 s limit ran past it, and a
// worker needs more than that to answer.
const fixingsMinLeft = 250 * time.Millisecond

// lastAnswers takes the workers' answers until the level's end. In the
// last quarter of level 4, local search polishes their incumbent while
// they go on: it never worsens an earlier level, and often finds what
// their search does not. In the last quarter of level 1, which the
// workers have not proved by then, it polishes the incumbent beside
// them, round after round while rounds gain: the process's own thread
// had nothing to do there, and on 1024x4000 at 30 s, where the levels
// after the first get no time, the plan went from [73 28 17 1908311] to
// [72 25 16 1903958]; on 256x1000-tight seed 90533 at 2 s, whose level
// 1 is proved late, from [23 7-8 11-14 ..] to [23 5 8 ..] in three runs
// of three.
func (l *levelRun) lastAnswers() error {
	if l.i == 0 || l.i == 3 {
		if err := l.poll(l.x.within(l.end).until(shareFinalQuarter), true); err != nil {
			return err
		}
	}
	switch {
	case l.i == 3:
		if err := l.polish(l.end, false); err != nil {
			return err
		}
	case l.i == 0 && l.open() && l.pw.alive():
		if err := l.polishBeside(l.end, anyGain); err != nil {
			return err
		}
	}
	return l.poll(l.end, true)
}

// anyGain has mend go on while its rounds better the plan at any level.
const anyGain = -1

// besideGain is the least share of the level a round of the polish
// beside the LP must gain for another. At 5 s on 256x1000-tight its
// rounds took the level-3 worker's plan from 7.9 M to 1.8 M and then to
// 1.15-1.22 M. It was 5%, and the worker that starts when the polish
// stops took its core; beside the backbone-fixed LP that worker found
// no better plan in 4 traced runs of 256x1000-tight, while further
// rounds (with the LP's 7/8, relax) ended 10 runs of 10 at 1,131,068-
// 1,132,925 where 5% had left 7 of 10 at 1,157,068-1,162,875.
const besideGain = 0.001

// besideLP is level 4 of a part past fitsSparse whose level-3 plan came
// from a PB worker: local search mends that plan on a goroutine while
// the LP starts on the caller's, where it used to wait for the mending
// (a second on 256x1000; its LP then got to the bound of its fourth
// solve, 455,352, by the end of a 10 s run, and now to its fifth).
func (l *levelRun) besideLP(r *strongResult) error {
	x, i, end := l.x, l.i, l.end
	// Rounds of a second at most, while each gains besideGain or more,
	// until the last quarter of the level (the final polish's).
	polishEnd := x.within(end).until(shareFinalQuarter)
	mended := x.mend(x.run.ctx, polishEnd, besideGain)
	// The worker starts once the mending is done, below the level-3
	// plan all the same: it descends from there, and on 256x1000-tight
	// that descent found 1,133,717 at 30 s where a worker started below
	// the mended plan found nothing. Started at once, its process made
	// three busy threads on two cores, and the LP missed a solve.
	cutoff := l.ub - 1
	waiting := true
	take := func(block bool) error {
		if !waiting {
			return nil
		}
		var a model.Assignment
		if block {
			a = <-mended
		} else {
			select {
			case a = <-mended:
			default:
				return nil
			}
		}
		waiting = false
		if err := l.takePolished(a); err != nil {
			return err
		}
		if l.lb < l.ub {
			l.pw = x.startPB(i, r, cutoff, end)
		}
		return nil
	}
	if x.clock().Counted() {
		// One goroutine at a time reads a counted clock.
		if err := take(true); err != nil {
			return err
		}
	}
	if err := l.lpBeside(r, take); err != nil {
		return err
	}
	return l.lastAnswers()
}

// mend runs local search from the incumbent on a goroutine, in rounds of
// a second at most while each gains gain of level x.at or more (anyGain:
// while each betters the plan at all), until end or ctx is done, and
// sends the best plan it reached. The goroutine only reads the pool, its
// own plans and the part's checker (safe for concurrent checks); the
// caller takes the result.
func (x *exact) mend(ctx context.Context, end time.Time, gain float64) <-chan model.Assignment {
	mended := make(chan model.Assignment, 1)
	from, seed, i := x.best, x.rng.Uint64(), x.at
	obj := x.obj // from's
	if !x.polishRoom(end) {
		mended <- from
		return mended
	}
	ls := x.searcher()
	go func() {
		best := from
		for k := uint64(0); x.clock().Now().Before(end) && ctx.Err() == nil; k++ {
			roundEnd := x.clock().Now().Add(linearPolishMax)
			if roundEnd.After(end) {
				roundEnd = end
			}
			a := ls.ImproveOn(ctx, best, seed+k, nil, roundEnd, localsearch.StaleKicks)
			rep := x.chk.Check(a)
			if !rep.Valid || !rep.Objective.Less(obj) {
				break
			}
			before := obj[i]
			best, obj = a, rep.Objective
			if float64(before-obj[i]) <= gain*math.Abs(float64(before)) {
				break
			}
		}
		mended <- best
	}()
	return mended
}

// polishBeside is polish while the workers pw search level x.at, ended
// as soon as they prove it: a round of polish ends only when its kicks
// go stale, and on the 256-node parts that held levels 2 and 3 0.3-0.4 s
// past the workers' proof each (256x1000's level 3 ended at 2.93-3.12 s,
// now at 2.35-2.6 s, and its level-4 LP missed a solve at 10 s). With
// no polish at all those levels end sooner still, but at 3 s
// 256x1000-tight kept [22 17 21 ..] instead of [22 16 11 ..].
func (l *levelRun) polishBeside(end time.Time, gain float64) error {
	x := l.x
	ctx, cancel := context.WithCancel(x.run.ctx)
	defer cancel()
	mended := x.mend(ctx, end, gain)
	for {
		select {
		case a := <-mended:
			return l.takePolished(a)
		default:
		}
		if l.lb >= l.ub {
			cancel()
			return l.takePolished(<-mended)
		}
		if !l.pw.alive() { // the workers ended without a proof
			return l.takePolished(<-mended)
		}
		if err := l.poll(x.clock().Now().Add(10*time.Millisecond), true); err != nil {
			return err
		}
	}
}

// takePolished offers a plan that local search mended beside the
// workers and lowers the level's upper bound to the incumbent's.
func (l *levelRun) takePolished(a model.Assignment) error {
	x := l.x
	if _, err := x.acceptPolished(a); err != nil {
		return err
	}
	x.tracer().f("level %d polished: %v", x.at+1, x.obj)
	l.ub = min(l.ub, x.obj[x.at])
	return nil
}

// uncoveredIn is the sources whose uncovered literal is among fixed.
func (x *exact) uncoveredIn(fixed []z.Lit) []string {
	set := make(map[z.Lit]bool, len(fixed))
	for _, m := range fixed {
		set[m] = true
	}
	var out []string
	for _, s := range x.e.Sources {
		if set[s.U] {
			out = append(out, s.ID)
		}
	}
	return out
}
