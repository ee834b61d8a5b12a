package solver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/clock"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/localsearch"
	"github.com/poolsolve/poolsolve/solver/pb"
)

// warmKicks is how many kicks in a row that find nothing end the warm
// start's local search: a warm plan that is the answer (the greedy
// solver's) gets the full search; the exact solver's is only its first
// incumbent.
func warmKicks(answer bool) int {
	if answer {
		return localsearch.StaleKicks
	}
	return exactWarmKicks
}

const exactWarmKicks = 10

// DefaultTimeLimit bounds a solve when Options.TimeLimit is zero.
const DefaultTimeLimit = 5 * time.Second

// run is one Solve call's clock, context and progress reporting.
type run struct {
	pool     *model.Pool // the whole pool, before it is cut into parts
	ctx      context.Context
	opts     Options
	start    time.Time
	trace    tracer
	limit    time.Duration
	deadline time.Time
	// clock is what the search reads its deadlines on: nil, the wall
	// clock, or counted under a work limit (Options.WorkLimit).
	clock    *clock.Clock
	first    time.Time
	lastProg time.Time
	// objs are the parts' current objectives; cur is the part being solved.
	objs []model.Objective
	cur  int
	// tooBig is set when a part's encoding did not finish in time or
	// memory is linear: the explanations then skip encoding the whole
	// pool (staticExplanations).
	tooBig bool
	// spares holds a pseudo-boolean worker process started ahead of its
	// job (nil for the greedy solver).
	spares *pb.Spares
	// ls is local search on the whole pool, built by the warm start and
	// kept for a part that is the whole pool; lsBuilt is how long it
	// took to build (polishRoom).
	ls      *localsearch.Searcher
	lsBuilt time.Duration
}

// searcher is local search on p: the warm start's when p is the whole
// pool, else a new one.
func (r *run) searcher(p *model.Pool) *localsearch.Searcher {
	if r.ls != nil && r.ls.Pool() == p {
		return r.ls
	}
	return localsearch.NewSearcher(p)
}

func (r *run) firstPlan() {
	if r.first.IsZero() {
		r.first = time.Now()
	}
}

// progress reports at most four times a second, and only once the solve
// has run for more than a second.
func (r *run) progress(level int, inc model.Objective, bound int64) {
	if r.opts.Progress == nil {
		return
	}
	el := time.Since(r.start)
	if el < time.Second || time.Since(r.lastProg) < 250*time.Millisecond {
		return
	}
	r.lastProg = time.Now()
	var total model.Objective
	for i, o := range r.objs {
		if i == r.cur {
			o = inc
		}
		for k := range total {
			total[k] += o[k]
		}
	}
	r.opts.Progress(Progress{Level: level + 1, Incumbent: total, Bound: bound, Elapsed: el})
}

// Solve plans p: a greedy warm start improved by local search (5% of the
// time, up to half of it while the warm plan is invalid or the parts are
// still being encoded beside it), then, per
// independent part of the pool, the exact lexicographic search on gini,
// level by level, with LNS and LP bounds.
// The deadline (opts.TimeLimit, default 5 s, or ctx's if earlier) is
// always honoured: the result is then the best plan found, complete and
// checked by the independent evaluator, with each level marked optimal,
// bounded or heuristic, and Result.Stop saying why the search ended.
//
// When pins and cordons admit no plan at all, Solve returns a Result with
// Infeasible set and a minimal set of conflicting pins per explanation.
// An error means bad options, a cancelled context before any plan, or a
// bug: the evaluator disagreeing with the encoding (ErrMismatch).
func Solve(ctx context.Context, p *model.Pool, opts Options) (*Result, error) {
	r, err := newRun(ctx, p, opts)
	if err != nil {
		return nil, err
	}
	var ahead *encodeAhead
	defer func() { ahead.abandon() }()
	afterGreedy := func() <-chan struct{} { return nil }
	warmOnly := r.greedy() || r.warmIsAnswer()
	if !warmOnly {
		r.trace.f("pb workers: %s", r.workers())
		if !r.clock.Counted() {
			r.spares = pb.NewSpares()
			defer r.spares.Close()
		}
		// The parts are encoded while local search improves the greedy
		// plan, not during the greedy pass: beside it the encoding
		// slowed it by 60% on 256x1000, and it is the whole warm start
		// at short limits, which often end with the warm plan.
		afterGreedy = func() <-chan struct{} {
			ahead = r.encodeAhead()
			return ahead.all()
		}
	}
	warm, warmRep := r.warmStart(afterGreedy, warmOnly)
	// The greedy solver's answer is the warm plan; so is the exact
	// solver's when less time is left than the warm start took (256x1000
	// at a 1 s limit from process start: cutting the pool into parts and
	// checking them again cost 125-200 ms past the limit).
	if warmRep.Valid && (r.greedy() || r.clock.Until(r.deadline) < r.clock.Since(r.start)) {
		if !r.greedy() {
			warm, warmRep = r.warmToDeadline(warm, warmRep)
		}
		return r.warmResult(warm, warmRep), nil
	}
	if ahead == nil {
		// No local search ran, or the greedy solver's warm plan broke
		// a rule (it searches too).
		ahead = r.encodeAhead()
	}
	s := r.newPartSearch(warm, ahead)
	for pi := range s.parts {
		if err := s.startPart(pi); err != nil {
			return nil, err
		}
	}
	if err := s.searchParts(); err != nil {
		return nil, err
	}
	r.trace.f("search ended; deadline %.3fs", r.deadline.Sub(r.start).Seconds())
	return s.result()
}

// newRun checks the options and starts the clock.
func newRun(ctx context.Context, p *model.Pool, opts Options) (*run, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if p == nil {
		return nil, errors.New("solver: nil pool")
	}
	if opts.Solver != "" && opts.Solver != Exact && opts.Solver != Greedy {
		return nil, fmt.Errorf("solver: unknown solver %q (want exact or greedy)", opts.Solver)
	}
	limit := opts.TimeLimit
	if limit <= 0 {
		limit = DefaultTimeLimit
	}
	if opts.WorkLimit < 0 || opts.WorkLimit > MaxWorkLimit {
		return nil, fmt.Errorf("solver: work limit %d: expected 0 to %d units", opts.WorkLimit, MaxWorkLimit)
	}
	r := &run{pool: p, ctx: ctx, opts: opts, start: time.Now(), limit: limit}
	if opts.WorkLimit > 0 {
		r.limit = time.Duration(opts.WorkLimit) * WorkUnit
		r.clock = clock.Counted(r.start)
		r.deadline = r.start.Add(r.limit - explainGrace(r.limit))
		r.trace = newTracer(opts.Trace, r.start)
		return r, nil
	}
	r.trace = newTracer(opts.Trace, r.start)
	// The search stops early enough for what follows it to fit in the
	// limit: gini overshoots a Try by up to one propagation tick, then come
	// the merge, the final checks and the explanations (explainGrace).
	r.deadline = r.start.Add(limit - explainGrace(limit))
	if d, ok := ctx.Deadline(); ok && d.Before(r.deadline) {
		r.deadline = d
	}
	return r, nil
}

// staticExplanations says the explanations will not encode the whole
// pool, so they need no grace past the deadline: the search gets it, all
// but what merging and checking the parts take (256x1000 at 10 s: 0.5 s
// more for level 4's LP, and 30-50 ms of merge and check after it).
func (r *run) staticExplanations() {
	r.tooBig = true
	d := r.start.Add(r.limit - mergeGrace(r.limit))
	if cd, ok := r.ctx.Deadline(); ok && cd.Before(d) && !r.clock.Counted() {
		d = cd
	}
	if d.After(r.deadline) {
		r.deadline = d
	}
}

// mergeGrace is the part of the limit kept after the search for merging
// the parts' plans and checking the whole when the explanations are
// static.
func mergeGrace(limit time.Duration) time.Duration { return ofLimit(limit, shareMerge) }

func (r *run) greedy() bool { return r.opts.Solver == Greedy }

// warmIsAnswer says the exact solver's answer will be its warm plan:
// the time left after the warm start is shorter than the warm start.
// Its local search then runs as the greedy solver's does, alone and to
// the same end: beside the encoding of the parts and a worker process
// starting, it reached fewer moves, and on 256x1000-tight at 2 s under
// load the exact plan came out worse than the greedy solver's.
func (r *run) warmIsAnswer() bool {
	warm := ofLimit(r.limit, shareWarm)
	return r.clock.Until(r.deadline)-warm < warm
}

// warmStart is the greedy plan improved by local search, and its report;
// afterGreedy is called between the two, unless the time for local
// search is up already on a counted clock, and returns what closes once
// the parts are encoded (nil when nothing is). A warm plan that is the
// answer (the greedy solver's, or warmIsAnswer) gets the greedy
// solver's full search; one that is not gets more while the parts are
// still encoded beside it (warmWhileEncoding).
func (r *run) warmStart(afterGreedy func() <-chan struct{}, answer bool) (model.Assignment, eval.Report) {
	p, ctx, seed := r.pool, r.ctx, r.opts.Seed
	warmEnd := r.start.Add(ofLimit(r.limit, shareWarm))
	if warmEnd.After(r.deadline) {
		warmEnd = r.deadline
	}
	t := time.Now()
	r.ls = localsearch.NewSearcher(p)
	r.lsBuilt = time.Since(t)
	r.trace.f("local search built in %v", r.lsBuilt)
	warm := r.ls.Greedy(seed)
	r.trace.f("greedy pass ended")
	// On the wall clock the encoding starts after the greedy pass even
	// past warmEnd, and local search goes on beside it until it ends
	// (untilEncoded): the search would wait for it anyway. On 1024x4000
	// at 30 s the greedy pass ends about when warmEnd does; when it
	// ended after, no local search ran and level 1 stayed at the greedy
	// plan's 111 uncovered sources, where it reaches 74.
	var encoded <-chan struct{}
	if r.clock.Before(warmEnd) || !r.clock.Counted() {
		encoded = afterGreedy()
	}
	lsCtx, lsEnd, cancel := ctx, warmEnd, func() {}
	if encoded != nil && !r.clock.Counted() {
		lsCtx, cancel = r.untilEncoded(warmEnd, encoded)
		lsEnd = r.warmMax()
	}
	warm = r.ls.ImproveOn(lsCtx, warm, seed, r.clock, lsEnd, warmKicks(answer))
	cancel()
	// A search that went stale before warmEnd has its local optimum: on
	// a small pool, rounds beside the encoding only slow it (24x60-tight
	// proved in 140 ms instead of 127).
	stale := r.clock.Before(warmEnd)
	warmRep := r.ls.Check(warm)
	r.trace.f("warm start: valid %v, %v", warmRep.Valid, warmRep.Objective)
	// A warm start that still breaks a rule (on big pools, typically a
	// keepWarm pin) gets more local search, up to half the limit, in
	// rounds that stop as soon as it is valid, or when a round repairs
	// nothing (pins that cannot hold are the exact search's to explain):
	// a valid plan in hand is what lets every later phase stop at the
	// deadline.
	warmMax := r.warmMax()
	for round := uint64(1); !warmRep.Valid && r.clock.Before(warmMax) && ctx.Err() == nil; round++ {
		end := r.clock.Now().Add(max(ofLimit(r.limit, shareWarm), 50*time.Millisecond))
		if end.After(warmMax) {
			end = warmMax
		}
		before := len(warmRep.Violations)
		warm = r.ls.ImproveOn(ctx, warm, seed+round, r.clock, end, localsearch.StaleKicks)
		warmRep = r.ls.Check(warm)
		if len(warmRep.Violations) >= before {
			break
		}
	}
	if warmRep.Valid {
		r.firstPlan()
		if !stale {
			warm, warmRep = r.warmWhileEncoding(warm, warmRep, encoded, warmMax)
		}
	}
	return warm, warmRep
}

// warmMax is how long the warm start may last: half the limit.
func (r *run) warmMax() time.Time {
	if m := r.start.Add(ofLimit(r.limit, shareWarmRepair)); m.Before(r.deadline) {
		return m
	}
	return r.deadline
}

// untilEncoded is a context for the warm start's local search on the
// wall clock: done at end, or, while the parts are still being encoded
// beside it, once they are (encoded closes). The search waits for them
// anyway, and the one trajectory from the greedy plan goes on: the
// greedy solver's to end, only slower beside the encoding, then further.
// On 1024x4000 at 30 s the encoding ended 3-11 s after end, and the
// search took level 1 from 111 uncovered sources to 74; the PB workers
// need such a start (at 120 s, from 73-74 they ended level 1 at 69 in
// 26-35 s, the clause-learning one alone proving it in 79 s; from 111
// they had found nothing in 8 s). Fresh-seed rounds after end
// instead left the plan at 1 s on 256x1000-tight sometimes worse than
// the greedy solver's.
func (r *run) untilEncoded(end time.Time, encoded <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.ctx)
	go func() {
		defer cancel()
		t := time.NewTimer(time.Until(end))
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
		select {
		case <-encoded:
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// warmWhileEncoding goes on with local search on the warm plan, in
// rounds from fresh seeds, while the parts are still being encoded, at
// most until end: for a search that went stale past its end (untilEncoded)
// with the core still free.
func (r *run) warmWhileEncoding(warm model.Assignment, rep eval.Report, encoded <-chan struct{}, end time.Time) (model.Assignment, eval.Report) {
	if encoded == nil {
		return warm, rep
	}
	for round := uint64(1); r.clock.Before(end) && r.ctx.Err() == nil; round++ {
		select {
		case <-encoded:
			return warm, rep
		default:
		}
		ctx, cancel := context.WithCancel(r.ctx)
		go func() {
			select {
			case <-encoded:
				cancel()
			case <-ctx.Done():
			}
		}()
		a := r.ls.ImproveOn(ctx, warm, r.opts.Seed+warmRoundSeed+round, r.clock, end, localsearch.StaleKicks)
		cancel()
		if ar := r.ls.Check(a); ar.Valid && ar.Objective.Less(rep.Objective) {
			warm, rep = a, ar
			r.trace.f("warm start while encoding: %v", rep.Objective)
		}
	}
	return warm, rep
}

// warmToDeadline gives the time left to local search from the warm
// plan when that plan is the exact solver's answer: the greedy solver's
// search runs to the deadline, and the exact one's warm start, which
// stops after fewer stale kicks, had left 256x1000 seed 42 at 1 s worse
// than the greedy solver's plan (506,469 against 493,889 at level 4).
func (r *run) warmToDeadline(warm model.Assignment, rep eval.Report) (model.Assignment, eval.Report) {
	if !r.clock.Before(r.deadline) || r.ctx.Err() != nil {
		return warm, rep
	}
	a := r.ls.ImproveOn(r.ctx, warm, r.opts.Seed+warmRoundSeed, r.clock, r.deadline, localsearch.StaleKicks)
	if ar := r.ls.Check(a); ar.Valid && ar.Objective.Less(rep.Objective) {
		warm, rep = a, ar
		r.trace.f("warm start to the deadline: %v", rep.Objective)
	}
	return warm, rep
}

// warmRoundSeed sets the seeds of warmWhileEncoding's rounds and
// warmToDeadline's search apart from the repair rounds'.
const warmRoundSeed = 1 << 20

// warmResult answers with the valid warm plan, unsearched.
func (r *run) warmResult(warm model.Assignment, warmRep eval.Report) *Result {
	res := heuristicResult(r.pool, warm, warmRep, r.clock, r.deadline)
	res.Stats.Components = 1
	if !r.greedy() {
		res.Stats.Solver, res.Stats.Workers = Exact, r.workers()
	}
	res.Explanations = explainUncovered(r, r.pool, res.Assignment, warmRep.Uncovered, false, nil)
	res.Stats.TimeToFirst, res.Stats.TimeTotal = r.first.Sub(r.start), time.Since(r.start)
	res.Stop = stopReason(r.ctx, res, r.greedy())
	return res
}

// partSearch is the search of a pool cut into independent parts: a first
// plan (or infeasibility) for each, then each searched in its time share,
// then the parts' plans merged.
type partSearch struct {
	r     *run
	warm  model.Assignment
	parts []component
	ahead *encodeAhead // the parts' encodings
	res   *Result
	// xs[pi] searches part pi; it is nil when the part's encoding did not
	// finish in time, and warmOnly[pi] is then the report of the warm plan
	// it keeps, marked heuristic.
	xs       []*exact
	warmOnly []*eval.Report
	// warmReps are the warm plan's reports on each part.
	warmReps []eval.Report
	// plans and levels are the parts' answers, by part (none for a
	// part not searched once another proved infeasible).
	plans  []model.Assignment
	levels [][4]Level
	// unavoidable are the sources the parts' presolves found uncovered
	// in every plan.
	unavoidable map[string]bool
}

func (r *run) newPartSearch(warm model.Assignment, ahead *encodeAhead) *partSearch {
	s := &partSearch{r: r, warm: warm, parts: ahead.parts, ahead: ahead,
		res:      &Result{Stats: Stats{Solver: Exact, Components: len(ahead.parts), Workers: r.workers()}},
		xs:       make([]*exact, len(ahead.parts)),
		warmOnly: make([]*eval.Report, len(ahead.parts)),
	}
	if r.greedy() {
		s.res.Stats.Solver, s.res.Stats.Workers = Greedy, ""
	}
	r.objs = make([]model.Objective, len(s.parts))
	s.warmReps = make([]eval.Report, len(s.parts))
	for i, c := range s.parts {
		rep := ahead.check(i, c.pool, restrict(warm, c.pool))
		if s.warmReps[i] = rep; rep.Valid {
			r.objs[i] = rep.Objective
			// A part with a valid warm plan stops encoding a little
			// before the deadline: an encoding done later leaves no
			// time to search, and the tail of a huge one (garbage
			// collection of the clause and variable tables) would
			// overrun the deadline. Without a valid warm plan the
			// encoding is the only hope and gets all the time.
			ahead.limit(i, r.deadline.Add(-explainGrace(r.limit)))
		}
	}
	return s
}

// startPart encodes part pi and finds its first plan, or that it has
// none. Every part gets this before any search, so that a late part is
// never starved of the time to say it is stuck.
func (s *partSearch) startPart(pi int) error {
	r, c, res := s.r, s.parts[pi], s.res
	r.cur = pi
	part, partRep := restrict(s.warm, c.pool), s.warmReps[pi]
	if r.ctx.Err() != nil && partRep.Valid {
		// Interrupted: the part keeps its warm plan, as when its
		// encoding runs out of time.
		s.ahead.skip(pi)
		s.warmOnly[pi], r.objs[pi] = &partRep, partRep.Objective
		r.staticExplanations()
		return nil
	}
	x, err := s.ahead.part(pi)
	if errors.Is(err, encode.ErrDeadline) {
		if !partRep.Valid && !res.Infeasible {
			return ErrNoPlan
		}
		s.warmOnly[pi], r.objs[pi] = &partRep, partRep.Objective
		r.staticExplanations()
		return nil
	}
	if err != nil {
		return err
	}
	// Encoded with the run's deadline as it was when the encoding
	// started; an earlier part's staticExplanations may have moved it.
	x.deadline, x.e.Deadline = r.deadline, r.deadline
	r.trace.f("part %d encoded: %d variables", pi, x.e.MaxVar())
	start := x.start
	if x.e.LinearMemory {
		start = x.startLinear
		r.staticExplanations() // no whole-pool SAT checks
	}
	ok, err := start(part, partRep.Valid)
	res.Stats.Vars += int(x.e.MaxVar())
	if err != nil {
		return err
	}
	if !ok {
		res.Infeasible = true
		res.Explanations = append(res.Explanations, x.explainInfeasible()...)
	}
	r.objs[pi] = x.obj
	s.xs[pi] = x
	return nil
}

// searchParts searches each part in turn, smallest first, giving it the
// share of the time left that its size is of the parts not yet searched,
// and at least partFloor of it. Small parts prove in milliseconds and
// leave their time to the large one; searched after it, they got what
// its overrun of its share left, often nothing (256x1000 seed 90533: a
// 64-variable part kept 3 uncovered sources beside a proved part, at
// every limit), and by size alone too little for gini's first call on
// a counted clock. Once a part is infeasible, the others only count
// their calls.
func (s *partSearch) searchParts() error {
	sizeLeft := 0
	for _, c := range s.parts {
		sizeLeft += c.size
	}
	s.plans = make([]model.Assignment, len(s.parts))
	s.levels = make([][4]Level, len(s.parts))
	for _, pi := range s.order() {
		x := s.xs[pi]
		if x == nil {
			sizeLeft -= s.parts[pi].size
			if !s.res.Infeasible {
				s.plans[pi] = restrict(s.warm, s.parts[pi].pool)
				s.levels[pi] = warmLevels(s.warmOnly[pi].Objective)
			}
			continue
		}
		if s.res.Infeasible {
			s.res.Stats.SolveCalls += x.calls
			continue
		}
		s.r.cur = pi
		b := budget{s.r.clock, s.r.deadline}
		share := max(b.part(s.parts[pi].size, sizeLeft), b.part(1, partFloor))
		sizeLeft -= s.parts[pi].size
		if err := s.searchPart(pi, x, share); err != nil {
			return err
		}
	}
	return nil
}

// order is the parts' indices, smallest first (in part order among
// equals).
func (s *partSearch) order() []int {
	order := make([]int, len(s.parts))
	for pi := range order {
		order[pi] = pi
	}
	sort.SliceStable(order, func(a, b int) bool { return s.parts[order[a]].size < s.parts[order[b]].size })
	return order
}

// partFloor is the least share of the time left a part gets: one in
// partFloor.
const partFloor = 10

// searchPart runs part pi's level search for share, then makes its plan
// canonical.
func (s *partSearch) searchPart(pi int, x *exact, share time.Duration) error {
	x.deadline = s.r.clock.Now().Add(max(share, 0))
	x.e.Deadline = x.deadline
	if s.r.greedy() {
		x.heuristicLevels()
	} else if err := x.solve(); err != nil {
		return err
	}
	tc := time.Now()
	x.canonicalize()
	s.r.trace.f("part %d: levels %v %v %v %v, canonical re-solve %v", pi, x.levels[0].Elapsed, x.levels[1].Elapsed, x.levels[2].Elapsed, x.levels[3].Elapsed, time.Since(tc))
	s.r.objs[pi] = x.obj
	s.plans[pi], s.levels[pi] = x.best, x.levels
	for _, sid := range x.unavoidable {
		if s.unavoidable == nil {
			s.unavoidable = map[string]bool{}
		}
		s.unavoidable[sid] = true
	}
	s.res.Stats.Clauses += x.e.Log.Len()
	s.res.Stats.SolveCalls += x.calls
	return nil
}

// result merges the parts' plans and checks the whole with the
// evaluator: its objective must be the sum of the parts'.
func (s *partSearch) result() (*Result, error) {
	r, res := s.r, s.res
	res.Stats.TimeTotal = time.Since(r.start)
	if res.Infeasible {
		res.Stop = stopReason(r.ctx, res, r.greedy())
		return res, nil
	}
	res.Assignment = merge(s.plans)
	final := eval.Check(r.pool, res.Assignment)
	if !final.Valid {
		return nil, fmt.Errorf("%w: merged plan invalid: %w", ErrMismatch, final.Err())
	}
	for _, lv := range s.levels {
		for i := range lv {
			res.Objective[i] += lv[i].Value
		}
	}
	if res.Objective != final.Objective {
		return nil, fmt.Errorf("%w: parts add up to %v, eval says %v", ErrMismatch, res.Objective, final.Objective)
	}
	r.trace.f("parts merged and checked")
	res.Levels = mergeLevels(s.levels)
	res.Explanations = explainUncovered(r, r.pool, res.Assignment, final.Uncovered, allProved(res.Levels[0]), s.unavoidable)
	r.trace.f("%d explanations", len(res.Explanations))
	res.Stats.TimeToFirst = r.first.Sub(r.start)
	res.Stats.TimeTotal = time.Since(r.start)
	res.Stop = stopReason(r.ctx, res, r.greedy())
	return res, nil
}

func allProved(l Level) bool { return l.Status == Optimal }

// heuristicResult reports a heuristic plan: nothing proved, the trivial
// bound of each level (what no decision changes) as its lower bound.
func heuristicResult(p *model.Pool, a model.Assignment, rep eval.Report, c *clock.Clock, deadline time.Time) *Result {
	res := &Result{Assignment: a, Objective: rep.Objective, Stats: Stats{Solver: Greedy}}
	var offs [4]int64
	if e, err := encode.New(p, encode.Options{Deadline: deadline, Clock: c}); err == nil {
		for i := range offs {
			offs[i] = e.Offset(i)
		}
	}
	for i := range res.Levels {
		lb := min(offs[i], rep.Objective[i])
		res.Levels[i] = Level{Index: i + 1, Name: model.LevelNames[i], Value: rep.Objective[i],
			Status: Heuristic, LowerBound: lb, BoundSource: BoundTrivial, Gap: gap(rep.Objective[i], lb)}
		if lb >= rep.Objective[i] {
			res.Levels[i].Status = Optimal
		}
	}
	return res
}

// warmLevels are the levels of a part left with its warm-start plan
// because its encoding did not finish in time: heuristic, bounded by 0.
func warmLevels(obj model.Objective) [4]Level {
	var out [4]Level
	for i := range out {
		out[i] = Level{Index: i + 1, Name: model.LevelNames[i], Value: obj[i], Status: Heuristic,
			BoundSource: BoundTrivial, Gap: gap(obj[i], 0)}
		if obj[i] <= 0 {
			out[i].Status = Optimal
		}
	}
	return out
}

// heuristicLevels marks the levels of a part solved greedily.
func (x *exact) heuristicLevels() {
	for i := range x.levels {
		lb := min(x.e.Offset(i), x.obj[i])
		x.levels[i] = Level{Index: i + 1, Name: model.LevelNames[i], Value: x.obj[i], Status: Heuristic,
			LowerBound: lb, BoundSource: BoundTrivial, Gap: gap(x.obj[i], lb)}
		if lb >= x.obj[i] {
			x.levels[i].Status = Optimal
		}
	}
}

// canonicalize makes a proved plan independent of the search path: when
// every level is optimal and time is left, the model is solved once more
// with the four optima frozen, and that model (a function of the pool
// alone) replaces the incumbent. When a level is only bounded the plan
// depends on where the clock stopped the search, and is kept as found.
//
// Which re-solve runs must not depend on which search proved level 4:
// two re-solves give two plans of the same value, and 24x60-tight's plan
// changed between runs when branch and cut re-solved the part whenever
// the LP had proved it and the PB worker whenever the worker had. The
// choice is made by level 4's root LP, a function of the pool: the
// canonical PB job, which a level-4 worker has often solved already
// (x.canon), where the root is farther than canonLPGap from the optimum
// and the job small enough to solve in this process; else branch and
// cut from that root, depth first. On a large job the PB search is the
// slow one even where the root is far: on the 256x1000 fleet that bench
// --write-fleet writes (root 255,844, optimum 508,587, closed by the
// cuts) it found nothing in 4 s, and branch and cut takes 15 ms. Either
// falls back on the other when it finds nothing in time, and gini's
// re-solve is the last resort.
func (x *exact) canonicalize() {
	for _, l := range x.levels {
		if l.Status != Optimal {
			return
		}
	}
	left := x.clock().Until(x.run.deadline)
	if left <= 0 || x.run.ctx.Err() != nil {
		return
	}
	// A level 4 proved without its LP was proved by a bound at least
	// as weak: the LP's root is at the optimum too.
	closeLP := !x.rootLPSet || gap(x.obj[3], x.rootLP) <= canonLPGap || x.rootNonzeros >= canonInProcessNonzeros
	if !closeLP {
		// A root far from the optimum may be closed by its cuts: the
		// closed loop is a function of the model too, and branch and
		// cut from it is then the fast re-solve.
		if root := x.closedRoot(); root != nil && gap(x.obj[3], root.bound) <= canonLPGap {
			closeLP = true
		}
	}
	x.run.trace.f("canonical: root LP %d (known %v, %d nonzeros), optimum %d, by branch and cut %v", x.rootLP, x.rootLPSet, x.rootNonzeros, x.obj[3], closeLP)
	if closeLP && x.canonicalBC() {
		return
	}
	until := x.run.deadline
	if !closeLP {
		until = x.within(x.run.deadline).until(shareCanonicalPB)
	}
	if a, ok := x.canonicalPB(until); ok {
		x.best = a
		return
	}
	if !closeLP && x.canonicalBC() {
		return
	}
	x.canonicalSAT(l4MaxNodes)
}

// canonLPGap is the root LP's gap to the optimum up to which branch and
// cut re-solves a proved part. On the suite the parts the LP proves have
// root gaps of at most 4.4% (64x250); 24x60-tight's largest part, which
// the PB worker proves, 56%.
const canonLPGap = 0.1

// canonicalSAT is canonicalize's re-solve on a fresh gini encoding, with
// the level-4 diagram capped at maxNodes; false when it did not replace
// the incumbent.
func (x *exact) canonicalSAT(maxNodes int) bool {
	left := x.clock().Until(x.run.deadline)
	if left <= 0 || x.e.LinearMemory {
		return false // gini's models could break memory in a linear-memory part
	}
	e, err := encode.New(x.p, encode.Options{Deadline: x.run.deadline, Clock: x.clock()})
	if err != nil {
		return false
	}
	sy := findSymmetry(e)
	sy.constrain()
	for i := range 3 {
		e.Freeze(i, x.obj[i])
	}
	l4, ok := e.L4Bound(x.obj[3], 1, true, maxNodes)
	if !ok {
		return false // too large to pin down exactly at this cap
	}
	x.calls++
	if e.TryUnder(x.clock().Until(x.run.deadline), e.AssumptionLits(), l4) != 1 {
		return false
	}
	a := e.Decode()
	rep := x.chk.Check(a)
	if rep.Valid && rep.Objective == x.obj {
		x.best = a
		return true
	}
	return false
}

// mergeLevels adds the parts' levels: values and bounds add up; a level is
// optimal when every part's is, heuristic when every unproved part's is,
// else bounded. BoundSource names the sources that gave a bound above
// zero, joined with "+" (e.g. "lp+sat-unsat"), or "trivial".
func mergeLevels(parts [][4]Level) [4]Level {
	var out [4]Level
	for i := range out {
		l := Level{Index: i + 1, Name: model.LevelNames[i], Status: Optimal}
		srcs := map[BoundSource]bool{}
		heuristic := true
		for _, pl := range parts {
			p := pl[i]
			l.Value += p.Value
			l.LowerBound += p.LowerBound
			l.Elapsed += p.Elapsed
			if p.Status != Optimal {
				l.Status = Bounded
				heuristic = heuristic && p.Status == Heuristic
			}
			if p.BoundSource != "" && (p.LowerBound > 0 || p.BoundSource != BoundTrivial) {
				srcs[p.BoundSource] = true
			}
		}
		if l.Status != Optimal && heuristic {
			l.Status = Heuristic
		}
		if l.LowerBound >= l.Value {
			l.Status = Optimal
		}
		l.BoundSource = joinSources(srcs)
		l.Gap = gap(l.Value, l.LowerBound)
		out[i] = l
	}
	return out
}

// joinSources names the merged bound: the sources other than trivial,
// sorted and joined with "+", or trivial when there are none.
func joinSources(srcs map[BoundSource]bool) BoundSource {
	var names []string
	for s := range srcs {
		if s != BoundTrivial || len(srcs) == 1 {
			names = append(names, string(s))
		}
	}
	if len(names) == 0 {
		return BoundTrivial
	}
	sort.Strings(names)
	return BoundSource(strings.Join(names, "+"))
}

// stopReason says why a solve that answered with res ended.
func stopReason(ctx context.Context, res *Result, greedy bool) Stop {
	proved := true
	for _, l := range res.Levels {
		proved = proved && l.Status == Optimal
	}
	switch {
	case res.Infeasible:
		return StopInfeasible
	case proved:
		return StopProved
	case errors.Is(ctx.Err(), context.Canceled):
		return StopInterrupted
	case greedy:
		return StopHeuristic
	}
	return StopDeadline
}
