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
	p, ix, nv, nn, srcs := g.p, g.ix, g.nv, g.nn, g.srcs
	// Roots in element order give parts in a stable order.
	partOf := map[int]int{}
	var parts []*model.Pool
	var counts []component
	part := func(el int) int {
		r := g.find(el)
		i, ok := partOf[r]
		if !ok {
			i = len(parts)
			partOf[r] = i
			parts = append(parts, &model.Pool{Settings: p.Settings})
			counts = append(counts, component{})
		}
		return i
	}
	nodePart := make([]int, nn)
	for ni := range p.Nodes {
		nodePart[ni] = part(nv + ni)
	}
	varPart := make([]int, nv)
	for vi := range p.Variants {
		varPart[vi] = part(vi)
	}
	srcPart := make([]int, len(srcs))
	for si := range srcs {
		srcPart[si] = part(nv + nn + si)
	}
	for ni, n := range p.Nodes {
		parts[nodePart[ni]].Nodes = append(parts[nodePart[ni]].Nodes, n)
		counts[nodePart[ni]].size++
	}
	for _, l := range p.Links {
		a, okA := ix.Node[l.A]
		b, okB := ix.Node[l.B]
		if okA && okB && nodePart[a] == nodePart[b] {
			parts[nodePart[a]].Links = append(parts[nodePart[a]].Links, l)
		}
	}
	for vi, v := range p.Variants {
		parts[varPart[vi]].Variants = append(parts[varPart[vi]].Variants, v)
		counts[varPart[vi]].size++
	}
	modelsOf := make([]map[string]bool, len(parts))
	for i := range modelsOf {
		modelsOf[i] = map[string]bool{}
	}
	for vi, v := range p.Variants {
		for _, m := range v.Models {
			modelsOf[varPart[vi]][m] = true
		}
		for _, m := range p.Models {
			if slices.Contains(m.Variants, v.ID) {
				modelsOf[varPart[vi]][m.ID] = true
			}
		}
	}
	directIn := map[string]int{}
	for si, s := range srcs {
		pi := srcPart[si]
		counts[pi].size++
		counts[pi].sources++
		for _, m := range s.cands {
			modelsOf[pi][m] = true
		}
		if s.alias >= 0 {
			parts[pi].Aliases = append(parts[pi].Aliases, p.Aliases[s.alias])
		} else {
			directIn[p.Models[s.model].ID] = pi
		}
	}
	for _, pin := range p.Pins {
		pi := -1
		if vi, ok := ix.Variant[pin.Variant]; ok && pin.Variant != "" {
			pi = varPart[vi]
		}
		if si, ok := g.srcIx[pin.Alias]; ok && pin.Alias != "" && srcs[si].alias >= 0 {
			if pi >= 0 && pi != srcPart[si] {
				return nil, false // a pin on a lane and a route of two parts
			}
			pi = srcPart[si]
			for _, m := range pin.Route {
				modelsOf[pi][m] = true
			}
		}
		if pi < 0 {
			return nil, false
		}
		parts[pi].Pins = append(parts[pi].Pins, pin)
	}
	for pi, pp := range parts {
		for _, m := range p.Models {
			if !modelsOf[pi][m.ID] {
				continue
			}
			// A part keeps a model's direct demand only when its own
			// source is there, so that no source counts twice.
			if at, ok := directIn[m.ID]; !ok || at != pi {
				m.DirectDemand, m.Required = 0, false
			}
			pp.Models = append(pp.Models, m)
		}
		for _, cl := range p.Current.Lanes {
			if vi, ok := ix.Variant[cl.Variant]; ok && varPart[vi] == pi {
				pp.Current.Lanes = append(pp.Current.Lanes, cl)
			}
		}
		for _, cr := range p.Current.Routes {
			if si, ok := g.srcIx[cr.Alias]; ok && srcs[si].alias >= 0 && srcPart[si] == pi {
				pp.Current.Routes = append(pp.Current.Routes, cr)
			}
		}
	}
	var out []component
	for pi, pp := range parts {
		// A part of bare nodes decides nothing and costs nothing.
		if len(pp.Variants) == 0 && counts[pi].sources == 0 && len(pp.Pins) == 0 {
			continue
		}
		pp.Sort()
		out = append(out, component{pool: pp, sources: counts[pi].sources, size: counts[pi].size})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].size > out[j].size })
	return out, true
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
