package pb

import (
	"bufio"
	"encoding/gob"
	"fmt"
	"io"
	"sync"
)

// pbWire is a pbJob as it travels to a worker: its rows flattened into a
// few long slices, which gob reads in tight loops. As 57,000 row structs
// (256x1000's level 2), the decoding alone took a worker 93 ms.
type pbWire struct {
	NCols      int
	Start      []int32 // row k's terms are Cols/W[Start[k]:Start[k+1]]
	Cols       []int32
	W          []int64
	Op         []int8
	RHS        []int64
	Obj        []int64
	Cuts       bool // CuttingPlanes
	First      bool
	Canon      *pbWire
	CanonShift int64
	Phase      []bool
}

// Wire flattens job. A job made by RowsJob flattens its rows once, for
// every copy of it: the two workers of a level share them (on 1024x4000's
// level 1, 90 MB each).
func (job *Job) Wire() *pbWire {
	rows := job.flat.of(job.Rows)
	w := &pbWire{NCols: job.NCols, Obj: job.Obj, Cuts: job.CuttingPlanes, First: job.First, CanonShift: job.CanonShift, Phase: job.Phase,
		Start: rows.start, Cols: rows.cols, W: rows.w, Op: rows.op, RHS: rows.rhs}
	if job.Canon != nil {
		w.Canon = job.Canon.Wire()
	}
	return w
}

// flatRows are a job's rows as the wire carries them.
type flatRows struct {
	start, cols []int32
	w, rhs      []int64
	op          []int8
}

// sharedRows holds a job's rows flattened, once, for the copies of the
// job that share its rows. A copy given rows of its own (canonicalPB's,
// with another bound) is flattened apart.
type sharedRows struct {
	mu   sync.Mutex
	key  *Row // &rows[0] of the rows flattened
	n    int
	rows *flatRows
}

// of is rows flattened: s's when they are the rows s holds, or s is nil.
func (s *sharedRows) of(rows []Row) *flatRows {
	if s == nil || len(rows) == 0 {
		return flatten(rows)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.rows == nil:
		s.key, s.n, s.rows = &rows[0], len(rows), flatten(rows)
	case s.key != &rows[0] || s.n != len(rows):
		return flatten(rows)
	}
	return s.rows
}

func flatten(rows []Row) *flatRows {
	n := 0
	for _, r := range rows {
		n += len(r.Cols)
	}
	f := &flatRows{start: make([]int32, 0, len(rows)+1), cols: make([]int32, 0, n), w: make([]int64, 0, n),
		op: make([]int8, 0, len(rows)), rhs: make([]int64, 0, len(rows))}
	for _, r := range rows {
		f.start = append(f.start, int32(len(f.cols)))
		f.cols, f.w = append(f.cols, r.Cols...), append(f.w, r.W...)
		f.op, f.rhs = append(f.op, r.Op), append(f.rhs, r.RHS)
	}
	f.start = append(f.start, int32(len(f.cols)))
	return f
}

// job rebuilds the job, checking every index: a worker must fail on a
// garbled job, never panic.
func (w *pbWire) job() (*Job, error) {
	m := len(w.Op)
	switch {
	case w.NCols < 0 || len(w.Obj) != w.NCols:
		return nil, fmt.Errorf("pb job: %d columns, %d objective terms", w.NCols, len(w.Obj))
	case len(w.RHS) != m || len(w.Start) != m+1 || len(w.Cols) != len(w.W):
		return nil, fmt.Errorf("pb job: %d rows, %d right-hand sides, %d row starts, %d columns and %d weights",
			m, len(w.RHS), len(w.Start), len(w.Cols), len(w.W))
	case len(w.Phase) != 0 && len(w.Phase) != w.NCols:
		return nil, fmt.Errorf("pb job: %d columns, %d phases", w.NCols, len(w.Phase))
	case w.Start[0] != 0 || int(w.Start[m]) != len(w.Cols):
		return nil, fmt.Errorf("pb job: row starts from %d to %d over %d terms", w.Start[0], w.Start[m], len(w.Cols))
	}
	job := &Job{NCols: w.NCols, Obj: w.Obj, Rows: make([]Row, m), CuttingPlanes: w.Cuts, First: w.First, CanonShift: w.CanonShift, Phase: w.Phase}
	for k := range job.Rows {
		a, b := w.Start[k], w.Start[k+1]
		if a > b || int(b) > len(w.Cols) {
			return nil, fmt.Errorf("pb job: row %d starts at %d and ends at %d of %d terms", k, a, b, len(w.Cols))
		}
		if op := w.Op[k]; op != LE && op != GE && op != EQ {
			return nil, fmt.Errorf("pb job: row %d has operator %d", k, op)
		}
		for _, c := range w.Cols[a:b] {
			if c < 0 || int(c) >= w.NCols {
				return nil, fmt.Errorf("pb job: row %d names column %d of %d", k, c, w.NCols)
			}
		}
		job.Rows[k] = Row{Cols: w.Cols[a:b:b], W: w.W[a:b:b], Op: w.Op[k], RHS: w.RHS[k]}
	}
	if w.Canon != nil {
		c, err := w.Canon.job()
		if err != nil {
			return nil, fmt.Errorf("canonical %w", err)
		}
		job.Canon = c
	}
	return job, nil
}

// ReadJob reads one job, as a worker does from its stdin.
func ReadJob(r io.Reader) (*Job, error) {
	var w pbWire
	if err := gob.NewDecoder(bufio.NewReader(r)).Decode(&w); err != nil {
		return nil, err
	}
	return w.job()
}

// NewJobWriter returns a function that sends a job to w and closes it,
// as startPB does to a worker's stdin.
func NewJobWriter(w io.WriteCloser) func(*Job) error {
	return func(job *Job) error {
		bw := bufio.NewWriter(w)
		if err := gob.NewEncoder(bw).Encode(job.Wire()); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		return w.Close()
	}
}
