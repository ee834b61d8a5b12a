package localsearch

import (
	"math"
	"slices"
	"sort"

	"github.com/poolsolve/poolsolve/model"
)

// This file holds the heuristic planner's incremental state: lanes only. The state is lanes only: given the lanes, every demand
// source's best route is independent of the others, so routes are always
// re-derived optimally for the sources a lane change touches. Costs follow
// docs/objective.md term by term (tests compare them with eval.Check).

type lsUse struct {
	v  int
	gb float64
	r  model.Residency
}

// lsState is one set of lane decisions with its cost kept incrementally.
type lsState struct {
	pr       *lsProblem
	cur      []lsOption
	uses     [][]lsUse // per domain
	over     []bool    // per domain: breaks the residency rule
	route    []int     // per source: option index, -1 uncovered
	srcCost  []lsCost
	laneCost []lsCost
	total    lsCost
	ops      int
}

func (pr *lsProblem) newState() *lsState {
	st := &lsState{
		pr: pr, cur: make([]lsOption, len(pr.vars)), uses: make([][]lsUse, len(pr.budget)),
		over: make([]bool, len(pr.budget)), route: make([]int, len(pr.srcs)),
		srcCost: make([]lsCost, len(pr.srcs)), laneCost: make([]lsCost, len(pr.vars)),
	}
	for vi := range pr.vars {
		st.cur[vi] = lsUnplaced
		st.laneCost[vi] = pr.laneCost(vi, lsUnplaced)
		st.total = st.total.plus(st.laneCost[vi])
	}
	for si := range pr.srcs {
		st.route[si], st.srcCost[si] = st.bestRoute(si)
		st.total = st.total.plus(st.srcCost[si])
	}
	return st
}

// domainOver applies the residency rule to domain d, leaving variant skip
// out and adding extra (skip < 0 and a zero extra leave it as is).
func (st *lsState) domainOver(d, skip int, extra lsUse) bool {
	var resident, always, maxAuto float64
	add := func(u lsUse) {
		switch u.r {
		case model.Always:
			resident += u.gb
			always += u.gb
		case model.Preferred:
			resident += u.gb
		default:
			maxAuto = math.Max(maxAuto, u.gb)
		}
	}
	for _, u := range st.uses[d] {
		if u.v != skip {
			add(u)
		}
	}
	if extra.r != "" {
		add(extra)
	}
	b := st.pr.budget[d] + lsEps
	return resident > b || (maxAuto > 0 && maxAuto+always > b)
}

// fits reports whether the option keeps every domain it draws on within
// the residency rule, with the variant's own lane moved there.
func (st *lsState) fits(vi int, o lsOption) bool {
	if o.k < 0 {
		return true
	}
	for _, d := range st.pr.vars[vi].pls[o.k].draws {
		if st.domainOver(d.dom, vi, lsUse{vi, d.gb, o.r}) {
			return false
		}
	}
	return true
}

// set changes one lane and re-derives everything that depends on it.
func (st *lsState) set(vi int, o lsOption) {
	old := st.cur[vi]
	if old == o {
		return
	}
	st.ops++
	pr := st.pr
	lv := &pr.vars[vi]
	if old.k >= 0 {
		for _, d := range lv.pls[old.k].draws {
			us := st.uses[d.dom]
			if i := slices.IndexFunc(us, func(u lsUse) bool { return u.v == vi }); i >= 0 {
				st.uses[d.dom] = slices.Delete(us, i, i+1)
			}
			st.recheck(d.dom)
		}
	}
	st.cur[vi] = o
	if o.k >= 0 {
		for _, d := range lv.pls[o.k].draws {
			st.uses[d.dom] = append(st.uses[d.dom], lsUse{vi, d.gb, o.r})
			st.recheck(d.dom)
		}
	}
	lc := pr.laneCost(vi, o)
	st.total = st.total.minus(st.laneCost[vi]).plus(lc)
	st.laneCost[vi] = lc
	for _, si := range lv.srcs {
		r, c := st.bestRoute(si)
		st.total = st.total.minus(st.srcCost[si]).plus(c)
		st.route[si], st.srcCost[si] = r, c
	}
}

func (st *lsState) recheck(d int) {
	over := st.domainOver(d, -1, lsUse{})
	if over != st.over[d] {
		st.over[d] = over
		if over {
			st.total[0]++
		} else {
			st.total[0]--
		}
	}
}

var lsUncovered = lsCost{0, 1, 0, 0, 0}

// bestRoute picks the source's cheapest valid route under the lanes as
// they are; a route pin forces its first available member.
func (st *lsState) bestRoute(si int) (int, lsCost) {
	src := &st.pr.srcs[si]
	optCost := func(i int) (lsCost, bool) {
		o := &src.opts[i]
		if o.v < 0 {
			return o.cost[0], true
		}
		c := st.cur[o.v]
		if c.k < 0 {
			return lsCost{}, false
		}
		return o.cost[resIndex(c.r)], true
	}
	if len(src.pins) > 0 {
		var broken int64
		want := st.firstAvailable(src.pins[0])
		for _, pin := range src.pins[1:] {
			if st.firstAvailable(pin) != want {
				broken++
			}
		}
		if want == "" {
			return -1, lsUncovered.plus(lsCost{broken})
		}
		best, bestCost := -1, lsCost{}
		for i := range src.opts {
			if src.opts[i].model != want {
				continue
			}
			if c, ok := optCost(i); ok && (best < 0 || c.less(bestCost)) {
				best, bestCost = i, c
			}
		}
		if best < 0 { // the pinned member is no candidate: nothing can hold
			return -1, lsUncovered.plus(lsCost{broken + 1})
		}
		return best, bestCost.plus(lsCost{broken})
	}
	best, bestCost := -1, lsUncovered
	for i := range src.opts {
		if c, ok := optCost(i); ok && c.less(bestCost) {
			best, bestCost = i, c
		}
	}
	return best, bestCost
}

func (st *lsState) firstAvailable(members []lsPinMember) string {
	for _, m := range members {
		if m.external {
			return m.model
		}
		for _, vi := range m.vars {
			if st.cur[vi].k >= 0 {
				return m.model
			}
		}
	}
	return ""
}

// load sets the state from an assignment, keeping what maps onto eligible
// placements and allowed residencies and dropping the rest.
func (st *lsState) load(a model.Assignment) {
	pr := st.pr
	byID := map[string]int{}
	for vi := range pr.vars {
		if _, dup := byID[pr.vars[vi].v.ID]; !dup {
			byID[pr.vars[vi].v.ID] = vi
		}
	}
	done := map[int]bool{}
	for _, lc := range a.Lanes {
		vi, ok := byID[lc.Variant]
		if !ok || done[vi] {
			continue
		}
		done[vi] = true
		key := laneKey(lc.Nodes, lc.Devices)
		lv := &pr.vars[vi]
		for k := range lv.pls {
			if laneKey(lv.pls[k].nodes, lv.pls[k].devices) != key {
				continue
			}
			r := lc.Residency
			if !slices.Contains(lv.res, r) {
				r = lv.res[len(lv.res)-1]
			}
			st.set(vi, lsOption{k, r})
		}
	}
}

// assignment writes the state out: lanes by variant, routes by source.
func (st *lsState) assignment() model.Assignment {
	pr := st.pr
	a := model.Assignment{Lanes: []model.LaneChoice{}, Routes: []model.RouteChoice{}}
	for vi, o := range st.cur {
		if o.k >= 0 {
			a.Lanes = append(a.Lanes, model.LaneChoice{
				Variant: pr.vars[vi].v.ID, Nodes: slices.Clone(pr.vars[vi].pls[o.k].nodes),
				Devices: slices.Clone(pr.vars[vi].pls[o.k].devices), Residency: o.r,
			})
		}
	}
	for si, ri := range st.route {
		rc := model.RouteChoice{Source: pr.srcs[si].name}
		if ri >= 0 {
			o := pr.srcs[si].opts[ri]
			rc.Model = o.model
			if o.v >= 0 {
				rc.Variant = pr.vars[o.v].v.ID
			}
		}
		a.Routes = append(a.Routes, rc)
	}
	sort.SliceStable(a.Lanes, func(i, j int) bool { return a.Lanes[i].Variant < a.Lanes[j].Variant })
	sort.SliceStable(a.Routes, func(i, j int) bool { return a.Routes[i].Source < a.Routes[j].Source })
	return a
}

// objective is the state's objective vector, levels 1-4.
func (st *lsState) objective() model.Objective {
	return model.Objective{st.total[1], st.total[2], st.total[3], st.total[4]}
}

func (st *lsState) snapshot() []lsOption { return slices.Clone(st.cur) }

func (st *lsState) restore(s []lsOption) {
	// Unplace first so that lanes moving into each other's room never
	// pass through an overfull domain for long.
	for vi, o := range s {
		if st.cur[vi] != o && o.k < 0 {
			st.set(vi, o)
		}
	}
	for vi, o := range s {
		st.set(vi, o)
	}
}

// byStake orders the variants by what the sources they can serve cost
// now, dearest first: the descent's first pass visits them in this
// order, and on a large pool the clock often cuts that pass short. In
// index order, the short polishes of 256x1000 at a 2 s limit each
// revisited the same first variants, and the plan kept a level 4 of
// 2,263,658 that one pass in this order takes to 576,645.
func (st *lsState) byStake() []int {
	stake := make([]lsCost, len(st.pr.vars))
	order := make([]int, len(st.pr.vars))
	for vi := range st.pr.vars {
		order[vi] = vi
		for _, si := range st.pr.vars[vi].srcs {
			stake[vi] = stake[vi].plus(st.srcCost[si])
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return stake[order[b]].less(stake[order[a]]) })
	return order
}
