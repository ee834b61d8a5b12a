package mip

import (
	"container/heap"
	"sort"

	"github.com/poolsolve/poolsolve/encode"
)

// Probing (Savelsbergh 1994; CBC's CglProbing): a column is set to 1,
// then to 0, and the rows are propagated over the box; each column the
// propagation fixes is an implication of the setting, and each
// implication is a two-column cut valid for every integer point (x_j = 1
// forces x_k = 0 gives x_j + x_k <= 1, and so on). A setting whose
// propagation empties a row cannot hold in any plan, which fixes the
// column the other way. All of it is integer reasoning over the rows,
// so the cuts are exact. They tie the fractional columns of the LP point
// the way a route ties its latency and residency columns.

// prober propagates over a fixed set of <= and = rows.
type prober struct {
	rows []Row
	// colRows[j] lists the rows with column j.
	colRows [][]int32
	lo, hi  []int64
	trail   []int32
	queued  []bool
	queue   []int32
	// visited lists the rows the last probe looked at.
	visited []int32
	seen    []bool
	// base is the box probes start from: the root's, with every fixing
	// probing found so far.
	baseLo, baseHi []int64
	// maxAbs[ri] is row ri's largest |coefficient|: a row whose least
	// activity is that far below its bound fixes no column, unscanned.
	maxAbs []int64
	// colVals[j] are column j's coefficients in the rows colRows[j];
	// minAct and maxAct are each row's least and largest Σ a·x over the
	// box, kept as the box changes instead of summed at each visit.
	colVals        [][]int64
	minAct, maxAct []int64
}

func newProber(rows []Row, lo, hi []int64) *prober {
	n := len(lo)
	p := &prober{rows: rows, colRows: make([][]int32, n), lo: append([]int64(nil), lo...), hi: append([]int64(nil), hi...),
		queued: make([]bool, len(rows)), seen: make([]bool, len(rows)),
		baseLo: append([]int64(nil), lo...), baseHi: append([]int64(nil), hi...)}
	p.maxAbs = make([]int64, len(rows))
	p.colVals = make([][]int64, n)
	p.minAct, p.maxAct = make([]int64, len(rows)), make([]int64, len(rows))
	// Each column's lists are cut from two arrays, sized by a count
	// first: appending to 43,000 lists a round on 256x1000 cost more
	// than the probes.
	count := make([]int, n+1)
	for _, w := range rows {
		for _, j := range w.Idx {
			count[j+1]++
		}
	}
	for j := range n {
		count[j+1] += count[j]
	}
	allRows, allVals := make([]int32, count[n]), make([]int64, count[n])
	for j := range n {
		p.colRows[j] = allRows[count[j]:count[j]:count[j+1]]
		p.colVals[j] = allVals[count[j]:count[j]:count[j+1]]
	}
	for ri, w := range rows {
		for k, j := range w.Idx {
			a := w.Val[k]
			p.colRows[j] = append(p.colRows[j], int32(ri))
			p.colVals[j] = append(p.colVals[j], a)
			p.maxAbs[ri] = max(p.maxAbs[ri], a, -a)
			if a > 0 {
				p.minAct[ri] += a * lo[j]
				p.maxAct[ri] += a * hi[j]
			} else {
				p.minAct[ri] += a * hi[j]
				p.maxAct[ri] += a * lo[j]
			}
		}
	}
	return p
}

// move changes column j's bounds to [lo, hi], and the activities of its
// rows with them.
func (p *prober) move(j int, lo, hi int64) {
	dlo, dhi := lo-p.lo[j], hi-p.hi[j]
	if dlo == 0 && dhi == 0 {
		return
	}
	for t, ri := range p.colRows[j] {
		if a := p.colVals[j][t]; a > 0 {
			p.minAct[ri] += a * dlo
			p.maxAct[ri] += a * dhi
		} else {
			p.minAct[ri] += a * dhi
			p.maxAct[ri] += a * dlo
		}
	}
	p.lo[j], p.hi[j] = lo, hi
}

// probe sets column j to v and propagates; it returns the columns fixed
// (j excluded) with their values, and false when a row cannot hold.
// The box is restored before it returns.
// cols and vals are buffers the answer is appended to.
func (p *prober) probe(j int, v int64, budget int, strengthen func(ri int32, sign int64, maxact int64), cols []int32, vals []int64) ([]int32, []int64, bool) {
	defer p.undo()
	for _, ri := range p.visited {
		p.seen[ri] = false
	}
	p.visited = p.visited[:0]
	p.set(j, v)
	cols, vals = cols[:0], vals[:0]
	for head := 0; head < len(p.queue); {
		if budget--; budget < 0 {
			break // a long cascade: what was found so far holds
		}
		ri := p.queue[head]
		head++
		p.queued[ri] = false
		if !p.seen[ri] {
			p.seen[ri] = true
			p.visited = append(p.visited, ri)
		}
		w := &p.rows[ri]
		for _, sign := range signsOf(w.Op) {
			minact := p.activity(ri, sign, false)
			b := sign * w.Rhs
			if minact > b {
				return cols, vals, false
			}
			if minact+p.maxAbs[ri] <= b {
				continue
			}
			for k, c := range w.Idx {
				if p.lo[c] == p.hi[c] {
					continue
				}
				a := sign * w.Val[k]
				switch {
				case a > 0 && minact+a > b:
					p.set(int(c), 0)
					cols, vals = append(cols, int32(c)), append(vals, 0)
				case a < 0 && minact-a > b:
					p.set(int(c), 1)
					cols, vals = append(cols, int32(c)), append(vals, 1)
				}
			}
		}
	}
	if strengthen != nil && budget >= 0 {
		// Every row the cascade reached, with its largest activity in
		// the probed box.
		for _, ri := range p.visited {
			w := &p.rows[ri]
			for _, sign := range signsOf(w.Op) {
				if maxact := p.activity(ri, sign, true); maxact < sign*w.Rhs {
					strengthen(ri, sign, maxact)
				}
			}
		}
	}
	return cols, vals, true
}

// activity is the least (or, with most, the largest) value of sign·a·x
// over the box, for row ri.
func (p *prober) activity(ri int32, sign int64, most bool) int64 {
	if sign > 0 {
		if most {
			return p.maxAct[ri]
		}
		return p.minAct[ri]
	}
	if most {
		return -p.minAct[ri]
	}
	return -p.maxAct[ri]
}

// The signs a row is read with, shared: signsOf runs at every row a
// probe visits.
var (
	signsEQ = []int64{1, -1}
	signsGE = []int64{-1}
	signsLE = []int64{1}
)

func signsOf(op encode.Op) []int64 {
	switch op {
	case encode.EQ:
		return signsEQ
	case encode.GE:
		return signsGE
	}
	return signsLE
}

func (p *prober) set(j int, v int64) {
	p.move(j, v, v)
	p.trail = append(p.trail, int32(j))
	for _, ri := range p.colRows[j] {
		if !p.queued[ri] {
			p.queued[ri] = true
			p.queue = append(p.queue, ri)
		}
	}
}

// fix makes x_j = v part of the base box (it holds in every plan).
func (p *prober) fix(j int, v int64) {
	p.baseLo[j], p.baseHi[j] = v, v
	p.move(j, v, v)
}

// undo restores the box to the probe's start.
func (p *prober) undo() {
	for _, j := range p.trail {
		p.move(int(j), p.baseLo[j], p.baseHi[j])
	}
	p.trail = p.trail[:0]
	for _, ri := range p.queue {
		p.queued[ri] = false
	}
	p.queue = p.queue[:0]
}

// probingCuts probes the fractional columns of xs (every free column
// when all is set, for the fixings) and returns the cuts xs violates,
// fixings first, then the most violated, at most max.
func probingCuts(p *prober, xs []float64, all bool, max int) []Row {
	pc := &probeCuts{p: p, xs: xs, seen: map[[2]int32]bool{}, max: max}
	for j, v := range xs {
		if p.lo[j] == p.hi[j] || !all && (v < 1e-6 || v > 1-1e-6) {
			continue
		}
		pc.column(j, v)
	}
	sort.Slice(pc.cs, func(a, b int) bool { return pc.cs[a].before(pc.cs[b]) })
	var out []Row
	for k := range pc.cs {
		c := &pc.cs[k]
		if c.lifted {
			out = append(out, pc.liftedRow(c.lift))
		} else {
			out = append(out, c.w)
		}
	}
	return out
}

// probeCuts collects the cuts of probingCuts with their violation at xs.
type probeCuts struct {
	p  *prober
	xs []float64
	// cs keeps the max most violated cuts found so far, the least of
	// them on top; seq numbers the cuts found, to break ties the same
	// way every run (the earlier first).
	cs  cutHeap
	max int
	seq int
	// seen: the column pairs that have an implication cut.
	seen map[[2]int32]bool
	// implied[k] is 1 + the value x_j = 1 implies for x_k, 0 for none,
	// while column j is probed.
	implied []int8
	// bufs hold the two settings' answers of the column being probed.
	bufs [2]probeResult
}

// cutHeap is a heap of cuts, the least violated (then the latest) on top.
type cutHeap []probedCut

func (h cutHeap) Len() int           { return len(h) }
func (h cutHeap) Less(a, b int) bool { return h[b].before(h[a]) }
func (h cutHeap) Swap(a, b int)      { h[a], h[b] = h[b], h[a] }
func (h *cutHeap) Push(x any)        { *h = append(*h, x.(probedCut)) }
func (h *cutHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

// before says whether cut c is kept before cut b: more violated, or as
// violated and found earlier.
func (c *probedCut) before(b probedCut) bool {
	if c.vio != b.vio {
		return c.vio > b.vio
	}
	return c.seq < b.seq
}

// A lifted row is written out only if it is among the cuts kept: a
// round on 256x1000 finds far more violated ones than it keeps.
type probedCut struct {
	w      Row
	vio    float64
	seq    int
	lifted bool
	lift   liftOf
}

// liftOf is row ri (as sign·a·x <= sign·b) lifted by x_j at set, where
// the probe found the row's largest activity maxact.
type liftOf struct {
	j         int
	set, sign int64
	ri        int32
	maxact    int64
}

func (pc *probeCuts) cut(w Row, vio float64) {
	pc.keep(probedCut{w: w, vio: vio})
}

// keep adds c to the cuts kept when it is among the max best so far.
func (pc *probeCuts) keep(c probedCut) {
	c.seq = pc.seq
	pc.seq++
	switch {
	case pc.max <= 0:
	case len(pc.cs) < pc.max:
		heap.Push(&pc.cs, c)
	case c.before(pc.cs[0]):
		pc.cs[0] = c
		heap.Fix(&pc.cs, 0)
	}
}

// pairCut adds the implication cut a·x_j + b·x_k <= rhs when xs
// violates it, once per pair; the row is written only then.
func (pc *probeCuts) pairCut(j, k int32, a, b, rhs int64, vio float64) {
	if vio <= 1e-6 {
		return
	}
	key := [2]int32{min(j, k), max32(j, k)}
	if !pc.seen[key] {
		pc.seen[key] = true
		pc.cut(pair(int(j), int(k), a, b, rhs), vio)
	}
}

// fixTo fixes x_k = val for good and adds it as a row.
func (pc *probeCuts) fixTo(k int, val int64) {
	pc.p.fix(k, val)
	w := Row{Idx: []int{k}, Val: []int64{1}, Op: encode.EQ, Rhs: val}
	pc.cut(w, 1)
}

// probeResult is what one setting of a column implies, or !ok when it
// admits no plan.
type probeResult struct {
	cols []int32
	vals []int64
	ok   bool
}

// column probes x_j = 1 and x_j = 0 (v at xs), fixes what they decide
// and adds the implication cuts.
func (pc *probeCuts) column(j int, v float64) {
	p := pc.p
	var res [2]probeResult
	for si, set := range []int64{1, 0} {
		lift := func(ri int32, sign int64, maxact int64) { pc.liftRow(j, v, set, ri, sign, maxact) }
		r := &res[si]
		r.cols, r.vals, r.ok = p.probe(j, set, probeBudget, lift, pc.bufs[si].cols, pc.bufs[si].vals)
		pc.bufs[si].cols, pc.bufs[si].vals = r.cols, r.vals
	}
	switch {
	case !res[0].ok && !res[1].ok:
		return // no plan at all: the search will say so
	case !res[0].ok: // x_j = 1 is impossible
		pc.fixTo(j, 0)
		return
	case !res[1].ok:
		pc.fixTo(j, 1)
		return
	}
	// What both settings imply holds in every plan.
	if pc.implied == nil {
		pc.implied = make([]int8, len(p.lo))
	}
	for t, k := range res[0].cols {
		pc.implied[k] = int8(res[0].vals[t]) + 1
	}
	for t, k := range res[1].cols {
		if v0 := int64(pc.implied[k]) - 1; v0 == res[1].vals[t] && p.lo[k] != p.hi[k] {
			pc.fixTo(int(k), v0)
		}
	}
	for _, k := range res[0].cols {
		pc.implied[k] = 0
	}
	for si, set := range []int64{1, 0} {
		pc.implications(j, v, set, res[si])
	}
}

// liftRow adds row ri lifted by x_j when xs violates it. The row, as
// sign·a·x <= sign·b, holds with maxact in place of b whenever x_j = set:
// a·x + (b − M)·I <= b, I = x_j (set 1) or 1 − x_j (set 0).
func (pc *probeCuts) liftRow(j int, v float64, set int64, ri int32, sign int64, maxact int64) {
	l := liftOf{j: j, set: set, sign: sign, ri: ri, maxact: maxact}
	var act float64
	coefJ, rhs, gap := pc.lifted(l, func(c int, a int64) { act += float64(a) * pc.xs[c] })
	act += float64(coefJ) * v
	if vio := (act - float64(rhs)) / float64(gap); vio > 1e-6 {
		pc.keep(probedCut{vio: vio, lifted: true, lift: l})
	}
}

// liftedRow writes out the lifted row l.
func (pc *probeCuts) liftedRow(l liftOf) Row {
	var lc Row
	coefJ, rhs, _ := pc.lifted(l, func(c int, a int64) {
		lc.Idx = append(lc.Idx, c)
		lc.Val = append(lc.Val, a)
	})
	lc.Op, lc.Rhs = encode.LE, rhs
	lc.Idx = append(lc.Idx, l.j)
	lc.Val = append(lc.Val, coefJ)
	return sortRow(lc)
}

// lifted gives each column but x_j of the lifted row l, in the row's
// order, with its coefficient, and returns x_j's coefficient, the
// right-hand side and the gap b − maxact.
func (pc *probeCuts) lifted(l liftOf, each func(c int, a int64)) (coefJ, rhs, gap int64) {
	w := &pc.p.rows[l.ri]
	b := l.sign * w.Rhs
	gap, rhs = b-l.maxact, b
	for k, c := range w.Idx {
		if c == l.j {
			coefJ += l.sign * w.Val[k]
			continue
		}
		each(c, l.sign*w.Val[k])
	}
	if l.set == 1 {
		coefJ += gap
	} else {
		coefJ -= gap
		rhs -= gap
	}
	return coefJ, rhs, gap
}

// implications adds the two-column cut of each column that x_j = set
// (v at xs) fixes and is still free.
func (pc *probeCuts) implications(j int, v float64, set int64, res probeResult) {
	jj := int32(j)
	for t, k := range res.cols {
		if pc.p.lo[k] == pc.p.hi[k] {
			continue
		}
		xk := pc.xs[k]
		var a, b, rhs int64
		var vio float64
		switch val := res.vals[t]; {
		case set == 1 && val == 0: // x_j + x_k <= 1
			a, b, rhs, vio = 1, 1, 1, v+xk-1
		case set == 1 && val == 1: // x_j − x_k <= 0
			a, b, rhs, vio = 1, -1, 0, v-xk
		case set == 0 && val == 1: // −x_j − x_k <= −1
			a, b, rhs, vio = -1, -1, -1, 1-v-xk
		default: // x_k − x_j <= 0
			a, b, rhs, vio = -1, 1, 0, xk-v
		}
		pc.pairCut(jj, k, a, b, rhs, vio)
	}
}

func max32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

// sortRow orders a row's columns.
func sortRow(w Row) Row {
	order := make([]int, len(w.Idx))
	for k := range order {
		order[k] = k
	}
	sort.Slice(order, func(a, b int) bool { return w.Idx[order[a]] < w.Idx[order[b]] })
	out := Row{Op: w.Op, Rhs: w.Rhs, Idx: make([]int, len(order)), Val: make([]int64, len(order))}
	for k, o := range order {
		out.Idx[k], out.Val[k] = w.Idx[o], w.Val[o]
	}
	return out
}

// pair is a·x_j + b·x_k <= rhs, its columns in order.
func pair(j, k int, a, b, rhs int64) Row {
	if j > k {
		j, k, a, b = k, j, b, a
	}
	return Row{Idx: []int{j, k}, Val: []int64{a, b}, Op: encode.LE, Rhs: rhs}
}

// probeBudget caps the rows one probe visits.
const probeBudget = 1000000
