package localsearch

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
)

// This file holds the heuristic planner's incremental state and the local
// search over it. The state is lanes only: given the lanes, every demand
// source's best route is independent of the others, so routes are always
// re-derived optimally for the sources a lane change touches. Costs follow
// docs/objective.md term by term (tests compare them with eval.Check).

// lsCost is the search cost: broken hard constraints first (so that a
// best-effort start under conflicting pins still improves), then the four
// objective levels.
type lsCost [5]int64

func (c lsCost) less(d lsCost) bool {
	for i := range c {
		if c[i] != d[i] {
			return c[i] < d[i]
		}
	}
	return false
}

func (c lsCost) plus(d lsCost) lsCost {
	for i := range c {
		c[i] += d[i]
	}
	return c
}

func (c lsCost) minus(d lsCost) lsCost {
	for i := range c {
		c[i] -= d[i]
	}
	return c
}

// objectiveLess compares levels 1-4 only.
func (c lsCost) objectiveLess(d lsCost) bool {
	c[0], d[0] = 0, 0
	return c.less(d)
}

// lsEps absorbs float noise in GiB sums, as model.Budget.Holds does.
const lsEps = 1e-9

type lsDraw struct {
	dom int
	gb  float64
}

type lsPlacement struct {
	nodes    []string
	devices  []string
	draws    []lsDraw
	curMatch int             // current lanes of the variant on this node set
	curRes   model.Residency // residency of the first of them, if valid
	primary  int             // domain of the largest draw, for best fit
}

// lsOption is a lane decision for one variant; k < 0 is "not placed".
type lsOption struct {
	k int
	r model.Residency
}

var lsUnplaced = lsOption{k: -1}

type lsVar struct {
	v   *model.Variant
	pls []lsPlacement // eligible candidates, one per node set
	// anyEligible: some candidate is eligible, duplicates of a node set
	// included (level 2 asks only that).
	anyEligible bool
	res         []model.Residency
	load        int64 // start or move: churn-weighted load time plus h
	nCur        int
	pins        []*model.Pin
	maxGb       float64
	demand      float64 // demand of the sources it can serve
	srcs        []int   // sources whose best route depends on this lane
	nbrs        []int   // variants sharing a domain or a source
}

type lsRouteOpt struct {
	model string
	v     int       // -1: external
	cost  [3]lsCost // by residency index of the lane (external: [0])
}

type lsPinMember struct {
	model    string
	external bool
	vars     []int
}

type lsSource struct {
	name   string
	demand float64
	opts   []lsRouteOpt
	pins   [][]lsPinMember
}

// lsProblem is what the heuristics derive from a pool once.
type lsProblem struct {
	p       *model.Pool
	vars    []lsVar
	srcs    []lsSource
	budget  []float64 // plan budget per domain
	domVars [][]int
	h       int64
}

func resIndex(r model.Residency) int {
	switch r {
	case model.Always:
		return 0
	case model.Preferred:
		return 1
	}
	return 2
}

func newLSProblem(p *model.Pool) *lsProblem {
	if p == nil {
		p = &model.Pool{}
	}
	unit := p.Settings.LatencyUnitMs
	if !(unit > 0) || math.IsInf(unit, 0) {
		unit = 1
	}
	pr := &lsProblem{p: p, h: eval.Units(p.Settings.HysteresisMs / unit)}
	pr.addVariables(pr.addDomains(), unit)
	pr.addSources(unit)
	pr.linkNeighbours()
	return pr
}

// addDomains numbers the memory domains and keeps their plan budgets.
func (pr *lsProblem) addDomains() map[[2]string]int {
	domIx := map[[2]string]int{}
	for _, n := range pr.p.Nodes {
		for _, d := range n.Domains {
			key := [2]string{n.ID, d.ID}
			if _, dup := domIx[key]; !dup {
				domIx[key] = len(pr.budget)
				pr.budget = append(pr.budget, d.Budget.PlanGb)
			}
		}
	}
	return domIx
}

// addVariables gives each variant its eligible placements (one per node
// set, as eval maps them), residencies, current lanes and pins.
func (pr *lsProblem) addVariables(domIx map[[2]string]int, unit float64) {
	p, s := pr.p, pr.p.Settings
	ix := p.Index()
	pr.vars = make([]lsVar, len(p.Variants))
	for vi := range p.Variants {
		v := &p.Variants[vi]
		lv := &pr.vars[vi]
		lv.v = v
		lv.load = eval.Units(s.ChurnWeight*v.LoadTimeMs/unit) + pr.h
		var cur []model.CurrentLane
		for _, c := range p.Current.Lanes {
			if c.Variant == v.ID {
				cur = append(cur, c)
			}
		}
		lv.nCur = len(cur)
		seen := map[string]bool{}
		for _, pl := range v.Placements {
			key := laneKey(pl.Nodes, pl.Devices)
			ok, _ := model.Eligible(p, ix, v, pl)
			lv.anyEligible = lv.anyEligible || ok
			if seen[key] || !ok {
				seen[key] = true
				continue // eval maps a node and device set to its first candidate
			}
			seen[key] = true
			lp := lsPlacement{nodes: slices.Clone(pl.Nodes), devices: slices.Clone(pl.Devices), primary: -1}
			best := -1.0
			for _, d := range pl.Draws {
				di := domIx[[2]string{d.Node, d.Domain}]
				lp.draws = append(lp.draws, lsDraw{di, d.Gb})
				if d.Gb > best {
					best, lp.primary = d.Gb, di
				}
				lv.maxGb = math.Max(lv.maxGb, d.Gb)
			}
			for _, c := range cur {
				if laneKey(c.Nodes, c.Devices) == key {
					if lp.curMatch == 0 && c.Residency.Valid() {
						lp.curRes = c.Residency
					}
					lp.curMatch++
				}
			}
			lv.pls = append(lv.pls, lp)
		}
		if r, ok := v.FixedResidency(); ok {
			lv.res = []model.Residency{r}
		} else {
			lv.res = model.Residencies
		}
		for i := range p.Pins {
			if p.Pins[i].Variant == v.ID {
				lv.pins = append(lv.pins, &p.Pins[i])
			}
		}
	}
}

// addSources lists the demand sources exactly as eval names them
// (aliases, then direct models), each with its route options and their
// costs per residency, and its route pins.
func (pr *lsProblem) addSources(unit float64) {
	p := pr.p
	rs := newLSRoutes(pr, unit)
	for i := range p.Aliases {
		a := &p.Aliases[i]
		rs.addSource(a.ID, a, a.Demand, a.Candidates())
	}
	for _, m := range p.Models {
		if m.IsDemandSource() {
			rs.addSource(model.DirectSource(m.ID), nil, m.DirectDemand, []string{m.ID})
		}
	}
}

// lsRoutes is what addSources needs to know of the pool to route a source.
type lsRoutes struct {
	pr   *lsProblem
	unit float64
	// curRoute: each alias's current primary model.
	curRoute map[string]string
	models   map[string]*model.Model
	// byModel lists, per model, the variants that serve it and can run.
	byModel map[string][]int
	// canRun: some variant serving the model has an eligible candidate.
	canRun map[string]bool
	// names: the sources added so far.
	names map[string]bool
}

func newLSRoutes(pr *lsProblem, unit float64) *lsRoutes {
	p := pr.p
	rs := &lsRoutes{pr: pr, unit: unit, curRoute: map[string]string{}, models: map[string]*model.Model{}, names: map[string]bool{}}
	for _, r := range p.Current.Routes {
		if _, ok := rs.curRoute[r.Alias]; !ok && r.Primary != "" {
			rs.curRoute[r.Alias] = r.Primary
		}
	}
	for i := range p.Models {
		if _, dup := rs.models[p.Models[i].ID]; !dup {
			rs.models[p.Models[i].ID] = &p.Models[i]
		}
	}
	rs.byModel, rs.canRun = pr.servingVariants()
	return rs
}

// servingVariants returns, per model, the variants that serve it and
// have a candidate, in variant order, and which models some eligible
// variant serves.
func (pr *lsProblem) servingVariants() (byModel map[string][]int, canRun map[string]bool) {
	p := pr.p
	serves := map[[2]string]bool{}
	for _, v := range p.Variants {
		for _, m := range v.Models {
			serves[[2]string{v.ID, m}] = true
		}
	}
	for _, m := range p.Models {
		for _, v := range m.Variants {
			serves[[2]string{v, m.ID}] = true
		}
	}
	modelsOf := map[string][]string{}
	for pair := range serves {
		modelsOf[pair[0]] = append(modelsOf[pair[0]], pair[1])
	}
	byModel = map[string][]int{}
	canRun = map[string]bool{}
	for vi := range p.Variants {
		if pr.vars[vi].anyEligible {
			for _, m := range modelsOf[p.Variants[vi].ID] {
				canRun[m] = true
			}
		}
		if len(pr.vars[vi].pls) == 0 {
			continue
		}
		for _, m := range modelsOf[p.Variants[vi].ID] {
			if vs := byModel[m]; len(vs) == 0 || vs[len(vs)-1] != vi {
				byModel[m] = append(vs, vi)
			}
		}
	}
	return byModel, canRun
}

// localFirst reports whether model m should be served by a lane before
// going external (level 2).
func (rs *lsRoutes) localFirst(m string) bool {
	if mm, ok := rs.models[m]; ok && mm.External {
		return false
	}
	return rs.canRun[m]
}

// addSource adds source name (of alias, nil for a direct model) once.
func (rs *lsRoutes) addSource(name string, alias *model.Alias, demand float64, cands []string) {
	if rs.names[name] {
		return
	}
	rs.names[name] = true
	src := lsSource{name: name, demand: demand}
	rs.addRouteOptions(&src, alias, cands)
	if alias != nil {
		rs.addRoutePins(&src)
	}
	rs.pr.srcs = append(rs.pr.srcs, src)
}

// routeCost is the cost of routing src to model m at first-token and
// total latency ft and total: the SLO, the demand-weighted latency and
// the hysteresis of moving an alias off its current route.
func (rs *lsRoutes) routeCost(src *lsSource, alias *model.Alias, m string, ft, total float64) lsCost {
	isAlias := alias != nil
	cur, hasCur := rs.curRoute[src.name]
	var c lsCost
	if isAlias && alias.SLO.Breaks(ft, total) {
		c[3] = 1
	}
	c[4] = eval.Units(src.demand * ft / rs.unit)
	if isAlias && hasCur && cur != m {
		c[4] += rs.pr.h
	}
	return c
}

// addRouteOptions gives src an option per candidate model and variant
// serving it, external models when allowed.
func (rs *lsRoutes) addRouteOptions(src *lsSource, alias *model.Alias, cands []string) {
	p, s := rs.pr.p, rs.pr.p.Settings
	l2 := alias != nil && slices.ContainsFunc(cands, rs.localFirst)
	for _, m := range cands {
		mm, ok := rs.models[m]
		if !ok {
			continue
		}
		if mm.External {
			if !s.ExternalAllowed {
				continue
			}
			ft, total := s.ExpectedExternal(mm)
			c := rs.routeCost(src, alias, m, ft, total)
			if l2 {
				c[2] = 1
			}
			src.opts = append(src.opts, lsRouteOpt{model: m, v: -1, cost: [3]lsCost{c, c, c}})
			continue
		}
		for _, vi := range rs.byModel[m] {
			v := &p.Variants[vi]
			o := lsRouteOpt{model: m, v: vi}
			for ri, r := range model.Residencies {
				ft, total := s.Expected(v, r)
				o.cost[ri] = rs.routeCost(src, alias, m, ft, total)
			}
			src.opts = append(src.opts, o)
		}
	}
}

// addRoutePins gives an alias source the members of each route pin on it.
func (rs *lsRoutes) addRoutePins(src *lsSource) {
	p, s := rs.pr.p, rs.pr.p.Settings
	for _, pin := range p.Pins {
		if pin.Alias != src.name {
			continue
		}
		var members []lsPinMember
		for _, m := range pin.Route {
			mm, ok := rs.models[m]
			switch {
			case !ok:
			case mm.External:
				if s.ExternalAllowed {
					members = append(members, lsPinMember{model: m, external: true})
				}
			default:
				members = append(members, lsPinMember{model: m, vars: rs.byModel[m]})
			}
		}
		src.pins = append(src.pins, members)
	}
}

// linkNeighbours records who depends on whom, for incremental routes and
// the work list: a variant's sources and demand, each domain's variants,
// and each variant's neighbours (variants sharing a domain or a source).
func (pr *lsProblem) linkNeighbours() {
	srcVars := make([][]int, len(pr.srcs))
	for si := range pr.srcs {
		src := &pr.srcs[si]
		var vs []int
		for _, o := range src.opts {
			if o.v >= 0 {
				vs = append(vs, o.v)
			}
		}
		for _, pin := range src.pins {
			for _, m := range pin {
				vs = append(vs, m.vars...)
			}
		}
		slices.Sort(vs)
		vs = slices.Compact(vs)
		srcVars[si] = vs
		for _, vi := range vs {
			pr.vars[vi].srcs = append(pr.vars[vi].srcs, si)
			pr.vars[vi].demand += src.demand
		}
	}
	pr.domVars = make([][]int, len(pr.budget))
	for vi := range pr.vars {
		for _, pl := range pr.vars[vi].pls {
			for _, d := range pl.draws {
				if n := len(pr.domVars[d.dom]); n == 0 || pr.domVars[d.dom][n-1] != vi {
					pr.domVars[d.dom] = append(pr.domVars[d.dom], vi)
				}
			}
		}
	}
	for vi := range pr.vars {
		var nb []int
		for _, pl := range pr.vars[vi].pls {
			for _, d := range pl.draws {
				nb = append(nb, pr.domVars[d.dom]...)
			}
		}
		for _, si := range pr.vars[vi].srcs {
			nb = append(nb, srcVars[si]...)
		}
		slices.Sort(nb)
		pr.vars[vi].nbrs = slices.Compact(nb)
	}
}

func sortedKey(nodes []string) string {
	s := slices.Clone(nodes)
	slices.Sort(s)
	return strings.Join(s, "+")
}

// laneKey names a placement by its nodes and device choice, in any order.
func laneKey(nodes, devices []string) string {
	return sortedKey(nodes) + "[" + sortedKey(devices) + "]"
}

// options lists a variant's decisions: not placed, then every eligible
// placement with every residency it may take.
func (pr *lsProblem) options(vi int) []lsOption {
	lv := &pr.vars[vi]
	out := []lsOption{lsUnplaced}
	for k := range lv.pls {
		for _, r := range lv.res {
			out = append(out, lsOption{k, r})
		}
	}
	return out
}

// pinBroken counts the variant's lane pins that the option breaks.
func (pr *lsProblem) pinBroken(vi int, o lsOption) int64 {
	lv := &pr.vars[vi]
	var n int64
	for _, pin := range lv.pins {
		switch {
		case o.k < 0:
			n++
		case len(pin.Nodes) > 0 && sortedKey(pin.Nodes) != sortedKey(lv.pls[o.k].nodes):
			n++
		case pin.Residency != "" && pin.Residency != o.r:
			n++
		}
	}
	return n
}

// laneCost is the option's own cost: churn at level 4, broken pins at 0.
func (pr *lsProblem) laneCost(vi int, o lsOption) lsCost {
	lv := &pr.vars[vi]
	var c lsCost
	c[0] = pr.pinBroken(vi, o)
	switch {
	case o.k < 0:
		c[4] = pr.h * int64(lv.nCur)
	case lv.pls[o.k].curMatch == 0:
		c[4] = lv.load + pr.h*int64(lv.nCur)
	default:
		pl := &lv.pls[o.k]
		c[4] = pr.h * int64(lv.nCur-pl.curMatch)
		if pl.curRes != "" && pl.curRes != o.r {
			c[4] += pr.h
		}
	}
	return c
}

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

// Improve runs first-improvement local search from a: single-lane moves
// (another placement or residency, placed or not), swaps of two lanes'
// node sets, ejections of one or two lanes to admit another, demotions
// of the lanes crowding it out (lower residency, same nodes), and seeded
// random kicks (iterated local search), always re-deriving the best
// routes. It stops at a local optimum that kicks no longer improve, or at
// deadline, and never returns a plan that eval.Check rates worse than a
// (nor an invalid one when a is valid). The same pool, assignment and seed
// give the same result when the deadline does not cut the search short.
func Improve(p *model.Pool, a model.Assignment, seed uint64, deadline time.Time) model.Assignment {
	return ImproveUntilStale(p, a, seed, deadline, StaleKicks)
}

// ImproveUntilStale is Improve with the kick phase ending after stale
// kicks in a row that do not improve (Improve's is StaleKicks).
func ImproveUntilStale(p *model.Pool, a model.Assignment, seed uint64, deadline time.Time, stale int) model.Assignment {
	return ImproveContext(context.Background(), p, a, seed, deadline, stale)
}

// ImproveContext is ImproveUntilStale that also stops, as at its
// deadline, once ctx is done (an interrupted solve).
func ImproveContext(ctx context.Context, p *model.Pool, a model.Assignment, seed uint64, deadline time.Time, stale int) model.Assignment {
	out, _, _ := ImproveChecks(ctx, p, a, seed, deadline, stale, 0)
	return out
}

// ImproveChecks is ImproveContext that also stops after maxChecks
// evaluations of a move (0: no such cap), a budget that ends the search
// at the same move on every machine. It returns the plan, the
// evaluations made, and whether the deadline or ctx stopped the search
// before its own end or the budget did (the plan may then differ between
// runs).
func ImproveChecks(ctx context.Context, p *model.Pool, a model.Assignment, seed uint64, deadline time.Time, stale, maxChecks int) (model.Assignment, int, bool) {
	pr := newLSProblem(p)
	st := pr.newState()
	st.load(a)
	ls := &lsSearch{st: st, rng: rand.New(rand.NewPCG(seed, 0x5eed10ca1)), deadline: deadline, staleKicks: stale, ctx: ctx, maxChecks: maxChecks}
	ls.run()
	return ls.result(p, a), ls.checks, ls.clock
}

// result is the search's plan, or a when eval rates a better.
func (ls *lsSearch) result(p *model.Pool, a model.Assignment) model.Assignment {
	st := ls.st
	out := st.assignment()
	after := eval.Check(p, out)
	before := eval.Check(p, a)
	if before.Valid && (!after.Valid || before.Objective.Less(after.Objective)) {
		return a // cannot happen while the search's costs match eval's
	}
	return out
}

type lsSearch struct {
	st       *lsState
	rng      *rand.Rand
	deadline time.Time
	ctx      context.Context
	queue    []int
	queued   []bool
	stopped  bool
	checks   int
	// maxChecks, when positive, stops the search after that many
	// evaluations; clock is set when the deadline or ctx stopped it.
	maxChecks int
	clock     bool
	// staleKicks ends the kick phase after that many kicks in a row
	// fail to improve.
	staleKicks int
}

// timeUp checks the clock every few dozen evaluations.
func (ls *lsSearch) timeUp() bool {
	if ls.stopped {
		return true
	}
	ls.checks++
	if ls.maxChecks > 0 && ls.checks >= ls.maxChecks {
		ls.stopped = true
	} else if ls.checks%32 == 0 && (!ls.deadline.IsZero() && time.Now().After(ls.deadline) || ls.ctx.Err() != nil) {
		ls.stopped, ls.clock = true, true
	}
	return ls.stopped
}

func (ls *lsSearch) push(vi int) {
	if !ls.queued[vi] {
		ls.queued[vi] = true
		ls.queue = append(ls.queue, vi)
	}
}

func (ls *lsSearch) touch(vis ...int) {
	for _, vi := range vis {
		for _, n := range ls.st.pr.vars[vi].nbrs {
			ls.push(n)
		}
		ls.push(vi)
	}
}

// Limits of the kick phase: kicks stop after this many in a row fail to
// improve the best plan, or after maxKicks in all.
const (
	// StaleKicks is Improve's: the kick phase ends after this many
	// kicks in a row fail to improve the best plan.
	StaleKicks = 60
	lsMaxKicks = 400
)

func (ls *lsSearch) run() {
	st := ls.st
	n := len(st.pr.vars)
	ls.queued = make([]bool, n)
	for vi := range n {
		ls.push(vi)
	}
	ls.descend()
	best, bestCost := st.snapshot(), st.total
	stale := 0
	for kick := 0; kick < lsMaxKicks && stale < ls.staleKicks && n > 0 && !ls.timeUp(); kick++ {
		ls.kick()
		ls.descend()
		switch {
		case st.total.less(bestCost):
			best, bestCost, stale = st.snapshot(), st.total, 0
		case st.total == bestCost:
			best, stale = st.snapshot(), stale+1 // drift across plateaus
		default:
			st.restore(best)
			stale++
		}
	}
	if st.total != bestCost {
		st.restore(best)
	}
}

// descend applies improving moves until the work list is empty.
func (ls *lsSearch) descend() {
	for len(ls.queue) > 0 && !ls.timeUp() {
		vi := ls.queue[0]
		ls.queue = ls.queue[1:]
		ls.queued[vi] = false
		if changed := ls.improve(vi); len(changed) > 0 {
			ls.touch(changed...)
		}
	}
	if ls.stopped {
		for _, vi := range ls.queue {
			ls.queued[vi] = false
		}
		ls.queue = ls.queue[:0]
	}
}

// improve tries the moves of one variant and applies the first that
// lowers the cost, returning the variants it changed.
func (ls *lsSearch) improve(vi int) []int {
	st := ls.st
	pr := st.pr
	start, before := st.cur[vi], st.total
	bestO, bestC := start, before
	type blocked struct {
		o lsOption
		c lsCost
	}
	var ejects []blocked
	for _, o := range pr.options(vi) {
		if o == start || ls.timeUp() {
			continue
		}
		st.set(vi, o)
		switch c := st.total; {
		case c.less(bestC):
			bestO, bestC = o, c
		case o.k >= 0 && c[0] > before[0]:
			ejects = append(ejects, blocked{o, c})
		}
		st.set(vi, start)
	}
	if bestO != start {
		st.set(vi, bestO)
		return []int{vi}
	}
	if changed := ls.swap(vi); changed != nil {
		return changed
	}
	sort.SliceStable(ejects, func(i, j int) bool { return ejects[i].c.objectiveLess(ejects[j].c) })
	for i, e := range ejects {
		if i == 3 || ls.timeUp() {
			break
		}
		if changed := ls.eject(vi, e.o, e.c.objectiveLess(before)); changed != nil {
			return changed
		}
	}
	// Demotion, for the options that break one rule only (a domain
	// over its budget) and would pay were it repaired.
	tries := 0
	for _, e := range ejects {
		if tries == demoteTries || ls.timeUp() || !e.c.objectiveLess(before) {
			break
		}
		if e.c[0] != before[0]+1 {
			continue
		}
		tries++
		if changed := ls.demote(vi, e.o); changed != nil {
			return changed
		}
	}
	return nil
}

// demoteTries caps the options improve repairs by demotion: on
// 24x60-tight the one that pays is the fifth of those breaking one rule.
const demoteTries = 6

// demote admits option o of vi by lowering the residency of the lanes
// it crowds out, where they are: one lane at a time, the demotion that
// costs least first, until o fits. Ejection takes lanes off and places
// each anew in turn, so the first takes back the room the second
// needed; on 24x60-tight a two-node lane moved to a clique as preferred
// only pays with both lanes already on one of its nodes made auto.
func (ls *lsSearch) demote(vi int, o lsOption) []int {
	st := ls.st
	pr := st.pr
	before, start := st.total, st.cur[vi]
	st.set(vi, o)
	changed := []int{vi}
	var saved []lsOption
	undo := func() []int {
		for i := len(saved) - 1; i >= 0; i-- {
			st.set(changed[i+1], saved[i])
		}
		st.set(vi, start)
		return nil
	}
	for st.total[0] > before[0] {
		if ls.timeUp() {
			return undo()
		}
		bestB, bestO, bestC := -1, lsOption{}, lsCost{}
		for _, d := range pr.vars[vi].pls[o.k].draws {
			for _, u := range st.uses[d.dom] {
				b := u.v
				cur := st.cur[b]
				if b == vi || cur.r == model.Auto || len(pr.vars[b].pins) > 0 {
					continue
				}
				for _, r := range pr.vars[b].res {
					if resIndex(r) <= resIndex(cur.r) {
						continue // not lower
					}
					st.set(b, lsOption{cur.k, r})
					if c := st.total; bestB < 0 || c.less(bestC) {
						bestB, bestO, bestC = b, lsOption{cur.k, r}, c
					}
					st.set(b, cur)
				}
			}
		}
		if bestB < 0 {
			return undo()
		}
		saved = append(saved, st.cur[bestB])
		changed = append(changed, bestB)
		st.set(bestB, bestO)
	}
	if st.total.less(before) {
		return changed
	}
	return undo()
}

// swap exchanges the node sets of vi and another placed lane when both can
// run on the other's nodes.
func (ls *lsSearch) swap(vi int) []int {
	st := ls.st
	pr := st.pr
	a := st.cur[vi]
	if a.k < 0 || len(pr.vars[vi].pls) < 2 {
		return nil
	}
	keyA := laneKey(pr.vars[vi].pls[a.k].nodes, pr.vars[vi].pls[a.k].devices)
	before := st.total
	for _, bi := range pr.vars[vi].nbrs {
		b := st.cur[bi]
		if bi == vi || b.k < 0 || len(pr.vars[bi].pls) < 2 {
			continue
		}
		keyB := laneKey(pr.vars[bi].pls[b.k].nodes, pr.vars[bi].pls[b.k].devices)
		if keyA == keyB {
			continue
		}
		ka := placementByKey(&pr.vars[vi], keyB)
		kb := placementByKey(&pr.vars[bi], keyA)
		if ka < 0 || kb < 0 {
			continue
		}
		st.set(vi, lsUnplaced)
		st.set(bi, lsOption{kb, b.r})
		st.set(vi, lsOption{ka, a.r})
		if st.total.less(before) {
			return []int{vi, bi}
		}
		st.set(vi, lsUnplaced)
		st.set(bi, b)
		st.set(vi, a)
		if ls.timeUp() {
			break
		}
	}
	return nil
}

func placementByKey(lv *lsVar, key string) int {
	for k := range lv.pls {
		if laneKey(lv.pls[k].nodes, lv.pls[k].devices) == key {
			return k
		}
	}
	return -1
}

// eject admits option o of vi by taking one blocking lane (or two, when
// pairs) off its domains, then gives each ejected lane its best option.
func (ls *lsSearch) eject(vi int, o lsOption, pairs bool) []int {
	st := ls.st
	pr := st.pr
	before, start := st.total, st.cur[vi]
	var blockers []int
	for _, d := range pr.vars[vi].pls[o.k].draws {
		for _, u := range st.uses[d.dom] {
			if u.v != vi && !slices.Contains(blockers, u.v) && len(pr.vars[u.v].pins) == 0 {
				blockers = append(blockers, u.v)
			}
		}
	}
	sort.SliceStable(blockers, func(i, j int) bool { return pr.vars[blockers[i]].maxGb > pr.vars[blockers[j]].maxGb })
	if len(blockers) > 6 {
		blockers = blockers[:6]
	}
	try := func(out ...int) []int {
		saved := make([]lsOption, len(out))
		for i, b := range out {
			saved[i] = st.cur[b]
			st.set(b, lsUnplaced)
		}
		st.set(vi, o)
		for _, b := range out {
			ls.bestFor(b)
		}
		if st.total.less(before) {
			return append([]int{vi}, out...)
		}
		st.set(vi, start)
		for i, b := range out {
			st.set(b, saved[i])
		}
		return nil
	}
	for _, b := range blockers {
		if changed := try(b); changed != nil {
			return changed
		}
	}
	for i := range blockers {
		for j := i + 1; j < len(blockers) && pairs; j++ {
			if ls.timeUp() {
				return nil
			}
			if changed := try(blockers[i], blockers[j]); changed != nil {
				return changed
			}
		}
	}
	return nil
}

// bestFor moves vi to its cheapest option given everything else.
func (ls *lsSearch) bestFor(vi int) {
	st := ls.st
	bestO, bestC := st.cur[vi], st.total
	start := bestO
	for _, o := range st.pr.options(vi) {
		if o == start {
			continue
		}
		st.set(vi, o)
		if st.total.less(bestC) {
			bestO, bestC = o, st.total
		}
	}
	st.set(vi, bestO)
}

// kick perturbs a few random lanes: each goes to a random option that
// fits, or off, and its neighbourhood is queued for repair.
func (ls *lsSearch) kick() {
	st := ls.st
	n := len(st.pr.vars)
	for range 1 + ls.rng.IntN(3) {
		vi := ls.rng.IntN(n)
		opts := st.pr.options(vi)
		o := opts[ls.rng.IntN(len(opts))]
		if !st.fits(vi, o) {
			o = lsUnplaced
		}
		st.set(vi, o)
		ls.touch(vi)
	}
}
