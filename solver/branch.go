package solver

import (
	"math"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/lp"
	"github.com/poolsolve/poolsolve/solver/mip"
	"github.com/poolsolve/poolsolve/solver/pb"
)

// newBranchCut starts level i's search from the cut loop of its
// strengthened LP; plans go through the evaluator as x.accept takes them.
func newBranchCut(x *exact, i int, sr *strongResult) *mip.BranchCut {
	cl := sr.loop
	if x.openLoop == cl {
		x.openLoop = nil // its bounds move now
	}
	b := mip.NewBranchCut(cl.St, cl.Problem(), sr.offset, cl.R.Lo, cl.R.Hi)
	b.Lazy = cl.Lazy()
	b.Load = func(rows []mip.Row) bool { return cl.LoadRows(rows, len(rows)) }
	b.Offer = func(xs []float64, ub *int64) bool {
		if !x.offerVertex(cl.R, xs) {
			return false
		}
		*ub = min(*ub, x.obj[i])
		return true
	}
	return b
}

// decodeVertex turns an integral vertex of r's LP into a plan, and
// reports whether the evaluator finds it valid.
func (x *exact) decodeVertex(r *mip.Relaxation, xs []float64) (model.Assignment, eval.Report, bool) {
	m := make([]bool, len(xs))
	for j, v := range xs {
		m[j] = v > 0.5
	}
	plan := x.sym.canonical(x.e.DecodeWith(pb.LitValues(r, m)))
	rep := x.chk.Check(plan)
	return plan, rep, rep.Valid
}

// offerVertex offers an integral vertex of r's LP as a plan, and reports
// whether it was valid. A cut round's vertex often is integral: on
// 24x60-tight's largest part the second round's is the optimum, which
// the round's bound proves 35-45 ms before a worker finds that plan.
// A mismatch between the encoding and the evaluator is kept in
// x.offerErr for the level to return.
func (x *exact) offerVertex(r *mip.Relaxation, xs []float64) bool {
	if xs == nil || x.offerErr != nil || !mip.Integral(xs) {
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

// canonRoot is level 4's root LP after a cut loop stopped by a rule of
// the model alone, so that a depth-first search from a copy of it is a
// function of the pool.
type canonRoot struct {
	r      *mip.Relaxation
	rows   []mip.Row
	lazy   *mip.LazyRows // the rows st lacks until a vertex violates them
	st     *lp.State
	offset int64
	bound  int64     // the loop's bound on level 4, offset included
	bounds []float64 // each solve's bound, for rootAt
}

// closedBound is the bound of a complete cut loop's last solve.
func closedBound(best float64, offset int64) int64 {
	return int64(math.Ceil(best-1e-6)) + offset
}

// reachedAt is the first solve whose bound reaches opt, or -1.
func reachedAt(bounds []float64, offset, opt int64) int {
	for k, b := range bounds {
		if !math.IsInf(b, -1) && closedBound(b, offset) >= opt {
			return k
		}
	}
	return -1
}

// rootAt says whether a loop that made bounds, stopped after its last
// solve (complete says by its own rule), is the canonical root for the
// optimum opt: the loop stopped at the first solve that reached opt, or
// ran to its end without reaching it. Both are functions of the model
// and opt, which the proof has made a function of the pool; stopping at
// the first solve that proves opt spares the rounds that cannot raise
// the bound any more (on 8x20, two of six and a quarter of the solve).
func rootAt(bounds []float64, offset, opt int64, complete bool) bool {
	k := reachedAt(bounds, offset, opt)
	return k == len(bounds)-1 && k >= 0 || k < 0 && complete
}

// closedRoot is level 4's canonical root (rootAt): the level's own, the
// loop its proof stopped between two rounds run on to the rule, or one
// built now. Nil when the deadline stops it first or the model is too
// large for the sparse LP.
func (x *exact) closedRoot() *canonRoot {
	opt := x.obj[3]
	if c := x.canonRoot; c != nil && rootAt(c.bounds, c.offset, opt, true) {
		return c
	}
	x.canonRoot = nil
	if c := x.canonSnap; c != nil && x.openLoop == nil && rootAt(c.bounds, c.offset, opt, false) {
		x.canonRoot = c
		return c
	}
	stop := func(cl *mip.CutLoop, offset int64) func() bool {
		return func() bool { return x.run.ctx.Err() != nil || reachedAt(cl.Bounds, offset, opt) >= 0 }
	}
	if cl := x.openLoop; cl != nil {
		x.openLoop = nil
		if reachedAt(cl.Bounds, x.openOffset, opt) < 0 {
			cl.Run(x.run.deadline, stop(cl, x.openOffset), nil)
		}
		if rootAt(cl.Bounds, x.openOffset, opt, cl.Complete) {
			x.canonRoot = &canonRoot{r: cl.R, rows: cl.Rows, lazy: cl.Lazy(), st: cl.St, offset: x.openOffset, bound: closedBound(cl.Best, x.openOffset), bounds: cl.Bounds}
			return x.canonRoot
		}
		if c := x.canonSnap; c != nil && rootAt(c.bounds, c.offset, opt, false) {
			x.canonRoot = c
			return c
		}
		if x.run.ctx.Err() != nil || !x.clock().Now().Before(x.run.deadline) {
			return nil
		}
		// The proof's loop ran past the first solve at opt (its
		// incumbent was not there yet): start over.
	}
	r, ok := presolvedRelaxation(x, 3, x.run.deadline)
	if !ok || len(r.Rows) == 0 || !mip.FitsSparse(r) {
		return nil
	}
	offset := r.Constant + x.e.Linear.Offsets[3]
	cl, ok := mip.NewCutLoop(r)
	if !ok {
		return nil
	}
	cl.SetTrace(x.tracer().f)
	cl.Run(x.run.deadline, stop(cl, offset), nil)
	if !rootAt(cl.Bounds, offset, opt, cl.Complete) {
		return nil
	}
	x.canonRoot = &canonRoot{r: r, rows: cl.Rows, lazy: cl.Lazy(), st: cl.St, offset: offset, bound: closedBound(cl.Best, offset), bounds: cl.Bounds}
	return x.canonRoot
}

// canonicalBC is canonicalize's re-solve by branch and cut: from the
// root (the level's own, or built now with every level at its optimum),
// the first plan of a depth-first search that prunes every node bounded
// above the optimum. False when it does not finish in time or when the
// level-4 model is too large for the sparse LP.
func (x *exact) canonicalBC() bool {
	root := x.closedRoot()
	if root == nil {
		return false
	}
	pr := &mip.Problem{C: make([]float64, len(root.r.C))}
	for j, c := range root.r.C {
		pr.C[j] = float64(c)
	}
	for _, w := range root.rows {
		pr.Rows = append(pr.Rows, mip.FloatRowOf(w))
	}
	b := mip.NewBranchCut(root.st.Clone(), pr, root.offset, root.r.Lo, root.r.Hi)
	b.Lazy = root.lazy
	var found model.Assignment
	b.Offer = func(xs []float64, ub *int64) bool {
		plan, rep, ok := x.decodeVertex(root.r, xs)
		if ok && rep.Objective == x.obj {
			found = plan
			*ub = x.obj[3] // the first plan at the optimum ends the search
		}
		return ok
	}
	b.Poll = func(ub *int64) (bool, error) { return found.Lanes != nil || x.run.ctx.Err() != nil, nil }
	ub := x.obj[3] + 1
	b.Run(x.run.deadline, &ub)
	if found.Lanes == nil {
		return false
	}
	x.best = found
	return true
}
