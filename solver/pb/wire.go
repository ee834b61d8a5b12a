package pb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
)

// pbWire is a pbJob as it travels to a worker: its rows flattened into a
// few long slices. As 57,000 row structs (256x1000's level 2), gob's
// decoding alone took a worker 93 ms.
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
	w, err := readWire(newWireReader(r), 0)
	if err != nil {
		return nil, err
	}
	return w.job()
}

// NewJobWriter returns a function that sends a job to w and closes it,
// as startPB does to a worker's stdin.
func NewJobWriter(w io.WriteCloser) func(*Job) error {
	return func(job *Job) error {
		if err := WriteJob(w, job); err != nil {
			return err
		}
		return w.Close()
	}
}

// WriteJob writes job to w as ReadJob reads it.
func WriteJob(w io.Writer, job *Job) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	if err := writeWire(bw, job.Wire()); err != nil {
		return err
	}
	return bw.Flush()
}

// A job travels as varints, written as they are made and read as they
// come: gob builds each message whole in memory, growing its buffer by
// copies, and reads it whole before decoding. On 1024x4000's level 1
// (5.6 M nonzeros) that was 2.9 s of the planning process's CPU while the
// workers waited, and the worker held the message beside the job.
//
// The layout: wireMagic; NCols; a flags byte (wireCuts, wireFirst,
// wireCanon); CanonShift; then Start, Cols, W, Op, RHS, Obj and Phase,
// each as its length and its elements; then the canonical job, when
// flagged, in the same layout without the magic.
const wireMagic = "poolsolve-pb-job-1\n"

const (
	wireCuts = 1 << iota
	wireFirst
	wireCanon
)

// maxWireDepth bounds the canonical jobs nested in a job: one is all the
// planner sends.
const maxWireDepth = 2

type wireWriter struct {
	w   *bufio.Writer
	buf [binary.MaxVarintLen64]byte
	err error
}

func (ww *wireWriter) uint(v uint64) {
	if ww.err == nil {
		_, ww.err = ww.w.Write(binary.AppendUvarint(ww.buf[:0], v))
	}
}

func (ww *wireWriter) int(v int64) {
	if ww.err == nil {
		_, ww.err = ww.w.Write(binary.AppendVarint(ww.buf[:0], v))
	}
}

func writeWire(w *bufio.Writer, job *pbWire) error {
	if _, err := w.WriteString(wireMagic); err != nil {
		return err
	}
	ww := &wireWriter{w: w}
	ww.job(job)
	return ww.err
}

func (ww *wireWriter) job(job *pbWire) {
	ww.uint(uint64(job.NCols))
	var flags byte
	if job.Cuts {
		flags |= wireCuts
	}
	if job.First {
		flags |= wireFirst
	}
	if job.Canon != nil {
		flags |= wireCanon
	}
	ww.uint(uint64(flags))
	ww.int(job.CanonShift)
	writeInts(ww, job.Start)
	writeInts(ww, job.Cols)
	writeInts(ww, job.W)
	writeInts(ww, job.Op)
	writeInts(ww, job.RHS)
	writeInts(ww, job.Obj)
	phase := make([]int8, len(job.Phase))
	for k, p := range job.Phase {
		if p {
			phase[k] = 1
		}
	}
	writeInts(ww, phase)
	if job.Canon != nil {
		ww.job(job.Canon)
	}
}

func writeInts[T int8 | int32 | int64](ww *wireWriter, xs []T) {
	ww.uint(uint64(len(xs)))
	// Encoded a block at a time, not a Write per element.
	var block [4096]byte
	out := block[:0]
	for _, x := range xs {
		if len(out) > len(block)-binary.MaxVarintLen64 {
			ww.write(out)
			out = block[:0]
		}
		out = binary.AppendVarint(out, int64(x))
	}
	ww.write(out)
}

func (ww *wireWriter) write(b []byte) {
	if ww.err == nil {
		_, ww.err = ww.w.Write(b)
	}
}

func readWire(rd *wireReader, depth int) (*pbWire, error) {
	if depth == 0 {
		if !rd.bytes(wireMagic) {
			return nil, errors.New("pb job: not a job (no header)")
		}
	}
	if depth > maxWireDepth {
		return nil, fmt.Errorf("pb job: canonical jobs nested past %d", maxWireDepth)
	}
	w := &pbWire{}
	ncols := rd.uint()
	if ncols > math.MaxInt32 {
		return nil, fmt.Errorf("pb job: %d columns", ncols)
	}
	w.NCols = int(ncols)
	flags := rd.uint()
	w.Cuts, w.First = flags&wireCuts != 0, flags&wireFirst != 0
	w.CanonShift = rd.int()
	w.Start = readInts[int32](rd, "row starts")
	w.Cols = readInts[int32](rd, "columns")
	w.W = readInts[int64](rd, "weights")
	w.Op = readInts[int8](rd, "operators")
	w.RHS = readInts[int64](rd, "right-hand sides")
	w.Obj = readInts[int64](rd, "objective terms")
	if phase := readInts[int8](rd, "phases"); len(phase) > 0 {
		w.Phase = make([]bool, len(phase))
		for k, b := range phase {
			w.Phase[k] = b != 0
		}
	}
	if rd.err != nil {
		return nil, rd.err
	}
	if flags&wireCanon != 0 {
		c, err := readWire(rd, depth+1)
		if err != nil {
			return nil, err
		}
		w.Canon = c
	}
	return w, nil
}

// wireChunk bounds what a length read from the wire allocates ahead, so
// that a garbled length fails when the input ends, having allocated
// little more than what came.
const wireChunk = 1 << 16

// wireReader decodes varints from its own buffer: through
// io.ByteReader, a byte at a time, reading a job took 2.6 times as long
// as gob's decoding.
type wireReader struct {
	r        io.Reader
	buf      []byte
	pos, end int
	eof      bool
	err      error
}

func newWireReader(r io.Reader) *wireReader {
	return &wireReader{r: r, buf: make([]byte, 64<<10)}
}

// fill makes at least want bytes available unless the input ends first.
func (rd *wireReader) fill(want int) {
	if rd.end-rd.pos >= want || rd.eof {
		return
	}
	rd.end = copy(rd.buf, rd.buf[rd.pos:rd.end])
	rd.pos = 0
	for rd.end < want && !rd.eof {
		n, err := rd.r.Read(rd.buf[rd.end:])
		rd.end += n
		if err == io.EOF {
			rd.eof = true
		} else if err != nil {
			rd.fail(err)
			rd.eof = true
		}
	}
}

func (rd *wireReader) fail(err error) {
	if rd.err == nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		rd.err = fmt.Errorf("pb job: %w", err)
	}
}

// bytes reads len(s) bytes and reports whether they are s.
func (rd *wireReader) bytes(s string) bool {
	rd.fill(len(s))
	if rd.end-rd.pos < len(s) || string(rd.buf[rd.pos:rd.pos+len(s)]) != s {
		return false
	}
	rd.pos += len(s)
	return true
}

func (rd *wireReader) uint() uint64 {
	if rd.err != nil {
		return 0
	}
	rd.fill(binary.MaxVarintLen64)
	v, n := binary.Uvarint(rd.buf[rd.pos:rd.end])
	if n <= 0 {
		if n == 0 {
			rd.fail(io.EOF)
		} else {
			rd.fail(errors.New("varint overflows 64 bits"))
		}
		return 0
	}
	rd.pos += n
	return v
}

func (rd *wireReader) int() int64 {
	u := rd.uint()
	return int64(u>>1) ^ -int64(u&1) // as binary.Varint
}

func (rd *wireReader) len(what string) int {
	n := rd.uint()
	if n > math.MaxInt32 {
		rd.fail(fmt.Errorf("%d %s", n, what))
		return 0
	}
	return int(n)
}

func readInts[T int8 | int32 | int64](rd *wireReader, what string) []T {
	n := rd.len(what)
	if rd.err != nil || n == 0 {
		return nil
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	var zero T
	switch any(zero).(type) {
	case int8:
		lo, hi = math.MinInt8, math.MaxInt8
	case int32:
		lo, hi = math.MinInt32, math.MaxInt32
	}
	// A list up to wireExact elements is allocated at its length; a
	// longer one is read in chunks and joined once it is whole, so that
	// a garbled length fails when the input ends, having cost little
	// more than what came.
	var chunks [][]T
	first := n
	if n > wireExact {
		first = wireChunk
	}
	xs := make([]T, 0, first)
	for read := 0; read < n; {
		if len(xs) == cap(xs) {
			chunks = append(chunks, xs)
			xs = make([]T, 0, min(n-read, wireChunk))
		}
		rd.fill(binary.MaxVarintLen64)
		// Decode what the buffer holds without a call per element.
		buf := rd.buf[rd.pos:rd.end]
		p := 0
		for read < n && len(xs) < cap(xs) && len(buf)-p >= binary.MaxVarintLen64 {
			u, m := binary.Uvarint(buf[p:])
			if m <= 0 {
				break
			}
			p += m
			v := int64(u>>1) ^ -int64(u&1)
			if v < lo || v > hi {
				rd.pos += p
				rd.fail(fmt.Errorf("%s: %d out of range", what, v))
				return nil
			}
			xs = append(xs, T(v))
			read++
		}
		rd.pos += p
		if read < n && len(xs) < cap(xs) {
			// Near the end of the input, or a bad varint: one at a time.
			v := rd.int()
			if rd.err != nil {
				return nil
			}
			if v < lo || v > hi {
				rd.fail(fmt.Errorf("%s: %d out of range", what, v))
				return nil
			}
			xs = append(xs, T(v))
			read++
		}
	}
	if chunks == nil {
		return xs
	}
	return append(slices.Concat(chunks...), xs...)
}

// wireExact is the longest list allocated at the length the wire gives
// (8 MB of int64s): every list of a 256-node job.
const wireExact = 1 << 20
