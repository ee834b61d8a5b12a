package localsearch

import (
	"math"
	"slices"
	"strings"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
)

// This file holds the local search's problem: lanes, their options and
// costs, routes and pins, read once from the pool.
// Costs follow docs/objective.md term by term (tests compare them with
// eval.Check).

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
	// A variable's placements draw on the same domains over and over, and
	// its sources name the same variables: each domain and each neighbour
	// is taken once (stamped with vi+1), and only the distinct ones are
	// sorted (1024x4000: 4 s sorting repeats before).
	domSeen := make([]int, len(pr.budget))
	seen := make([]int, len(pr.vars))
	for vi := range pr.vars {
		var nb []int
		add := func(us []int) {
			for _, u := range us {
				if seen[u] != vi+1 {
					seen[u] = vi + 1
					nb = append(nb, u)
				}
			}
		}
		for _, pl := range pr.vars[vi].pls {
			for _, d := range pl.draws {
				if domSeen[d.dom] != vi+1 {
					domSeen[d.dom] = vi + 1
					add(pr.domVars[d.dom])
				}
			}
		}
		for _, si := range pr.vars[vi].srcs {
			add(srcVars[si])
		}
		slices.Sort(nb)
		pr.vars[vi].nbrs = nb
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
