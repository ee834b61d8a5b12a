package solver

// The reasons an answer gives for an option: what a conflict set of pins,
// memory and routes comes to, in the words of the plan.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/model"
)

func resList(rs []model.Residency) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	if len(s) > 1 {
		return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
	}
	return s[0]
}

func sameReasons(a, b []model.Reason) bool {
	return slices.EqualFunc(a, b, func(x, y model.Reason) bool { return x == y })
}

// external weighs serving sid first from the external model o.Model.
func (k *asker) external(o Option, sid string) Option {
	if !k.p.Settings.ExternalAllowed {
		o.Reasons = []model.Reason{{Rule: RuleExternal, Text: o.Model + " is external and external models are not allowed (policy)"}}
		return o
	}
	r, ok := k.routeLit(sid, o.Model, "")
	if !ok {
		o.Reasons = []model.Reason{{Rule: RuleConflict, Text: fmt.Sprintf("%s cannot serve %s first", o.Model, sid)}}
		return o
	}
	if k.static {
		o.Possible = true
		return o
	}
	if cs, unsat := k.cores([]z.Lit{r}, k.rules()); unsat {
		o.Reasons = k.render(nil, nil, "", cs)
		o.Pins = ruleLabels(cs)
		return o
	}
	o.Possible = true
	if k.chosen(sid, o.Model, "", nil) {
		o.Chosen = true
		return o
	}
	mi := k.ix.Model[o.Model]
	ft, total := k.p.Settings.ExpectedExternal(&k.p.Models[mi])
	if s := findSource(k.e, sid); s != nil && s.E != 0 {
		o.Reasons = append(o.Reasons, model.Reason{Rule: RuleExternal,
			Text: "a cloud model, while a local lane could serve " + sid + " (level 2 counts it)"})
	}
	o.Reasons = append(o.Reasons, k.latencyReasons(sid, ft, total, "")...)
	return o
}

// cost says what serving sid from v with residency r costs against the
// plan's route: a broken SLO, or slower first tokens.
func (k *asker) cost(sid string, v *model.Variant, r model.Residency) []model.Reason {
	ft, total := k.p.Settings.Expected(v, r)
	how := ""
	if cold := k.p.Settings.ColdFraction(r) * v.LoadTimeMs; cold > 0 {
		how = fmt.Sprintf(" (%s + %g%% cold x %s load)", msText(v.Perf.FirstTokenMs), k.p.Settings.ColdFraction(r)*100, secText(v.LoadTimeMs))
	}
	return k.latencyReasons(sid, ft, total, how)
}

// latencyReasons compares expected latencies with the SLO and with the
// plan's route of sid.
func (k *asker) latencyReasons(sid string, ft, total float64, how string) []model.Reason {
	var out []model.Reason
	if ai, ok := k.ix.Alias[sid]; ok && k.p.Aliases[ai].SLO.Breaks(ft, total) {
		slo := k.p.Aliases[ai].SLO
		if slo.FirstTokenMs > 0 && ft > slo.FirstTokenMs {
			out = append(out, model.Reason{Rule: RuleSLO, Text: fmt.Sprintf("expects %s first token%s, over the %s SLO", msText(ft), how, msText(slo.FirstTokenMs))})
		} else {
			out = append(out, model.Reason{Rule: RuleSLO, Text: fmt.Sprintf("expects %s in total%s, over the %s total SLO", msText(total), how, msText(slo.TotalMs))})
		}
		return out
	}
	if now, ok := k.planFirstToken(sid); ok {
		if ft > now {
			out = append(out, model.Reason{Rule: RuleLatency, Text: fmt.Sprintf("expects %s first token%s, against %s for the plan's route", msText(ft), how, msText(now))})
		} else {
			out = append(out, model.Reason{Rule: RuleObjective, Text: fmt.Sprintf("expects %s first token%s, against %s for the plan's route, but costs the plan more elsewhere (load, churn, or another source)", msText(ft), how, msText(now))})
		}
	}
	return out
}

// planFirstToken is the expected first-token latency of the plan's route
// of sid.
func (k *asker) planFirstToken(sid string) (float64, bool) {
	for _, rc := range k.plan.Routes {
		if rc.Source != sid || rc.Model == "" {
			continue
		}
		if rc.Variant == "" {
			mi, ok := k.ix.Model[rc.Model]
			if !ok {
				return 0, false
			}
			ft, _ := k.p.Settings.ExpectedExternal(&k.p.Models[mi])
			return ft, true
		}
		vi, ok := k.ix.Variant[rc.Variant]
		if !ok {
			return 0, false
		}
		for _, l := range k.plan.Lanes {
			if l.Variant == rc.Variant {
				ft, _ := k.p.Settings.Expected(&k.p.Variants[vi], l.Residency)
				return ft, true
			}
		}
	}
	return 0, false
}

func msText(x float64) string { return fmt.Sprintf("%.0f ms", x) }

func secText(x float64) string { return fmt.Sprintf("%g s", x/1000) }

// render words conflict sets: the plan's lanes in them that share a
// memory domain with the option make one memory reason per domain, with
// the domain's figures; the option's own runtime elsewhere is a
// placement reason; cordons and pins are named, memory among pins with
// its figures. Sets that overlap in words (two minimal sets on one full
// domain) give the reason once.
func (k *asker) render(v *model.Variant, pl *model.Placement, r model.Residency, cs [][]item) []model.Reason {
	var out []model.Reason
	seen := map[model.Reason]bool{}
	var all []item
	for _, c := range cs {
		all = append(all, c...)
	}
	var pins []item
	var lanes []item
	for _, it := range all {
		switch it.kind {
		case cordonItem:
			i := k.ix.Node[it.node]
			rs := model.Reason{Rule: model.RuleUnavailable, Node: it.node, Text: fmt.Sprintf("%s is %s", it.node, k.p.Nodes[i].Unavailable)}
			if !seen[rs] {
				seen[rs] = true
				out = append(out, rs)
			}
		case pinItem:
			pins = append(pins, it)
			// The plan meets every pin: a lane pin's lane is in it,
			// and its memory speaks for the pin.
			if pin := &k.e.Pool.Pins[it.pin]; pin.Variant != "" && (v == nil || pin.Variant != v.ID) {
				if li := slices.IndexFunc(k.plan.Lanes, func(l model.LaneChoice) bool { return l.Variant == pin.Variant }); li >= 0 {
					lanes = append(lanes, item{kind: laneItem, lane: li})
				}
			}
		default:
			lanes = append(lanes, it)
		}
	}
	memDone := false
	if len(lanes) > 0 && v != nil && pl != nil {
		if mem := k.memory(v, pl, r, lanes); len(mem) > 0 {
			out = append(out, mem...)
			memDone = true
		}
	}
	if !memDone && len(lanes) > 0 {
		var names []string
		for _, it := range lanes {
			l := k.plan.Lanes[it.lane]
			name := fmt.Sprintf("%s on %s (%s)", l.Variant, strings.Join(l.Nodes, "+"), l.Residency)
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		out = append(out, model.Reason{Rule: RuleConflict, Text: "it cannot run next to " + strings.Join(names, ", ") + " as the plan has them"})
	}
	if len(pins) > 0 && !(memDone && k.onlyLanePins(pins)) {
		out = append(out, k.pinReason(v, pins))
	}
	return out
}

// renderOne words one conflict set.
func (k *asker) renderOne(v *model.Variant, pl *model.Placement, r model.Residency, c []item) []model.Reason {
	return k.render(v, pl, r, [][]item{c})
}

// onlyLanePins reports whether every pin is a lane pin, which a memory
// reason already names next to its lane.
func (k *asker) onlyLanePins(pins []item) bool {
	for _, it := range pins {
		if k.e.Pool.Pins[it.pin].Variant == "" {
			return false
		}
	}
	return true
}

// pinReason words the pins of conflict sets.
func (k *asker) pinReason(v *model.Variant, items []item) model.Reason {
	var pins []*model.Pin
	for _, it := range items {
		p := &k.e.Pool.Pins[it.pin]
		if !slices.Contains(pins, p) {
			pins = append(pins, p)
		}
	}
	switch {
	case len(pins) > 1:
		if mr, ok := memoryConflict(k.e, pins); ok {
			return model.Reason{Rule: RulePin, Text: mr}
		}
		return model.Reason{Rule: RulePin, Text: "it cannot hold with " + pinText(pins)}
	case v == nil:
		return model.Reason{Rule: RulePin, Text: pinPhrase(pins[0]) + ": " + lonePin(k.e, k.p, pins[0])}
	case pins[0].Variant == v.ID && len(pins[0].Nodes) > 0:
		return model.Reason{Rule: RulePin, Text: fmt.Sprintf("%s holds it on %s", pinPhrase(pins[0]), strings.Join(pins[0].Nodes, "+"))}
	case pins[0].Variant == v.ID && pins[0].Residency != "":
		return model.Reason{Rule: RulePin, Text: fmt.Sprintf("%s holds it %s", pinPhrase(pins[0]), pins[0].Residency)}
	}
	return model.Reason{Rule: RulePin, Text: pinPhrase(pins[0]) + " rules it out"}
}

// memory words a conflict with the plan's lanes on the option's domains:
// the draw, the domain's plan budget, and what the plan keeps there.
// The option's own runtime elsewhere in the plan is a placement reason.
func (k *asker) memory(v *model.Variant, pl *model.Placement, r model.Residency, items []item) []model.Reason {
	inCore := map[int]bool{}
	for _, it := range items {
		inCore[it.lane] = true
	}
	pinned := map[string]string{}
	for pi, p := range k.e.Pool.Pins {
		if p.Variant != "" && !k.dropped[pi] {
			tag := "pinned"
			if p.Source == model.PinKeepWarm {
				tag = "keepWarm"
			}
			pinned[p.Variant] = tag
		}
	}
	var out, spare []model.Reason
	for _, d := range pl.Draws {
		dom := k.p.Domain(k.ix, d.Node, d.Domain)
		if dom == nil {
			continue
		}
		type use struct {
			id  string
			gb  float64
			res model.Residency
		}
		var here []use
		hit := false
		for li, l := range k.plan.Lanes {
			vi, ok := k.ix.Variant[l.Variant]
			if !ok || l.Variant == v.ID {
				continue
			}
			for _, pd := range drawsOf(&k.p.Variants[vi], l.Nodes) {
				if pd.Node == d.Node && pd.Domain == d.Domain {
					here = append(here, use{l.Variant, pd.Gb, l.Residency})
					hit = hit || inCore[li]
				}
			}
		}
		if !hit {
			continue
		}
		slices.SortFunc(here, func(a, b use) int { return cmp.Or(cmp.Compare(b.gb, a.gb), strings.Compare(a.id, b.id)) })
		var held float64
		var who, autos []string
		kind := "resident"
		if r == model.Auto {
			kind = "always"
		}
		for _, u := range here {
			counts := u.res == model.Always || (r != model.Auto && u.res == model.Preferred)
			if !counts {
				if u.res == model.Auto && r == model.Always {
					autos = append(autos, fmt.Sprintf("%s %s", u.id, trimGb(u.gb)))
				}
				continue
			}
			held += u.gb
			tags := []string{}
			if u.res == model.Preferred {
				tags = append(tags, "preferred")
			}
			if t, ok := pinned[u.id]; ok {
				tags = append(tags, t)
			}
			who = append(who, strings.Join(append([]string{u.id, trimGb(u.gb)}, tags...), " "))
		}
		text := fmt.Sprintf("needs %s on %s %s; its plan budget %s holds %s %s", model.Gb(d.Gb), d.Node, d.Domain,
			model.Gb(dom.Budget.PlanGb), model.Gb(held), kind)
		if len(who) > 0 {
			text += ": " + strings.Join(who, ", ")
		}
		fits := held+d.Gb <= dom.Budget.PlanGb+1e-9
		if fits && len(autos) > 0 {
			text += fmt.Sprintf(", and the auto lane %s must still fit next to the always lanes", strings.Join(autos, ", "))
		}
		rs := model.Reason{Rule: model.RuleMemory, Node: d.Node, Text: text}
		if fits && len(autos) == 0 {
			spare = append(spare, rs) // a domain with room: named only if no other is full
			continue
		}
		out = append(out, rs)
	}
	if len(out) == 0 {
		return spare
	}
	return out
}

func trimGb(x float64) string { return strings.TrimSuffix(model.Gb(x), " GiB") }

// drawsOf is what variant v draws on the placement with these nodes.
func drawsOf(v *model.Variant, nodes []string) []model.Draw {
	want := sortedUnique(nodes)
	for _, pl := range v.Placements {
		if slices.Equal(sortedUnique(pl.Nodes), want) {
			return pl.Draws
		}
	}
	return nil
}
