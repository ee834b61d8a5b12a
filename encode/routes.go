package encode

import (
	"slices"
	"sort"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/model"
)

// servers lists, per model id, the variants that serve it: a variant
// serves a model when either lists the other (eval reads it the same way).
func (e *Encoding) servers() map[string][]int {
	out := map[string][]int{}
	add := func(m string, vi int) {
		if !slices.Contains(out[m], vi) {
			out[m] = append(out[m], vi)
		}
	}
	for vi := range e.Pool.Variants {
		for _, m := range e.Pool.Variants[vi].Models {
			add(m, vi)
		}
	}
	for _, m := range e.Pool.Models {
		for _, id := range m.Variants {
			if vi, ok := e.Index.Variant[id]; ok {
				add(m.ID, vi)
			}
		}
	}
	for m := range out {
		slices.Sort(out[m])
	}
	return out
}

// sources builds the route literals, coverage, and the level 1-3 and
// level-4 latency terms of every demand source.
func (e *Encoding) sources() {
	p := e.Pool
	for ai := range p.Aliases {
		a := &p.Aliases[ai]
		e.Sources = append(e.Sources, Source{ID: a.ID, Alias: ai, Model: -1, Demand: a.Demand})
	}
	for mi := range p.Models {
		m := &p.Models[mi]
		if m.IsDemandSource() {
			e.Sources = append(e.Sources, Source{ID: model.DirectSource(m.ID), Alias: -1, Model: mi, Demand: m.DirectDemand})
		}
	}
	sort.SliceStable(e.Sources, func(i, j int) bool { return e.Sources[i].ID < e.Sources[j].ID })
	e.Sources = slices.CompactFunc(e.Sources, func(a, b Source) bool { return a.ID == b.ID })
	serves := e.servers()
	current := map[string]string{}
	for _, r := range p.Current.Routes {
		if _, seen := current[r.Alias]; !seen && r.Primary != "" {
			current[r.Alias] = r.Primary
		}
	}
	for si := range e.Sources {
		e.checkStop()
		s := &e.Sources[si]
		e.sourceIx[s.ID] = si
		var cands []string
		var slo *model.SLO
		if s.Alias >= 0 {
			cands = p.Aliases[s.Alias].Candidates()
			slo = p.Aliases[s.Alias].SLO
		} else {
			cands = []string{p.Models[s.Model].ID}
		}
		e.family("route")
		localOK := false
		for _, c := range cands {
			mi, ok := e.Index.Model[c]
			if !ok {
				s.Skipped = append(s.Skipped, c+" is not a model of the pool")
				continue
			}
			m := &p.Models[mi]
			if m.External {
				if !p.Settings.ExternalAllowed {
					s.Skipped = append(s.Skipped, c+" is external and external models are not allowed")
					continue
				}
				r := e.newVar("route["+s.ID+"->"+c+"]", MeanRoute)
				s.Routes = append(s.Routes, Route{Model: c, Variant: -1, Lit: r})
				continue
			}
			if len(serves[c]) == 0 {
				s.Skipped = append(s.Skipped, c+" has no variant")
			}
			for _, vi := range serves[c] {
				vl := &e.Variants[vi]
				if vl.Eligible {
					localOK = true
				}
				if vl.Placed == e.F() {
					s.Skipped = append(s.Skipped, c+" via "+p.Variants[vi].ID+": no eligible placement")
					continue
				}
				r := e.newVar("route["+s.ID+"->"+c+"@"+p.Variants[vi].ID+"]", MeanRoute)
				s.Routes = append(s.Routes, Route{Model: c, Variant: vi, Lit: r})
				e.orClause("route-placed["+s.ID+"->"+c+"@"+p.Variants[vi].ID+"]", r.Not(), vl.Placed)
			}
		}
		if len(s.Routes) == 0 {
			s.U = e.T
			e.objTerm(0, e.T, 1)
			continue
		}
		s.U = e.newVar("uncovered["+s.ID+"]", MeanUncovered)
		lits := []z.Lit{s.U}
		for _, r := range s.Routes {
			lits = append(lits, r.Lit)
		}
		e.clause(lits...)
		e.ladders = append(e.ladders, e.atMostOne("route["+s.ID+"]", lits)...)
		e.row("one-route["+s.ID+"]", EQ, 1, lits, nil)
		rs := s.Routes
		e.define(s.U, func(val func(z.Lit) bool) bool {
			for _, r := range rs {
				if val(r.Lit) {
					return false
				}
			}
			return true
		})
		e.counts[0] = append(e.counts[0], s.U)
		e.objTerm(0, s.U, 1)
		if s.Alias >= 0 && localOK {
			e.external(s)
		}
		if s.Alias >= 0 && slo != nil {
			e.slo(s, slo)
		}
		e.latency(s, current)
	}
}

// external: level 2 counts an alias served first by an external model
// although a local candidate could run.
func (e *Encoding) external(s *Source) {
	var ext []z.Lit
	for _, r := range s.Routes {
		if r.Variant < 0 {
			ext = append(ext, r.Lit)
		}
	}
	if len(ext) == 0 {
		return
	}
	e.family("external-first")
	s.E = e.newVar("external["+s.ID+"]", MeanExternal)
	for _, r := range ext {
		e.orClause("external["+s.ID+"]", r.Not(), s.E)
	}
	e.define(s.E, anyOf(ext))
	e.counts[1] = append(e.counts[1], s.E)
	e.objTerm(1, s.E, 1)
}

func anyOf(ms []z.Lit) func(val func(z.Lit) bool) bool {
	return func(val func(z.Lit) bool) bool {
		for _, m := range ms {
			if val(m) {
				return true
			}
		}
		return false
	}
}

// slo: level 3 counts a covered alias whose expected latency breaks its
// SLO; the violation depends on the serving lane and its residency.
func (e *Encoding) slo(s *Source, slo *model.SLO) {
	p := e.Pool
	type cause struct{ r, res z.Lit } // res zero: whatever the residency
	var causes []cause
	for _, r := range s.Routes {
		if r.Variant < 0 {
			m := &p.Models[e.Index.Model[r.Model]]
			if slo.Breaks(p.Settings.ExpectedExternal(m)) {
				causes = append(causes, cause{r: r.Lit})
			}
			continue
		}
		v := &p.Variants[r.Variant]
		vl := &e.Variants[r.Variant]
		var bad []z.Lit
		all := true
		for i, rho := range model.Residencies {
			if vl.Res[i] == e.F() {
				continue
			}
			if slo.Breaks(p.Settings.Expected(v, rho)) {
				bad = append(bad, vl.Res[i])
			} else {
				all = false
			}
		}
		if all && len(bad) > 0 {
			causes = append(causes, cause{r: r.Lit})
			continue
		}
		for _, b := range bad {
			causes = append(causes, cause{r: r.Lit, res: b})
		}
	}
	if len(causes) == 0 {
		return
	}
	e.family("slo")
	s.Viol = e.newVar("slo["+s.ID+"]", MeanViolation)
	for _, c := range causes {
		if c.res == z.LitNull {
			e.orClause("slo["+s.ID+"]", c.r.Not(), s.Viol)
		} else {
			e.orClause("slo["+s.ID+"]", c.r.Not(), c.res.Not(), s.Viol)
		}
	}
	e.define(s.Viol, func(val func(z.Lit) bool) bool {
		for _, c := range causes {
			if val(c.r) && (c.res == z.LitNull || val(c.res)) {
				return true
			}
		}
		return false
	})
	e.counts[2] = append(e.counts[2], s.Viol)
	e.objTerm(2, s.Viol, 1)
}

// latency: the level-4 group of a source, demand times expected first
// token latency plus the re-route hysteresis, one branch per route (and
// per residency when that changes the cost).
func (e *Encoding) latency(s *Source, current map[string]string) {
	p := e.Pool
	g := Group{}
	reroute := func(m string) int64 {
		if s.Alias < 0 {
			return 0
		}
		if cur, ok := current[s.ID]; ok && cur != m {
			return e.costs.h
		}
		return 0
	}
	e.family("latency")
	for ri := range s.Routes {
		r := &s.Routes[ri]
		if r.Variant < 0 {
			m := &p.Models[e.Index.Model[r.Model]]
			w := e.costs.latency(s.Demand, e.costs.extFirstToken(m)) + reroute(r.Model)
			g.Branches = append(g.Branches, Branch{r.Lit, w})
			continue
		}
		v := &p.Variants[r.Variant]
		vl := &e.Variants[r.Variant]
		var ws [3]int64
		same, seen := true, false
		var first int64
		for i, rho := range model.Residencies {
			if vl.Res[i] == e.F() {
				continue
			}
			ws[i] = e.costs.latency(s.Demand, e.costs.firstToken(v, rho)) + reroute(r.Model)
			if seen && ws[i] != first {
				same = false
			}
			if !seen {
				first, seen = ws[i], true
			}
		}
		if same {
			g.Branches = append(g.Branches, Branch{r.Lit, first})
			continue
		}
		for i, rho := range model.Residencies {
			res := vl.Res[i]
			if res == e.F() {
				continue
			}
			e.yRoute = append(e.yRoute, [2]z.Lit{0, r.Lit})
			y := e.newVar("latency["+s.ID+"->"+r.Model+"@"+v.ID+"]="+string(rho), MeanLatency)
			e.about(y, func(vi *About) { vi.Source, vi.Model, vi.Variant, vi.Residency = s.ID, r.Model, v.ID, rho })
			e.orClause("latency["+s.ID+"]", r.Lit.Not(), res.Not(), y)
			e.yRoute[len(e.yRoute)-1][0] = y
			rl := r.Lit
			e.define(y, func(val func(z.Lit) bool) bool { return val(rl) && val(res) })
			r.Split[i] = y
			g.Branches = append(g.Branches, Branch{y, ws[i]})
		}
	}
	// The mirror counts the re-route hysteresis on its own literal; the
	// group folds it into the branch weights (same value).
	var moved []z.Lit
	for _, r := range s.Routes {
		if reroute(r.Model) != 0 {
			moved = append(moved, r.Lit)
		}
	}
	rr := z.LitNull
	if len(moved) > 0 {
		rr = e.newVar("reroute["+s.ID+"]", MeanReroute)
		e.about(rr, func(vi *About) { vi.Source = s.ID })
		for _, m := range moved {
			e.orClause("reroute["+s.ID+"]", m.Not(), rr)
		}
		e.define(rr, anyOf(moved))
		e.objTerm(3, rr, e.costs.h)
	}
	for _, b := range g.Branches {
		w := b.W
		if rr != z.LitNull && slices.Contains(moved, routeOf(s, b.Lit, e)) {
			w -= e.costs.h
		}
		e.objTerm(3, b.Lit, w)
	}
	e.l4 = append(e.l4, g)
	e.l4src = append(e.l4src, e.sourceIx[s.ID])
	e.l4var = append(e.l4var, -1)
}

// avail is a literal true iff model m can serve now: an external model
// (when allowed), or a local model with a placed variant. Route pins need
// it in both directions.
func (e *Encoding) avail(m string, serves map[string][]int) z.Lit {
	if l, ok := e.availMemo[m]; ok {
		return l
	}
	l := e.F()
	if mi, ok := e.Index.Model[m]; ok {
		if e.Pool.Models[mi].External {
			if e.Pool.Settings.ExternalAllowed {
				l = e.T
			}
		} else {
			var placed []z.Lit
			for _, vi := range serves[m] {
				if pl := e.Variants[vi].Placed; pl != e.F() {
					placed = append(placed, pl)
				}
			}
			switch len(placed) {
			case 0:
			case 1:
				l = placed[0]
			default:
				e.family("available")
				l = e.newVar("available["+m+"]", MeanAvailable)
				e.about(l, func(vi *About) { vi.Model = m })
				for _, pl := range placed {
					e.orClause("available["+m+"]", pl.Not(), l)
				}
				e.orClause("available["+m+"]", append([]z.Lit{l.Not()}, placed...)...)
				e.define(l, anyOf(placed))
			}
		}
	}
	e.availMemo[m] = l
	return l
}

// pins: each pin gets a named assumption literal that implies its clauses.
func (e *Encoding) pins() {
	p := e.Pool
	serves := e.servers()
	for pi := range p.Pins {
		pin := &p.Pins[pi]
		label := pin.Label
		if label == "" {
			label = pinLabel(pin)
		}
		e.family("pin")
		a := e.newVar("pin["+label+"]", MeanAssumption)
		e.Assumptions = append(e.Assumptions, Assumption{Lit: a, Kind: AssumePin, Pin: pi, Label: label})
		name := "pin[" + label + "]"
		if pin.Variant != "" {
			e.lanePin(name, a, pin)
		}
		if pin.Alias != "" {
			e.routePin(name, a, pin, serves)
		}
	}
}

// lanePin: the variant runs, on the pinned node set when given, with the
// pinned residency when given.
func (e *Encoding) lanePin(name string, a z.Lit, pin *model.Pin) {
	vi, ok := e.Index.Variant[pin.Variant]
	if !ok {
		e.orClause(name, a.Not())
		return
	}
	want := slices.Clone(pin.Nodes)
	slices.Sort(want)
	cl := []z.Lit{a.Not()}
	for _, li := range e.Variants[vi].Lanes {
		if len(want) == 0 || slices.Equal(e.Lanes[li].Nodes, want) {
			cl = append(cl, e.Lanes[li].Lit)
		}
	}
	e.orClause(name, cl...)
	if pin.Residency != "" {
		i := slices.Index(model.Residencies, pin.Residency)
		if i < 0 {
			e.orClause(name, a.Not())
			return
		}
		e.orClause(name, a.Not(), e.Variants[vi].Res[i])
	}
}

// routePin: the alias is served by the first available member of the
// route, or is uncovered when none is available.
func (e *Encoding) routePin(name string, a z.Lit, pin *model.Pin, serves map[string][]int) {
	si, ok := e.sourceIx[pin.Alias]
	if !ok || e.Sources[si].Alias < 0 {
		e.orClause(name, a.Not())
		return
	}
	s := &e.Sources[si]
	var before []z.Lit
	for _, m := range pin.Route {
		av := e.avail(m, serves)
		e.family("pin")
		if av != e.F() {
			cl := []z.Lit{a.Not(), av.Not()}
			cl = append(cl, before...)
			for _, r := range s.Routes {
				if r.Model == m {
					cl = append(cl, r.Lit)
				}
			}
			e.orClause(name, cl...)
		}
		before = append(before, av)
	}
	e.orClause(name, append(append([]z.Lit{a.Not()}, before...), s.U)...)
}

func pinLabel(p *model.Pin) string {
	if p.Variant != "" {
		s := p.Variant
		if len(p.Nodes) > 0 {
			s += " -> " + joinPlus(p.Nodes)
		}
		if p.Residency != "" {
			s += " (" + string(p.Residency) + ")"
		}
		return s
	}
	return p.Alias + " -> " + joinPlus(p.Route)
}

func joinPlus(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += "+"
		}
		out += s
	}
	return out
}

// routeOf maps a level-4 branch literal back to its route literal (a
// latency literal stands for one route and one residency).
func routeOf(s *Source, m z.Lit, e *Encoding) z.Lit {
	for _, r := range s.Routes {
		if r.Lit == m {
			return m
		}
	}
	for _, yr := range e.yRoute {
		if yr[0] == m {
			return yr[1]
		}
	}
	return z.LitNull
}
