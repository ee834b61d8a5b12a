package pb

import (
	"bufio"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync/atomic"

	pbs "github.com/crillab/gophersat/solver"
	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/internal/gctune"
	"github.com/poolsolve/poolsolve/solver/mip"
)

// The pseudo-boolean worker: one level of one part, as the presolved
// linear model of relax.go, solved by gophersat, whose CDCL propagates
// weight constraints natively instead of through a diagram (clasp's
// approach, and why clasp and minisat+ differ by orders of magnitude on
// these instances). It runs model-improving linear search:
// every better model is streamed back, and when the search ends the last
// one is optimal (or, with a cutoff, none exists below it).
//
// gophersat has no way to stop a search, so the worker is a child
// process, this same executable re-run with pbWorkerEnv set, and a
// deadline kills it. The child only reads stdin and writes stdout. The
// executable answers as a worker only when its main calls ServeIfWorker
// (pbentry.go); importing this package does not make it one.

// Row is Σ W·x[Cols] Op RHS over 0-based columns.
type Row struct {
	Cols []int32
	W    []int64
	Op   int8 // pbLE, pbGE, pbEQ
	RHS  int64
}

const (
	LE int8 = iota
	GE
	EQ
)

// Job is what the worker solves: minimise Obj over NCols 0/1 columns.
type Job struct {
	NCols int
	Rows  []Row
	Obj   []int64 // per column
	// CuttingPlanes learns weight constraints from conflicts instead of
	// clauses: it finds good models far sooner on some pools and proves
	// far later on others, so the portfolio runs both.
	CuttingPlanes bool
	// First stops after the first model (the canonical re-solve).
	First bool
	// Canon, when set, is the canonical re-solve's job (canonicalJob),
	// run by the worker when its own search ends: its last row, the
	// objective bound, gets RHS = the proved optimum + CanonShift (the
	// last model's value, or the cutoff + 1 when there was none).
	// It saves a process start when the proof is the worker's.
	Canon      *Job
	CanonShift int64
	// Phase, when not nil, is each column's value in the incumbent:
	// the search tries it first (newPBSolver), so that its first
	// models keep what the incumbent does well at the later levels.
	// The canonical re-solve has none: its first model is the plan.
	Phase []bool
	// flat, when set, flattens Rows once for every copy of the job
	// (Wire); RowsJob sets it, and the rows must not change after.
	flat *sharedRows
}

// pbLeanNonzeros is the job size from which a worker collects garbage
// sooner (Serve).
const pbLeanNonzeros = 2_000_000

// Nonzeros counts the job's row terms.
func (job *Job) Nonzeros() int {
	n := 0
	for _, r := range job.Rows {
		n += len(r.Cols)
	}
	return n
}

// Answer is one streamed message: a model and its objective, or the
// end of the search (Done), which proves the last model optimal, or,
// with none sent, that no model exists.
type Answer struct {
	Value int64
	Model []bool
	Done  bool
	// Canonical marks the canonical job's model, sent after Done.
	Canonical bool
}

// Serve runs one job from r and streams answers to w. ownProcess is
// set in a worker process, whose garbage collection it may tune.
func Serve(r io.Reader, w io.Writer, ownProcess bool) error {
	var stopWarm atomic.Bool
	warmed := make(chan struct{})
	if ownProcess {
		go func() {
			warmHeap(pbWarmHeap, &stopWarm)
			close(warmed)
		}()
	} else {
		close(warmed)
	}
	job, err := ReadJob(r)
	stopWarm.Store(true)
	<-warmed
	if ownProcess {
		runtime.GC() // the warm pieces are free pages now, kept for the job
	}
	if err != nil {
		return err
	}
	if ownProcess && job.Nonzeros() >= pbLeanNonzeros {
		// A large job's worker keeps its heap within 1.5 times what
		// is live, not twice (gctune's rule would set it back after
		// the next collection, so it is held). On 1024x4000's level 1
		// (5.6 M nonzeros) a worker peaked at 1.09 GB instead of
		// 1.41 GB, its collector taking 10-11% of the CPU instead of
		// 8%. On 256x1000-tight's (0.39 M) the same cost 20% of the
		// time to its proof, for 25 MB.
		gctune.Hold(50)
	}
	bw := bufio.NewWriter(w)
	enc := gob.NewEncoder(bw)
	send := func(a Answer) error {
		if err := enc.Encode(a); err != nil {
			return err
		}
		return bw.Flush()
	}
	// The cutoff row's bound outlives the rows: a worker lets them go
	// once gophersat holds its own copy (search).
	var cutoff int64
	rows := len(job.Rows)
	if rows > 0 {
		cutoff = job.Rows[rows-1].RHS
	}
	last, got, err := search(job, send, ownProcess)
	if err != nil {
		return err
	}
	if job.First {
		if !got {
			// No model at all: a proof, which a killed worker's silence
			// is not (firstAnswer tells them apart).
			return send(Answer{Done: true})
		}
		return nil
	}
	if err := send(Answer{Done: true}); err != nil {
		return err
	}
	if c := job.Canon; c != nil && rows > 0 {
		// The search proved its last model optimal, or, with none,
		// that nothing beats its cutoff: the optimum is cutoff + 1.
		if !got {
			last = cutoff + 1
		}
		c.Rows[len(c.Rows)-1].RHS = last + job.CanonShift
		c.First = true
		_, _, err = Search(c, func(a Answer) error {
			a.Canonical = true
			return send(a)
		})
	}
	return err
}

// pbWarmHeap is the heap a worker process touches while it waits for its
// job. A fresh process pays a page fault for each new page its heap
// grows into, and gophersat allocates as it searches: 24x60-tight's
// level-4 worker took 63 ms in a fresh process and 48 ms on its second
// run in one. With 16 MB touched and freed while it waited, it took 56 ms
// (medians of 6); 32 MB gained no more.
const pbWarmHeap = 16 << 20

// warmPiece is the size of each allocation warmHeap touches: a large
// object, so that each is pages of its own.
const warmPiece = 64 << 10

// warmHeap allocates and touches size bytes of heap, in pieces, keeping
// them all until it returns (freed one by one they would reuse the same
// pages); it returns early once stop is set. The caller's next collection
// frees the pieces, and the runtime keeps their pages for later
// allocations instead of faulting in new ones.
func warmHeap(size int, stop *atomic.Bool) int {
	pieces := make([][]byte, 0, size/warmPiece)
	for len(pieces)*warmPiece < size && !stop.Load() {
		b := make([]byte, warmPiece)
		for k := 0; k < len(b); k += 4096 {
			b[k] = 1
		}
		pieces = append(pieces, b)
	}
	return len(pieces) * warmPiece
}

// gophersatMax bounds the rows gophersat reads as written: it keeps a
// weight constraint's degree (its bound once negative weights are
// flipped) in the low 30 bits of a uint32 that also holds two flags, so a
// larger degree is silently cut down, and the row's models may break it.
// Memory rows counted in 10^-7 GiB on a ~100 GiB domain pass it.
const gophersatMax = 1 << 30

// tooWide names a row of job (or of its canonical re-solve) whose weights
// sum past gophersatMax, the most any degree of the row can then be; ""
// when gophersat reads every row as written.
func (job *Job) tooWide() string {
	for k, r := range job.Rows {
		var sum int64
		for _, w := range r.W {
			if sum += max(w, -w); sum > gophersatMax {
				return fmt.Sprintf("row %d of the PB job has weights summing past 2^30, which gophersat cannot hold", k)
			}
		}
	}
	if job.Canon != nil {
		return job.Canon.tooWide()
	}
	return ""
}

// Search runs job's search, sending each better model (only the first
// when job.First); it returns the last model's value. A job gophersat
// would misread is an error, and nothing is searched.
func Search(job *Job, send func(Answer) error) (last int64, got bool, err error) {
	return search(job, send, false)
}

// search is Search; with release set it drops job.Rows once gophersat
// has read them, for a worker process, whose job is its own. On
// 1024x4000's level 1 the rows and the wire they point into are 170 MB
// of a worker's 650 MB live heap.
func search(job *Job, send func(Answer) error, release bool) (last int64, got bool, err error) {
	if why := job.tooWide(); why != "" {
		return 0, false, errors.New(why)
	}
	s := newPBSolver(job, release)
	toModel := func(model []bool) []bool {
		m := make([]bool, job.NCols)
		for c := range m {
			m[c] = (c < len(model) && model[c]) != job.flipped(c)
		}
		return m
	}
	if job.First {
		// The first model alone: Optimal's first answer is this same
		// Solve's model, and a search run in-process ends here instead
		// of going on to prove it optimal.
		st, err := solveGuarded(s)
		if err != nil || st != pbs.Sat {
			return 0, false, err
		}
		m := toModel(s.Model())
		last = job.value(m)
		return last, true, send(Answer{Value: last, Model: m})
	}
	results := make(chan pbs.Result, 16)
	var failed any
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		defer func() { failed = recover() }()
		s.Optimal(results, nil)
	}()
	for res := range results {
		if res.Status != pbs.Sat {
			continue
		}
		m := toModel(res.Model)
		last, got = job.value(m), true
		if err := send(Answer{Value: last, Model: m}); err != nil {
			return last, got, err
		}
	}
	<-finished
	if failed != nil {
		return last, got, searchFailed(failed)
	}
	return last, got, nil
}

// solveGuarded is s.Solve, with a panic of gophersat's (its cutting
// planes index past its trail on some small jobs) an error.
func solveGuarded(s *pbs.Solver) (st pbs.Status, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = searchFailed(r)
		}
	}()
	return s.Solve(), nil
}

// searchFailed is the error of a search gophersat gave up on: no end,
// so no proof.
func searchFailed(why any) error {
	return fmt.Errorf("pb: the search failed inside gophersat: %v", why)
}

// newPBSolver is gophersat's solver for job's rows, minimising its
// objective (a negative weight is gophersat's positive weight on the
// negated column). With release set the rows are dropped once read,
// before gophersat builds its clauses and watch lists from them.
func newPBSolver(job *Job, release bool) *pbs.Solver {
	var cs []pbs.PBConstr
	for _, row := range job.Rows {
		ls := make([]int, len(row.Cols))
		ws := make([]int, len(row.Cols))
		for k, c := range row.Cols {
			ls[k], ws[k] = job.lit(c), int(row.W[k])
		}
		switch row.Op {
		case LE:
			cs = append(cs, pbs.LtEq(ls, ws, int(row.RHS)))
		case GE:
			cs = append(cs, pbs.GtEq(ls, ws, int(row.RHS)))
		default:
			cs = append(cs, pbs.Eq(ls, ws, int(row.RHS))...)
		}
	}
	if release {
		job.Rows = nil
	}
	pb := pbs.ParsePBConstrs(cs)
	var ol []pbs.Lit
	var ow []int
	for c, w := range job.Obj {
		if w == 0 {
			continue
		}
		l := pbs.IntToLit(int32(job.lit(int32(c))))
		if w < 0 {
			l, w = l.Negation(), -w
		}
		ol, ow = append(ol, l), append(ow, int(w))
	}
	if len(ol) > 0 {
		pb.SetCostFunc(ol, ow)
	}
	s := pbs.New(pb)
	s.CuttingPlanes = job.CuttingPlanes
	return s
}

// flipped says whether column c is gophersat's variable negated: its
// phase is true, and gophersat decides a free variable false first
// (then as it last was).
func (job *Job) flipped(c int) bool { return c < len(job.Phase) && job.Phase[c] }

// lit is column c as a gophersat literal.
func (job *Job) lit(c int32) int {
	if job.flipped(int(c)) {
		return -int(c + 1)
	}
	return int(c + 1)
}

// value is the objective of model m: the left side of the cutoff row.
func (job *Job) value(m []bool) int64 {
	var v int64
	for c, w := range job.Obj {
		if m[c] {
			v += w
		}
	}
	return v
}

// LitValues maps a worker's model back to every variable's value: the
// columns, the relaxation's fixed columns and the assumptions.
func LitValues(r *mip.Relaxation, m []bool) func(z.Lit) bool {
	return func(l z.Lit) bool {
		v := l.Var()
		var b bool
		if c, ok := r.Column(v); ok {
			switch {
			case r.Lo[c] == r.Hi[c]:
				b = r.Lo[c] == 1
			default:
				b = c < len(m) && m[c]
			}
		} else if fv, ok := r.Assumed[v]; ok {
			b = fv
		}
		return b == l.IsPos()
	}
}

// JobFor is level i's presolved model as a worker job, with the
// objective bounded by cutoff and the extra rows given (e.g. reduced-
// cost fixings and knapsack, which hold for every plan <= cutoff).
func JobFor(r *mip.Relaxation, cutoff int64, offset int64, extra []mip.Row) *Job {
	job := RowsJob(r, extra)
	for c := range r.Vars {
		if r.Lo[c] != r.Hi[c] {
			job.Obj[c] = r.C[c]
		}
	}
	cut := Row{Op: LE, RHS: cutoff - offset}
	for c, w := range job.Obj {
		if w != 0 {
			cut.Cols, cut.W = append(cut.Cols, int32(c)), append(cut.W, w)
		}
	}
	job.Rows = append(job.Rows, cut)
	return job
}

// RowsJob is r's rows and extra as a job with no objective: a search
// for any point of r that meets extra.
func RowsJob(r *mip.Relaxation, extra []mip.Row) *Job {
	fixed, free := 0, 0
	for c := range r.Vars {
		if r.Lo[c] == r.Hi[c] {
			fixed++
		}
	}
	for _, rows := range [][]mip.Row{r.Rows, extra} {
		for _, w := range rows {
			for _, c := range w.Idx {
				if r.Lo[c] != r.Hi[c] {
					free++
				}
			}
		}
	}
	// The rows' terms in one array each, and room for JobFor's bound row:
	// on 1024x4000's level 1, rows grown term by term and copied as the
	// row list grew were 0.2 GB of garbage at the planning process's peak.
	cols, ws := make([]int32, 0, free), make([]int64, 0, free)
	job := &Job{NCols: len(r.Vars), Obj: make([]int64, len(r.Vars)), flat: &sharedRows{},
		Rows: make([]Row, 0, len(r.Rows)+len(extra)+fixed+1)}
	conv := func(w mip.Row) Row {
		row := Row{RHS: w.Rhs}
		switch w.Op {
		case encode.LE:
			row.Op = LE
		case encode.GE:
			row.Op = GE
		default:
			row.Op = EQ
		}
		a := len(cols)
		for k, c := range w.Idx {
			if r.Lo[c] == r.Hi[c] {
				row.RHS -= w.Val[k] * r.Lo[c]
				continue
			}
			cols, ws = append(cols, int32(c)), append(ws, w.Val[k])
		}
		if b := len(cols); b > a {
			row.Cols, row.W = cols[a:b:b], ws[a:b:b]
		}
		return row
	}
	for _, w := range r.Rows {
		job.Rows = append(job.Rows, conv(w))
	}
	for _, w := range extra {
		job.Rows = append(job.Rows, conv(w))
	}
	for c := range r.Vars {
		if r.Lo[c] == r.Hi[c] {
			job.Rows = append(job.Rows, Row{Cols: []int32{int32(c)}, W: []int64{1}, Op: EQ, RHS: r.Lo[c]})
		}
	}
	return job
}

// ReadAnswers decodes every answer a worker wrote to r.
func ReadAnswers(r io.Reader) ([]Answer, error) {
	dec := gob.NewDecoder(bufio.NewReader(r))
	var out []Answer
	for {
		var a Answer
		if err := dec.Decode(&a); err == io.EOF {
			return out, nil
		} else if err != nil {
			return out, err
		}
		out = append(out, a)
	}
}
