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
		left := time.Until(deadline)
		if left <= 0 {
			return 0, nil
		}
		for _, i := range sub {
			e.S.Assume(set[i].lit)
		}
		e.S.Assume(fixed...)
		r := e.S.Try(min(explainTry, left))
		if r != -1 {
			return r, nil
		}
		var why []int
		for _, m := range e.S.Why(nil) {
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
	c := core(x.e, nil, assumptionsOf(x.e), x.run.deadline.Add(2*time.Second))
	if len(c) == 0 {
		return []Explanation{{Subject: "pins", Reason: "the pins and cordons admit no plan (no conflict set found in time)"}}
	}
	return []Explanation{renderCore(x.e, x.run.pool, c)}
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
			if ok, reason := model.Eligible(whole, wix, v, pl); !ok {
				why = append(why, fmt.Sprintf("%s cannot run on %s: %s", v.ID, pl.Key(), reason))
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
				var cands []string
				for _, pl := range v.Placements {
					cands = append(cands, pl.Key())
				}
				return fmt.Sprintf("%s has no candidate placement on %s (candidates: %s)", v.ID, strings.Join(pin.Nodes, "+"), strings.Join(cands, ", "))
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
// stops each candidate: missing or external-only models, eligibility
// (budgets, links, archs), and the pins or cordons that a SAT check shows
// to conflict with covering it.
func explainUncovered(r *run, p *model.Pool, parts []component, a model.Assignment, uncovered []string, proved bool) []Explanation {
	if len(uncovered) == 0 {
		return nil
	}
	var out []Explanation
	// Explaining may run a little past the deadline, not much: past this,
	// encodings give up and the explanations fall back to the static
	// reasons (eligibility), without the SAT check.
	end := r.deadline.Add(explainGrace(r.limit))
	// Static reasons come from the whole pool (a part lacks the variants
	// that cannot run anywhere); the SAT check runs on the source's part.
	var whole *encode.Encoding
	err := encode.ErrDeadline
	// An interrupted solve (its context cancelled) gives the static
	// reasons at once: the deadline is no bound on it.
	if !r.tooBig && r.ctx.Err() == nil {
		whole, err = encode.New(p, encode.Options{Deadline: end})
	}
	if err != nil {
		for _, sid := range uncovered {
			out = append(out, explainStatic(p, sid, proved))
		}
		slices.SortFunc(out, func(x, y Explanation) int { return strings.Compare(x.Subject, y.Subject) })
		return out
	}
	for _, c := range parts {
		var mine []string
		for _, s := range uncovered {
			if sourceIn(c.pool, s) {
				mine = append(mine, s)
			}
		}
		if len(mine) == 0 {
			continue
		}
		e, err := encode.New(c.pool, encode.Options{Deadline: end})
		if err != nil {
			e = nil // static reasons only
		}
		for _, sid := range mine {
			out = append(out, explainSource(r, whole, e, a, sid, proved))
		}
	}
	slices.SortFunc(out, func(x, y Explanation) int { return strings.Compare(x.Subject, y.Subject) })
	return out
}

func sourceIn(p *model.Pool, s string) bool {
	for _, al := range p.Aliases {
		if al.ID == s {
			return true
		}
	}
	for _, m := range p.Models {
		if (m.DirectDemand > 0 || m.Required) && model.DirectSource(m.ID) == s {
			return true
		}
	}
	return false
}

func explainSource(r *run, whole, e *encode.Encoding, a model.Assignment, sid string, proved bool) Explanation {
	ex := Explanation{Subject: sid}
	src := findSource(whole, sid)
	var part *encode.Source
	if e != nil {
		part = findSource(e, sid)
	}
	if src == nil || (e != nil && part == nil) {
		ex.Reason = "not a demand source of the pool"
		return ex
	}
	var why []string
	for _, s := range src.Skipped {
		why = append(why, s)
	}
	// Rejections behind "no eligible placement".
	p := whole.Pool
	seen := map[int]bool{}
	for _, rt := range src.Routes {
		seen[rt.Variant] = true
	}
	for _, rj := range whole.Rejected {
		v := &p.Variants[rj.Variant]
		if seen[rj.Variant] || !servesAny(whole, rj.Variant, src) {
			continue
		}
		why = append(why, fmt.Sprintf("%s cannot run on %s: %s", v.ID, v.Placements[rj.Placement].Key(), rj.Reason))
	}
	if len(src.Routes) == 0 {
		if len(why) == 0 {
			why = append(why, "no candidate model")
		}
		ex.Reason = strings.Join(why, "; ")
		return ex
	}
	// Which pins, cordons and covered sources stand in the way: a minimal
	// set of them that rules out covering this source.
	if e != nil && e.Exact && time.Now().Before(r.deadline) {
		set := assumptionsOf(e)
		for _, rc := range a.Routes {
			if t := findSource(e, rc.Source); rc.Model != "" && t != nil && t.U != e.T {
				set = append(set, named{t.U.Not(), "covering " + rc.Source})
			}
		}
		if c := core(e, []z.Lit{part.U.Not()}, set, r.deadline); len(c) > 0 {
			var labels, pins []string
			for _, i := range c {
				labels = append(labels, set[i].label)
				if i < len(e.Assumptions) {
					pins = append(pins, set[i].label)
				}
			}
			ex.Pins = pins
			why = append(why, "covering it conflicts with "+strings.Join(labels, "; "))
			ex.Reason = strings.Join(why, "; ")
			return ex
		}
	}
	ex.Reason = strings.Join(append(why, notCovered(proved)), "; ")
	return ex
}

func notCovered(proved bool) string {
	if proved {
		return "covering it would leave another source uncovered (coverage is proved optimal)"
	}
	return "no plan covering it without uncovering another was found in time"
}

// explainGrace is how long explanations may run past the deadline.
func explainGrace(limit time.Duration) time.Duration {
	return min(limit/10, 500*time.Millisecond)
}

// explainStatic is the cheap explanation, for when there is no time to
// encode: the eligibility reasons of the variants that could serve the
// source, judged on the whole pool, without any SAT check.
func explainStatic(p *model.Pool, sid string, proved bool) Explanation {
	ex := Explanation{Subject: sid}
	ix := p.Index()
	var cands []string
	for _, al := range p.Aliases {
		if al.ID == sid {
			cands = al.Candidates()
		}
	}
	for _, m := range p.Models {
		if (m.DirectDemand > 0 || m.Required) && model.DirectSource(m.ID) == sid {
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
	ex.Reason = strings.Join(append(why, notCovered(proved)), "; ")
	return ex
}

// servesAny reports whether variant vi serves a candidate of the source.
func servesAny(e *encode.Encoding, vi int, s *encode.Source) bool {
	p := e.Pool
	var cands []string
	if s.Alias >= 0 {
		cands = p.Aliases[s.Alias].Candidates()
	} else {
		cands = []string{p.Models[s.Model].ID}
	}
	v := &p.Variants[vi]
	for _, m := range cands {
		if slices.Contains(v.Models, m) {
			return true
		}
		if mi, ok := e.Index.Model[m]; ok && slices.Contains(p.Models[mi].Variants, v.ID) {
			return true
		}
	}
	return false
}

func findSource(e *encode.Encoding, id string) *encode.Source {
	for i := range e.Sources {
		if e.Sources[i].ID == id {
			return &e.Sources[i]
		}
	}
	return nil
}
