package solver

import (
	"slices"
	"sort"

	"github.com/poolsolve/poolsolve/model"
)

// component is an independent part of a pool: nodes, variants and demand
// sources that share nothing with the rest (no node, no lane, no route, no
// pin), solved on its own. Its objective adds to the others'.
type component struct {
	pool    *model.Pool
	sources int // demand sources, for the time share
	size    int // nodes + variants + sources
}

// splitComponents cuts p into the connected components of its variable
// interaction graph: a variant joins the nodes of every placement it may
// take (eligible, or held off only by a cordon, so that pin explanations
// can name the cordon), a source joins the variants that may serve it, a
// route pin joins its alias to the variants of its members. Each part is a
// pool of its own; pins naming nothing the pool has go to a part of their
// own, which is infeasible with an explanation.
//
// A part keeps a model's direct demand only when its own source is in the
// part, so that no source is counted twice.
func splitComponents(p *model.Pool) []component {
	g := newPartGraph(p)
	if g.orphan {
		// A pin that names nothing the pool has: rare, so the whole pool
		// is solved as one part and explains it exactly.
		return []component{g.whole()}
	}
	out, ok := g.parts()
	if !ok {
		return []component{g.whole()}
	}
	return out
}

// partSource is a demand source as splitComponents sees it.
type partSource struct {
	id    string
	alias int // -1 for a model source
	model int
	cands []string
}

// partGraph is the variable interaction graph of a pool as a union-find
// over variants [0,nv), nodes [nv,nv+nn) and sources after them.
type partGraph struct {
	p      *model.Pool
	ix     *model.PoolIndex
	nv, nn int
	srcs   []partSource
	srcIx  map[string]int
	parent []int
	// orphan: a pin names a lane or alias the pool does not have.
	orphan bool
}

func newPartGraph(p *model.Pool) *partGraph {
	g := &partGraph{p: p, ix: p.Index(), nv: len(p.Variants), nn: len(p.Nodes), srcIx: map[string]int{}}
	for ai := range p.Aliases {
		g.srcs = append(g.srcs, partSource{p.Aliases[ai].ID, ai, -1, p.Aliases[ai].Candidates()})
	}
	for mi := range p.Models {
		if p.Models[mi].IsDemandSource() {
			g.srcs = append(g.srcs, partSource{model.DirectSource(p.Models[mi].ID), -1, mi, []string{p.Models[mi].ID}})
		}
	}
	g.parent = make([]int, g.nv+g.nn+len(g.srcs))
	for i := range g.parent {
		g.parent[i] = i
	}
	placeable := g.joinPlacements()
	g.joinSources(placeable)
	return g
}

func (g *partGraph) find(i int) int {
	for g.parent[i] != i {
		g.parent[i] = g.parent[g.parent[i]]
		i = g.parent[i]
	}
	return i
}

func (g *partGraph) union(a, b int) {
	ra, rb := g.find(a), g.find(b)
	if ra < rb {
		g.parent[rb] = ra
	} else if rb < ra {
		g.parent[ra] = rb
	}
}

// joinPlacements joins each variant to the nodes of every placement it
// may take, eligible or held off only by a cordon (so that pin
// explanations can name the cordon); it reports which variants can run.
func (g *partGraph) joinPlacements() []bool {
	p, ix := g.p, g.ix
	uncordoned := p.EveryNodeAvailable()
	placeable := make([]bool, g.nv)
	for vi := range p.Variants {
		v := &p.Variants[vi]
		for _, pl := range v.Placements {
			ok, _ := model.Eligible(p, ix, v, pl)
			if !ok && v.Kind != model.Recipe {
				ok, _ = model.Eligible(uncordoned, ix, v, pl)
			}
			if !ok {
				continue
			}
			placeable[vi] = true
			for _, n := range pl.Nodes {
				g.union(vi, g.nv+ix.Node[n])
			}
		}
	}
	return placeable
}

// joinSources joins each source to the variants that may serve it, and a
// route pin's alias to its members' variants.
func (g *partGraph) joinSources(placeable []bool) {
	p, ix := g.p, g.ix
	serves := map[string][]int{}
	for vi := range p.Variants {
		for _, m := range p.Variants[vi].Models {
			serves[m] = append(serves[m], vi)
		}
	}
	for _, m := range p.Models {
		for _, id := range m.Variants {
			if vi, ok := ix.Variant[id]; ok {
				serves[m.ID] = append(serves[m.ID], vi)
			}
		}
	}
	joinModel := func(s int, m string) {
		for _, vi := range serves[m] {
			if placeable[vi] {
				g.union(g.nv+g.nn+s, vi)
			}
		}
	}
	for si, s := range g.srcs {
		g.srcIx[s.id] = si
		for _, m := range s.cands {
			joinModel(si, m)
		}
	}
	for _, pin := range p.Pins {
		if pin.Alias != "" {
			if si, ok := g.srcIx[pin.Alias]; ok && g.srcs[si].alias >= 0 {
				for _, m := range pin.Route {
					joinModel(si, m)
				}
			} else {
				g.orphan = true
			}
		}
		if pin.Variant != "" {
			if _, ok := ix.Variant[pin.Variant]; !ok {
				g.orphan = true
			}
		}
	}
}

// whole is the pool as one part.
func (g *partGraph) whole() component {
	return component{pool: g.p, size: g.nn + g.nv + len(g.srcs), sources: len(g.srcs)}
}

// parts builds a pool per connected component, largest first; false when
// a pin spans two parts (the caller keeps the pool whole).
func (g *partGraph) parts() ([]component, bool) {
	s := g.newPartSplit()
	s.addNodes()
	s.addVariants()
	s.addSources()
	if !s.addPins() {
		return nil, false
	}
	s.addModelsAndCurrent()
	return s.components(), true
}

// partSplit is the pool being cut into parts: which part each node,
// variant and source went to, and what each part holds so far.
type partSplit struct {
	g                          *partGraph
	parts                      []*model.Pool
	counts                     []component
	nodePart, varPart, srcPart []int
	// modelsOf: the models each part's variants, sources and pins name.
	modelsOf []map[string]bool
	// directIn: the part holding each model's direct source.
	directIn map[string]int
}

// newPartSplit numbers the parts by their roots in element order (nodes,
// variants, sources), which gives parts a stable order.
func (g *partGraph) newPartSplit() *partSplit {
	p, nv, nn := g.p, g.nv, g.nn
	s := &partSplit{g: g, directIn: map[string]int{}}
	partOf := map[int]int{}
	part := func(el int) int {
		r := g.find(el)
		i, ok := partOf[r]
		if !ok {
			i = len(s.parts)
			partOf[r] = i
			s.parts = append(s.parts, &model.Pool{Settings: p.Settings})
			s.counts = append(s.counts, component{})
		}
		return i
	}
	s.nodePart = make([]int, nn)
	for ni := range p.Nodes {
		s.nodePart[ni] = part(nv + ni)
	}
	s.varPart = make([]int, nv)
	for vi := range p.Variants {
		s.varPart[vi] = part(vi)
	}
	s.srcPart = make([]int, len(g.srcs))
	for si := range g.srcs {
		s.srcPart[si] = part(nv + nn + si)
	}
	s.modelsOf = make([]map[string]bool, len(s.parts))
	for i := range s.modelsOf {
		s.modelsOf[i] = map[string]bool{}
	}
	return s
}

// addNodes gives each part its nodes and the links between them.
func (s *partSplit) addNodes() {
	p, ix := s.g.p, s.g.ix
	for ni, n := range p.Nodes {
		s.parts[s.nodePart[ni]].Nodes = append(s.parts[s.nodePart[ni]].Nodes, n)
		s.counts[s.nodePart[ni]].size++
	}
	for _, l := range p.Links {
		a, okA := ix.Node[l.A]
		b, okB := ix.Node[l.B]
		if okA && okB && s.nodePart[a] == s.nodePart[b] {
			s.parts[s.nodePart[a]].Links = append(s.parts[s.nodePart[a]].Links, l)
		}
	}
}

// addVariants gives each part its variants and notes the models they serve.
func (s *partSplit) addVariants() {
	p := s.g.p
	for vi, v := range p.Variants {
		s.parts[s.varPart[vi]].Variants = append(s.parts[s.varPart[vi]].Variants, v)
		s.counts[s.varPart[vi]].size++
	}
	for vi, v := range p.Variants {
		for _, m := range v.Models {
			s.modelsOf[s.varPart[vi]][m] = true
		}
		for _, m := range p.Models {
			if slices.Contains(m.Variants, v.ID) {
				s.modelsOf[s.varPart[vi]][m.ID] = true
			}
		}
	}
}

// addSources gives each part its aliases and notes where each model's
// direct source went.
func (s *partSplit) addSources() {
	p := s.g.p
	for si, src := range s.g.srcs {
		pi := s.srcPart[si]
		s.counts[pi].size++
		s.counts[pi].sources++
		for _, m := range src.cands {
			s.modelsOf[pi][m] = true
		}
		if src.alias >= 0 {
			s.parts[pi].Aliases = append(s.parts[pi].Aliases, p.Aliases[src.alias])
		} else {
			s.directIn[p.Models[src.model].ID] = pi
		}
	}
}

// addPins gives each pin to the part of its lane or alias; false when
// they are in two parts or it names neither.
func (s *partSplit) addPins() bool {
	g := s.g
	for _, pin := range g.p.Pins {
		pi := -1
		if vi, ok := g.ix.Variant[pin.Variant]; ok && pin.Variant != "" {
			pi = s.varPart[vi]
		}
		if si, ok := g.srcIx[pin.Alias]; ok && pin.Alias != "" && g.srcs[si].alias >= 0 {
			if pi >= 0 && pi != s.srcPart[si] {
				return false // a pin on a lane and a route of two parts
			}
			pi = s.srcPart[si]
			for _, m := range pin.Route {
				s.modelsOf[pi][m] = true
			}
		}
		if pi < 0 {
			return false
		}
		s.parts[pi].Pins = append(s.parts[pi].Pins, pin)
	}
	return true
}

// addModelsAndCurrent gives each part the models it names and the
// current lanes and routes of its variants and aliases.
func (s *partSplit) addModelsAndCurrent() {
	g := s.g
	p, ix := g.p, g.ix
	for pi, pp := range s.parts {
		for _, m := range p.Models {
			if !s.modelsOf[pi][m.ID] {
				continue
			}
			// A part keeps a model's direct demand only when its own
			// source is there, so that no source counts twice.
			if at, ok := s.directIn[m.ID]; !ok || at != pi {
				m.DirectDemand, m.Required = 0, false
			}
			pp.Models = append(pp.Models, m)
		}
		for _, cl := range p.Current.Lanes {
			if vi, ok := ix.Variant[cl.Variant]; ok && s.varPart[vi] == pi {
				pp.Current.Lanes = append(pp.Current.Lanes, cl)
			}
		}
		for _, cr := range p.Current.Routes {
			if si, ok := g.srcIx[cr.Alias]; ok && g.srcs[si].alias >= 0 && s.srcPart[si] == pi {
				pp.Current.Routes = append(pp.Current.Routes, cr)
			}
		}
	}
}

// components returns the parts that decide something, largest first.
func (s *partSplit) components() []component {
	var out []component
	for pi, pp := range s.parts {
		// A part of bare nodes decides nothing and costs nothing.
		if len(pp.Variants) == 0 && s.counts[pi].sources == 0 && len(pp.Pins) == 0 {
			continue
		}
		pp.Sort()
		out = append(out, component{pool: pp, sources: s.counts[pi].sources, size: s.counts[pi].size})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].size > out[j].size })
	return out
}

// restrict keeps the lanes and routes of a plan that belong to part q.
func restrict(a model.Assignment, q *model.Pool) model.Assignment {
	vs := map[string]bool{}
	for _, v := range q.Variants {
		vs[v.ID] = true
	}
	ss := map[string]bool{}
	for _, al := range q.Aliases {
		ss[al.ID] = true
	}
	for _, m := range q.Models {
		if m.IsDemandSource() {
			ss[model.DirectSource(m.ID)] = true
		}
	}
	out := model.Assignment{Lanes: []model.LaneChoice{}, Routes: []model.RouteChoice{}}
	for _, l := range a.Lanes {
		if vs[l.Variant] {
			out.Lanes = append(out.Lanes, l)
		}
	}
	for _, r := range a.Routes {
		if ss[r.Source] {
			out.Routes = append(out.Routes, r)
		}
	}
	return out
}

// merge joins the plans of the parts, sorted as model.Assignment says.
func merge(as []model.Assignment) model.Assignment {
	out := model.Assignment{Lanes: []model.LaneChoice{}, Routes: []model.RouteChoice{}}
	for _, a := range as {
		out.Lanes = append(out.Lanes, a.Lanes...)
		out.Routes = append(out.Routes, a.Routes...)
	}
	sort.SliceStable(out.Lanes, func(i, j int) bool { return out.Lanes[i].Variant < out.Lanes[j].Variant })
	sort.SliceStable(out.Routes, func(i, j int) bool { return out.Routes[i].Source < out.Routes[j].Source })
	return out
}
