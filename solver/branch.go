package solver

import (
	"math"
	"slices"
	"time"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/lp"
)

// Branch and bound over the cut loop's LP (branch-and-cut with the cuts
// at the root only): depth first, each node re-solved by the dual simplex
// from the basis the last node left (a bound change keeps a basis dual
// feasible). A node is pruned only by a bound that is valid whatever the
// simplex did: the Lagrangian bound of its multipliers over the node's
// box (boxBound), or, for a node the simplex calls infeasible, that bound
// pushed along the dual ray. An integral vertex is decoded into a plan
// and offered to the evaluator like any other. When the tree is
// exhausted with every node pruned so, the incumbent is optimal.

type branchCut struct {
	st     *lp.State
	pr     *lpProblem // the LP's rows and costs, for the bounds
	offset int64      // added to the LP's value to make the level's
	// rootLo, rootHi is the root's box; lo, hi the node's.
	rootLo, rootHi []int64
	lo, hi         []int64
	nodes          int
	// incomplete is set when a node was left without a valid prune (a
	// numerical failure, an integral vertex that did not decode): the
	// search then proves nothing.
	incomplete bool
	// offer takes an integral vertex and lowers *ub when it is a better
	// plan; false when the vertex is no plan.
	offer func(xs []float64, ub *int64) bool
	// poll runs between nodes: the PB workers' answers, the clock of
	// the run; true ends the search.
	poll func(ub *int64) (bool, error)
}

type bcFrame struct {
	j      int
	second int64
	done   bool
}

func newBranchCutOn(st *lp.State, pr *lpProblem, offset int64, lo, hi []int64) *branchCut {
	return &branchCut{st: st, pr: pr, offset: offset, rootLo: lo, rootHi: hi,
		lo: slices.Clone(lo), hi: slices.Clone(hi)}
}

// newBranchCut starts level i's search from the cut loop of its
// strengthened LP; plans go through the evaluator as x.accept takes them.
func newBranchCut(x *exact, i int, sr *strongResult) *branchCut {
	cl := sr.loop
	if x.openLoop == cl {
		x.openLoop = nil // its bounds move now
	}
	b := newBranchCutOn(cl.st, cl.problem(), sr.offset, cl.r.lo, cl.r.hi)
	b.offer = func(xs []float64, ub *int64) bool {
		if !x.offerVertex(cl.r, xs) {
			return false
		}
		*ub = min(*ub, x.obj[i])
		return true
	}
	return b
}

// decodeVertex turns an integral vertex of r's LP into a plan, and
// reports whether the evaluator finds it valid.
func (x *exact) decodeVertex(r *relaxation, xs []float64) (model.Assignment, eval.Report, bool) {
	m := make([]bool, len(xs))
	for j, v := range xs {
		m[j] = v > 0.5
	}
	plan := x.sym.canonical(x.e.DecodeWith(pbVal(r, m)))
	rep := x.chk.Check(plan)
	return plan, rep, rep.Valid
}

// offerVertex offers an integral vertex of r's LP as a plan, and reports
// whether it was valid. A cut round's vertex often is integral: on
// 24x60-tight's largest part the second round's is the optimum, which
// the round's bound proves 35-45 ms before a worker finds that plan.
// A mismatch between the encoding and the evaluator is kept in
// x.offerErr for the level to return.
func (x *exact) offerVertex(r *relaxation, xs []float64) bool {
	if xs == nil || x.offerErr != nil || !integral(xs) {
		return false
	}
	plan, _, ok := x.decodeVertex(r, xs)
	if !ok {
		return false
	}
	if _, err := x.accept(plan, false); err != nil {
		x.offerErr = err
		return false
	}
	return true
}

// integral reports whether every value of xs is within bcIntTol of an
// integer.
func integral(xs []float64) bool {
	for _, v := range xs {
		if f := v - math.Floor(v); f > bcIntTol && f < 1-bcIntTol {
			return false
		}
	}
	return true
}

// canonRoot is level 4's root LP after a complete cut loop: it depends
// on the relaxation alone, so a depth-first search from a copy of it is
// a function of the pool.
type canonRoot struct {
	r      *relaxation
	rows   []irow
	st     *lp.State
	offset int64
}

// canonicalBC is canonicalize's re-solve by branch and cut: from the
// root (the level's own, or built now with every level at its optimum),
// the first plan of a depth-first search that prunes every node bounded
// above the optimum. False when it does not finish in time or when the
// level-4 model is too large for the sparse LP.
func (x *exact) canonicalBC() bool {
	root := x.canonRoot
	if cl := x.openLoop; root == nil && cl != nil {
		x.openLoop = nil
		cl.run(x.run.deadline, func() bool { return x.run.ctx.Err() != nil }, nil)
		if !cl.complete {
			return false
		}
		root = &canonRoot{r: cl.r, rows: cl.rows, st: cl.st, offset: x.openOffset}
	}
	if root == nil {
		r, ok := presolvedRelaxation(x, 3, x.run.deadline)
		if !ok || len(r.rows) == 0 || !fitsSparse(r) {
			return false
		}
		_, _, _, cl, _, _ := sparseRounds(r, x.run.deadline, nil, x.tracer(), nil)
		if cl == nil || !cl.complete {
			return false
		}
		root = &canonRoot{r: r, rows: cl.rows, st: cl.st, offset: r.constant + x.e.Linear.Offsets[3]}
	}
	pr := &lpProblem{c: make([]float64, len(root.r.c))}
	for j, c := range root.r.c {
		pr.c[j] = float64(c)
	}
	for _, w := range root.rows {
		pr.rows = append(pr.rows, floatRow(w))
	}
	b := newBranchCutOn(root.st.Clone(), pr, root.offset, root.r.lo, root.r.hi)
	var found model.Assignment
	b.offer = func(xs []float64, ub *int64) bool {
		plan, rep, ok := x.decodeVertex(root.r, xs)
		if ok && rep.Objective == x.obj {
			found = plan
			*ub = x.obj[3] // the first plan at the optimum ends the search
		}
		return ok
	}
	b.poll = func(ub *int64) (bool, error) { return found.Lanes != nil || x.run.ctx.Err() != nil, nil }
	ub := x.obj[3] + 1
	b.run(x.run.deadline, &ub)
	if found.Lanes == nil {
		return false
	}
	x.best = found
	return true
}

// run searches depth first until the tree is exhausted (true: nothing
// better than *ub exists), end, or poll says stop.
func (b *branchCut) run(end time.Time, ub *int64) (bool, error) {
	st := b.st
	var stack []bcFrame
	descend := true
	for {
		if !descend {
			// Backtrack to the next untried branch.
			for len(stack) > 0 {
				f := &stack[len(stack)-1]
				if !f.done {
					f.done = true
					b.setBounds(f.j, f.second, f.second)
					break
				}
				b.setBounds(f.j, b.rootLo[f.j], b.rootHi[f.j])
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 0 {
				return !b.incomplete, nil
			}
		}
		if b.poll != nil {
			if stop, err := b.poll(ub); err != nil || stop {
				return false, err
			}
		}
		if !time.Now().Before(end) {
			return false, nil
		}
		b.nodes++
		status := st.Solve(end, 0)
		if status == lp.Limit {
			return false, nil
		}
		y := st.Duals()
		bound, ok := boxBound(b.pr, y, b.lo, b.hi)
		if status == lp.Infeasible {
			if rb, rok := b.rayBound(y, st.Ray()); rok && (!ok || rb > bound) {
				bound, ok = rb, true
			}
		}
		if ok && int64(math.Ceil(bound-1e-6))+b.offset >= *ub {
			descend = false
			continue
		}
		if status != lp.Optimal {
			b.incomplete = true
			descend = false
			continue
		}
		xs := st.X()
		j, v := b.branchColumn(xs)
		if j < 0 {
			// An integral vertex: the subtree's best is this plan, which
			// the valid bound must now prune (the vertex is optimal for
			// the node only within the simplex's tolerance).
			if !b.offer(xs, ub) || !ok || int64(math.Ceil(bound-1e-6))+b.offset < *ub {
				b.incomplete = true
			}
			descend = false
			continue
		}
		first := int64(math.Round(v))
		stack = append(stack, bcFrame{j: j, second: 1 - first})
		b.setBounds(j, first, first)
		descend = true
	}
}

func (b *branchCut) setBounds(j int, lo, hi int64) {
	b.lo[j], b.hi[j] = lo, hi
	b.st.SetBounds(j, float64(lo), float64(hi))
}

// branchColumn picks the most fractional column, or −1 when the vertex
// is integral.
func (b *branchCut) branchColumn(xs []float64) (int, float64) {
	best, bestF := -1, 0.0
	for j, v := range xs {
		if b.lo[j] == b.hi[j] {
			continue
		}
		f := v - math.Floor(v)
		f = math.Min(f, 1-f)
		if f > bcIntTol && f > bestF {
			best, bestF = j, f
		}
	}
	if best < 0 {
		return -1, 0
	}
	return best, xs[best]
}

const bcIntTol = 1e-6

// rayBound is the bound at y ± t·ray for growing t: valid for any t, and
// past every finite one when the node is truly infeasible.
func (b *branchCut) rayBound(y, ray []float64) (float64, bool) {
	if len(ray) != len(y) {
		return 0, false
	}
	var ym, rm float64
	for k := range y {
		ym = math.Max(ym, math.Abs(y[k]))
		rm = math.Max(rm, math.Abs(ray[k]))
	}
	if rm == 0 {
		return 0, false
	}
	best, ok := math.Inf(-1), false
	yt := make([]float64, len(y))
	for _, t := range []float64{1e3, 1e6, 1e9} {
		for _, sg := range []float64{1, -1} {
			step := sg * t * (1 + ym) / rm
			for k := range y {
				yt[k] = y[k] + step*ray[k]
			}
			if v, vok := boxBound(b.pr, yt, b.lo, b.hi); vok && v > best {
				best, ok = v, true
			}
		}
	}
	return best, ok
}

// boxBound is lagrangeBound over the box lo <= x <= hi: y·b plus, per
// column, the least of d_j·lo_j and d_j·hi_j, less the rounding margin.
func boxBound(pr *lpProblem, y []float64, lo, hi []int64) (float64, bool) {
	d, mag := reducedCosts(pr, y)
	var val float64
	for ri := range pr.rows {
		val += clipY(pr.rows[ri].op, y[ri]) * pr.rows[ri].rhs
	}
	for j, dj := range d {
		l, h := float64(lo[j]), float64(hi[j])
		val += math.Min(dj*l, dj*h)
		mag += math.Abs(dj) * math.Max(math.Abs(l), math.Abs(h))
	}
	if math.IsNaN(val) || math.IsInf(val, 0) || math.IsNaN(mag) || math.IsInf(mag, 0) {
		return 0, false
	}
	return val - 1e-9*mag, true
}
