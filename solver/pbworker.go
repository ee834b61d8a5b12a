package solver

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"

	pbs "github.com/crillab/gophersat/solver"
	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
)

// The pseudo-boolean worker: one level of one part, as the presolved
// linear model of relax.go, solved by gophersat, whose CDCL propagates
// weight constraints natively instead of through a diagram (clasp's
// approach, and why clasp and minisat+ differ by orders of magnitude on
// these instances, solver-notes). It runs model-improving linear search:
// every better model is streamed back, and when the search ends the last
// one is optimal (or, with a cutoff, none exists below it).
//
// gophersat has no way to stop a search, so the worker is a child
// process, this same executable re-run with pbWorkerEnv set (any binary
// that links package solver, tests included, answers it in init), and a
// deadline kills it. The child only reads stdin and writes stdout.

// pbWorkerEnv, set to "1", turns the process into a worker.
const pbWorkerEnv = "POOLSOLVE_PB_WORKER"

func init() {
	if os.Getenv(pbWorkerEnv) == "1" {
		code := 0
		if err := pbServe(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "poolsolve pb worker:", err)
			code = 1
		}
		os.Exit(code)
	}
}

// pbRow is Σ W·x[Cols] Op RHS over 0-based columns.
type pbRow struct {
	Cols []int32
	W    []int64
	Op   int8 // pbLE, pbGE, pbEQ
	RHS  int64
}

const (
	pbLE int8 = iota
	pbGE
	pbEQ
)

// pbJob is what the worker solves: minimise Obj over NCols 0/1 columns.
type pbJob struct {
	NCols int
	Rows  []pbRow
	Obj   []int64 // per column
}

// pbAnswer is one streamed message: a model and its objective, or the
// end of the search (Done), which proves the last model optimal, or,
// with none sent, that no model exists.
type pbAnswer struct {
	Value int64
	Model []bool
	Done  bool
}

// pbServe runs one job from r and streams answers to w.
func pbServe(r io.Reader, w io.Writer) error {
	var job pbJob
	if err := gob.NewDecoder(bufio.NewReader(r)).Decode(&job); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	enc := gob.NewEncoder(bw)
	var cs []pbs.PBConstr
	lits := func(row pbRow) ([]int, []int) {
		ls := make([]int, len(row.Cols))
		ws := make([]int, len(row.Cols))
		for k, c := range row.Cols {
			ls[k], ws[k] = int(c)+1, int(row.W[k])
		}
		return ls, ws
	}
	for _, row := range job.Rows {
		ls, ws := lits(row)
		switch row.Op {
		case pbLE:
			cs = append(cs, pbs.LtEq(ls, ws, int(row.RHS)))
		case pbGE:
			cs = append(cs, pbs.GtEq(ls, ws, int(row.RHS)))
		default:
			cs = append(cs, pbs.Eq(ls, ws, int(row.RHS))...)
		}
	}
	pb := pbs.ParsePBConstrs(cs)
	var ol []pbs.Lit
	var ow []int
	for c, w := range job.Obj {
		if w == 0 {
			continue
		}
		l := pbs.IntToLit(int32(c + 1))
		if w < 0 {
			l, w = l.Negation(), -w
		}
		ol, ow = append(ol, l), append(ow, int(w))
	}
	var constant int64
	for _, w := range job.Obj {
		if w < 0 {
			constant += w
		}
	}
	if len(ol) > 0 {
		pb.SetCostFunc(ol, ow)
	}
	s := pbs.New(pb)
	results := make(chan pbs.Result, 16)
	go s.Optimal(results, nil)
	for res := range results {
		if res.Status != pbs.Sat {
			continue
		}
		m := make([]bool, job.NCols)
		for c := range m {
			m[c] = c < len(res.Model) && res.Model[c]
		}
		if err := enc.Encode(pbAnswer{Value: int64(res.Weight) + constant, Model: m}); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
	}
	if err := enc.Encode(pbAnswer{Done: true}); err != nil {
		return err
	}
	return bw.Flush()
}

// pbRun is a running worker.
type pbRun struct {
	answers chan pbAnswer
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	err     error
}

// errNoWorker is returned when the executable cannot be re-run.
var errNoWorker = errors.New("solver: pseudo-boolean worker unavailable")

// startPB starts a worker on job; it is killed at deadline or by stop.
// Answers arrive on answers, which is closed when the worker ends.
func startPB(ctx context.Context, deadline time.Time, job *pbJob) (*pbRun, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errNoWorker, err)
	}
	cctx, cancel := context.WithDeadline(ctx, deadline)
	cmd := exec.CommandContext(cctx, exe)
	cmd.Env = append(os.Environ(), pbWorkerEnv+"=1")
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, fmt.Errorf("%w: %v", errNoWorker, err)
	}
	pr := &pbRun{answers: make(chan pbAnswer, 64), cancel: cancel}
	pr.wg.Add(1)
	go func() {
		defer pr.wg.Done()
		defer close(pr.answers)
		go func() {
			bw := bufio.NewWriter(in)
			if gob.NewEncoder(bw).Encode(job) == nil {
				_ = bw.Flush()
			}
			_ = in.Close()
		}()
		dec := gob.NewDecoder(bufio.NewReader(out))
		for {
			var a pbAnswer
			if err := dec.Decode(&a); err != nil {
				break
			}
			pr.answers <- a
			if a.Done {
				break
			}
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	return pr, nil
}

// stop kills the worker and waits for it.
func (pr *pbRun) stop() {
	pr.cancel()
	for range pr.answers {
	}
	pr.wg.Wait()
}

// pbVal maps a worker's model back to every variable's value: the
// columns, the relaxation's fixed columns and the assumptions.
func pbVal(r *relaxation, m []bool) func(z.Lit) bool {
	return func(l z.Lit) bool {
		v := l.Var()
		var b bool
		if c, ok := r.col[v]; ok {
			switch {
			case r.lo[c] == r.hi[c]:
				b = r.lo[c] == 1
			default:
				b = c < len(m) && m[c]
			}
		} else if fv, ok := r.assumed[v]; ok {
			b = fv
		}
		return b == l.IsPos()
	}
}

// pbJobFor is level i's presolved model as a worker job, with the
// objective bounded by cutoff and the extra rows given (e.g. reduced-
// cost fixings and knapsack, which hold for every plan <= cutoff).
func pbJobFor(r *relaxation, cutoff int64, offset int64, extra []irow) *pbJob {
	job := &pbJob{NCols: len(r.vars), Obj: make([]int64, len(r.vars))}
	conv := func(w irow) pbRow {
		row := pbRow{RHS: w.rhs}
		switch w.op {
		case encode.LE:
			row.Op = pbLE
		case encode.GE:
			row.Op = pbGE
		default:
			row.Op = pbEQ
		}
		for k, c := range w.idx {
			if r.lo[c] == r.hi[c] {
				row.RHS -= w.val[k] * r.lo[c]
				continue
			}
			row.Cols = append(row.Cols, int32(c))
			row.W = append(row.W, w.val[k])
		}
		return row
	}
	for _, w := range r.rows {
		job.Rows = append(job.Rows, conv(w))
	}
	for _, w := range extra {
		job.Rows = append(job.Rows, conv(w))
	}
	for c := range r.vars {
		if r.lo[c] != r.hi[c] {
			job.Obj[c] = r.c[c]
		} else {
			job.Rows = append(job.Rows, pbRow{Cols: []int32{int32(c)}, W: []int64{1}, Op: pbEQ, RHS: r.lo[c]})
		}
	}
	cut := pbRow{Op: pbLE, RHS: cutoff - offset}
	for c, w := range job.Obj {
		if w != 0 {
			cut.Cols, cut.W = append(cut.Cols, int32(c)), append(cut.W, w)
		}
	}
	job.Rows = append(job.Rows, cut)
	return job
}

// pbLevel is a worker searching one level below a cutoff while the gini
// search runs; nil when none runs.
type pbLevel struct {
	run    *pbRun
	rel    *relaxation
	cutoff int64 // the worker's bound on the level, offset included
	offset int64
	last   int64 // the level's value in the last model, when got
	got    bool
}

// startPB starts a worker on level 4 below cutoff, with the reduced-cost
// fixings and knapsack of sr; nil when it cannot start.
func (x *exact) startPB(sr *strongResult, cutoff int64, end time.Time) *pbLevel {
	fixes, knap, ok := sr.fixesFor(cutoff)
	if !ok {
		return nil
	}
	job := pbJobFor(sr.rel, cutoff, sr.offset, sr.asRows(fixes, knap))
	run, err := startPB(x.run.ctx, end, job)
	if err != nil {
		return nil
	}
	return &pbLevel{run: run, rel: sr.rel, cutoff: cutoff, offset: sr.offset}
}

func (w *pbLevel) alive() bool { return w != nil && w.run != nil }

func (w *pbLevel) stop() {
	if w.alive() {
		w.run.stop()
		w.run = nil
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

// pollPB takes the worker's answers (waiting for them until end when
// block): each model is decoded and offered like a SAT model, and the end
// of the search proves the last model's value, or the cutoff + 1 when
// none came. Both bounds are checked against what gini found meanwhile:
// a plan below a proved value is a bug (ErrMismatch).
func (x *exact) pollPB(w *pbLevel, end time.Time, block bool, lb, ub *int64, src *string) error {
	for w.alive() {
		var a pbAnswer
		var ok bool
		if block {
			t := time.NewTimer(max(time.Until(end), 0))
			select {
			case a, ok = <-w.run.answers:
			case <-t.C:
				return nil
			}
			t.Stop()
		} else {
			select {
			case a, ok = <-w.run.answers:
			default:
				return nil
			}
		}
		if !ok { // killed at the deadline, or failed
			w.stop()
			return nil
		}
		if a.Done {
			w.stop()
			proved := w.cutoff + 1
			if w.got {
				proved = w.last
			}
			if x.obj[3] < proved {
				return fmt.Errorf("%w: the PB worker proved level 4 >= %d, a plan has %d", ErrMismatch, proved, x.obj[3])
			}
			*lb, *src = max(*lb, proved), "pb"
			*ub = x.obj[3]
			return nil
		}
		plan := x.sym.canonical(x.e.DecodeWith(pbVal(w.rel, a.Model)))
		rep := x.chk.Check(plan)
		if !rep.Valid {
			return fmt.Errorf("%w: PB model invalid: %v", ErrMismatch, rep.Err())
		}
		if v := a.Value + w.offset; rep.Objective[3] > v {
			return fmt.Errorf("%w: PB model of level 4 = %d, eval says %d", ErrMismatch, v, rep.Objective[3])
		}
		w.last, w.got = a.Value+w.offset, true
		if _, err := x.accept(plan, true); err != nil {
			return err
		}
		*ub = x.obj[3]
	}
	return nil
}
