package solver

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/model"
)

// explainTry caps each gini call made only to explain.
const explainTry = 200 * time.Millisecond

// named is a literal to assume, with what it stands for.
type named struct {
	lit   z.Lit
	label string
}

// assumptionsOf names the pin and cordon assumptions of an encoding.
func assumptionsOf(e *encode.Encoding) []named {
	var out []named
	for _, a := range e.Assumptions {
		out = append(out, named{a.Lit, a.Label})
	}
	return out
}

// core returns the members of set (as indexes) that gini's Why names
// after an UNSAT answer under all of them plus fixed, shrunk by deletion
// to a minimal set: dropping any one makes the rest satisfiable (or
// undecided within the time cap, in which case it stays). Nil when the
// answer is not UNSAT.
func core(e *encode.Encoding, fixed []z.Lit, set []named, deadline time.Time) []int {
	ix := map[z.Lit]int{}
	var all []int
	for i, n := range set {
		ix[n.lit] = i
		all = append(all, i)
	}
	solve := func(sub []int) (int, []int) {
		left := e.Clock.Until(deadline)
		if left <= 0 {
			return 0, nil
		}
		ms := make([]z.Lit, 0, len(sub))
		for _, i := range sub {
			ms = append(ms, set[i].lit)
		}
		r := e.TryUnder(min(explainTry, left), ms, fixed)
		if r != -1 {
			return r, nil
		}
		var why []int
		for _, m := range e.Why(nil) {
			if i, ok := ix[m]; ok {
				why = append(why, i)
			}
		}
		slices.Sort(why)
		return -1, slices.Compact(why)
	}
	r, c := solve(all)
	if r != -1 {
		return nil
	}
	for k := 0; k < len(c); {
		rest := slices.Delete(slices.Clone(c), k, k+1)
		if r, why := solve(rest); r == -1 {
			c = why // a subset of rest, so strictly smaller
			k = min(k, len(c))
			continue
		}
		k++
	}
	return c
}

// explainInfeasible says why the part's pins and cordons admit no plan:
// a minimal conflicting set, in operator terms.
func (x *exact) explainInfeasible() []Explanation {
	e := x.e
	if e.NoSAT() {
		// A part without gini is encoded again with it, for its Why.
		var err error
		if e, err = encode.New(x.p, encode.Options{LinearMemory: true, Deadline: x.run.deadline.Add(2 * time.Second)}); err != nil {
			return []Explanation{{Subject: "pins", Reason: "the pins and cordons admit no plan (no conflict set found in time)"}}
		}
	}
	c := core(e, nil, assumptionsOf(e), x.run.deadline.Add(2*time.Second))
	if len(c) == 0 {
		return []Explanation{{Subject: "pins", Reason: "the pins and cordons admit no plan (no conflict set found in time)"}}
	}
	return []Explanation{renderCore(e, x.run.pool, c)}
}

// renderCore turns a conflict set into one explanation; whole is the
// pool before it was cut into parts, whose facts give the reasons.
func renderCore(e *encode.Encoding, whole *model.Pool, c []int) Explanation {
	p := e.Pool
	var labels []string
	var pins []*model.Pin
	var cordons []string
	for _, i := range c {
		a := e.Assumptions[i]
		labels = append(labels, a.Label)
		if a.Kind == encode.AssumeCordon {
			cordons = append(cordons, a.Node)
		} else {
			pins = append(pins, &p.Pins[a.Pin])
		}
	}
	ex := Explanation{Subject: labels[len(labels)-1], Pins: labels}
	if len(pins) > 0 {
		ex.Subject = pinName(pins[len(pins)-1])
	}
	switch {
	case len(pins) == 1 && len(cordons) == 0:
		ex.Reason = lonePin(e, whole, pins[0])
	case len(cordons) > 0:
		var on []string
		for _, n := range cordons {
			on = append(on, fmt.Sprintf("%s is %s", n, p.Nodes[e.Index.Node[n]].Unavailable))
		}
		ex.Reason = fmt.Sprintf("%s needs a node that cannot take lanes: %s", pinText(pins), strings.Join(on, "; "))
	default:
		if r, ok := memoryConflict(e, pins); ok {
			ex.Reason = r
		} else {
			ex.Reason = "these pins cannot all hold together: " + strings.Join(labels, "; ")
		}
	}
	return ex
}

func pinName(pin *model.Pin) string {
	if pin.Label != "" {
		return pin.Label
	}
	if pin.Variant != "" {
		return pin.Variant + " -> " + strings.Join(pin.Nodes, "+")
	}
	return pin.Alias + " -> " + strings.Join(pin.Route, ",")
}

// pinPhrase names a pin in a sentence: its label when it says what it is
// (keepWarm, --pin, profile, route), else "pin <name>".
func pinPhrase(pin *model.Pin) string {
	for _, p := range []string{"pin ", "--pin", "keepWarm", "profile ", "route "} {
		if strings.HasPrefix(pin.Label, p) {
			return pin.Label
		}
	}
	return "pin " + pinName(pin)
}

func pinText(pins []*model.Pin) string {
	var s []string
	for _, p := range pins {
		s = append(s, pinPhrase(p))
	}
	return strings.Join(s, " and ")
}

// lonePin says why one pin cannot hold on its own. Eligibility reasons
// are judged on the whole pool: a part lacks the nodes of other parts.
func lonePin(e *encode.Encoding, whole *model.Pool, pin *model.Pin) string {
	p := e.Pool
	if pin.Variant != "" {
		vi, ok := e.Index.Variant[pin.Variant]
		if !ok {
			return fmt.Sprintf("pins variant %s, which the pool lacks", pin.Variant)
		}
		v := &p.Variants[vi]
		want := slices.Clone(pin.Nodes)
		slices.Sort(want)
		var why []string
		wix := whole.Index()
		for _, pl := range v.Placements {
			ns := slices.Clone(pl.Nodes)
			slices.Sort(ns)
			if len(want) > 0 && !slices.Equal(ns, want) {
				continue
			}
			if rs := model.Ineligible(whole, wix, v, pl); len(rs) > 0 {
				why = append(why, fmt.Sprintf("%s cannot run on %s: %s", v.ID, pl.Key(), strings.Join(reasonTexts(rs), ", ")))
			}
		}
		hasLane := false
		for _, li := range e.Variants[vi].Lanes {
			if len(want) == 0 || slices.Equal(e.Lanes[li].Nodes, want) {
				hasLane = true
			}
		}
		if !hasLane {
			if len(why) == 0 {
				return noPlacement(whole, v, want)
			}
			return strings.Join(why, "; ")
		}
		if pin.Residency != "" {
			if !pin.Residency.Valid() {
				return fmt.Sprintf("residency %q is not always, preferred or auto", pin.Residency)
			}
			if r, fixed := v.FixedResidency(); fixed && r != pin.Residency {
				return fmt.Sprintf("%s lanes keep residency %s; the pin asks %s", v.Kind, r, pin.Residency)
			}
		}
		if r, ok := memoryConflict(e, []*model.Pin{pin}); ok {
			return r
		}
		return fmt.Sprintf("%s cannot run as pinned next to the lanes that must run", v.ID)
	}
	if _, ok := e.Index.Alias[pin.Alias]; !ok {
		return fmt.Sprintf("pins alias %s, which the pool lacks", pin.Alias)
	}
	return fmt.Sprintf("%s cannot be served by the first available member of %s (a member that is available is not a candidate the alias can route to)",
		pin.Alias, strings.Join(pin.Route, ","))
}

// noPlacement says why variant v has no candidate placement on nodes:
// a fixed lane runs only where it runs, and a recipe's placements are
// the node sets that meet it; and names a recipe that could go there.
func noPlacement(p *model.Pool, v *model.Variant, nodes []string) string {
	var cands []string
	for _, pl := range v.Placements {
		cands = append(cands, pl.Key())
	}
	on := strings.Join(nodes, "+")
	var why string
	switch v.Kind {
	case model.Managed:
		why = fmt.Sprintf("%s is a managed runtime: it runs on the node its config gives it (%s), and a pin cannot move it", v.ID, strings.Join(cands, ", "))
	case model.Unmanaged:
		why = fmt.Sprintf("%s is a lane run by hand (unmanaged) on %s, and a pin cannot move it", v.ID, strings.Join(cands, ", "))
	case model.Federated:
		why = fmt.Sprintf("%s belongs to another gateway (federated, on %s), and a pin cannot move it", v.ID, strings.Join(cands, ", "))
	default:
		why = fmt.Sprintf("%s has no candidate placement on %s (candidates: %s)", v.ID, on, strings.Join(cands, ", "))
		if rs := model.Ineligible(p, p.Index(), v, model.Placement{Nodes: nodes}); len(rs) > 0 {
			why += ": " + strings.Join(reasonTexts(rs), ", ")
		}
		return why
	}
	ix := p.Index()
	recipes := false
	for vi := range p.Variants {
		r := &p.Variants[vi]
		recipes = recipes || r.Kind == model.Recipe
		if r.Kind != model.Recipe || r.ID == v.ID || !sharesModel(r, v) {
			continue
		}
		for _, pl := range r.Placements {
			if slices.Equal(sortedUnique(pl.Nodes), sortedUnique(nodes)) {
				if ok, _ := model.Eligible(p, ix, r, pl); ok {
					return why + fmt.Sprintf("; %s serves the same model and may run on %s: pin it instead", r.ID, on)
				}
			}
		}
	}
	if recipes {
		return why + "; no recipe in the pool serves the model on " + on
	}
	return why + "; only recipes, with --consider-installs, are placed freely"
}

func sharesModel(a, b *model.Variant) bool {
	for _, m := range a.Models {
		if slices.Contains(b.Models, m) {
			return true
		}
	}
	return false
}

// memoryConflict finds the domain where the pinned lanes overflow, and
// words it like `pin X needs 40 GiB; node budget 115.6 GiB - headroom 4 =
// 111.6 GiB holds 108 GiB of always-resident lanes`. A pinned lane's
// placement is the pinned node set, or its only candidate; its residency
// the pinned one, or its fixed one, else auto (the least it can take).
func memoryConflict(e *encode.Encoding, pins []*model.Pin) (string, bool) {
	p := e.Pool
	type use struct {
		pin *model.Pin
		gb  float64
		res model.Residency
	}
	byDom := map[[2]string][]use{}
	var order [][2]string
	for _, pin := range pins {
		vi, ok := e.Index.Variant[pin.Variant]
		if !ok || pin.Variant == "" {
			continue
		}
		v := &p.Variants[vi]
		res := pin.Residency
		if r, fixed := v.FixedResidency(); fixed {
			res = r
		}
		if !res.Valid() {
			res = model.Auto
		}
		var pl *model.Placement
		for _, li := range e.Variants[vi].Lanes {
			l := &e.Lanes[li]
			want := slices.Clone(pin.Nodes)
			slices.Sort(want)
			if len(want) == 0 && len(e.Variants[vi].Lanes) == 1 || slices.Equal(l.Nodes, want) {
				pl = &v.Placements[l.Placement]
			}
		}
		if pl == nil {
			continue
		}
		for _, d := range pl.Draws {
			k := [2]string{d.Node, d.Domain}
			if _, seen := byDom[k]; !seen {
				order = append(order, k)
			}
			byDom[k] = append(byDom[k], use{pin, d.Gb, res})
		}
	}
	best, worst := "", 0.0
	for _, k := range order {
		us := byDom[k]
		dom := p.Domain(e.Index, k[0], k[1])
		if dom == nil || len(us) == 0 {
			continue
		}
		// Try each pin as the one that does not fit next to the others:
		// a resident lane must fit with every resident lane, an auto lane
		// with the always lanes (docs/objective.md, memory rule).
		for si, s := range us {
			var held float64
			kind := "always-resident"
			var who []string
			for ui, u := range us {
				if ui == si {
					continue
				}
				if s.res.Resident() && u.res.Resident() || u.res == model.Always {
					held += u.gb
					who = append(who, pinName(u.pin))
					if u.res == model.Preferred {
						kind = "resident"
					}
				}
			}
			over := s.gb + held - dom.Budget.PlanGb
			if over <= 1e-9 || over <= worst {
				continue
			}
			worst = over
			holds := ""
			if held > 0 {
				holds = fmt.Sprintf(" holds %s of %s lanes (%s)", model.Gb(held), kind, strings.Join(who, ", "))
			}
			as := ""
			if s.res == model.Auto && held > 0 {
				as = " even on demand"
			}
			best = fmt.Sprintf("%s needs %s%s; %s %s budget %s - headroom %g = %s%s",
				pinPhrase(s.pin), model.Gb(s.gb), as, k[0], k[1], model.Gb(dom.Budget.AdmitGb), dom.Budget.HeadroomGb,
				model.Gb(dom.Budget.PlanGb), holds)
		}
	}
	return best, best != ""
}

// explainUncovered says, for every source the plan leaves uncovered, what
// stops each candidate; and for every alias served by a later candidate
// while an earlier one cannot run at all, why not that one (an arch, a
// cordon, a pin). Every candidate is an Option of whynot.go, weighed on
// one encoding of the whole pool against the plan: eligibility, then
// minimal sets of pins and cordons, then of the plan's own lanes. parts
// is unused: the whole pool is encoded once, which is cheap next to the
// search.
func explainUncovered(r *run, p *model.Pool, a model.Assignment, uncovered []string, proved bool, unavoidable map[string]bool) []Explanation {
	late := servedLate(p, a)
	if len(uncovered) == 0 && len(late) == 0 {
		return nil
	}
	// Explaining may run a little past the deadline, not much: past this,
	// encodings give up and the explanations fall back to the static
	// reasons (eligibility), without the SAT check.
	end := r.deadline.Add(explainGrace(r.limit))
	var whole *encode.Encoding
	err := encode.ErrDeadline
	// An interrupted solve (its context cancelled) gives the static
	// reasons at once: the deadline is no bound on it.
	if !r.tooBig && r.ctx.Err() == nil {
		whole, err = encode.New(p, encode.Options{Deadline: end, Clock: r.clock})
	}
	var out []Explanation
	if err != nil {
		for _, sid := range uncovered {
			out = append(out, withUnread(p, explainStatic(p, sid, proved, unavoidable[sid])))
		}
		slices.SortFunc(out, func(x, y Explanation) int { return strings.Compare(x.Subject, y.Subject) })
		return out
	}
	k := &asker{p: p, ix: p.Index(), e: whole, plan: a, deadline: end, static: !whole.Exact, unavoidable: unavoidable}
	for _, sid := range uncovered {
		out = append(out, k.explainSource(sid, proved))
	}
	// An earlier member explained is one no plan can take: whether
	// some plan can is all that is asked of it.
	k.hardOnly = true
	for _, rc := range late {
		if ex, ok := k.explainLate(rc); ok {
			out = append(out, ex)
		}
	}
	slices.SortFunc(out, func(x, y Explanation) int { return strings.Compare(x.Subject, y.Subject) })
	return out
}

// withUnread adds, to an uncovered alias's explanation, the members the
// release never routes to: under LLooM 0.2.3's reading a fallback does
// not cover an alias whose target is not planned.
func withUnread(p *model.Pool, ex Explanation) Explanation {
	if !p.TargetOnly() {
		return ex
	}
	for _, a := range p.Aliases {
		if a.ID != ex.Subject || len(a.Unread) == 0 {
			continue
		}
		note := fmt.Sprintf("LLooM %s sends %s to its target alone, never to %s", p.Routing.Release, ex.Subject, strings.Join(a.Unread, ", "))
		if ex.Reason == "" {
			ex.Reason = note
		} else {
			ex.Reason += "; " + note
		}
	}
	return ex
}

// servedLate are the routes of aliases served by a candidate after the
// first, in source order.
func servedLate(p *model.Pool, a model.Assignment) []model.RouteChoice {
	ix := p.Index()
	var out []model.RouteChoice
	for _, rc := range a.Routes {
		ai, ok := ix.Alias[rc.Source]
		if !ok || rc.Model == "" {
			continue
		}
		if i := slices.Index(p.Aliases[ai].Candidates(), rc.Model); i > 0 {
			out = append(out, rc)
		}
	}
	return out
}

// explainLate says why an alias served by a later candidate is not served
// by an earlier local one that no plan can take at all; false when every
// earlier candidate could run (the objective chose; explain says why).
func (k *asker) explainLate(rc model.RouteChoice) (Explanation, bool) {
	cands, opts := k.candidates(rc.Source)
	at := slices.Index(cands, rc.Model)
	var parts, pins []string
	for _, m := range cands[:at] {
		var mine []Option
		possible := false
		for _, c := range opts {
			if c.model != m {
				continue
			}
			if c.v == nil && c.missing == "" {
				possible = true // an external model: the objective's choice
				break
			}
			o := k.weigh(rc.Source, c)
			if o.Possible || len(o.Reasons) == 0 {
				possible = true
				break
			}
			mine = append(mine, o)
		}
		if possible || len(mine) == 0 {
			continue
		}
		seen := map[string]bool{} // GPU sets of one node read alike
		shown := 0
		for i, o := range mine {
			text := o.short()
			if seen[text] {
				continue
			}
			if shown == 3 {
				parts = append(parts, fmt.Sprintf("and %d more placements", len(mine)-i))
				break
			}
			seen[text] = true
			shown++
			parts = append(parts, text)
			pins = append(pins, o.Pins...)
		}
	}
	if len(parts) == 0 {
		return Explanation{}, false
	}
	return Explanation{Subject: rc.Source, Pins: sortedUnique(pins),
		Reason: fmt.Sprintf("served by %s, not by an earlier member: %s", rc.Model, strings.Join(parts, "; "))}, true
}

// unavoidableText ends the explanation of a source that presolve proved
// uncovered in every plan: its options, each possible alone, cannot hold
// together with the pins, cordons and budgets.
const unavoidableText = "every plan leaves it uncovered: none of its options can hold beside the pins, cordons and memory budgets (proved)"

// notCovered ends an uncovered source's explanation with how sure it
// is: unavoidable (presolve proved it uncovered in every plan), proved
// (coverage is optimal), or neither.
func notCovered(proved, unavoidable bool) string {
	if unavoidable {
		return unavoidableText
	}
	if proved {
		return "covering it would leave another source uncovered (coverage is proved optimal)"
	}
	return "no plan covering it without uncovering another was found in time"
}

// explainGrace is how long explanations may run past the deadline.
func explainGrace(limit time.Duration) time.Duration { return ofLimit(limit, shareExplain) }

// explainStatic is the cheap explanation, for when there is no time to
// encode: the eligibility reasons of the variants that could serve the
// source, judged on the whole pool, without any SAT check.
func explainStatic(p *model.Pool, sid string, proved, unavoidable bool) Explanation {
	ex := Explanation{Subject: sid}
	ix := p.Index()
	var cands []string
	for _, al := range p.Aliases {
		if al.ID == sid {
			cands = al.Candidates()
		}
	}
	for _, m := range p.Models {
		if m.IsDemandSource() && model.DirectSource(m.ID) == sid {
			cands = []string{m.ID}
		}
	}
	if cands == nil {
		ex.Reason = "not a demand source of the pool"
		return ex
	}
	var why []string
	serving := 0
	for vi := range p.Variants {
		v := &p.Variants[vi]
		serves := false
		for _, m := range cands {
			if slices.Contains(v.Models, m) {
				serves = true
			} else if mi, ok := ix.Model[m]; ok && slices.Contains(p.Models[mi].Variants, v.ID) {
				serves = true
			}
		}
		if !serves {
			continue
		}
		serving++
		var rej []string
		eligible := false
		for _, pl := range v.Placements {
			ok, reason := model.Eligible(p, ix, v, pl)
			if ok {
				eligible = true
				break
			}
			rej = append(rej, fmt.Sprintf("%s cannot run on %s: %s", v.ID, pl.Key(), reason))
		}
		if !eligible {
			why = append(why, rej...)
		}
	}
	if serving == 0 {
		ex.Reason = "no candidate model"
		return ex
	}
	ex.Reason = strings.Join(append(why, notCovered(proved, unavoidable)), "; ")
	return ex
}

func findSource(e *encode.Encoding, id string) *encode.Source {
	for i := range e.Sources {
		if e.Sources[i].ID == id {
			return &e.Sources[i]
		}
	}
	return nil
}
