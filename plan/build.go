package plan

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

// Build turns a solve's result into a plan: lanes per node with their
// memory, routes with fallbacks and expected latency, the objective
// levels, and the diff from p.Current with a reason per change where one
// is known. The same inputs give the same plan.
//
// Build never panics and never trusts the result to be valid: a nil pool
// is empty, a nil result is an infeasible plan, lanes of variants the pool
// lacks (and second lanes or routes for one variant or source) are left
// out with a note, and a route keeps the names it was given. Neither p nor
// res is modified.
func Build(p *model.Pool, res *solver.Result, meta Meta) *Plan {
	if p == nil {
		p = &model.Pool{}
	}
	pl := &Plan{
		Schema:      Schema,
		Fleet:       scrub(meta.Fleet),
		Solver:      meta.Solver,
		Fallbacks:   scrubAll(meta.Fallbacks),
		Interrupted: meta.Interrupted,
		Levels:      []Level{},
		Nodes:       []Node{},
		Routes:      []Route{},
		Changes:     []Change{},
		Notes:       scrubAll(meta.Notes),
	}
	if p.Routing != nil {
		rt := *p.Routing
		rt.Basis = scrub(rt.Basis)
		pl.Routing = &rt
	}
	if pl.Solver == "" && res != nil {
		pl.Solver = string(res.Stats.Solver)
	}
	if res != nil {
		pl.Explanations = explanations(res.Explanations)
	}
	b := newBuilder(p, res)
	if res == nil || res.Infeasible {
		pl.Infeasible = true
		if res == nil {
			pl.Explanations = append(pl.Explanations, Explanation{Subject: "solver", Reason: "returned no result"})
		}
		pl.Nodes = b.nodes()
		return pl
	}
	obj := res.Objective
	pl.Objective = &obj
	pl.Levels = levels(res.Levels, p.Settings.LatencyUnitMs)
	pl.Search = search(res, pl.Levels, meta)
	pl.Nodes = b.nodes()
	pl.Routes = b.routes()
	pl.Changes = b.diff()
	pl.Unknown = b.unknown
	pl.Now = b.now()
	pl.Summary = summarize(pl.Changes)
	pl.Rollout = b.rollout(pl.Changes)
	pl.Notes = append(pl.Notes, b.notes...)
	return pl
}

// placed is a lane of the assignment, resolved against the pool.
type placed struct {
	v       *model.Variant
	nodes   []string
	devices []string // the placement's device choice
	res     model.Residency
	draws   []model.Draw // nil when the nodes match no candidate placement
	serves  []string     // sources routed to the lane
}

// use is how the plan fills one memory domain.
type use struct {
	resident, always float64
	residentBy       []string // lanes drawing resident memory, sorted
	alwaysBy         []string
	autoMax          float64
	autoBy           string
}

type nodeDomain struct{ node, domain string }

type builder struct {
	p     *model.Pool
	ix    *model.PoolIndex
	lanes map[string]*placed
	// laneIDs are lanes' keys in order, once laneFor has asked.
	laneIDs []string
	served  map[string]model.RouteChoice
	use     map[nodeDomain]*use
	// avail are the models a route could fall back on in the plan.
	avail map[string]bool
	expl  map[string][]solver.Explanation
	notes []string
	// unknown are current lanes on nodes that could not be asked.
	unknown []UnknownLane
}

func newBuilder(p *model.Pool, res *solver.Result) *builder {
	b := &builder{
		p: p, ix: p.Index(),
		lanes: map[string]*placed{}, served: map[string]model.RouteChoice{},
		use: map[nodeDomain]*use{}, avail: map[string]bool{}, expl: map[string][]solver.Explanation{},
	}
	if res == nil {
		return b
	}
	for _, e := range res.Explanations {
		b.expl[e.Subject] = append(b.expl[e.Subject], e)
	}
	if res.Infeasible {
		return b
	}
	for _, lc := range res.Assignment.Lanes {
		v := b.variant(lc.Variant)
		switch {
		case v == nil:
			b.note("the plan places %s, which the pool does not know; left out", lc.Variant)
			continue
		case b.lanes[v.ID] != nil:
			b.note("the plan places %s twice; the first placement is kept", v.ID)
			continue
		}
		nodes := slices.Clone(lc.Nodes)
		slices.Sort(nodes)
		l := &placed{v: v, nodes: nodes, devices: slices.Sorted(slices.Values(lc.Devices)), res: lc.Residency}
		if k := v.Placement(nodes, lc.Devices); k >= 0 {
			l.draws = v.Placements[k].Draws
		}
		b.lanes[v.ID] = l
		for _, d := range l.draws {
			u := b.useOf(d.Node, d.Domain)
			switch l.res {
			case model.Always:
				u.always += d.Gb
				u.alwaysBy = append(u.alwaysBy, v.ID)
				fallthrough
			case model.Preferred:
				u.resident += d.Gb
				u.residentBy = append(u.residentBy, v.ID)
			case model.Auto:
				if d.Gb > u.autoMax || u.autoBy == "" {
					u.autoMax, u.autoBy = d.Gb, v.ID
				}
			}
		}
	}
	for _, u := range b.use {
		slices.Sort(u.residentBy)
		slices.Sort(u.alwaysBy)
	}
	for _, rc := range res.Assignment.Routes {
		if _, dup := b.served[rc.Source]; dup {
			b.note("the plan routes %s twice; the first route is kept", rc.Source)
			continue
		}
		b.served[rc.Source] = rc
		if l := b.lanes[rc.Variant]; l != nil && rc.Model != "" {
			l.serves = append(l.serves, rc.Source)
		}
	}
	for _, l := range b.lanes {
		slices.Sort(l.serves)
	}
	for i := range p.Models {
		m := &p.Models[i]
		if m.External {
			b.avail[m.ID] = p.Settings.ExternalAllowed
			continue
		}
		for vid, l := range b.lanes {
			if serves(l.v, m) || slices.Contains(m.Variants, vid) {
				b.avail[m.ID] = true
				break
			}
		}
	}
	return b
}

func (b *builder) note(format string, args ...any) {
	b.notes = append(b.notes, scrub(fmt.Sprintf(format, args...)))
}

func (b *builder) useOf(node, domain string) *use {
	k := nodeDomain{node, domain}
	u := b.use[k]
	if u == nil {
		u = &use{}
		b.use[k] = u
	}
	return u
}

// useAt is how the plan fills a domain, without recording it.
func (b *builder) useAt(node, domain string) use {
	if u := b.use[nodeDomain{node, domain}]; u != nil {
		return *u
	}
	return use{}
}

func (b *builder) variant(id string) *model.Variant {
	i, ok := b.ix.Variant[id]
	if !ok {
		return nil
	}
	return &b.p.Variants[i]
}

func (b *builder) model(id string) *model.Model {
	i, ok := b.ix.Model[id]
	if !ok {
		return nil
	}
	return &b.p.Models[i]
}

func (b *builder) alias(id string) *model.Alias {
	i, ok := b.ix.Alias[id]
	if !ok {
		return nil
	}
	return &b.p.Aliases[i]
}

func serves(v *model.Variant, m *model.Model) bool {
	return slices.Contains(v.Models, m.ID) || slices.Contains(m.Variants, v.ID)
}

// nodes lists every node with its domains and lanes.
func (b *builder) nodes() []Node {
	out := make([]Node, 0, len(b.p.Nodes))
	for _, n := range b.p.Nodes {
		pn := Node{ID: n.ID, Unavailable: scrub(n.Unavailable), Federated: n.Federated, Domains: []Domain{}, Lanes: []Lane{}}
		for _, d := range n.Domains {
			u := b.useAt(n.ID, d.ID)
			pn.Domains = append(pn.Domains, Domain{
				ID: d.ID, PlanGb: GiB(d.Budget.PlanGb), AdmitGb: GiB(d.Budget.AdmitGb), Rule: scrub(d.Budget.Rule),
				HeadroomGb: GiB(d.Budget.HeadroomGb), ResidentGb: GiB(u.resident), AlwaysGb: GiB(u.always),
				FreeGb: GiB(d.Budget.PlanGb - u.resident), LargestAuto: u.autoBy, LargestAutoGb: GiB(u.autoMax),
			})
		}
		for _, l := range b.lanes {
			if !slices.Contains(l.nodes, n.ID) {
				continue
			}
			ln := Lane{Variant: l.v.ID, Models: slices.Clone(l.v.Models), Residency: l.res, Kind: l.v.Kind,
				Devices: l.devices, Draws: []Draw{}, Serves: slices.Clone(l.serves)}
			if ln.Models == nil {
				ln.Models = []string{}
			}
			for _, d := range l.draws {
				if d.Node == n.ID {
					ln.Draws = append(ln.Draws, Draw{Domain: d.Domain, Gb: GiB(d.Gb)})
				}
			}
			for _, o := range l.nodes {
				if o != n.ID {
					ln.With = append(ln.With, o)
				}
			}
			pn.Lanes = append(pn.Lanes, ln)
		}
		slices.SortFunc(pn.Lanes, func(x, y Lane) int {
			return cmp.Or(cmp.Compare(rank(x.Residency), rank(y.Residency)), strings.Compare(x.Variant, y.Variant))
		})
		out = append(out, pn)
	}
	slices.SortStableFunc(out, func(x, y Node) int { return strings.Compare(x.ID, y.ID) })
	return out
}

// rank orders residencies strongest first; unknown ones last.
func rank(r model.Residency) int {
	if i := slices.Index(model.Residencies, r); i >= 0 {
		return i
	}
	return len(model.Residencies)
}

// source is one demand source of the pool.
type source struct {
	name   string
	alias  *model.Alias // nil for a model requested directly
	demand float64
}

// sources lists the demand sources: aliases, then directly requested
// models, each in id order.
func (b *builder) sources() []source {
	var out []source
	for i := range b.p.Aliases {
		a := &b.p.Aliases[i]
		out = append(out, source{name: a.ID, alias: a, demand: a.Demand})
	}
	var direct []source
	for _, m := range b.p.Models {
		if m.IsDemandSource() {
			direct = append(direct, source{name: model.DirectSource(m.ID), demand: m.DirectDemand})
		}
	}
	slices.SortStableFunc(out, func(x, y source) int { return strings.Compare(x.name, y.name) })
	slices.SortStableFunc(direct, func(x, y source) int { return strings.Compare(x.name, y.name) })
	return append(out, direct...)
}

// routes lists what serves each demand source.
func (b *builder) routes() []Route {
	out := []Route{}
	seen := map[string]bool{}
	for _, s := range b.sources() {
		if seen[s.name] {
			continue
		}
		seen[s.name] = true
		r := Route{Source: s.name, Demand: finite(s.demand)}
		if s.alias != nil {
			r.DemandSource = scrub(s.alias.DemandSource)
		}
		if s.alias != nil && s.alias.SLO != nil {
			r.SLO = &SLO{FirstTokenMs: Ms(s.alias.SLO.FirstTokenMs), TotalMs: Ms(s.alias.SLO.TotalMs)}
		}
		rc, ok := b.served[s.name]
		if !ok || rc.Model == "" {
			r.Reason = b.explain(s.name)
			out = append(out, r)
			continue
		}
		r.Model = rc.Model
		if m := b.model(rc.Model); m != nil && m.External {
			r.External = true
		} else if l := b.lanes[rc.Variant]; l != nil {
			r.Variant, r.Nodes, r.Residency = l.v.ID, slices.Clone(l.nodes), l.res
		} else {
			r.Variant = rc.Variant
		}
		ft, total := b.latency(rc.Model, r.Variant, r.Residency)
		r.FirstTokenMs, r.TotalMs = Ms(ft), Ms(total)
		if s.alias != nil {
			r.RouteName, r.Fallbacks = b.routeOf(s.alias, rc.Model)
			if slo := s.alias.SLO; slo != nil && (slo.FirstTokenMs > 0 || slo.TotalMs > 0) {
				r.SLOStatus = SLOOK
				if breaks(slo, ft, total) {
					r.SLOStatus = SLOViolated
				}
			}
		}
		out = append(out, r)
	}
	return out
}

func breaks(slo *model.SLO, ft, total float64) bool {
	return slo.FirstTokenMs > 0 && ft > slo.FirstTokenMs || slo.TotalMs > 0 && total > slo.TotalMs
}

// explain joins the explanations about subject.
func (b *builder) explain(subject string) string {
	var rs []string
	for _, e := range b.expl[subject] {
		rs = append(rs, scrub(e.Reason))
	}
	return strings.Join(rs, "; ")
}

// latency is the expected first-token and total latency of docs/
// objective.md for a source served by model m, through variant vid with
// residency r when m is local.
func (b *builder) latency(m, vid string, r model.Residency) (ft, total float64) {
	if mm := b.model(m); mm != nil && mm.External {
		ft, total = b.p.Settings.ExpectedExternal(mm)
		return finite(ft), finite(total)
	}
	v := b.variant(vid)
	if v == nil {
		return 0, 0
	}
	ft, total = b.p.Settings.Expected(v, r)
	return finite(ft), finite(total)
}

// routeOf names the alias's route profile whose first available member is
// m, preferring a pinned route, then the active one, then profile order;
// and lists the available members after m on that route (on the alias's
// members when no profile matches).
func (b *builder) routeOf(a *model.Alias, m string) (string, []string) {
	var names []string
	for _, pin := range b.p.Pins {
		if pin.Alias == a.ID && pin.RouteName != "" {
			names = append(names, pin.RouteName)
		}
	}
	if a.ActiveRoute != "" {
		names = append(names, a.ActiveRoute)
	}
	for _, r := range a.Routes {
		names = append(names, r.Name)
	}
	list, name := a.Members, ""
	for _, n := range names {
		i := slices.IndexFunc(a.Routes, func(r model.Route) bool { return r.Name == n })
		if i >= 0 && b.firstAvailable(a.Routes[i].Members) == m {
			list, name = a.Routes[i].Members, n
			break
		}
	}
	var fallbacks []string
	after := !slices.Contains(list, m)
	for _, x := range list {
		switch {
		case x == m:
			after = true
		case after && b.avail[x] && !slices.Contains(fallbacks, x):
			fallbacks = append(fallbacks, x)
		}
	}
	return name, fallbacks
}

func (b *builder) firstAvailable(members []string) string {
	for _, x := range members {
		if b.avail[x] {
			return x
		}
	}
	return ""
}

func levels(ls [4]solver.Level, unitMs float64) []Level {
	out := make([]Level, len(ls))
	for i, l := range ls {
		out[i] = Level{
			Index: l.Index, Name: l.Name, Value: l.Value, Status: string(l.Status),
			LowerBound: l.LowerBound, Gap: roundTo(finite(l.Gap), 1000),
			Unit: levelUnit(i, unitMs),
		}
		if out[i].Index == 0 {
			out[i].Index = i + 1
		}
		if out[i].Name == "" {
			out[i].Name = model.LevelNames[i]
		}
	}
	return out
}

// search sums up how far the search got from its levels and why it
// ended. A level's bound is only a bound for the first unproved level: the
// later ones were minimised with it held at its value.
func search(res *solver.Result, ls []Level, meta Meta) *Search {
	s := &Search{Stop: string(res.Stop), Proved: []int{}}
	if meta.WorkLimit > 0 {
		s.WorkLimit = meta.WorkLimit
	} else if meta.TimeLimit > 0 {
		s.TimeLimit = meta.TimeLimit.String()
	}
	if s.Stop == "" {
		s.Stop = string(solver.StopDeadline)
	}
	if meta.Interrupted {
		s.Stop = string(solver.StopInterrupted)
	}
	if meta.NotSearched && !meta.Interrupted {
		s.Stop = "not-searched"
	}
	for _, l := range ls {
		if l.Status == string(solver.Optimal) {
			s.Proved = append(s.Proved, l.Index)
			continue
		}
		if s.FirstOpen == 0 {
			s.FirstOpen, s.OpenValue, s.OpenBound = l.Index, l.Value, max(l.LowerBound, 0)
		}
	}
	if s.FirstOpen == 0 {
		s.Stop = string(solver.StopProved)
	}
	if len(ls) > 0 {
		s.Uncovered = ls[0].Value
		s.UncoveredProved = min(max(ls[0].LowerBound, 0), ls[0].Value)
		if ls[0].Status == string(solver.Optimal) {
			s.UncoveredProved = ls[0].Value
		}
	}
	return s
}

// levelUnit is what the i-th level (0-based) counts, as docs/objective.md
// defines it; level 4 counts in the pool's latency unit (a non-positive
// unit counts in milliseconds).
func levelUnit(i int, unitMs float64) string {
	switch i {
	case 0:
		return "uncovered sources"
	case 1:
		return "aliases external first"
	case 2:
		return "SLO violations"
	}
	if !(unitMs > 0) || math.IsInf(unitMs, 0) {
		unitMs = 1
	}
	if unitMs >= 1000 && math.Mod(unitMs, 1000) == 0 {
		return fmt.Sprintf("units of %g s", unitMs/1000)
	}
	return fmt.Sprintf("units of %g ms", unitMs)
}

func explanations(es []solver.Explanation) []Explanation {
	out := make([]Explanation, 0, len(es))
	for _, e := range es {
		out = append(out, Explanation{Subject: scrub(e.Subject), Reason: scrub(e.Reason), Pins: scrubAll(e.Pins)})
	}
	slices.SortStableFunc(out, func(x, y Explanation) int {
		return cmp.Or(strings.Compare(x.Subject, y.Subject), strings.Compare(x.Reason, y.Reason),
			slices.Compare(x.Pins, y.Pins))
	})
	if len(out) == 0 {
		return nil
	}
	return out
}

func summarize(cs []Change) Summary {
	var s Summary
	for _, c := range cs {
		switch c.Kind {
		case Start:
			s.Start++
		case Stop:
			s.Stop++
		case Move:
			s.Move++
		case SetResidency:
			s.Residency++
		case Reroute:
			s.Reroute++
		case ManualStop, ManualStart:
			s.Manual++
		}
	}
	return s
}

// finite maps NaN and infinities to 0, so that no figure breaks JSON.
func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
