package solver

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"time"

	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/mip"
	"github.com/poolsolve/poolsolve/solver/pb"
)

// pbLevel is the portfolio of workers searching level 4 below the
// incumbent while the gini search runs: one with clause learning, one
// with cutting planes. When the incumbent improves, the clause-learning
// worker is restarted below it, with the stronger fixings the smaller
// gap gives. nil when no worker could start.
type pbLevel struct {
	x      *exact
	level  int // 0-based
	sr     *strongResult
	end    time.Time
	out    chan pb.Msg
	runs   map[int]*pb.Run
	jobs   map[int]*pbJobState
	next   int
	cdcl   int // id of the current clause-learning worker
	failed bool
	// last is the last job built: the portfolio's two workers start on
	// the same one (256x1000: 60 ms each to build).
	last lastJob
}

// lastJob is a job with what it was built from.
type lastJob struct {
	sr              *strongResult
	cutoff          int64
	fixed, knapsack int
	job             *pb.Job
}

// pbJobState is what one worker was asked and has answered.
type pbJobState struct {
	cutoff int64 // its bound on the level, offset included
	last   int64 // the level's value in its last model, when got
	got    bool
	// cuttingPlanes: the worker learns weight constraints (job's
	// CuttingPlanes).
	cuttingPlanes bool
}

// startPB starts the portfolio on level i below cutoff.
func (x *exact) startPB(i int, sr *strongResult, cutoff int64, end time.Time) *pbLevel {
	if x.clock().Counted() {
		return nil // worker processes answer by the wall clock
	}
	if start := time.Duration(sr.rel.Nonzeros()) * pbStartPerNonzero; x.clock().Until(end) < 2*start {
		return nil // it would search for less time than it takes to start
	}
	w := &pbLevel{x: x, level: i, sr: sr, end: end, out: make(chan pb.Msg, 256),
		runs: map[int]*pb.Run{}, jobs: map[int]*pbJobState{}}
	if i == 3 && x.canon == nil && x.e.Linear.Vars < canonAheadMaxVars && x.levelsProved(3) {
		var pre *mip.Relaxation
		if sr.uncut {
			pre = sr.rel
		}
		if job, r, off, ok := x.canonicalJobOf(pre); ok {
			x.canon = &canonAhead{job: job, rel: r, offset: off}
		}
	}
	if i == 3 && x.e.Exact && !mip.FitsSparse(sr.rel) && x.cores() < 3 {
		// Beside the LP, one worker with cutting planes: on 256x1000
		// it finds plans near 483,000 within two seconds where the
		// clause-learning one found none in any run (and made each LP
		// round up to twice slower). withLP starts the clause-learning
		// worker on the LP's fixings, or poll when this one ends.
		w.cdcl = -1
		w.launch(cutoff, true)
		return w
	}
	w.cdcl = w.launch(cutoff, false)
	if pbSecondWorker(i, sr, x.cores()) {
		w.launch(cutoff, true)
	}
	if len(w.runs) == 0 {
		return nil
	}
	return w
}

// pbStartPerNonzero is what handing a worker its job costs per nonzero
// of the model: 1024x4000's level 4 (5.6 million nonzeros) took 1.5 s
// from the presolved model to a running worker.
const pbStartPerNonzero = 270 * time.Nanosecond

// pbOneWorkerRows is the size of a presolved level-4 model (in rows) from
// which the LP gets a core of its own: one worker runs, not two.
const pbOneWorkerRows = 3000

// pbSecondWorker says whether the cutting-planes worker runs beside the
// clause-learning one. Levels 1-3 have no LP beside them, but past
// fitsSparse levels 2 and 3 have local search's polish beside their
// workers: with one worker there, three busy threads became two, level
// 3 of 256x1000 and -tight ended 0.1-0.35 s sooner, and level 4's LP
// reached its fifth solve in 10 s (4.3% against 5.7%, three runs). Level
// 1 keeps both: the cutting-planes one finds plans there that the other
// does not (256x1000-tight seed 1 at 2 s: 26 at 1.2 s, the other none),
// though its end proves nothing (poll). At level 4 the
// LP and its cuts take a core; the second worker runs only where a core
// is left for it, and never on a large part, where the LP is what
// proves (past fitsSparse too, since the LP runs there after the
// Lagrangian ascent). On 2 cores, three busy processes made each slower:
// 24x60-tight's clause-learning worker proved in 57 ms alone and 177 ms
// beside the LP and the second worker.
func pbSecondWorker(i int, sr *strongResult, cores int) bool {
	if i < 3 {
		return i == 0 || mip.FitsSparse(sr.rel)
	}
	return len(sr.rel.Rows) < pbOneWorkerRows && cores >= 3
}

// cores is the CPUs the solver may use (Options.Cores overrides it, for
// measuring one policy on a larger machine).
func (x *exact) cores() int {
	if n := x.options().Cores; n > 0 {
		return n
	}
	return runtime.GOMAXPROCS(0)
}

// launch starts one worker below cutoff; its id, or -1.
func (w *pbLevel) launch(cutoff int64, cp bool) int {
	l := &w.last
	if l.job == nil || l.sr != w.sr || l.cutoff != cutoff {
		fixes, knap, ok := w.sr.fixesFor(cutoff)
		if !ok {
			return -1
		}
		*l = lastJob{sr: w.sr, cutoff: cutoff, fixed: len(fixes), knapsack: len(knap),
			job: pb.JobFor(w.sr.rel, cutoff, w.sr.offset, w.sr.asRows(fixes, knap))}
		if c := w.x.canon; w.level == 3 && c != nil {
			l.job.Canon, l.job.CanonShift = c.job, w.sr.offset-c.offset
		}
	}
	job := *l.job // its rows are shared, and only read
	job.CuttingPlanes = cp
	job.Phase = w.x.phase(w.sr.rel)
	id := w.next
	w.next++
	if d := w.x.options().DumpPB; d != "" {
		dumpJob(&job, fmt.Sprintf("%s-l%d-%d.pbjob", d, w.level+1, id))
	}
	w.x.run.trace.f("pb %d start: cutoff %d, lp bound %d, cutting planes %v, %d fixed, knapsack of %d", id, cutoff, w.sr.bound, cp, l.fixed, l.knapsack)
	run, err := pb.Start(w.x.run.ctx, w.x.run.spares, w.end, &job, id, w.out)
	if err != nil {
		w.failed = true
		return -1
	}
	w.runs[id] = run
	w.jobs[id] = &pbJobState{cutoff: cutoff, cuttingPlanes: cp}
	return id
}

// phase is the incumbent's value of each of r's columns, or nil when it
// has none.
func (x *exact) phase(r *mip.Relaxation) []bool {
	if x.best.Lanes == nil {
		return nil
	}
	vals, err := x.e.Values(x.best)
	if err != nil {
		return nil
	}
	ph := make([]bool, len(r.Vars))
	for c, v := range r.Vars {
		ph[c] = int(v) < len(vals) && vals[v]
	}
	return ph
}

func (w *pbLevel) alive() bool { return w != nil && len(w.runs) > 0 }

func (w *pbLevel) stop() {
	if w == nil {
		return
	}
	ids := make([]int, 0, len(w.runs))
	for id := range w.runs {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		w.runs[id].Stop()
		delete(w.runs, id)
	}
	// The workers' cores are free: the next level's first worker
	// starts here, while the level is frozen and presolved. Level 4
	// ends its part: the next part may need none.
	if w.level < 3 {
		w.x.run.spares.Refill()
	}
}

// pbPoll bounds a gini try while a worker runs, so that its answers are
// taken soon after they come.
const pbPoll = 250 * time.Millisecond

func (w *pbLevel) capTry(c time.Duration) time.Duration {
	if w.alive() {
		return min(c, pbPoll)
	}
	return c
}

// poll takes the level's workers' answers (waiting for one until end
// when block and none is there): each model is decoded and offered like a SAT
// model, and the end of a worker's search proves its last model's
// value, or its cutoff + 1 when it sent none. Both are checked against
// the incumbent: a plan below a proved value is a bug (ErrMismatch).
func (l *levelRun) poll(end time.Time, block bool) error {
	x, w := l.x, l.pw
	if w == nil {
		return nil
	}
	i := w.level
	for w.alive() && l.lb < l.ub {
		var m pb.Msg
		if block {
			if !x.clock().Now().Before(end) {
				return nil
			}
			// Wake every pbPoll to report progress while the workers
			// search (the bench's trace draws it).
			t := time.NewTimer(min(x.clock().Until(end), pbPoll))
			select {
			case m = <-w.out:
				t.Stop()
			case <-t.C:
				x.run.progress(i, x.obj, l.lb)
				continue
			case <-x.run.ctx.Done():
				t.Stop()
				return nil // interrupted: the incumbent is the answer
			}
		} else {
			select {
			case m = <-w.out:
			default:
				return nil
			}
		}
		js := w.jobs[m.ID]
		a := m.Answer
		x.run.trace.f("pb %d (cutoff %d): done=%v value=%d", m.ID, js.cutoff, a.Done, a.Value+w.sr.offset)
		if a.Canonical {
			continue // a late canonical model, after the level ended
		}
		if a.Done {
			if run := w.runs[m.ID]; run != nil {
				if x.e.Exact && x.canon != nil && w.level == 3 && !js.cuttingPlanes {
					x.awaitCanon(w, m.ID)
				}
				run.Stop()
				delete(w.runs, m.ID)
			}
			if !x.e.Exact {
				continue // the rounded model's optimum proves nothing
			}
			if js.cuttingPlanes {
				// gophersat's cutting-planes search has ended without a
				// model on a job where clause learning finds one that
				// meets every row (pb's testdata): its end proves
				// nothing. Its models count, each checked as any other.
				// A clause-learning worker takes its place when none
				// runs (past fitsSparse the level starts with the
				// cutting-planes one alone): its end does prove.
				if w.runs[w.cdcl] == nil && l.lb < l.ub {
					w.cdcl = w.launch(l.ub-1, false)
				}
				continue
			}
			proved := js.cutoff + 1
			if js.got {
				proved = js.last
			}
			if x.obj[i] < proved {
				return fmt.Errorf("%w: the PB worker proved level %d >= %d, a plan has %d", ErrMismatch, i+1, proved, x.obj[i])
			}
			if proved > l.lb {
				l.lb, l.src = proved, BoundPB
			}
			l.ub = x.obj[i]
			continue
		}
		plan := x.sym.canonical(x.e.DecodeWith(pb.LitValues(w.sr.rel, a.Model)))
		v := a.Value + w.sr.offset
		before := x.obj[i]
		if _, err := x.acceptPB(plan, i, v); err != nil {
			return err
		}
		js.last, js.got = v, true
		l.ub = x.obj[i]
		if l.ub < before {
			w.improved(l.ub)
		}
	}
	return nil
}

// awaitCanon takes worker id's canonical model, sent right after its
// Done, before the worker is stopped; other workers' answers meanwhile
// are dropped (the level is proved).
func (x *exact) awaitCanon(w *pbLevel, id int) {
	run := w.runs[id]
	t := time.NewTimer(x.clock().Until(x.run.deadline))
	defer t.Stop()
	for {
		select {
		case m := <-w.out:
			if m.ID == id && m.Answer.Canonical {
				x.canon.model = m.Answer.Model
				return
			}
		case <-run.Done:
			// The worker has sent all it will; its canonical model may
			// sit in the channel behind other workers' answers.
			for {
				select {
				case m := <-w.out:
					if m.ID == id && m.Answer.Canonical {
						x.canon.model = m.Answer.Model
						return
					}
				default:
					return
				}
			}
		case <-t.C:
			return
		}
	}
}

// acceptPB checks a PB model's plan: valid, and worth at most the value
// the worker states at level i; then it is offered like a SAT model.
func (x *exact) acceptPB(plan model.Assignment, i int, v int64) (bool, error) {
	rep := x.chk.Check(plan)
	if !rep.Valid {
		return false, errPBInvalid(rep.Err())
	}
	if rep.Objective[i] > v {
		return false, errPBValue(i, v, rep.Objective[i])
	}
	return x.accept(plan, true)
}

func errPBInvalid(err error) error {
	return fmt.Errorf("%w: PB model invalid: %w", ErrMismatch, err)
}

func errPBValue(i int, v, eval int64) error {
	return fmt.Errorf("%w: PB model of level %d = %d, eval says %d", ErrMismatch, i+1, v, eval)
}

// withLP moves the portfolio to the LP's model: its reduced-cost
// fixings and knapsack from now on, with a clause-learning worker on
// them below ub.
func (w *pbLevel) withLP(sr *strongResult, ub int64) {
	w.sr = sr
	// A worker on the bare model may be close to its end: it keeps
	// running, and a clause-learning worker starts on the fixings. Past
	// fitsSparse on two cores it takes the place of the cutting-planes
	// worker from the level's start once that one has sent a plan
	// (256x1000: 2-5 s after its start; by 60 s it holds about 300 MB,
	// and two 256x1000 workers beside the main process passed 1 GiB,
	// 1,129,148-1,169,956 KB). One that has sent none goes on: at 10 s
	// on a slow machine its first plan came after the LP.
	if !mip.FitsSparse(sr.rel) && w.x.cores() < 3 {
		w.stopAnsweredCuttingPlanes()
	}
	w.cdcl = w.launch(ub-1, false)
}

// stopAnsweredCuttingPlanes stops the cutting-planes workers that have
// sent a model.
func (w *pbLevel) stopAnsweredCuttingPlanes() {
	for id, run := range w.runs {
		if js := w.jobs[id]; js.cuttingPlanes && js.got {
			run.Stop()
			delete(w.runs, id)
		}
	}
}

// improved restarts the clause-learning worker below a better incumbent
// when it has not answered yet: the smaller gap fixes more columns.
func (w *pbLevel) improved(ub int64) {
	if w == nil {
		return
	}
	if run := w.runs[w.cdcl]; run != nil && !w.jobs[w.cdcl].got && w.jobs[w.cdcl].cutoff > ub-1 {
		run.Stop()
		delete(w.runs, w.cdcl)
		w.cdcl = w.launch(ub-1, false)
	}
}

// canonicalPB is canonicalize's re-solve on the PB solver: the first
// model of the presolved level-4 model (no cuts, no reduced costs: both
// depend on the search) with every level at its optimum. The solver is
// deterministic, so the model is a function of the pool alone, whether
// the proving worker ran the job, this process or a new worker.
func (x *exact) canonicalPB(until time.Time) (model.Assignment, bool) {
	if a, ok := x.canon.plan(x); ok {
		return a, true // the proving worker re-solved it already
	}
	var (
		job *pb.Job
		r   *mip.Relaxation
	)
	if c := x.canon; c != nil {
		// The job handed ahead, at the optimum: its rows are shared with
		// the jobs being written to workers, so the bound row is copied.
		j := *c.job
		j.Rows = slices.Clone(c.job.Rows)
		j.Rows[len(j.Rows)-1].RHS = x.obj[3] - c.offset
		job, r = &j, c.rel
	} else {
		var ok bool
		if job, r, _, ok = x.canonicalJob(); !ok {
			return model.Assignment{}, false
		}
	}
	m, ok := x.firstModel(job, until)
	if !ok {
		return model.Assignment{}, false
	}
	return x.canonicalPlan(r, m)
}

// canonInProcessNonzeros bounds the jobs solved in this process: the PB
// solver cannot be stopped, so a larger one runs in a worker process,
// which the deadline kills. Below it the first model takes a few
// milliseconds (8x20: 0.5 ms, 24x60-tight's small parts: 0.3 ms), less
// than a process start; one that outlives its time is left to end.
const canonInProcessNonzeros = 5000

// firstModel is the first model of a First job, solved here when it is
// small and by a worker process otherwise; false when none came before
// until.
func (x *exact) firstModel(job *pb.Job, until time.Time) ([]bool, bool) {
	m, _ := x.firstAnswer(job, until)
	return m, m != nil
}

// firstAnswer is firstModel that also says when the job has no model:
// none is true only when the search ended without one, never when time
// or the run ran out.
func (x *exact) firstAnswer(job *pb.Job, until time.Time) (m []bool, none bool) {
	if x.clock().Counted() {
		// Under a work limit only a small job is searched, here and to
		// its end: gophersat cannot be stopped by work.
		if job.Nonzeros() >= canonInProcessNonzeros {
			return nil, false
		}
		var m []bool
		_, got, err := pb.Search(job, func(a pb.Answer) error { m = a.Model; return nil })
		return m, !got && err == nil
	}
	if job.Nonzeros() < canonInProcessNonzeros {
		type answer struct {
			m   []bool
			got bool
		}
		done := make(chan answer, 1)
		go func() {
			var m []bool
			_, got, err := pb.Search(job, func(a pb.Answer) error { m = a.Model; return nil })
			done <- answer{m, got || err != nil}
		}()
		t := time.NewTimer(x.clock().Until(until))
		defer t.Stop()
		select {
		case a := <-done:
			return a.m, !a.got
		case <-t.C:
			return nil, false
		case <-x.run.ctx.Done():
			return nil, false
		}
	}
	out := make(chan pb.Msg, 4)
	run, err := pb.Start(x.run.ctx, x.run.spares, until, job, 0, out)
	if err != nil {
		return nil, false
	}
	defer run.Stop()
	var a pb.Msg
	select {
	case a = <-out:
	case <-run.Done:
		select {
		case a = <-out:
		default:
			return nil, false
		}
	}
	if a.Answer.Done {
		return nil, true
	}
	return a.Answer.Model, false
}

// canonicalJob is the canonical re-solve's job: the presolved level-4
// model with every level at the incumbent's values, the first model of
// the cutting-planes search; its relaxation and objective offset.
func (x *exact) canonicalJob() (*pb.Job, *mip.Relaxation, int64, bool) {
	return x.canonicalJobOf(nil)
}

// canonicalJobOf is canonicalJob on r, level 4's presolved model when
// the caller has it (the job only reads it), else built here.
func (x *exact) canonicalJobOf(r *mip.Relaxation) (*pb.Job, *mip.Relaxation, int64, bool) {
	if r == nil {
		var ok bool
		if r, ok = presolvedRelaxation(x, 3, x.run.deadline); !ok {
			return nil, nil, 0, false
		}
	}
	offset := r.Constant + x.e.Linear.Offsets[3]
	job := pb.JobFor(r, x.obj[3], offset, nil)
	job.First, job.CuttingPlanes = true, true
	return job, r, offset, true
}

func (x *exact) canonicalPlan(r *mip.Relaxation, m []bool) (model.Assignment, bool) {
	a := x.sym.canonical(x.e.DecodeWith(pb.LitValues(r, m)))
	rep := x.chk.Check(a)
	return a, rep.Valid && rep.Objective == x.obj
}

// canonAhead is a canonical job handed to the level-4 workers, and the
// model one of them sent for it.
type canonAhead struct {
	job    *pb.Job
	rel    *mip.Relaxation
	offset int64
	model  []bool
}

// plan is the canonical plan a worker sent, when it is worth the
// incumbent's objective.
func (c *canonAhead) plan(x *exact) (model.Assignment, bool) {
	if c == nil || c.model == nil {
		return model.Assignment{}, false
	}
	return x.canonicalPlan(c.rel, c.model)
}

// canonAheadMaxVars bounds the parts whose level-4 workers carry the
// canonical job: building it is a second presolve.
const canonAheadMaxVars = 20000

// workers says how this process's solves run their PB workers.
func (r *run) workers() Workers {
	if pb.Served() && !r.clock.Counted() {
		return WorkersProcesses
	}
	return WorkersNone
}
