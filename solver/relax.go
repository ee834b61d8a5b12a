package solver

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
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
//     of the big-M rows (the auto rule) and of memory rows with lanes
//     larger than the budget;
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

// irow is Σ val·x[idx] op rhs over the relaxation's columns.
type irow struct {
	idx []int
	val []int64
	op  encode.Op
	rhs int64
}

// relaxation is one level's linear model, presolved.
type relaxation struct {
	vars []z.Var
	col  map[z.Var]int
	rows []irow
	c    []int64 // objective over the columns
	// lo, hi are each column's bounds in {0, 1}; fixed columns are
	// substituted out of rows and objective once presolve ends.
	lo, hi   []int64
	constant int64          // objective of the columns fixed before the LP
	dead     bool           // a row holds for no point in the box
	assumed  map[z.Var]bool // the assumptions, true, substituted out
}

// clone is r for a second user that adds rows (the cut loop): the rows
// list, objective and bounds are its own, the rows themselves shared
// (no step changes a row in place once presolve ended).
func (r *relaxation) clone() *relaxation {
	c := *r
	c.rows = slices.Clone(r.rows)
	c.c, c.lo, c.hi = slices.Clone(r.c), slices.Clone(r.lo), slices.Clone(r.hi)
	return &c
}

// newRelaxation builds level i's model from the encoding's linear
// mirror, with the assumptions true and the earlier levels at the
// incumbent's values (they are frozen there).
func newRelaxation(x *exact, i int) *relaxation {
	return newRelaxationOf(x.e, x.obj, x.e.Linear.Assumed, i)
}

// presolvedRelaxation is level i's model presolved by deadline: bounds
// propagated and fixed columns substituted out. False when a row holds
// for no point (the model has no plan).
//
// The last level's presolved model is kept (x.presolvedAt) and the next
// level's is made from it by one row, where a fresh one took 0.1-0.2 s
// a level on 256x1000.
func presolvedRelaxation(x *exact, i int, deadline time.Time) (*relaxation, bool) {
	var r *relaxation
	var ok bool
	switch k := x.presolvedAt; {
	case k != nil && k.level == i && k.obj == frozenBefore(x.obj, i):
		return k.r.clone(), true
	case k != nil && k.level == i-1 && k.obj == frozenBefore(x.obj, i-1):
		r, ok = presolve(k.r.nextLevel(x.e, i, x.obj[i-1]), deadline)
	default:
		r, ok = presolve(newRelaxation(x, i), deadline)
	}
	if ok {
		x.presolvedAt = &presolvedLevel{level: i, obj: frozenBefore(x.obj, i), r: r.clone()}
	}
	return r, ok
}

// presolvedLevel is level's presolved model, made with the levels before
// it frozen at obj.
type presolvedLevel struct {
	level int
	obj   model.Objective
	r     *relaxation
}

// frozenBefore is obj with the levels from i on cleared: the part of an
// objective that level i's model depends on.
func frozenBefore(obj model.Objective, i int) model.Objective {
	var f model.Objective
	copy(f[:i], obj[:i])
	return f
}

// nextLevel is level i's model made from r, level i-1's presolved: the
// row freezing level i-1 at frozen is added and the objective is level
// i's. Every other row of level i's model is in r already, presolved.
func (r *relaxation) nextLevel(e *encode.Encoding, i int, frozen int64) *relaxation {
	lin := &e.Linear
	n := r.clone()
	n.col = maps.Clone(r.col)
	n.vars = slices.Clone(r.vars)
	colOf := func(v z.Var) int {
		c := n.colOf(v)
		for len(n.lo) < len(n.vars) { // a column only later levels name
			n.lo, n.hi, n.c = append(n.lo, 0), append(n.hi, 1), append(n.c, 0)
		}
		return c
	}
	w := irow{op: encode.LE, rhs: frozen - lin.Offsets[i-1]}
	at := map[int]int{}
	for _, t := range lin.Objectives[i-1] {
		if val, ok := n.assumed[t.Var]; ok {
			if val {
				w.rhs -= t.Coef
			}
			continue
		}
		c := colOf(t.Var)
		if n.lo[c] == n.hi[c] {
			w.rhs -= t.Coef * n.lo[c]
			continue
		}
		if k, ok := at[c]; ok {
			w.val[k] += t.Coef // a column named twice counts once
			continue
		}
		at[c] = len(w.idx)
		w.idx = append(w.idx, c)
		w.val = append(w.val, t.Coef)
	}
	n.rows = append(n.rows, w)
	n.constant = 0
	clear(n.c)
	for _, t := range lin.Objectives[i] {
		if val, ok := n.assumed[t.Var]; ok {
			if val {
				n.constant += t.Coef
			}
			continue
		}
		c := colOf(t.Var)
		if n.lo[c] == n.hi[c] {
			n.constant += t.Coef * n.lo[c]
			continue
		}
		n.c[c] += t.Coef
	}
	return n
}

// presolve propagates r's bounds and substitutes its fixed columns out.
func presolve(r *relaxation, deadline time.Time) (*relaxation, bool) {
	r.propagate(deadline)
	if r.dead {
		return nil, false
	}
	r.substitute()
	return r, true
}

// newRelaxationOf is newRelaxation for encoding e with the earlier levels
// bounded by obj and the literals assumed true (a what-if scenario's set,
// which is not the encoding's own).
func newRelaxationOf(e *encode.Encoding, obj model.Objective, assumed []z.Lit, i int) *relaxation {
	lin := &e.Linear
	fixed := map[z.Var]bool{}
	r := &relaxation{col: make(map[z.Var]int, len(lin.Vars)), assumed: fixed, rows: make([]irow, 0, len(lin.Rows)+i)}
	for _, m := range assumed {
		fixed[m.Var()] = m.IsPos()
	}
	var at []int // scratch: a column's place in the row being built, +1
	add := func(ts []encode.Term, op encode.Op, rhs int64) {
		w := irow{op: op, rhs: rhs, idx: make([]int, 0, len(ts)), val: make([]int64, 0, len(ts))}
		for _, t := range ts {
			if val, ok := fixed[t.Var]; ok {
				if val {
					w.rhs -= t.Coef
				}
				continue
			}
			c := r.colOf(t.Var)
			for len(at) <= c {
				at = append(at, 0)
			}
			if k := at[c]; k > 0 {
				w.val[k-1] += t.Coef // a column named twice counts once
				continue
			}
			w.idx = append(w.idx, c)
			w.val = append(w.val, t.Coef)
			at[c] = len(w.idx)
		}
		for _, c := range w.idx {
			at[c] = 0
		}
		r.rows = append(r.rows, w)
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
	r.c = make([]int64, len(r.vars))
	for _, t := range lin.Objectives[i] {
		if val, ok := fixed[t.Var]; ok {
			if val {
				r.constant += t.Coef
			}
			continue
		}
		r.c[r.colOf(t.Var)] += t.Coef
	}
	r.lo = make([]int64, len(r.vars))
	r.hi = make([]int64, len(r.vars))
	for j := range r.hi {
		r.hi[j] = 1
	}
	return r
}

func (r *relaxation) colOf(v z.Var) int {
	c, ok := r.col[v]
	if !ok {
		c = len(r.vars)
		r.col[v] = c
		r.vars = append(r.vars, v)
	}
	return c
}

// asLE writes w as Σ a·x <= b rows: one for <= and >=, two for =.
func asLE(w irow) []irow {
	neg := func() irow {
		n := irow{idx: w.idx, val: make([]int64, len(w.val)), op: encode.LE, rhs: -w.rhs}
		for k, v := range w.val {
			n.val[k] = -v
		}
		return n
	}
	switch w.op {
	case encode.LE:
		return []irow{w}
	case encode.GE:
		return []irow{neg()}
	}
	a := w
	a.op = encode.LE
	return []irow{a, neg()}
}

// propagate fixes the columns that one row forces, to a fixpoint.
func (r *relaxation) propagate(deadline time.Time) {
	var les []irow
	for _, w := range r.rows {
		les = append(les, asLE(w)...)
	}
	for pass := 0; pass < 20; pass++ {
		changed := false
		for _, row := range les {
			{
				var minact int64
				for k, j := range row.idx {
					if a := row.val[k]; a > 0 {
						minact += a * r.lo[j]
					} else {
						minact += a * r.hi[j]
					}
				}
				if minact > row.rhs {
					r.dead = true
					return
				}
				for k, j := range row.idx {
					if r.lo[j] == r.hi[j] {
						continue
					}
					a := row.val[k]
					if a > 0 && minact+a > row.rhs {
						r.hi[j], changed = 0, true
					} else if a < 0 && minact-a > row.rhs {
						r.lo[j], changed = 1, true
					}
				}
			}
		}
		if !changed || time.Now().After(deadline) {
			return
		}
	}
}

// substitute removes fixed columns from rows and objective, drops rows
// that every point in the box meets, and rewrites the rest as <= rows
// (= rows stay) with tightened coefficients.
func (r *relaxation) substitute() {
	for j, c := range r.c {
		if r.lo[j] == r.hi[j] {
			r.constant += c * r.lo[j]
			r.c[j] = 0
		}
	}
	rows := make([]irow, 0, len(r.rows))
	for _, w := range r.rows {
		free := 0
		for _, j := range w.idx {
			if r.lo[j] != r.hi[j] {
				free++
			}
		}
		// Sized exactly: the relaxation keeps its rows for the level.
		n := irow{op: w.op, rhs: w.rhs, idx: make([]int, 0, free), val: make([]int64, 0, free)}
		for k, j := range w.idx {
			if r.lo[j] == r.hi[j] {
				n.rhs -= w.val[k] * r.lo[j]
				continue
			}
			n.idx = append(n.idx, j)
			n.val = append(n.val, w.val[k])
		}
		if len(n.idx) == 0 {
			continue
		}
		if n.op == encode.EQ {
			rows = append(rows, n)
			continue
		}
		if n.op == encode.GE {
			n = asLE(n)[0]
		}
		if n, keep := tighten(n); keep {
			rows = append(rows, n)
		}
	}
	r.rows = rows
}

// tighten applies coefficient tightening to Σ a·x <= b over binaries:
// with z_j the literal of x_j that has a positive coefficient a'_j, a
// coefficient larger than the row needs when z_j is true (the rest can
// never pass b − a'_j) loses the excess, and so does b. It reports false
// for a row that every point meets.
func tighten(w irow) (irow, bool) {
	n := len(w.idx)
	a := make([]int64, n)
	b := w.rhs
	var maxact int64
	for k, v := range w.val {
		if v < 0 {
			a[k], b = -v, b-v
		} else {
			a[k] = v
		}
		maxact += a[k]
	}
	if maxact <= b {
		return w, false
	}
	// Only a coefficient above b - (maxact - a_k) shrinks: none does when
	// the largest does not, which is most rows (no sort, no copy).
	if amax := slices.Max(a); maxact-amax >= b {
		return irow{idx: w.idx, val: w.val, op: encode.LE, rhs: w.rhs}, true
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
	out := irow{idx: w.idx, val: make([]int64, n), op: encode.LE, rhs: b}
	for k, v := range w.val {
		if v < 0 {
			out.val[k] = -a[k]
			out.rhs -= a[k]
		} else {
			out.val[k] = a[k]
		}
	}
	return out, true
}

// separate returns lifted cover cuts that xs violates, at most one per
// row, most violated rows first, at most max of them.
func (r *relaxation) separate(xs []float64, max int) []irow {
	type cut struct {
		w   irow
		vio float64
	}
	var cuts []cut
	for _, w := range r.rows {
		if w.op != encode.LE || len(w.idx) < 2 {
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
	var out []irow
	for k := 0; k < len(cuts) && k < max; k++ {
		out = append(out, cuts[k].w)
	}
	return out
}

// coverCut finds a minimal cover of Σ a'·z <= b' (z_j = x_j, or 1 − x_j
// where a_j < 0) greedily by (1 − z*_j)/a'_j, extends it by every item
// at least as heavy as its heaviest, and returns Σ_E z <= |C| − 1 in x
// when the point violates it by more than a tolerance.
func coverCut(w irow, xs []float64) (irow, float64, bool) {
	n := len(w.idx)
	a := make([]int64, n)
	zs := make([]float64, n)
	b := w.rhs
	for k, v := range w.val {
		xj := xs[w.idx[k]]
		if v < 0 {
			a[k], b, zs[k] = -v, b-v, 1-xj
		} else {
			a[k], zs[k] = v, xj
		}
	}
	if b < 0 {
		return irow{}, 0, false
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
		return irow{}, 0, false
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
		return irow{}, 0, false
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
		return irow{}, 0, false
	}
	sort.Ints(ext)
	c := irow{op: encode.LE, rhs: size - 1}
	for _, k := range ext {
		c.idx = append(c.idx, w.idx[k])
		if w.val[k] < 0 { // z = 1 − x
			c.val = append(c.val, -1)
			c.rhs--
		} else {
			c.val = append(c.val, 1)
		}
	}
	return c, vio, true
}

// strongResult is the strengthened LP's answer for one level.
type strongResult struct {
	bound int64 // lower bound on the level, offset included
	// pre are presolve's fixings: they hold in every plan.
	pre    []z.Lit
	vars   []z.Var
	d      []float64 // reduced costs of the free columns (0 for fixed)
	lp     float64   // the LP bound before rounding, without offset
	offset int64
	mag    float64 // magnitude of the sums behind d, for the margin
	rounds int
	cuts   int
	rel    *relaxation // the presolved rows and cuts, for the PB worker
	// uncut says rel is the presolved model alone (presolved's result),
	// which the canonical job and the LP may start from.
	uncut bool
	// loop is the sparse LP with its cuts, solved: branch and cut goes
	// on from it.
	loop *cutLoop
	noLP bool // the LP was too large: bound, lp and d are unset
	// dead says presolve proved the model has no point (relax then
	// reports false): no plan meets the hard rules and earlier levels.
	dead bool
	// source names the bound: "lp" (the dense simplex) or "lagrangian"
	// (the subgradient ascent, on models too large for the simplex).
	source BoundSource
}

// rcScale is the capacity the reduced-cost knapsack is scaled to: larger
// is tighter and makes a larger diagram.
const rcScale = 256

// fixesFor returns what every plan of value <= cutoff keeps: presolve's
// fixings and the columns whose reduced cost alone passes the slack
// cutoff − bound, and, for the columns left, the knapsack
// Σ_j floor(|d_j|·K/slack)·[x_j off its cheap bound] <= K (K = rcScale)
// as single-branch groups. Each follows from c·x >= L + Σ|d_j|·dev_j.
func (sr *strongResult) fixesFor(cutoff int64) (fixes []z.Lit, knap []encode.Group, ok bool) {
	slack := float64(cutoff-sr.offset) - sr.lp + 1e-9*sr.mag + 1e-6
	if slack < 0 {
		return nil, nil, false // the bound already proves cutoff impossible
	}
	fixes = slices.Clone(sr.pre)
	if sr.noLP {
		return fixes, nil, true
	}
	for j, v := range sr.vars {
		dj := sr.d[j]
		off := v.Pos() // the literal of moving off the cheap bound
		if dj < 0 {
			off = v.Neg()
		}
		a := math.Abs(dj)
		switch {
		case a > slack:
			fixes = append(fixes, off.Not())
		case slack > 0 && a*rcScale/slack >= 1:
			w := int64(a * rcScale / slack)
			knap = append(knap, encode.Group{Branches: []encode.Branch{{Lit: off, W: w}}})
		}
	}
	return fixes, knap, true
}

// asRows writes fixes and a knapsack from fixesFor as rows over the
// relaxation's columns; literals on other variables are left out.
func (sr *strongResult) asRows(fixes []z.Lit, knap []encode.Group) []irow {
	r := sr.rel
	var out []irow
	for _, m := range fixes {
		c, ok := r.col[m.Var()]
		if !ok {
			continue
		}
		v := int64(0)
		if m.IsPos() {
			v = 1
		}
		out = append(out, irow{idx: []int{c}, val: []int64{1}, op: encode.EQ, rhs: v})
	}
	if len(knap) > 0 {
		k := irow{op: encode.LE, rhs: rcScale}
		for _, g := range knap {
			b := g.Branches[0]
			c, ok := r.col[b.Lit.Var()]
			if !ok {
				continue
			}
			if b.Lit.IsPos() {
				k.idx, k.val = append(k.idx, c), append(k.val, b.W)
			} else { // w·(1 − x)
				k.idx, k.val = append(k.idx, c), append(k.val, -b.W)
				k.rhs -= b.W
			}
		}
		out = append(out, k)
	}
	return out
}

// strongLP bounds level i by the strengthened relaxation and keeps the
// reduced costs for fixing. It reports false when the model is too large
// for the dense simplex or time is short.
func strongLP(x *exact, i int, cutoff int64, end time.Time) (strongResult, bool) {
	return relax(x, i, cutoff, end, true, nil, nil)
}

// strongLPUnless is strongLP that gives up between rounds once stop says
// so (the PB workers proved the level meanwhile). pre, when not nil, is
// the level's presolved model (from presolved), which it then need not
// build again.
func strongLPUnless(x *exact, i int, cutoff int64, end time.Time, stop func() bool, pre *relaxation) (strongResult, bool) {
	return relax(x, i, cutoff, end, true, stop, pre)
}

// presolved is level i's presolved model alone, without the LP: what
// the PB workers start on while the LP is solved.
func presolved(x *exact, i int, end time.Time) (strongResult, bool) {
	return relax(x, i, 0, end, false, nil, nil)
}

func relax(x *exact, i int, cutoff int64, end time.Time, withLP bool, stop func() bool, pre *relaxation) (strongResult, bool) {
	var out strongResult
	if x.run != nil {
		// An interrupted solve stops the LP as its deadline would.
		until := stop
		stop = func() bool { return x.run.ctx.Err() != nil || until != nil && until() }
	}
	if time.Until(end) < 50*time.Millisecond {
		return out, false
	}
	budget := min(time.Until(end)*3/4, strongMaxTime)
	deadline := time.Now().Add(budget)
	var r *relaxation
	if pre != nil {
		r = pre.clone()
	} else {
		var ok bool
		if r, ok = presolvedRelaxation(x, i, deadline); !ok {
			out.dead = true
			return out, false
		}
	}
	if d := x.options().DumpRelax; d != "" && withLP {
		r.dumpLP(fmt.Sprintf("%s-l%d-%d.lp", d, i+1, len(r.rows)))
	}
	m, n := len(r.rows), len(r.vars)
	offset := r.constant + x.e.Linear.Offsets[i]
	if x.tracer().on() {
		x.tracer().f("level %d presolved: %d rows, %d columns, %d nonzeros", i+1, m, n, r.nonzeros())
	}
	out.offset, out.vars, out.rel, out.pre = offset, r.vars, r, r.fixed()
	out.noLP = true
	out.bound, out.lp = math.MinInt64, math.Inf(-1)
	if !withLP || m == 0 {
		// The presolved model alone, for the PB workers.
		out.uncut = true
		return out, true
	}
	if fitsSparse(r) {
		sp := x.sparseBound(out, i, r, offset, deadline, stop)
		return sp, !sp.noLP
	}
	// Too large for the simplex to be sure of finishing: the sparse LP,
	// whose duals bound the level wherever it stops; with little time
	// (under lgSkipLeft), the Lagrangian bound first, at a small share of
	// the budget, then the LP with what is left, keeping the better.
	// Here the LP is what can prove the level, so strongMaxTime does
	// not cap it, and it gets 7/8 of the level. Before the backbone
	// (backbone.go) its later rounds were worth most of the level: in
	// 30 s runs of 256x1000, 3/4 stopped it early in a round (gaps 34-36%
	// in two of three), and at 10 s 31/32 let the fifth solve end. With
	// the backbone fixed, 256x1000-tight's first cut round lifts the
	// bound to 1.06 M within 1.5 s and later iterations add little,
	// while the final polish needs time: at 10 s, 31/32 left that
	// instance at 1,162,875 or 1,157,068 in 7 runs of 10 (gap 4.5-5.0%)
	// and 7/8 at 1,131,068-1,132,925 in 10 of 10 (2.3-2.5%); 256x1000
	// went from 0.5-1.5% to 0.6-1.1%.
	// The ascent separates no cuts here: they depended on when the
	// workers improved the incumbent (its target), so the LP started
	// from other rows in each run and took 23,000-32,000 iterations to
	// its root and 3-8 s to its first round; without them the LP takes
	// the same path in every run.
	deadline = time.Now().Add(time.Until(end) * 7 / 8)
	triedLP := false
	if time.Until(deadline) >= lgSkipLeft {
		// Time enough for the LP: its duals bound the level wherever it
		// stops, better than the ascent's (see lgSkipLeft).
		sp := x.sparseBound(out, i, r, offset, deadline, stop)
		if !sp.noLP || stop != nil && stop() {
			return sp, true
		}
		triedLP = true // it failed early: the ascent's bound, then
	}
	lgEnd := time.Now().Add(min(time.Until(deadline)/4, lgMaxTime))
	lg := newLagrangian(r)
	target := func() float64 { return float64(x.obj[i] - offset) }
	res, ok := lg.ascend(float64(cutoff-offset+1)-1e-6, target, lgEnd, stop)
	x.tracer().f("level %d Lagrangian: bound %.1f + %d after %d steps, %d groups, %d rows relaxed",
		i+1, res.bound, offset, res.iters, len(lg.groups), len(lg.rows))
	if ok {
		out.noLP, out.source = false, BoundLagrangian
		out.lp, out.mag, out.d = res.bound, res.mag, res.d
		out.bound = int64(math.Ceil(res.bound-1e-6)) + offset
		out.rounds = 1
	}
	if triedLP || time.Until(deadline) < sparseLateMin || stop != nil && stop() || ok && out.bound >= cutoff+1 {
		return out, true
	}
	if sp := x.sparseBound(out, i, r, offset, deadline, stop); !sp.noLP && (out.noLP || sp.lp > out.lp) {
		return sp, true
	}
	return out, true
}

// sparseBound runs the cut loop on r and returns out with the LP's
// bound, or out unchanged when the LP gave none.
func (x *exact) sparseBound(out strongResult, i int, r *relaxation, offset int64, deadline time.Time, stop func() bool) strongResult {
	// Each round's bound is valid: the progress reports show it rise.
	floor := out.lp
	round := 0
	onBound := func(b float64, xs []float64) {
		round++
		if round == 1 && xs != nil && i == 3 && !x.rootLPSet && x.levelsProved(3) {
			x.rootLP, x.rootLPSet = int64(math.Ceil(b-1e-6))+offset, true
			x.rootNonzeros = r.nonzeros()
		}
		if x.run != nil { // a solve, not a bound measured alone
			x.offerVertex(r, xs)
		}
		if x.e.Exact && (out.noLP || b > floor) {
			x.lpBound = min(int64(math.Ceil(b-1e-6))+offset, x.obj[i])
			if x.run != nil {
				x.run.progress(i, x.obj, x.lpBound)
			}
		}
	}
	best, y, pr, loop, rounds, cuts := sparseRounds(r, deadline, stop, x.tracer(), onBound)
	if i == 3 && loop != nil && x.levelsProved(3) {
		switch {
		case loop.complete:
			x.canonRoot = &canonRoot{r: r, rows: slices.Clone(loop.rows), st: loop.st.Clone(), offset: offset}
		case loop.resumable && x.canonRoot == nil:
			// Stopped by the level's proof between two rounds: the
			// canonical re-solve finishes it instead of starting over
			// (64x250: 0.5 s). Not a copy: a copy refactors its basis,
			// and its Gomory cuts would differ. Branch and cut, which
			// moves the loop's bounds, takes it back (newBranchCut).
			x.openLoop, x.openOffset = loop, offset
		}
	}
	x.tracer().f("level %d LP: bound %.2f + %d, %d rounds, %d cuts", i+1, best, offset, rounds, cuts)
	if pr == nil {
		return out
	}
	out.noLP, out.source = false, BoundLP
	out.lp, out.rounds, out.cuts, out.loop = best, rounds, cuts, loop
	out.d, out.mag = reducedCosts(pr, y)
	for j := range r.vars {
		if r.lo[j] == r.hi[j] {
			out.d[j] = 0
		}
	}
	out.bound = int64(math.Ceil(best-1e-6)) + offset
	return out
}

// nonzeros counts the rows' coefficients.
func (r *relaxation) nonzeros() int {
	nz := 0
	for _, w := range r.rows {
		nz += len(w.idx)
	}
	return nz
}

// fixed is presolve's fixings as literals: they hold in every plan.
func (r *relaxation) fixed() []z.Lit {
	var out []z.Lit
	for j, v := range r.vars {
		switch {
		case r.lo[j] == r.hi[j] && r.lo[j] == 1:
			out = append(out, v.Pos())
		case r.lo[j] == r.hi[j]:
			out = append(out, v.Neg())
		}
	}
	return out
}

// strongMaxTime caps the LP and its cuts (three quarters of the level's
// time at most: on large parts they are what proves the level).
const strongMaxTime = 8 * time.Second

// sparseLateMin is the least time left for the sparse LP to follow the
// Lagrangian bound on a model past fitsSparse: 256x1000's root LP alone
// takes about 5 s. A variable so that tests can keep the Lagrangian's
// own result.
var sparseLateMin = time.Second

// lgSkipLeft is the time left from which the sparse LP runs alone on a
// model past fitsSparse, without the Lagrangian ascent first: on
// 256x1000 the LP stopped after 1.5 s bounds level 4 at 263,000, the
// ascent at 186,000 after 0.5 s, and since the ascent separates no cuts
// it only delays the LP. A variable so that tests can keep the ascent.
var lgSkipLeft = 1500 * time.Millisecond

// lgMaxTime caps the Lagrangian ascent ahead of the sparse LP. On
// 256x1000 it gives 186,000 after 0.5 s and 218,000 after 2 s, and the
// LP stopped after 1.5 s already gives 263,000 (its root 267,545): a
// longer ascent only delays the LP.
const lgMaxTime = 500 * time.Millisecond
