package mip

import (
	"slices"
	"sort"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/internal/clock"
	"github.com/poolsolve/poolsolve/internal/slab"
	"github.com/poolsolve/poolsolve/model"
)

// This file strengthens the LP relaxation of one level before it is
// solved, the way a MIP solver's root node does, and turns the final
// multipliers into reduced-cost fixings for the SAT search.
//
// Everything is done on the integer data and is valid for every 0/1
// point that satisfies the rows (with the assumptions true and the
// earlier levels at their frozen values), so the intended values of every
// valid plan stay feasible:
//
//   - propagation fixes a column that a single row forces (bounds
//     propagation of each row over the box);
//   - coefficient tightening (Savelsbergh 1994) shrinks a coefficient
//     that is larger than the row needs, which cuts off fractional points
//     of the auto rule's rows and of memory rows with lanes larger than
//     the budget;
//   - disaggregated latency rows: a route whose cost depends on the
//     lane's residency is paid through route ∧ res[ρ] literals; the
//     mirror's one-sided rows let a fractional route pay nothing, so
//     Σ_ρ split[ρ] >= route and split[ρ] <= res[ρ] are added;
//   - lifted cover inequalities (Balas 1975; extended covers) separated
//     from the LP point on every row, rounds until they stop paying.
//
// Reduced-cost fixing then uses the multipliers y of the last LP: for
// any feasible x, c·x >= L + Σ_j |d_j|·[x_j moves off its cheap bound],
// with L the weak-duality bound and d = c − yA. A plan better than the
// incumbent (c·x <= U) therefore keeps every column whose |d_j| exceeds
// U − L at its cheap bound. Those literals are assumptions for the
// improving search only: they are implied by "better than the
// incumbent", not by the hard constraints.

// Row is Σ val·x[idx] op rhs over the relaxation's columns.
type Row struct {
	Idx []int
	Val []int64
	Op  encode.Op
	Rhs int64
}

// Relaxation is one level's linear model, presolved.
type Relaxation struct {
	Vars []z.Var
	// col[v] is variable v's column plus one, 0 for none (Column):
	// dense, since the rows name most variables (256x1000's level 1:
	// 85,000 of 106,000); as a map, its lookups made building and
	// presolving that level 15% slower.
	col  []int32
	Rows []Row
	C    []int64 // objective over the columns
	// Lo, Hi are each column's bounds in {0, 1}; fixed columns are
	// substituted out of rows and objective once presolve ends.
	Lo, Hi   []int64
	Constant int64          // objective of the columns fixed before the LP
	Dead     bool           // a row holds for no point in the box
	Assumed  map[z.Var]bool // the assumptions, true, substituted out
	// Clock is the time Propagate and the LPs built from the relaxation
	// read (nil: the wall clock).
	Clock *clock.Clock
}

// Clone is r for a second user that adds rows (the cut loop): the rows
// list, objective and bounds are its own, the rows themselves shared
// (no step changes a row in place once presolve ended).
func (r *Relaxation) Clone() *Relaxation {
	c := *r
	c.Rows = slices.Clone(r.Rows)
	c.C, c.Lo, c.Hi = slices.Clone(r.C), slices.Clone(r.Lo), slices.Clone(r.Hi)
	return &c
}

// NextLevel is level i's model made from r, level i-1's presolved: the
// row freezing level i-1 at frozen is added and the objective is level
// i's. Every other row of level i's model is in r already, presolved.
func (r *Relaxation) NextLevel(e *encode.Encoding, i int, frozen int64) *Relaxation {
	lin := &e.Linear
	n := r.Clone()
	n.col = slices.Clone(r.col)
	n.Vars = slices.Clone(r.Vars)
	colOf := func(v z.Var) int {
		c := n.ColOf(v)
		for len(n.Lo) < len(n.Vars) { // a column only later levels name
			n.Lo, n.Hi, n.C = append(n.Lo, 0), append(n.Hi, 1), append(n.C, 0)
		}
		return c
	}
	w := Row{Op: encode.LE, Rhs: frozen - lin.Offsets[i-1]}
	at := map[int]int{}
	for _, t := range lin.Objectives[i-1] {
		if val, ok := n.Assumed[t.Var]; ok {
			if val {
				w.Rhs -= t.Coef
			}
			continue
		}
		c := colOf(t.Var)
		if n.Lo[c] == n.Hi[c] {
			w.Rhs -= t.Coef * n.Lo[c]
			continue
		}
		if k, ok := at[c]; ok {
			w.Val[k] += t.Coef // a column named twice counts once
			continue
		}
		at[c] = len(w.Idx)
		w.Idx = append(w.Idx, c)
		w.Val = append(w.Val, t.Coef)
	}
	n.Rows = append(n.Rows, w)
	n.Constant = 0
	clear(n.C)
	for _, t := range lin.Objectives[i] {
		if val, ok := n.Assumed[t.Var]; ok {
			if val {
				n.Constant += t.Coef
			}
			continue
		}
		c := colOf(t.Var)
		if n.Lo[c] == n.Hi[c] {
			n.Constant += t.Coef * n.Lo[c]
			continue
		}
		n.C[c] += t.Coef
	}
	return n
}

// Presolve propagates r's bounds and substitutes its fixed columns out.
func Presolve(r *Relaxation, deadline time.Time) (*Relaxation, bool) {
	r.Propagate(deadline)
	if r.Dead {
		return nil, false
	}
	r.Substitute()
	return r, true
}

// NewRelaxation is newRelaxation for encoding e with the earlier levels
// bounded by obj and the literals assumed true (a what-if scenario's set,
// which is not the encoding's own).
func NewRelaxation(e *encode.Encoding, obj model.Objective, assumed []z.Lit, i int) *Relaxation {
	lin := &e.Linear
	fixed := map[z.Var]bool{}
	r := &Relaxation{col: make([]int32, lin.Vars), Assumed: fixed, Rows: make([]Row, 0, len(lin.Rows)+i+latencyRows(e))}
	// assumedAs[v] is 1 or 2 for a variable assumed false or true; it
	// is read for every term, so it is dense too.
	assumedAs := make([]int8, lin.Vars)
	for _, m := range assumed {
		fixed[m.Var()] = m.IsPos()
		for int(m.Var()) >= len(assumedAs) {
			assumedAs = append(assumedAs, 0)
		}
		assumedAs[m.Var()] = 1
		if m.IsPos() {
			assumedAs[m.Var()] = 2
		}
	}
	isAssumed := func(v z.Var) (val, ok bool) {
		if int(v) >= len(assumedAs) || assumedAs[v] == 0 {
			return false, false
		}
		return assumedAs[v] == 2, true
	}
	var idx slab.Slab[int]
	var vals slab.Slab[int64]
	var at []int // scratch: a column's place in the row being built, +1
	add := func(ts []encode.Term, op encode.Op, rhs int64) {
		w := Row{Op: op, Rhs: rhs, Idx: idx.Make(len(ts)), Val: vals.Make(len(ts))}
		for _, t := range ts {
			if val, ok := isAssumed(t.Var); ok {
				if val {
					w.Rhs -= t.Coef
				}
				continue
			}
			c := r.ColOf(t.Var)
			for len(at) <= c {
				at = append(at, 0)
			}
			if k := at[c]; k > 0 {
				w.Val[k-1] += t.Coef // a column named twice counts once
				continue
			}
			w.Idx = append(w.Idx, c)
			w.Val = append(w.Val, t.Coef)
			at[c] = len(w.Idx)
		}
		for _, c := range w.Idx {
			at[c] = 0
		}
		r.Rows = append(r.Rows, w)
	}
	for _, row := range lin.Rows {
		add(row.Terms, row.Op, row.RHS)
	}
	for j := 0; j < i; j++ {
		add(lin.Objectives[j], encode.LE, obj[j]-lin.Offsets[j])
	}
	// Disaggregated latency rows, written with literals.
	lit := func(m z.Lit, coef int64, ts []encode.Term, rhs int64) ([]encode.Term, int64) {
		if m == e.T {
			return ts, rhs - coef
		}
		if m == e.F() {
			return ts, rhs
		}
		if !m.IsPos() { // coef·(1 − v)
			return append(ts, encode.Term{Var: m.Var(), Coef: -coef}), rhs - coef
		}
		return append(ts, encode.Term{Var: m.Var(), Coef: coef}), rhs
	}
	for si := range e.Sources {
		for _, rt := range e.Sources[si].Routes {
			if rt.Variant < 0 || rt.Split == [3]z.Lit{} {
				continue
			}
			ts, rhs := lit(rt.Lit, -1, nil, 0)
			for k, y := range rt.Split {
				if y == z.LitNull {
					continue
				}
				ts, rhs = lit(y, 1, ts, rhs)
				u, urhs := lit(y, 1, nil, 0)
				u, urhs = lit(e.Variants[rt.Variant].Res[k], -1, u, urhs)
				add(u, encode.LE, urhs)
			}
			add(ts, encode.GE, rhs)
		}
	}
	r.C = make([]int64, len(r.Vars))
	for _, t := range lin.Objectives[i] {
		if val, ok := isAssumed(t.Var); ok {
			if val {
				r.Constant += t.Coef
			}
			continue
		}
		r.C[r.ColOf(t.Var)] += t.Coef
	}
	r.Lo = make([]int64, len(r.Vars))
	r.Hi = make([]int64, len(r.Vars))
	for j := range r.Hi {
		r.Hi[j] = 1
	}
	return r
}

// latencyRows counts the disaggregated latency rows NewRelaxation adds:
// sized ahead, the rows are not copied as they grow (1024x4000: 0.1 GB).
func latencyRows(e *encode.Encoding) int {
	n := 0
	for si := range e.Sources {
		for _, rt := range e.Sources[si].Routes {
			if rt.Variant < 0 || rt.Split == [3]z.Lit{} {
				continue
			}
			n++
			for _, y := range rt.Split {
				if y != z.LitNull {
					n++
				}
			}
		}
	}
	return n
}

// ColOf is v's column, added when v has none.
func (r *Relaxation) ColOf(v z.Var) int {
	if c, ok := r.Column(v); ok {
		return c
	}
	if int(v) >= len(r.col) {
		r.col = append(r.col, make([]int32, int(v)+1-len(r.col))...)
	}
	c := len(r.Vars)
	r.col[v] = int32(c + 1)
	r.Vars = append(r.Vars, v)
	return c
}

// Column is v's column; ok is false when v has none.
func (r *Relaxation) Column(v z.Var) (c int, ok bool) {
	if int(v) >= len(r.col) || r.col[v] == 0 {
		return 0, false
	}
	return int(r.col[v]) - 1, true
}

// asLE writes w as Σ a·x <= b rows: one for <= and >=, two for =.
func asLE(w Row) []Row {
	neg := func() Row {
		n := Row{Idx: w.Idx, Val: make([]int64, len(w.Val)), Op: encode.LE, Rhs: -w.Rhs}
		for k, v := range w.Val {
			n.Val[k] = -v
		}
		return n
	}
	switch w.Op {
	case encode.LE:
		return []Row{w}
	case encode.GE:
		return []Row{neg()}
	}
	a := w
	a.Op = encode.LE
	return []Row{a, neg()}
}

// Propagate fixes the columns that one row forces, to a fixpoint. Each
// row is read as its <= rows (asLE) by sign, in place: on 1024x4000's
// level 1 (1.5 M rows) the copies took 0.74 GB at the planning process's
// peak.
func (r *Relaxation) Propagate(deadline time.Time) {
	for pass := 0; pass < 20; pass++ {
		changed := false
		for k := range r.Rows {
			w := &r.Rows[k]
			for _, sign := range signsOf(w.Op) {
				if r.propagateLE(w, sign, &changed) {
					r.Dead = true
					return
				}
			}
		}
		if !changed || r.Clock.Now().After(deadline) {
			return
		}
	}
}

// propagateLE fixes the columns that sign·w <= sign·rhs forces, setting
// *changed when it fixes one; it reports a row no point in the box meets.
func (r *Relaxation) propagateLE(w *Row, sign int64, changed *bool) bool {
	rhs := sign * w.Rhs
	var minact int64
	for k, j := range w.Idx {
		if a := sign * w.Val[k]; a > 0 {
			minact += a * r.Lo[j]
		} else {
			minact += a * r.Hi[j]
		}
	}
	if minact > rhs {
		return true
	}
	for k, j := range w.Idx {
		if r.Lo[j] == r.Hi[j] {
			continue
		}
		a := sign * w.Val[k]
		if a > 0 && minact+a > rhs {
			r.Hi[j], *changed = 0, true
		} else if a < 0 && minact-a > rhs {
			r.Lo[j], *changed = 1, true
		}
	}
	return false
}

// Substitute removes fixed columns from rows and objective, drops rows
// that every point in the box meets, and rewrites the rest as <= rows
// (= rows stay) with tightened coefficients.
func (r *Relaxation) Substitute() {
	for j, c := range r.C {
		if r.Lo[j] == r.Hi[j] {
			r.Constant += c * r.Lo[j]
			r.C[j] = 0
		}
	}
	rows := make([]Row, 0, len(r.Rows))
	var idx slab.Slab[int]
	var vals slab.Slab[int64]
	for _, w := range r.Rows {
		free := 0
		for _, j := range w.Idx {
			if r.Lo[j] != r.Hi[j] {
				free++
			}
		}
		// Sized exactly: the relaxation keeps its rows for the level.
		n := Row{Op: w.Op, Rhs: w.Rhs, Idx: idx.Make(free), Val: vals.Make(free)}
		for k, j := range w.Idx {
			if r.Lo[j] == r.Hi[j] {
				n.Rhs -= w.Val[k] * r.Lo[j]
				continue
			}
			n.Idx = append(n.Idx, j)
			n.Val = append(n.Val, w.Val[k])
		}
		if len(n.Idx) == 0 {
			continue
		}
		if n.Op == encode.EQ {
			rows = append(rows, n)
			continue
		}
		if n.Op == encode.GE { // as asLE, in place: n is this loop's
			for k := range n.Val {
				n.Val[k] = -n.Val[k]
			}
			n.Op, n.Rhs = encode.LE, -n.Rhs
		}
		if n, keep := tighten(n); keep {
			rows = append(rows, n)
		}
	}
	r.Rows = rows
}

// tighten applies coefficient tightening to Σ a·x <= b over binaries:
// with z_j the literal of x_j that has a positive coefficient a'_j, a
// coefficient larger than the row needs when z_j is true (the rest can
// never pass b − a'_j) loses the excess, and so does b. It reports false
// for a row that every point meets.
func tighten(w Row) (Row, bool) {
	n := len(w.Idx)
	b := w.Rhs
	var maxact, amax int64
	for _, v := range w.Val {
		if v < 0 {
			v, b = -v, b-v
		}
		maxact += v
		amax = max(amax, v)
	}
	if maxact <= b {
		return w, false
	}
	// Only a coefficient above b - (maxact - a_k) shrinks: none does when
	// the largest does not, which is most rows (no sort, no copy).
	if maxact-amax >= b {
		return Row{Idx: w.Idx, Val: w.Val, Op: encode.LE, Rhs: w.Rhs}, true
	}
	a := make([]int64, n)
	for k, v := range w.Val {
		a[k] = max(v, -v)
	}
	order := make([]int, n)
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(p, q int) bool { return a[order[p]] > a[order[q]] })
	for _, k := range order {
		if d := b - (maxact - a[k]); d > 0 && a[k] > d {
			a[k] -= d
			b -= d
			maxact -= d
		}
	}
	out := Row{Idx: w.Idx, Val: make([]int64, n), Op: encode.LE, Rhs: b}
	for k, v := range w.Val {
		if v < 0 {
			out.Val[k] = -a[k]
			out.Rhs -= a[k]
		} else {
			out.Val[k] = a[k]
		}
	}
	return out, true
}

// Separate returns lifted cover cuts that xs violates, at most one per
// row, most violated rows first, at most max of them.
func (r *Relaxation) Separate(xs []float64, max int) []Row {
	type cut struct {
		w   Row
		vio float64
	}
	var cuts []cut
	for _, w := range r.Rows {
		if w.Op != encode.LE || len(w.Idx) < 2 {
			continue
		}
		if c, vio, ok := coverCut(w, xs); ok {
			cuts = append(cuts, cut{c, vio})
		}
	}
	slices.SortStableFunc(cuts, func(p, q cut) int {
		switch {
		case p.vio > q.vio:
			return -1
		case p.vio < q.vio:
			return 1
		}
		return 0
	})
	var out []Row
	for k := 0; k < len(cuts) && k < max; k++ {
		out = append(out, cuts[k].w)
	}
	return out
}

// coverCut finds a minimal cover of Σ a'·z <= b' (z_j = x_j, or 1 − x_j
// where a_j < 0) greedily by (1 − z*_j)/a'_j, extends it by every item
// at least as heavy as its heaviest, and returns Σ_E z <= |C| − 1 in x
// when the point violates it by more than a tolerance.
func coverCut(w Row, xs []float64) (Row, float64, bool) {
	n := len(w.Idx)
	a := make([]int64, n)
	zs := make([]float64, n)
	b := w.Rhs
	for k, v := range w.Val {
		xj := xs[w.Idx[k]]
		if v < 0 {
			a[k], b, zs[k] = -v, b-v, 1-xj
		} else {
			a[k], zs[k] = v, xj
		}
	}
	if b < 0 {
		return Row{}, 0, false
	}
	order := make([]int, n)
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(kp, kq int) int {
		l, r := (1-zs[kp])*float64(a[kq]), (1-zs[kq])*float64(a[kp])
		switch {
		case l < r:
			return -1
		case l > r:
			return 1
		}
		return 0
	})
	var sum int64
	var in []int
	for _, k := range order {
		if sum > b {
			break
		}
		in = append(in, k)
		sum += a[k]
	}
	if sum <= b {
		return Row{}, 0, false
	}
	// Minimal: drop the items with the largest z* ... first the ones
	// that still leave a cover, lightest z* gain first.
	slices.SortStableFunc(in, func(p, q int) int {
		switch {
		case zs[p] < zs[q]:
			return -1
		case zs[p] > zs[q]:
			return 1
		}
		return 0
	})
	var cover []int
	for idx, k := range in {
		if sum-a[k] > b {
			sum -= a[k]
			continue
		}
		cover = append(cover, in[idx])
	}
	var lhs float64
	var heavy int64
	inCover := make([]bool, n)
	for _, k := range cover {
		lhs += zs[k]
		heavy = max(heavy, a[k])
		inCover[k] = true
	}
	size := int64(len(cover))
	if size < 1 {
		return Row{}, 0, false
	}
	ext := slices.Clone(cover)
	for k := 0; k < n; k++ {
		if !inCover[k] && a[k] >= heavy {
			ext = append(ext, k)
			lhs += zs[k]
		}
	}
	vio := lhs - float64(size-1)
	if vio < 1e-4 {
		return Row{}, 0, false
	}
	sort.Ints(ext)
	c := Row{Op: encode.LE, Rhs: size - 1}
	for _, k := range ext {
		c.Idx = append(c.Idx, w.Idx[k])
		if w.Val[k] < 0 { // z = 1 − x
			c.Val = append(c.Val, -1)
			c.Rhs--
		} else {
			c.Val = append(c.Val, 1)
		}
	}
	return c, vio, true
}

// Nonzeros counts the rows' coefficients.
func (r *Relaxation) Nonzeros() int {
	nz := 0
	for _, w := range r.Rows {
		nz += len(w.Idx)
	}
	return nz
}

// Floor is the least objective over the box, Constant included: what
// the fixed columns cost, and every free column at its cheap bound. It
// bounds the level with no LP, as presolve left it (1024x4000's level
// 1: 53 uncovered sources forced, against the trivial 0).
func (r *Relaxation) Floor() int64 {
	f := r.Constant
	for j, c := range r.C {
		switch {
		case r.Lo[j] == r.Hi[j]:
			f += c * r.Lo[j]
		case c < 0:
			f += c
		}
	}
	return f
}

// Fixed is presolve's fixings as literals: they hold in every plan.
func (r *Relaxation) Fixed() []z.Lit {
	var out []z.Lit
	for j, v := range r.Vars {
		switch {
		case r.Lo[j] == r.Hi[j] && r.Lo[j] == 1:
			out = append(out, v.Pos())
		case r.Lo[j] == r.Hi[j]:
			out = append(out, v.Neg())
		}
	}
	return out
}

// Holds reports whether the row holds at the 0/1 point where column c is
// val(c).
func (w Row) Holds(val func(c int) bool) bool {
	var s int64
	for k, j := range w.Idx {
		if val(j) {
			s += w.Val[k]
		}
	}
	switch w.Op {
	case encode.LE:
		return s <= w.Rhs
	case encode.GE:
		return s >= w.Rhs
	}
	return s == w.Rhs
}
