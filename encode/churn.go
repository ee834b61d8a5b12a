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
	p := e.Pool
	h := e.costs.h
	for vi := range p.Variants {
		e.checkStop()
		v := &p.Variants[vi]
		vl := &e.Variants[vi]
		var cs []model.CurrentLane
		for _, c := range p.Current.Lanes {
			if c.Variant == v.ID {
				c.Nodes = slices.Clone(c.Nodes)
				slices.Sort(c.Nodes)
				cs = append(cs, c)
			}
		}
		matched := make([]int, len(cs)) // lane kept by current lane ci, or -1
		kept := 0
		for ci, c := range cs {
			matched[ci] = -1
			for _, li := range vl.Lanes {
				if slices.Equal(e.Lanes[li].Nodes, c.Nodes) {
					matched[ci] = li
					kept++
					break
				}
			}
		}
		isCurrent := func(li int) bool { return slices.Contains(matched, li) }
		e.family("churn")
		sw := e.costs.start(v)
		var fresh []z.Lit
		for _, li := range vl.Lanes {
			if !isCurrent(li) {
				fresh = append(fresh, e.Lanes[li].Lit)
			}
		}
		if sw != 0 && len(fresh) > 0 {
			st := e.newVar("start["+v.ID+"]", MeanStart)
			e.about(st, func(vi *VarInfo) { vi.Variant = v.ID })
			for _, x := range fresh {
				e.orClause("start["+v.ID+"]", x.Not(), st)
			}
			e.define(st, anyOf(fresh))
			e.objTerm(3, st, sw)
		}
		for ci, c := range cs {
			if h == 0 {
				break
			}
			li := matched[ci]
			if li < 0 {
				e.objTerm(3, e.T, h)
				continue
			}
			x := e.Lanes[li].Lit
			name := v.ID + "@" + e.Lanes[li].Key
			stop := e.newVar("stop["+name+"]", MeanStop)
			e.about(stop, func(vi *VarInfo) { vi.Variant, vi.Nodes = v.ID, e.Lanes[li].Nodes })
			e.orClause("stop["+name+"]", x, stop)
			e.define(stop, func(val func(z.Lit) bool) bool { return !val(x) })
			e.objTerm(3, stop, h)
			ri := slices.Index(model.Residencies, c.Residency)
			if ri < 0 || slices.Index(matched, li) != ci {
				// No valid residency now, or not the first current lane
				// on these nodes: never charged a change (as eval reads it).
				continue
			}
			res := vl.Res[ri]
			chg := e.newVar("change["+name+"]", MeanChange)
			e.about(chg, func(vi *VarInfo) { vi.Variant, vi.Nodes, vi.Residency = v.ID, e.Lanes[li].Nodes, c.Residency })
			e.orClause("change["+name+"]", x.Not(), res, chg)
			e.define(chg, func(val func(z.Lit) bool) bool { return val(x) && !val(res) })
			e.objTerm(3, chg, h)
		}
		// The same costs as one group.
		g := Group{Else: h * int64(kept)}
		for _, li := range vl.Lanes {
			x := e.Lanes[li].Lit
			if !isCurrent(li) {
				g.Branches = append(g.Branches, Branch{x, sw + h*int64(kept)})
				continue
			}
			var ws [3]int64
			same, seen := true, false
			var first int64
			for ri, rho := range model.Residencies {
				if vl.Res[ri] == e.F() {
					continue
				}
				for ci, c := range cs {
					switch {
					case matched[ci] < 0:
					case matched[ci] != li:
						ws[ri] += h
					case slices.Index(matched, li) == ci && c.Residency.Valid() && c.Residency != rho:
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
			if same {
				g.Branches = append(g.Branches, Branch{x, first})
				continue
			}
			for ri, rho := range model.Residencies {
				res := vl.Res[ri]
				if res == e.F() {
					continue
				}
				k := e.newVar("keep["+v.ID+"@"+e.Lanes[li].Key+"]="+string(rho), MeanKeep)
				e.about(k, func(vi *VarInfo) { vi.Variant, vi.Nodes, vi.Residency = v.ID, e.Lanes[li].Nodes, rho })
				e.clause(k.Not(), x)
				e.clause(k.Not(), res)
				e.clause(x.Not(), res.Not(), k)
				e.define(k, func(val func(z.Lit) bool) bool { return val(x) && val(res) })
				g.Branches = append(g.Branches, Branch{k, ws[ri]})
			}
		}
		e.l4 = append(e.l4, g)
		e.l4src = append(e.l4src, -1)
		e.l4var = append(e.l4var, vi)
	}
}
