package encode

import (
	"slices"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/model"
)

// churn builds the level-4 churn terms against the current state: start
// (a lane not running now on its node set: load time plus h), stop (a
// current lane stopped or moved: h) and change (kept with another
// residency: h). Current lanes of variants the pool does not know are
// ignored, as eval does: no plan can keep them.
//
// The linear mirror counts start, stop and change literals; the level-4
// diagram sees the same costs as one group per variant, whose branches
// are exact (a lane, or a lane with one residency), because not placing
// the variant (Else) may cost more than keeping it.
func (e *Encoding) churn() {
	for vi := range e.Pool.Variants {
		e.checkStop()
		cur := e.currentLanes(vi)
		e.family("churn")
		sw := e.costs.start(&e.Pool.Variants[vi])
		e.startTerm(vi, cur, sw)
		e.stopTerms(vi, cur)
		e.l4 = append(e.l4, e.churnGroup(vi, cur, sw))
		e.l4src = append(e.l4src, -1)
		e.l4var = append(e.l4var, vi)
	}
}

// current is what of a variant runs now, matched to its lanes.
type current struct {
	lanes   []model.CurrentLane // nodes sorted
	matched []int               // the lane current lane ci keeps, or -1
	kept    int                 // current lanes with a lane
}

func (c *current) isCurrent(li int) bool { return slices.Contains(c.matched, li) }

// currentLanes matches variant vi's current lanes to its lanes by node set.
func (e *Encoding) currentLanes(vi int) *current {
	v := &e.Pool.Variants[vi]
	c := &current{}
	for _, cl := range e.Pool.Current.Lanes {
		if cl.Variant == v.ID {
			cl.Nodes = slices.Clone(cl.Nodes)
			slices.Sort(cl.Nodes)
			c.lanes = append(c.lanes, cl)
		}
	}
	c.matched = make([]int, len(c.lanes))
	for ci, cl := range c.lanes {
		c.matched[ci] = -1
		for _, li := range e.Variants[vi].Lanes {
			if v.Placements[e.Lanes[li].Placement].On(cl.Nodes, cl.Devices) {
				c.matched[ci] = li
				c.kept++
				break
			}
		}
	}
	return c
}

// startTerm charges sw when variant vi runs on a lane it does not run on
// now.
func (e *Encoding) startTerm(vi int, cur *current, sw int64) {
	v := &e.Pool.Variants[vi]
	var fresh []z.Lit
	for _, li := range e.Variants[vi].Lanes {
		if !cur.isCurrent(li) {
			fresh = append(fresh, e.Lanes[li].Lit)
		}
	}
	if sw == 0 || len(fresh) == 0 {
		return
	}
	st := e.newVar("start["+v.ID+"]", MeanStart)
	e.about(st, func(vi *About) { vi.Variant = v.ID })
	for _, x := range fresh {
		e.orClause("start["+v.ID+"]", x.Not(), st)
	}
	e.define(st, anyOf(fresh))
	e.objTerm(3, st, sw)
}

// stopTerms charges h per current lane stopped or moved, and per kept lane
// with another residency than now.
func (e *Encoding) stopTerms(vi int, cur *current) {
	h := e.costs.h
	if h == 0 {
		return
	}
	v := &e.Pool.Variants[vi]
	vl := &e.Variants[vi]
	for ci, c := range cur.lanes {
		li := cur.matched[ci]
		if li < 0 {
			e.objTerm(3, e.T, h)
			continue
		}
		x := e.Lanes[li].Lit
		name := v.ID + "@" + e.Lanes[li].Key
		stop := e.newVar("stop["+name+"]", MeanStop)
		e.about(stop, func(vi *About) { vi.Variant, vi.Nodes = v.ID, e.Lanes[li].Nodes })
		e.orClause("stop["+name+"]", x, stop)
		e.define(stop, func(val func(z.Lit) bool) bool { return !val(x) })
		e.objTerm(3, stop, h)
		ri := slices.Index(model.Residencies, c.Residency)
		if ri < 0 || slices.Index(cur.matched, li) != ci {
			// No valid residency now, or not the first current lane
			// on these nodes: never charged a change (as eval reads it).
			continue
		}
		res := vl.Res[ri]
		chg := e.newVar("change["+name+"]", MeanChange)
		e.about(chg, func(vi *About) { vi.Variant, vi.Nodes, vi.Residency = v.ID, e.Lanes[li].Nodes, c.Residency })
		e.orClause("change["+name+"]", x.Not(), res, chg)
		e.define(chg, func(val func(z.Lit) bool) bool { return val(x) && !val(res) })
		e.objTerm(3, chg, h)
	}
}

// churnGroup is variant vi's churn as one level-4 group: a fresh lane
// pays sw plus h per current lane, a current lane h per other current
// lane and per residency change, where it depends on the residency
// through a keep literal per residency.
func (e *Encoding) churnGroup(vi int, cur *current, sw int64) Group {
	h := e.costs.h
	g := Group{Else: h * int64(cur.kept)}
	for _, li := range e.Variants[vi].Lanes {
		x := e.Lanes[li].Lit
		if !cur.isCurrent(li) {
			g.Branches = append(g.Branches, Branch{x, sw + h*int64(cur.kept)})
			continue
		}
		ws, first, same := e.keepWeights(vi, li, cur)
		if same {
			g.Branches = append(g.Branches, Branch{x, first})
			continue
		}
		g.Branches = append(g.Branches, e.keepBranches(vi, li, ws)...)
	}
	return g
}

// keepWeights is what keeping current lane li costs with each residency
// the variant may have; same reports that the cost is first for all of
// them.
func (e *Encoding) keepWeights(vi, li int, cur *current) (ws [3]int64, first int64, same bool) {
	h := e.costs.h
	vl := &e.Variants[vi]
	same = true
	seen := false
	for ri, rho := range model.Residencies {
		if vl.Res[ri] == e.F() {
			continue
		}
		for ci, c := range cur.lanes {
			switch {
			case cur.matched[ci] < 0:
			case cur.matched[ci] != li:
				ws[ri] += h
			case slices.Index(cur.matched, li) == ci && c.Residency.Valid() && c.Residency != rho:
				ws[ri] += h
			}
		}
		if seen && ws[ri] != first {
			same = false
		}
		if !seen {
			first, seen = ws[ri], true
		}
	}
	return ws, first, same
}

// keepBranches are lane li's branches per residency, each on an exact
// keep literal (the lane with that residency).
func (e *Encoding) keepBranches(vi, li int, ws [3]int64) []Branch {
	v := &e.Pool.Variants[vi]
	vl := &e.Variants[vi]
	x := e.Lanes[li].Lit
	var out []Branch
	for ri, rho := range model.Residencies {
		res := vl.Res[ri]
		if res == e.F() {
			continue
		}
		k := e.newVar("keep["+v.ID+"@"+e.Lanes[li].Key+"]="+string(rho), MeanKeep)
		e.about(k, func(vi *About) { vi.Variant, vi.Nodes, vi.Residency = v.ID, e.Lanes[li].Nodes, rho })
		e.clause(k.Not(), x)
		e.clause(k.Not(), res)
		e.clause(x.Not(), res.Not(), k)
		e.define(k, func(val func(z.Lit) bool) bool { return val(x) && val(res) })
		out = append(out, Branch{k, ws[ri]})
	}
	return out
}
