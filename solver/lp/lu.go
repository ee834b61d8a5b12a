package lp

import (
	"math"
	"slices"
)

// lu is a sparse LU factorisation of a basis matrix B (m × m; rows are
// constraint rows, columns basis positions), found by right-looking
// Gaussian elimination with Markowitz pivot choice and a threshold on
// each pivot's column. Simplex bases are mostly triangular (logical
// columns are unit vectors), so singletons are taken first and the
// Markowitz search only sees the small nucleus left.
//
// Elimination step k pivots on (prow[k], pcol[k]): the rows below are
// updated by row_i −= l_i·row_p (an L eta), and what is left of row p
// is row k of U. So L_K⋯L_1·B = U', upper triangular in pivot order.
type lu struct {
	m          int
	prow, pcol []int
	diag       []float64
	// L etas, one per pivot: rows lIdx[lStart[k]:lStart[k+1]].
	lStart []int
	lIdx   []int
	lVal   []float64
	// U row k without its pivot: positions pivoted after k.
	uStart []int
	uIdx   []int
	uVal   []float64
	// U column of position j: the pivots k' before j's own, and values.
	ucStart []int
	ucIdx   []int
	ucVal   []float64
	kOfPos  []int
	// kOfRow is the pivot of each row, −1 when none (as kOfPos).
	kOfRow []int
	// heap orders the pivots a hypersparse solve has yet to visit.
	heap pivotHeap
	// kA counts the leading pivots on singleton columns: their U
	// columns are empty.
	kA int
	// withL lists the pivots whose L eta is not empty (the logicals'
	// are), ucRow the row of each U column entry's pivot.
	withL []int
	ucRow []int
	// singular lists the basis positions that found no acceptable pivot
	// and the rows left over for them: the caller puts the rows'
	// logicals there.
	singular    []int
	singularRow []int
	// scratch is the elimination's workspace, kept for the next
	// factorisation with the arrays above: a refactor every couple of
	// hundred iterations would otherwise allocate the basis anew.
	scratch *active
}

// luThreshold is the smallest |pivot| relative to its column's largest
// entry; luTiny is an absolute floor below which an entry is no pivot.
const (
	luThreshold = 0.01
	luTiny      = 1e-11
	luDrop      = 1e-14
)

type entry struct {
	j int32
	v float64
}

// factor builds the LU of the m × m matrix whose column p is cols(p),
// given as row indices and values. It reuses the arrays of old (nil:
// none), which is the result and must not be used as it was.
func factor(m int, colIdx func(p int) ([]int, []float64), old *lu) *lu {
	f := old
	if f == nil {
		f = &lu{scratch: &active{}}
	}
	f.reset(m)
	a := f.scratch
	a.reset(m)
	first := f.singletons(a, colIdx)
	f.split(a, colIdx, first)
	f.nucleus(a)
	// Positions without a pivot get the rows without one.
	for i := 0; i < m; i++ {
		if !a.rowDone[i] {
			f.singularRow = append(f.singularRow, i)
		}
	}
	for p := 0; p < m; p++ {
		if !a.colDone[p] {
			f.singular = append(f.singular, p)
		}
	}
	f.finish()
	return f
}

// reset empties f for a factorisation of order m, keeping its arrays.
func (f *lu) reset(m int) {
	f.m, f.kA = m, 0
	f.prow, f.pcol, f.diag = f.prow[:0], f.pcol[:0], f.diag[:0]
	f.lStart, f.lIdx, f.lVal = f.lStart[:0], f.lIdx[:0], f.lVal[:0]
	f.uStart, f.uIdx, f.uVal = f.uStart[:0], f.uIdx[:0], f.uVal[:0]
	f.withL, f.singular, f.singularRow = f.withL[:0], f.singular[:0], f.singularRow[:0]
	f.kOfPos = filled(f.kOfPos, m, -1)
}

// filled is s with length n and every element v, reusing s's array.
func filled[T any](s []T, n int, v T) []T {
	s = resize(s, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// resize is s with length n, reusing s's array when it is large
// enough; the elements are left as they were.
func resize[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n, n+n/8)
	}
	return s[:n]
}

// active is the matrix left to eliminate: its rows (column, value),
// its columns (rows), and what has pivoted.
type active struct {
	rows             [][]entry
	cols             [][]int32
	rowDone, colDone []bool
	cb, rb           *buckets // columns and rows by count
	mark             []int32  // position in the row being updated, +1
	// Arrays kept between factorisations.
	first, uCount, rowCount []int
	rowStore                []entry
	colStore                []int32
	fill                    []int
}

// reset empties a for order m; mark stays zero between uses.
func (a *active) reset(m int) {
	a.rowDone = filled(a.rowDone, m, false)
	a.colDone = filled(a.colDone, m, false)
	a.rows = filled(a.rows, m, nil)
	a.cols = filled(a.cols, m, nil)
	if len(a.mark) != m {
		a.mark = make([]int32, m)
	}
	if a.cb == nil || len(a.cb.next) != m {
		a.cb, a.rb = newBuckets(m), newBuckets(m)
	} else {
		a.cb.reset()
		a.rb.reset()
	}
}

// singletons is phase A: columns with one entry (the logicals, mostly)
// pivot first, each on its own row: no elimination and no fill-in. It
// returns each row's pivot, or −1; their U rows are filled by split.
func (f *lu) singletons(a *active, colIdx func(p int) ([]int, []float64)) []int {
	a.first = filled(a.first, f.m, -1)
	first := a.first
	for p := 0; p < f.m; p++ {
		idx, val := colIdx(p)
		if len(idx) != 1 || a.rowDone[idx[0]] || math.Abs(val[0]) < luTiny {
			continue
		}
		i := idx[0]
		k := len(f.prow)
		f.prow = append(f.prow, i)
		f.pcol = append(f.pcol, p)
		f.diag = append(f.diag, val[0])
		f.kOfPos[p] = k
		first[i] = k
		a.rowDone[i], a.colDone[p] = true, true
	}
	f.kA = len(f.prow)
	return first
}

// split sends the other columns' entries in phase-A rows to U and the
// rest to the active matrix. Counted first, so that U's rows and the
// active rows and columns are slices of a few flat arrays.
func (f *lu) split(a *active, colIdx func(p int) ([]int, []float64), first []int) {
	m, kA := f.m, f.kA
	a.uCount = filled(a.uCount, kA+1, 0)
	a.rowCount = filled(a.rowCount, m, 0)
	uCount, rowCount := a.uCount, a.rowCount
	for p := 0; p < m; p++ {
		if a.colDone[p] {
			continue
		}
		idx, val := colIdx(p)
		for k, i := range idx {
			if val[k] == 0 {
				continue
			}
			if r := first[i]; r >= 0 {
				uCount[r+1]++
			} else {
				rowCount[i]++
			}
		}
	}
	for r := 0; r < kA; r++ {
		uCount[r+1] += uCount[r]
	}
	f.uStart = append(f.uStart[:0], uCount[:kA]...)
	f.lStart = filled(f.lStart, kA, 0)
	nU := uCount[kA]
	f.uIdx = resize(f.uIdx, nU)
	f.uVal = resize(f.uVal, nU)
	var total int
	for _, c := range rowCount {
		total += c
	}
	a.rowStore = resize(a.rowStore, total)
	a.colStore = resize(a.colStore, total)
	rowStore, colStore := a.rowStore, a.colStore
	for i, c := range rowCount {
		a.rows[i] = rowStore[:0:c]
		rowStore = rowStore[c:]
	}
	for p := 0; p < m; p++ {
		if a.colDone[p] {
			continue
		}
		idx, val := colIdx(p)
		var c int
		for k, i := range idx {
			if val[k] != 0 && first[i] < 0 {
				c++
			}
		}
		a.cols[p] = colStore[:0:c]
		colStore = colStore[c:]
		for k, i := range idx {
			if val[k] == 0 {
				continue
			}
			if r := first[i]; r >= 0 {
				t := uCount[r]
				f.uIdx[t], f.uVal[t] = p, val[k]
				uCount[r]++
				continue
			}
			a.rows[i] = append(a.rows[i], entry{int32(p), val[k]})
			a.cols[p] = append(a.cols[p], int32(i))
		}
	}
}

// nucleus is phase B: column singletons, then row singletons, then
// Markowitz on what is left, until every position has pivoted or none
// is acceptable (singular).
func (f *lu) nucleus(a *active) {
	m := f.m
	for p := 0; p < m; p++ {
		if !a.colDone[p] {
			a.cb.insert(p, len(a.cols[p]))
		}
	}
	for i := 0; i < m; i++ {
		if !a.rowDone[i] {
			a.rb.insert(i, len(a.rows[i]))
		}
	}
	for k := f.kA; k < m; k++ {
		pi, pp := -1, -1
		// Column singletons first: no elimination below them.
		for c := a.cb.head[1]; c >= 0 && pi < 0; c = a.cb.next[c] {
			i := int(a.cols[c][0])
			if _, ok := a.acceptable(i, c); ok {
				pi, pp = i, c
			}
		}
		// Row singletons: no fill-in.
		if pi < 0 {
			for r := a.rb.head[1]; r >= 0 && pi < 0; r = a.rb.next[r] {
				p := int(a.rows[r][0].j)
				if _, ok := a.acceptable(r, p); ok {
					pi, pp = r, p
				}
			}
		}
		if pi < 0 {
			pi, pp = a.markowitz()
		}
		if pi < 0 {
			return // singular: factor reports the rest
		}
		f.pivot(k, pi, pp, a)
		a.rowDone[pi], a.colDone[pp] = true, true
	}
}

// find is the place of column p in row i, or −1.
func (a *active) find(i int, p int32) int {
	for t, e := range a.rows[i] {
		if e.j == p {
			return t
		}
	}
	return -1
}

// colMax is the largest magnitude in column p.
func (a *active) colMax(p int) float64 {
	var mx float64
	for _, i := range a.cols[p] {
		if t := a.find(int(i), int32(p)); t >= 0 {
			mx = math.Max(mx, math.Abs(a.rows[i][t].v))
		}
	}
	return mx
}

func (a *active) removeFromCol(p int32, i int32) {
	c := a.cols[p]
	for t, r := range c {
		if r == i {
			c[t] = c[len(c)-1]
			a.cols[p] = c[:len(c)-1]
			return
		}
	}
}

// acceptable says whether (i, p) may pivot: present, not tiny, and within
// the threshold of its column's largest entry.
func (a *active) acceptable(i, p int) (float64, bool) {
	t := a.find(i, int32(p))
	if t < 0 {
		return 0, false
	}
	v := a.rows[i][t].v
	if math.Abs(v) < luTiny {
		return 0, false
	}
	if len(a.cols[p]) > 1 && math.Abs(v) < luThreshold*a.colMax(p) {
		return 0, false
	}
	return v, true
}

// markowitz searches the nucleus for the acceptable entry of least
// (r−1)(c−1), looking at a few columns and rows of the smallest counts.
func (a *active) markowitz() (int, int) {
	rows, cols, cb, rb := a.rows, a.cols, a.cb, a.rb
	bi, bp := -1, -1
	best := math.MaxInt
	seen := 0
	for cnt := 1; cnt < len(cb.head); cnt++ {
		if best <= (cnt-1)*(cnt-1) {
			break
		}
		for c := cb.head[cnt]; c >= 0; c = cb.next[c] {
			for _, i := range cols[c] {
				cost := (len(rows[i]) - 1) * (cnt - 1)
				if cost < best {
					if _, ok := a.acceptable(int(i), c); ok {
						best, bi, bp = cost, int(i), c
					}
				}
			}
			if seen++; seen >= 4 && bi >= 0 {
				return bi, bp
			}
		}
		for r := rb.head[cnt]; r >= 0; r = rb.next[r] {
			for _, e := range rows[r] {
				cost := (cnt - 1) * (len(cols[e.j]) - 1)
				if cost < best {
					if _, ok := a.acceptable(r, int(e.j)); ok {
						best, bi, bp = cost, r, int(e.j)
					}
				}
			}
			if seen++; seen >= 4 && bi >= 0 {
				return bi, bp
			}
		}
	}
	return bi, bp
}

// pivot eliminates column pp below row pi and records step k.
func (f *lu) pivot(k, pi, pp int, a *active) {
	rows, cols, cb, rb, mark, removeFromCol := a.rows, a.cols, a.cb, a.rb, a.mark, a.removeFromCol
	prow := rows[pi]
	var piv float64
	for _, e := range prow {
		if int(e.j) == pp {
			piv = e.v
		}
	}
	f.prow = append(f.prow, pi)
	f.pcol = append(f.pcol, pp)
	f.diag = append(f.diag, piv)
	f.kOfPos[pp] = k
	f.lStart = append(f.lStart, len(f.lIdx))
	f.uStart = append(f.uStart, len(f.uIdx))
	for _, e := range prow {
		if int(e.j) != pp {
			f.uIdx = append(f.uIdx, int(e.j))
			f.uVal = append(f.uVal, e.v)
		}
	}
	// The pivot row leaves the active matrix.
	rb.remove(pi)
	for _, e := range prow {
		if int(e.j) == pp {
			continue
		}
		removeFromCol(e.j, int32(pi))
	}
	rows[pi] = nil
	// Eliminate below.
	for _, i32 := range cols[pp] {
		i := int(i32)
		if i == pi {
			continue
		}
		row := rows[i]
		t := -1
		for s, e := range row {
			if int(e.j) == pp {
				t = s
				break
			}
		}
		l := row[t].v / piv
		row[t] = row[len(row)-1]
		row = row[:len(row)-1]
		f.lIdx = append(f.lIdx, i)
		f.lVal = append(f.lVal, l)
		for s, e := range row {
			mark[e.j] = int32(s + 1)
		}
		for _, e := range prow {
			if int(e.j) == pp {
				continue
			}
			if s := mark[e.j]; s > 0 {
				row[s-1].v -= l * e.v
			} else {
				row = append(row, entry{e.j, -l * e.v})
				mark[e.j] = int32(len(row))
				cols[e.j] = append(cols[e.j], i32)
			}
		}
		// Drop entries that cancelled.
		w := 0
		for _, e := range row {
			mark[e.j] = 0
			if math.Abs(e.v) < luDrop {
				removeFromCol(e.j, i32)
				continue
			}
			row[w] = e
			w++
		}
		rows[i] = row[:w]
		rb.move(i, len(rows[i]))
	}
	cb.remove(pp)
	cols[pp] = nil
	for _, e := range prow {
		if int(e.j) != pp {
			cb.move(int(e.j), len(cols[e.j]))
		}
	}
}

// finish closes the last etas and builds U's columns.
func (f *lu) finish() {
	f.kOfRow = filled(f.kOfRow, f.m, -1)
	for k, i := range f.prow {
		f.kOfRow[i] = k
	}
	f.lStart = append(f.lStart, len(f.lIdx))
	f.uStart = append(f.uStart, len(f.uIdx))
	K := len(f.prow)
	cnt := filled(f.ucStart, f.m+1, 0)
	for _, j := range f.uIdx {
		cnt[j+1]++
	}
	for j := 0; j < f.m; j++ {
		cnt[j+1] += cnt[j]
	}
	f.ucStart = cnt
	f.ucIdx = resize(f.ucIdx, len(f.uIdx))
	f.ucRow = resize(f.ucRow, len(f.uIdx))
	f.ucVal = resize(f.ucVal, len(f.uIdx))
	for k := 0; k < K; k++ {
		if f.lStart[k+1] > f.lStart[k] {
			f.withL = append(f.withL, k)
		}
	}
	f.scratch.fill = append(f.scratch.fill[:0], cnt[:f.m]...)
	fill := f.scratch.fill
	for k := 0; k < K; k++ {
		for t := f.uStart[k]; t < f.uStart[k+1]; t++ {
			j := f.uIdx[t]
			f.ucIdx[fill[j]] = k
			f.ucRow[fill[j]] = f.prow[k]
			f.ucVal[fill[j]] = f.uVal[t]
			fill[j]++
		}
	}
}

// hypersparse is the share of the pivots below which a triangular
// solve visits only the pivots its nonzeros reach, in heap order,
// instead of all of them: most right-hand sides of the simplex touch a
// few dozen of 50,000 rows. A variable so that tests can take either
// path.
var hypersparse = 0.05

// ftran solves B·x = a in place: x holds a by rows on entry and x by
// basis positions on return; work is scratch, left clear.
func (f *lu) ftran(x, work *svec) {
	x.list()
	for _, k := range f.withL {
		v := x.v[f.prow[k]]
		if v == 0 {
			continue
		}
		for t := f.lStart[k]; t < f.lStart[k+1]; t++ {
			i := f.lIdx[t]
			x.v[i] -= f.lVal[t] * v
			x.add(i)
		}
	}
	work.clear()
	// Latest pivot first: pivot k only updates rows of earlier ones.
	f.sweep(x, f.kOfRow, f.prow, true, func(k int) {
		v := x.v[f.prow[k]]
		if v == 0 {
			return
		}
		p := f.pcol[k]
		v /= f.diag[k]
		work.set(p, v)
		for t := f.ucStart[p]; t < f.ucStart[p+1]; t++ {
			i := f.ucRow[t]
			x.v[i] -= f.ucVal[t] * v
			f.reach(x, i, f.kOfRow)
		}
	})
	work.moveTo(x)
}

// btran solves Bᵀ·y = c in place: x holds c by basis positions on entry
// and y by rows on return; work is scratch, left clear.
func (f *lu) btran(x, work *svec) {
	work.clear()
	// Earliest pivot first: U row k only reaches later positions.
	f.sweep(x, f.kOfPos, f.pcol, false, func(k int) {
		v := x.v[f.pcol[k]]
		if v == 0 {
			return
		}
		v /= f.diag[k]
		work.set(f.prow[k], v)
		for t := f.uStart[k]; t < f.uStart[k+1]; t++ {
			j := f.uIdx[t]
			x.v[j] -= f.uVal[t] * v
			f.reach(x, j, f.kOfPos)
		}
	})
	for q := len(f.withL) - 1; q >= 0; q-- {
		k := f.withL[q]
		var s float64
		for t := f.lStart[k]; t < f.lStart[k+1]; t++ {
			s += f.lVal[t] * work.v[f.lIdx[t]]
		}
		if s != 0 {
			i := f.prow[k]
			work.v[i] -= s
			work.add(i)
		}
	}
	work.moveTo(x)
}

// sweep runs the U solve's step over the pivots, latest first when
// backward: over all of them when x is dense, else over those x's
// nonzeros reach (kOf maps a place of x to its pivot), the nucleus's in
// heap order as step reaches them (reach), and the singleton pivots,
// which update nothing and which no step reaches, apart: after the
// others when backward, before them otherwise. at[k] is the place of x
// that pivot k's step reads: a zero there makes the step do nothing.
func (f *lu) sweep(x *svec, kOf, at []int, backward bool, step func(k int)) {
	K := len(f.prow)
	list := x.list()
	if float64(len(list)) >= hypersparse*float64(K) {
		// Dense: most pivots meet a zero, tested here rather than in
		// step (a call a pivot was most of a solve on 256x1000-tight,
		// whose vectors turn dense after its first cuts).
		x.dense()
		if backward {
			for k := K - 1; k >= 0; k-- {
				if x.v[at[k]] != 0 {
					step(k)
				}
			}
		} else {
			for k := 0; k < K; k++ {
				if x.v[at[k]] != 0 {
					step(k)
				}
			}
		}
		return
	}
	singletons := func(list []int) {
		for _, i := range list {
			if k := kOf[i]; k >= 0 && k < f.kA {
				step(k)
			}
		}
	}
	h := &f.heap
	h.reset(backward)
	for _, i := range list {
		if k := kOf[i]; k >= f.kA {
			h.push(k)
		}
	}
	if !backward {
		singletons(slices.Clone(list))
	}
	for h.len() > 0 {
		step(h.pop())
	}
	if backward {
		singletons(x.list())
	}
}

// reach lists place i of x, and queues its pivot for sweep when i is
// new to the list and the pivot is the nucleus's.
func (f *lu) reach(x *svec, i int, kOf []int) {
	if x.full {
		return
	}
	if k := kOf[i]; k >= f.kA && x.mark[i] != x.gen {
		f.heap.push(k)
	}
	x.add(i)
}

// pivotHeap is a binary heap of pivot indices, largest or smallest
// first. The solves push a pivot once, when its row or position first
// joins the vector's list; an index below 0 (no pivot) is left out.
type pivotHeap struct {
	k   []int
	max bool
}

func (h *pivotHeap) reset(max bool) { h.k, h.max = h.k[:0], max }

func (h *pivotHeap) len() int { return len(h.k) }

func (h *pivotHeap) before(a, b int) bool {
	if h.max {
		return h.k[a] > h.k[b]
	}
	return h.k[a] < h.k[b]
}

func (h *pivotHeap) push(k int) {
	if k < 0 {
		return
	}
	h.k = append(h.k, k)
	for c := len(h.k) - 1; c > 0; {
		p := (c - 1) / 2
		if !h.before(c, p) {
			break
		}
		h.k[c], h.k[p] = h.k[p], h.k[c]
		c = p
	}
}

func (h *pivotHeap) pop() int {
	top := h.k[0]
	last := len(h.k) - 1
	h.k[0] = h.k[last]
	h.k = h.k[:last]
	for p := 0; ; {
		c := 2*p + 1
		if c >= last {
			break
		}
		if c+1 < last && h.before(c+1, c) {
			c++
		}
		if !h.before(c, p) {
			break
		}
		h.k[c], h.k[p] = h.k[p], h.k[c]
		p = c
	}
	return top
}

// buckets are doubly linked lists of items by count.
type buckets struct {
	head       []int
	next, prev []int
	count      []int
}

func newBuckets(n int) *buckets {
	b := &buckets{head: make([]int, n+2), next: make([]int, n), prev: make([]int, n), count: make([]int, n)}
	b.reset()
	return b
}

// reset empties every list.
func (b *buckets) reset() {
	for i := range b.head {
		b.head[i] = -1
	}
	for i := range b.count {
		b.count[i] = -1
	}
}

func (b *buckets) insert(i, c int) {
	if c >= len(b.head) {
		c = len(b.head) - 1
	}
	b.count[i] = c
	b.prev[i] = -1
	b.next[i] = b.head[c]
	if b.head[c] >= 0 {
		b.prev[b.head[c]] = i
	}
	b.head[c] = i
}

func (b *buckets) remove(i int) {
	c := b.count[i]
	if c < 0 {
		return
	}
	if b.prev[i] >= 0 {
		b.next[b.prev[i]] = b.next[i]
	} else {
		b.head[c] = b.next[i]
	}
	if b.next[i] >= 0 {
		b.prev[b.next[i]] = b.prev[i]
	}
	b.count[i] = -1
}

func (b *buckets) move(i, c int) {
	if b.count[i] < 0 {
		return
	}
	b.remove(i)
	b.insert(i, c)
}
