package plan

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/poolsolve/poolsolve/model"
)

// diff lists every difference between what runs now and the plan, with a
// reason where one is known, in kind order.
func (b *builder) diff() []Change {
	cur := map[string][]model.CurrentLane{}
	ids := map[string]bool{}
	for _, cl := range b.p.Current.Lanes {
		if b.variant(cl.Variant) == nil {
			b.note("%s runs now on %s, but the pool does not know it; the plan leaves it alone", cl.Variant, key(cl.Nodes))
			continue
		}
		cur[cl.Variant] = append(cur[cl.Variant], cl)
		ids[cl.Variant] = true
	}
	for id := range b.lanes {
		ids[id] = true
	}
	out := []Change{}
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		out = append(out, b.laneChanges(b.variant(id), b.lanes[id], cur[id])...)
	}
	out = append(out, b.reroutes()...)
	slices.SortStableFunc(out, func(x, y Change) int {
		return cmp.Or(cmp.Compare(x.Kind, y.Kind), strings.Compare(x.Subject, y.Subject),
			strings.Compare(key(x.Nodes), key(y.Nodes)), strings.Compare(key(x.FromNodes), key(y.FromNodes)))
	})
	return out
}

// laneChanges compares one variant's planned lane (nil: not placed) with
// its lanes running now.
func (b *builder) laneChanges(v *model.Variant, l *placed, now []model.CurrentLane) []Change {
	var out []Change
	// A lane on a node that could not be asked may or may not run: it is
	// shown as unknown, never as a stop the operator must make.
	var known []model.CurrentLane
	for _, c := range now {
		if model.IsLaneUnknown(c.Status) && (l == nil || !model.SameSet(c.Nodes, l.nodes)) {
			b.unknown = append(b.unknown, UnknownLane{Variant: v.ID, LaneKind: v.Kind, Nodes: sortedCopy(c.Nodes), Status: c.Status})
			b.note("%s on %s: %s; the plan neither stops it nor counts on it", v.ID, key(c.Nodes), c.Status)
			continue
		}
		known = append(known, c)
	}
	now = known
	act := v.Actionable()
	kept, moved := -1, -1
	if l != nil {
		kept = slices.IndexFunc(now, func(c model.CurrentLane) bool {
			return model.SameSet(c.Nodes, l.nodes) && model.SameSet(c.Devices, l.devices)
		})
		switch {
		case kept >= 0:
			if c := now[kept]; c.Residency.Valid() && c.Residency != l.res {
				out = append(out, Change{Kind: SetResidency, Subject: v.ID, LaneKind: v.Kind, Nodes: slices.Clone(l.nodes),
					From: string(c.Residency), To: string(l.res), Reason: b.whyResidency(l, c.Residency)})
			}
		case len(now) == 0 || !act:
			kind := Start
			if !act {
				kind = ManualStart
			}
			why := b.whyStart(l)
			if st := b.notRunning(v.ID, l.nodes); st != "" {
				why = "not running now (" + st + "); " + why
			}
			out = append(out, Change{Kind: kind, Subject: v.ID, LaneKind: v.Kind, Nodes: slices.Clone(l.nodes), Devices: l.devices,
				Residency: l.res, Reason: why})
		default:
			moved = 0
			out = append(out, Change{Kind: Move, Subject: v.ID, LaneKind: v.Kind, Nodes: slices.Clone(l.nodes), Devices: l.devices,
				FromNodes: sortedCopy(now[0].Nodes), Residency: l.res, Reason: b.whyMove(l, now[0].Nodes)})
		}
	}
	for i, c := range now {
		if i == kept || i == moved {
			continue
		}
		kind := Stop
		if !act {
			kind = ManualStop
		}
		out = append(out, Change{Kind: kind, Subject: v.ID, LaneKind: v.Kind, Nodes: sortedCopy(c.Nodes),
			Residency: c.Residency, Reason: b.whyStop(v, c)})
	}
	return out
}

// notRunning is the status read for a configured lane on nodes that its
// gateways say does not serve, "" when there is none.
func (b *builder) notRunning(variant string, nodes []string) string {
	for _, c := range b.p.Current.NotRunning {
		if c.Variant == variant && model.SameSet(c.Nodes, nodes) {
			return c.Status
		}
	}
	return ""
}

// now lists every configured lane with the status read for it.
func (b *builder) now() []NowLane {
	var out []NowLane
	add := func(cs []model.CurrentLane, running bool) {
		for _, c := range cs {
			out = append(out, NowLane{Variant: c.Variant, Nodes: sortedCopy(c.Nodes), Status: scrub(c.Status),
				Running: running && !model.IsLaneUnknown(c.Status)})
		}
	}
	add(b.p.Current.Lanes, true)
	add(b.p.Current.NotRunning, false)
	slices.SortStableFunc(out, func(x, y NowLane) int {
		return cmp.Or(strings.Compare(x.Variant, y.Variant), strings.Compare(key(x.Nodes), key(y.Nodes)))
	})
	return out
}

// reroutes lists aliases served first by another model than now.
// Sources without a current route have nothing to differ from.
func (b *builder) reroutes() []Change {
	var out []Change
	seen := map[string]bool{}
	for _, cr := range b.p.Current.Routes {
		if seen[cr.Alias] || cr.Primary == "" {
			continue
		}
		seen[cr.Alias] = true
		a := b.alias(cr.Alias)
		if a == nil {
			b.note("%s routes now, but the pool has no such alias; the plan leaves it alone", cr.Alias)
			continue
		}
		to := b.served[a.ID].Model
		if to == cr.Primary {
			continue
		}
		c := Change{Kind: Reroute, Subject: a.ID, From: cr.Primary, To: to, FromRoute: cr.Route}
		if to != "" {
			c.ToRoute, _ = b.routeOf(a, to)
		}
		c.Reason = b.whyReroute(a, cr.Primary, to)
		out = append(out, c)
	}
	return out
}

// whyStop says why a running lane is dropped: a pin or explanation, an
// ineligible placement, memory, or that nothing needs it.
func (b *builder) whyStop(v *model.Variant, c model.CurrentLane) string {
	return firstOf(
		func() string { return b.explainLane(v.ID) },
		func() string { return b.ineligibleAt(v, c.Nodes) },
		func() string { return b.doesNotFit(v, c.Nodes, c.Devices, c.Residency) },
		func() string { return b.notNeeded(v) },
	)
}

func (b *builder) whyStart(l *placed) string {
	return firstOf(
		func() string { return b.pinnedLane(l.v.ID, false, false) },
		func() string { return b.explainLane(l.v.ID) },
		func() string { return servesText(l) },
		func() string { return b.fallbackFor(l.v) },
	)
}

// fallbackFor names the aliases whose routes fall back on the variant's
// models in the plan.
func (b *builder) fallbackFor(v *model.Variant) string {
	var as []string
	for i := range b.p.Aliases {
		a := &b.p.Aliases[i]
		m := b.served[a.ID].Model
		if m == "" {
			continue
		}
		if _, fb := b.routeOf(a, m); slices.ContainsFunc(fb, func(x string) bool { return slices.Contains(v.Models, x) }) {
			as = append(as, a.ID)
		}
	}
	if len(as) == 0 {
		return ""
	}
	return "fallback for " + capList(as, 4)
}

func (b *builder) whyMove(l *placed, from []string) string {
	return firstOf(
		func() string { return b.pinnedLane(l.v.ID, true, false) },
		func() string { return b.explainLane(l.v.ID) },
		func() string { return b.ineligibleAt(l.v, from) },
		func() string { return b.doesNotFit(l.v, from, nil, l.res) },
		func() string { return servesText(l) },
	)
}

func (b *builder) whyResidency(l *placed, from model.Residency) string {
	return firstOf(
		func() string { return b.pinnedLane(l.v.ID, false, true) },
		func() string { return b.explainLane(l.v.ID) },
		func() string {
			if fixed, ok := l.v.FixedResidency(); ok {
				return fmt.Sprintf("%s lanes hold their memory as long as they run (%s)", l.v.Kind, fixed)
			}
			return ""
		},
		func() string {
			if rank(l.res) > rank(from) {
				return b.demoted(l, from)
			}
			return b.promoted(l, from)
		},
	)
}

func (b *builder) whyReroute(a *model.Alias, from, to string) string {
	// An uncovered alias's explanation is its reason; a covered one's
	// (why not an earlier member) is in the explanations, and the
	// re-route reads better as what became of the lane it left.
	return firstOf(
		func() string {
			if to == "" {
				return b.explain(a.ID)
			}
			return ""
		},
		func() string {
			for _, pin := range b.p.Pins {
				if pin.Alias == a.ID {
					return "pinned by " + pinLabel(pin)
				}
			}
			return ""
		},
		func() string {
			if to == "" {
				return "no candidate is available in the plan"
			}
			return ""
		},
		func() string { return b.unavailable(from) },
		func() string { return b.explain(a.ID) },
		func() string { return b.better(a, from, to) },
	)
}

func firstOf(fs ...func() string) string {
	for _, f := range fs {
		if s := f(); s != "" {
			return s
		}
	}
	return ""
}

// explainLane joins the solver's explanations about the variant and about
// the pins that name it.
func (b *builder) explainLane(id string) string {
	rs := []string{}
	if s := b.explain(id); s != "" {
		rs = append(rs, s)
	}
	for _, pin := range b.p.Pins {
		if pin.Variant == id {
			if s := b.explain(pinLabel(pin)); s != "" {
				rs = append(rs, "pin "+pinLabel(pin)+": "+s)
			}
		}
	}
	return strings.Join(rs, "; ")
}

// pinnedLane names the pin behind a lane decision: any lane pin, or only
// those fixing nodes or residency.
func (b *builder) pinnedLane(id string, nodes, residency bool) string {
	for _, pin := range b.p.Pins {
		if pin.Variant != id || nodes && len(pin.Nodes) == 0 || residency && pin.Residency == "" {
			continue
		}
		return "pinned by " + pinLabel(pin)
	}
	return ""
}

func pinLabel(p model.Pin) string {
	if p.Label != "" {
		return scrub(p.Label)
	}
	return string(p.Source) + " " + p.Variant + p.Alias
}

// ineligibleAt says why the variant may not sit on nodes at all.
func (b *builder) ineligibleAt(v *model.Variant, nodes []string) string {
	k := v.Placement(nodes, nil)
	if k < 0 {
		return fmt.Sprintf("%s is no longer a candidate placement", key(nodes))
	}
	if ok, why := model.Eligible(b.p, b.ix, v, v.Placements[k]); !ok {
		return scrub(why)
	}
	return ""
}

// doesNotFit says which domain has no room for the variant on nodes with
// residency r next to the plan's other lanes.
func (b *builder) doesNotFit(v *model.Variant, nodes, devices []string, r model.Residency) string {
	k := v.Placement(nodes, devices)
	if k < 0 {
		return ""
	}
	for _, d := range v.Placements[k].Draws {
		dom := b.p.Domain(b.ix, d.Node, d.Domain)
		if dom == nil {
			continue
		}
		u := b.useAt(d.Node, d.Domain)
		own := b.ownDraw(v.ID, d.Node, d.Domain)
		if r.Resident() {
			others := u.resident - own.resident
			if !dom.Budget.Holds(others + d.Gb) {
				return fmt.Sprintf("does not fit: %s %s needs %s next to %s resident (%s); plan budget %s",
					d.Node, d.Domain, model.Gb(d.Gb), model.Gb(others), lanesText(u.residentBy, v.ID), model.Gb(dom.Budget.PlanGb))
			}
			continue
		}
		others := u.always - own.always
		if !dom.Budget.Holds(others + d.Gb) {
			return fmt.Sprintf("does not fit even on demand: %s %s needs %s next to %s always (%s); plan budget %s",
				d.Node, d.Domain, model.Gb(d.Gb), model.Gb(others), lanesText(u.alwaysBy, v.ID), model.Gb(dom.Budget.PlanGb))
		}
	}
	return ""
}

type drawn struct{ resident, always float64 }

// ownDraw is what the variant's planned lane itself draws on a domain.
func (b *builder) ownDraw(id, node, domain string) drawn {
	var d drawn
	l := b.lanes[id]
	if l == nil {
		return d
	}
	for _, x := range l.draws {
		if x.Node == node && x.Domain == domain {
			if l.res.Resident() {
				d.resident += x.Gb
			}
			if l.res == model.Always {
				d.always += x.Gb
			}
		}
	}
	return d
}

// notNeeded says what serves the sources that could use the variant.
func (b *builder) notNeeded(v *model.Variant) string {
	var parts []string
	for _, s := range b.sources() {
		cands := []string{strings.TrimPrefix(s.name, "model:")}
		if s.alias != nil {
			cands = s.alias.Candidates()
		}
		if !slices.ContainsFunc(v.Models, func(m string) bool { return slices.Contains(cands, m) }) {
			continue
		}
		switch m := b.served[s.name].Model; m {
		case "":
			parts = append(parts, s.name+" stays uncovered")
		default:
			parts = append(parts, s.name+" is served by "+m)
		}
	}
	if len(parts) == 0 {
		return "not needed: no alias or requested model asks for " + strings.Join(v.Models, ", ")
	}
	return "not needed: " + capList(parts, 3)
}

func servesText(l *placed) string {
	if len(l.serves) == 0 {
		return ""
	}
	return "serves " + capList(l.serves, 4)
}

// demoted says why a lane holds less memory than now: at its current
// residency it would not fit, or would leave no room to load an auto lane.
func (b *builder) demoted(l *placed, from model.Residency) string {
	if from.Resident() && !l.res.Resident() {
		if why := b.doesNotFit(l.v, l.nodes, l.devices, from); why != "" {
			return strings.Replace(why, "does not fit", "does not fit resident", 1)
		}
	}
	if from == model.Always && l.res != model.Always {
		for _, d := range l.draws {
			dom := b.p.Domain(b.ix, d.Node, d.Domain)
			u := b.useAt(d.Node, d.Domain)
			if dom == nil || u.autoBy == "" || u.autoBy == l.v.ID {
				continue
			}
			always := u.always - b.ownDraw(l.v.ID, d.Node, d.Domain).always + d.Gb
			if !dom.Budget.Holds(always + u.autoMax) {
				return fmt.Sprintf("keeps room to load %s on demand: %s %s needs %s next to %s always; plan budget %s",
					u.autoBy, d.Node, d.Domain, model.Gb(u.autoMax), model.Gb(always), model.Gb(dom.Budget.PlanGb))
			}
		}
	}
	return ""
}

// promoted says what a stronger residency buys the sources the lane
// serves: an SLO kept (level 3), else fewer cold starts (level 4).
func (b *builder) promoted(l *placed, from model.Residency) string {
	best, bestGain := "", 0.0
	for _, s := range l.serves {
		rc := b.served[s]
		was, wasTotal := b.latency(rc.Model, l.v.ID, from)
		now, nowTotal := b.latency(rc.Model, l.v.ID, l.res)
		if a := b.alias(s); a != nil && a.SLO != nil && breaks(a.SLO, was, wasTotal) && !breaks(a.SLO, now, nowTotal) {
			return fmt.Sprintf("SLO: %s expects %s first token as %s, over its SLO", s, ms(was), from)
		}
		if gain := (was - now) * b.demand(s); best == "" || gain > bestGain {
			best, bestGain = fmt.Sprintf("latency: %s expects %s first token instead of %s as %s", s, ms(now), ms(was), from), gain
		}
	}
	return best
}

func (b *builder) demand(src string) float64 {
	if a := b.alias(src); a != nil {
		return finite(a.Demand)
	}
	if m := b.model(strings.TrimPrefix(src, "model:")); m != nil {
		return finite(m.DirectDemand)
	}
	return 0
}

// unavailable says why a model cannot serve in the plan, or "" when it can.
func (b *builder) unavailable(m string) string {
	if b.avail[m] {
		return ""
	}
	mm := b.model(m)
	switch {
	case mm == nil:
		return m + " is no longer in the pool"
	case mm.External:
		return "external models are not allowed"
	}
	var stopped, unknown []string
	for _, cl := range b.p.Current.Lanes {
		if v := b.variant(cl.Variant); v != nil && b.lanes[v.ID] == nil && serves(v, mm) && !slices.Contains(stopped, v.ID) && !slices.Contains(unknown, v.ID) {
			if model.IsLaneUnknown(cl.Status) {
				unknown = append(unknown, v.ID)
			} else {
				stopped = append(stopped, v.ID)
			}
		}
	}
	if len(unknown) > 0 && len(stopped) == 0 {
		return fmt.Sprintf("%s's lane %s is on a node that could not be asked", m, strings.Join(unknown, ", "))
	}
	if len(stopped) > 0 {
		return fmt.Sprintf("%s stops with its lane %s", m, strings.Join(stopped, ", "))
	}
	return "no lane serves " + m + " in the plan"
}

// better says which level a re-route between two available models wins.
func (b *builder) better(a *model.Alias, from, to string) string {
	wasFt, wasTotal := b.latency(from, b.laneFor(from), b.residencyOf(b.laneFor(from)))
	rc := b.served[a.ID]
	var res model.Residency
	if l := b.lanes[rc.Variant]; l != nil {
		res = l.res
	}
	nowFt, nowTotal := b.latency(to, rc.Variant, res)
	fm, tm := b.model(from), b.model(to)
	switch {
	case a.SLO != nil && breaks(a.SLO, wasFt, wasTotal) && !breaks(a.SLO, nowFt, nowTotal):
		return fmt.Sprintf("SLO: %s breaks %s's SLO (%s expected), %s keeps it (%s)", from, a.ID, ms(wasFt), to, ms(nowFt))
	case fm != nil && tm != nil && fm.External && !tm.External:
		return "local before external: " + to + " runs on a lane in the plan"
	}
	return fmt.Sprintf("latency: expected first token %s instead of %s", ms(nowFt), ms(wasFt))
}

// laneFor is the first planned lane, in id order, that serves model m.
func (b *builder) laneFor(m string) string {
	mm := b.model(m)
	if mm == nil || mm.External {
		return ""
	}
	if b.laneIDs == nil {
		b.laneIDs = slices.Sorted(maps.Keys(b.lanes)) // once: a plan asks for each reroute
	}
	for _, id := range b.laneIDs {
		if serves(b.lanes[id].v, mm) {
			return id
		}
	}
	return ""
}

func (b *builder) residencyOf(id string) model.Residency {
	if l := b.lanes[id]; l != nil {
		return l.res
	}
	return ""
}

// lanesText lists lanes other than self, at most three.
func lanesText(ids []string, self string) string {
	var out []string
	for _, id := range ids {
		if id != self && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	if len(out) == 0 {
		return "no other lane"
	}
	return capList(out, 3)
}

func capList(xs []string, n int) string {
	if len(xs) <= n {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(xs[:n], ", "), len(xs)-n)
}

func ms(x float64) string { return fmt.Sprintf("%.0f ms", math.Round(finite(x))) }

func key(nodes []string) string { return strings.Join(sortedCopy(nodes), "+") }

func sortedCopy(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}
