package eval

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/poolsolve/poolsolve/model"
)

// Checker holds what Check derives from a pool once, for checking many
// assignments against it (brute force, local search). It is read-only
// after NewChecker and safe for concurrent Checks; the pool must not change.
type Checker struct {
	p       *model.Pool
	node    map[string]int
	variant map[string]int
	model   map[string]int
	alias   map[string]int
	linked  map[[2]string]bool
	serves  map[[2]string]bool // {variant, model}
	// problem[v][k] is why placement k of variant v is ineligible, "" if it is.
	problem [][]string
	// localFirst[m] reports a local model with a variant that has an
	// eligible placement, so serving its aliases externally counts at level 2.
	localFirst map[string]bool
	sources    []source
	sourceIx   map[string]int
	current    map[string][]model.CurrentLane
	curRoute   map[string]string
	h          int64
	unit       float64
}

type source struct {
	name   string
	alias  *model.Alias // nil for a direct model source
	demand float64
	cands  []string
}

// Check evaluates a against p. It never panics; a nil pool is empty.
func Check(p *model.Pool, a model.Assignment) Report { return NewChecker(p).Check(a) }

// NewChecker prepares p for checking.
func NewChecker(p *model.Pool) *Checker {
	if p == nil {
		p = &model.Pool{}
	}
	c := &Checker{
		p: p, node: map[string]int{}, variant: map[string]int{}, model: map[string]int{}, alias: map[string]int{},
		linked: map[[2]string]bool{}, serves: map[[2]string]bool{}, localFirst: map[string]bool{},
		sourceIx: map[string]int{}, current: map[string][]model.CurrentLane{}, curRoute: map[string]string{},
	}
	for i, n := range p.Nodes {
		if _, dup := c.node[n.ID]; !dup {
			c.node[n.ID] = i
		}
	}
	for i, v := range p.Variants {
		if _, dup := c.variant[v.ID]; !dup {
			c.variant[v.ID] = i
		}
		for _, m := range v.Models {
			c.serves[[2]string{v.ID, m}] = true
		}
	}
	for i, m := range p.Models {
		if _, dup := c.model[m.ID]; !dup {
			c.model[m.ID] = i
		}
		for _, v := range m.Variants {
			c.serves[[2]string{v, m.ID}] = true
		}
	}
	for i, a := range p.Aliases {
		if _, dup := c.alias[a.ID]; !dup {
			c.alias[a.ID] = i
		}
	}
	for _, l := range p.Links {
		if !linkShown(p, l) {
			continue
		}
		c.linked[[2]string{l.A, l.B}] = true
		c.linked[[2]string{l.B, l.A}] = true
	}
	listedBy := map[string][]string{} // variant -> the models listing it
	for _, m := range p.Models {
		for _, v := range m.Variants {
			listedBy[v] = append(listedBy[v], m.ID)
		}
	}
	c.problem = make([][]string, len(p.Variants))
	for i := range p.Variants {
		v := &p.Variants[i]
		c.problem[i] = make([]string, len(v.Placements))
		placeable := false
		for k, pl := range v.Placements {
			c.problem[i][k] = c.ineligible(v, pl)
			placeable = placeable || c.problem[i][k] == ""
		}
		if placeable {
			for _, m := range v.Models {
				c.localFirst[m] = true
			}
			for _, m := range listedBy[v.ID] {
				c.localFirst[m] = true
			}
		}
	}
	for _, m := range p.Models {
		if m.External {
			delete(c.localFirst, m.ID)
		}
	}
	for i := range p.Aliases {
		a := &p.Aliases[i]
		c.addSource(source{name: a.ID, alias: a, demand: a.Demand, cands: a.Candidates()})
	}
	for _, m := range p.Models {
		// Its own reading of model.IsDemandSource, kept apart on purpose.
		if m.DirectDemand > 0 || m.Required {
			c.addSource(source{name: model.DirectSource(m.ID), demand: m.DirectDemand, cands: []string{m.ID}})
		}
	}
	for _, l := range p.Current.Lanes {
		if _, ok := c.variant[l.Variant]; ok {
			c.current[l.Variant] = append(c.current[l.Variant], l)
		}
	}
	for _, r := range p.Current.Routes {
		if _, seen := c.curRoute[r.Alias]; !seen && r.Primary != "" {
			c.curRoute[r.Alias] = r.Primary
		}
	}
	c.unit = p.Settings.LatencyUnitMs
	if !(c.unit > 0) || math.IsInf(c.unit, 0) {
		c.unit = 1
	}
	c.h = Units(p.Settings.HysteresisMs / c.unit)
	return c
}

func (c *Checker) addSource(s source) {
	if _, dup := c.sourceIx[s.name]; dup {
		return
	}
	c.sourceIx[s.name] = len(c.sources)
	c.sources = append(c.sources, s)
}

// Units rounds one objective term to whole units, half away from zero
// (docs/objective.md), clamped to ±2^40 so that sums of many terms cannot
// overflow. Heuristics that keep their own running cost call it so that
// their sums equal Check's.
func Units(x float64) int64 {
	const limit = 1 << 40
	switch {
	case math.IsNaN(x):
		return 0
	case x > limit:
		return limit
	case x < -limit:
		return -limit
	}
	return int64(math.Round(x))
}

// lane is a placed lane as Check understands it.
type lane struct {
	vi  int
	k   int // placement index
	res model.Residency
}

// Check evaluates a. The report is deterministic for a given pool and
// assignment.
func (c *Checker) Check(a model.Assignment) Report {
	var r Report
	bad := func(rule Rule, subject, format string, args ...any) {
		r.Violations = append(r.Violations, Violation{Rule: rule, Subject: subject, Message: fmt.Sprintf(format, args...)})
	}
	p := c.p
	placed := map[int]lane{}
	// A variant runs at most one lane: every lane it is given is named,
	// whichever of them is wrong in other ways too.
	onto := map[string][]string{}
	for _, lc := range a.Lanes {
		ns := slices.Clone(lc.Nodes)
		slices.Sort(ns)
		onto[lc.Variant] = append(onto[lc.Variant], nodeSet(ns))
	}
	listed := map[string]bool{}

	for _, lc := range a.Lanes {
		vi, ok := c.variant[lc.Variant]
		if !ok {
			bad(RuleUnknownVariant, lc.Variant, "no variant %q in the pool", lc.Variant)
			continue
		}
		if sets := onto[lc.Variant]; len(sets) > 1 && !listed[lc.Variant] {
			bad(RuleDuplicateLane, lc.Variant, "%s", placedTwice(sets))
		}
		listed[lc.Variant] = true
		if _, dup := placed[vi]; dup {
			continue // named above; the first lane that places counts
		}
		v := &p.Variants[vi]
		unknown := false
		for _, n := range lc.Nodes {
			if _, ok := c.node[n]; !ok {
				bad(RuleUnknownNode, lc.Variant, "no node %q in the pool", n)
				unknown = true
			}
		}
		if unknown {
			continue
		}
		k := c.placementOf(v, lc.Nodes, lc.Devices)
		if k < 0 {
			var cands []string
			for _, pl := range v.Placements {
				cands = append(cands, pl.Key())
			}
			if len(cands) == 0 {
				cands = []string{"none"}
			}
			bad(RulePlacement, lc.Variant, "%s is not a candidate placement (candidates: %s)", placementText(lc.Nodes, lc.Devices), capCands(cands))
			continue
		}
		if why := c.problem[vi][k]; why != "" {
			bad(RuleEligibility, lc.Variant, "cannot run on %s: %s", v.Placements[k].Key(), why)
		}
		res := lc.Residency
		if !res.Valid() {
			bad(RuleResidency, lc.Variant, "residency %q is not always, preferred or auto", string(res))
			res = model.Auto
		} else if fixed, ok := v.FixedResidency(); ok && res != fixed {
			bad(RuleResidency, lc.Variant, "%s lanes keep residency %s; the plan says %s", v.Kind, fixed, res)
		}
		placed[vi] = lane{vi: vi, k: k, res: res}
	}

	c.checkMemory(placed, bad)
	served := c.checkRoutes(a.Routes, placed, bad)
	c.checkPins(placed, served, bad)
	c.objective(&r, placed, served)
	r.Valid = len(r.Violations) == 0
	return r
}

// placementOf finds the candidate placement on exactly the node set and
// device choice, or -1.
func (c *Checker) placementOf(v *model.Variant, nodes, devices []string) int {
	for k, pl := range v.Placements {
		if sameSet(pl.Nodes, nodes) && sameSet(pl.Devices, devices) {
			return k
		}
	}
	return -1
}

// placementText names nodes and devices as a plan lists them.
func placementText(nodes, devices []string) string {
	if len(devices) == 0 {
		return nodeSet(nodes)
	}
	return nodeSet(nodes) + " on " + strings.Join(devices, ",")
}

// capCands keeps a long candidate list readable: 70 device sets of one
// node say little one by one.
func capCands(cands []string) string {
	const most = 8
	if len(cands) <= most {
		return strings.Join(cands, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(cands[:most], ", "), len(cands)-most)
}

// placedTwice says where a variant's lanes are: "placed twice: on a and
// on b", or "listed twice on a" when they are one placement repeated.
func placedTwice(sets []string) string {
	times := "twice"
	if len(sets) > 2 {
		times = fmt.Sprintf("%d times", len(sets))
	}
	if slices.Equal(slices.Compact(slices.Clone(sets)), sets[:1]) {
		return fmt.Sprintf("listed %s on %s (a variant runs one lane)", times, sets[0])
	}
	on := make([]string, len(sets))
	for i, s := range sets {
		on[i] = "on " + s
	}
	list := strings.Join(on[:len(on)-1], ", ") + " and " + on[len(on)-1]
	return fmt.Sprintf("placed %s: %s (a variant runs one lane)", times, list)
}

func nodeSet(nodes []string) string {
	if len(nodes) == 0 {
		return "no node"
	}
	return strings.Join(nodes, "+")
}

// linkShown is eval's own reading of link evidence: a link taken from a
// lane proves a cable only when what runs now shows that lane on both
// nodes with a status a gateway reported and did not call unhealthy. A
// lane the config only declares, or one assumed to run, proves nothing.
func linkShown(p *model.Pool, l model.Link) bool {
	if strings.HasPrefix(l.Source, "assumed") {
		return false
	}
	lane, ok := strings.CutPrefix(l.Source, "running lane ")
	if !ok {
		return true
	}
	for _, cl := range p.Current.Lanes {
		if cl.Variant == lane && slices.Contains(cl.Nodes, l.A) && slices.Contains(cl.Nodes, l.B) &&
			cl.Status != "" && cl.Status != model.LaneDeclared && !strings.HasPrefix(cl.Status, "unknown") && !strings.Contains(cl.Status, "unhealthy") {
			return true
		}
	}
	return false
}

func sameSet(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// ineligible re-states model.Eligible's rules without calling it: node
// count, available nodes, arch/platform/accelerators (unreported facts pass
// for fixed placements, fail for recipes), recipe installability, linked
// clique, known domains and static fit.
func (c *Checker) ineligible(v *model.Variant, pl model.Placement) string {
	p := c.p
	if len(pl.Nodes) == 0 {
		return "the placement names no node"
	}
	if v.Req.NodeCount > 0 && len(pl.Nodes) != v.Req.NodeCount {
		return fmt.Sprintf("needs %d nodes, the placement has %d", v.Req.NodeCount, len(pl.Nodes))
	}
	recipe := v.Kind == model.Recipe
	for _, id := range pl.Nodes {
		ni, ok := c.node[id]
		if !ok {
			return fmt.Sprintf("node %s is not in the pool", id)
		}
		n := &p.Nodes[ni]
		if n.Unavailable != "" {
			return fmt.Sprintf("%s is %s", id, n.Unavailable)
		}
		if len(v.Req.ComputeArchs) > 0 {
			if len(n.Archs) == 0 {
				if recipe {
					return fmt.Sprintf("%s reports no compute arch (needs %s)", id, strings.Join(v.Req.ComputeArchs, " or "))
				}
			} else if !anyIn(v.Req.ComputeArchs, n.Archs) {
				return fmt.Sprintf("%s has arch %s, needs %s", id, strings.Join(n.Archs, ","), strings.Join(v.Req.ComputeArchs, " or "))
			}
		}
		if len(v.Req.Platforms) > 0 {
			if n.Platform == "" {
				if recipe {
					return fmt.Sprintf("%s reports no platform (needs %s)", id, strings.Join(v.Req.Platforms, " or "))
				}
			} else if !slices.Contains(v.Req.Platforms, n.Platform) {
				return fmt.Sprintf("%s is %s, needs %s", id, n.Platform, strings.Join(v.Req.Platforms, " or "))
			}
		}
		for _, acc := range v.Req.Accelerators {
			if slices.Contains(n.Accelerators, acc) {
				continue
			}
			if recipe || len(n.Accelerators) > 0 {
				return fmt.Sprintf("%s lacks accelerator %s", id, acc)
			}
		}
		if recipe {
			if why := c.uninstallable(n, &v.Req); why != "" {
				return why
			}
		}
	}
	for i := range pl.Nodes {
		for j := i + 1; j < len(pl.Nodes); j++ {
			if !c.linked[[2]string{pl.Nodes[i], pl.Nodes[j]}] {
				return fmt.Sprintf("%s and %s are not directly linked (tensor parallel needs every pair linked)", pl.Nodes[i], pl.Nodes[j])
			}
		}
	}
	for _, d := range pl.Draws {
		dom := c.domain(d.Node, d.Domain)
		if dom == nil {
			return fmt.Sprintf("%s has no memory domain %s", d.Node, d.Domain)
		}
		if !fits(dom.Budget.PlanGb, d.Gb) {
			return fmt.Sprintf("needs %s on %s %s alone; %s", model.Gb(d.Gb), d.Node, d.Domain, budgetText(dom.Budget))
		}
	}
	return ""
}

func (c *Checker) uninstallable(n *model.Node, r *model.Requirements) string {
	for _, cmd := range r.Commands {
		if !slices.Contains(n.Commands, cmd) {
			return fmt.Sprintf("%s lacks command %s", n.ID, cmd)
		}
	}
	if len(r.Images) > 0 && !anyIn(r.Images, n.Images) && !slices.Contains(n.Commands, "docker") {
		return fmt.Sprintf("%s has no image %s and no docker to pull it", n.ID, r.Images[0])
	}
	for _, w := range r.Weights {
		if slices.Contains(n.CachedWeights, w) {
			continue
		}
		room := false
		for _, root := range n.ModelRoots {
			room = room || root.FreeGb >= r.DiskGb
		}
		if !room {
			return fmt.Sprintf("%s has neither %s cached nor %s free on a model root", n.ID, w, model.Gb(r.DiskGb))
		}
	}
	return ""
}

func anyIn(want, have []string) bool {
	for _, w := range want {
		if slices.Contains(have, w) {
			return true
		}
	}
	return false
}

func (c *Checker) domain(node, id string) *model.Domain {
	ni, ok := c.node[node]
	if !ok {
		return nil
	}
	n := &c.p.Nodes[ni]
	for j := range n.Domains {
		if n.Domains[j].ID == id {
			return &n.Domains[j]
		}
	}
	return nil
}

func budgetText(b model.Budget) string {
	return fmt.Sprintf("budget %s - headroom %g = %s", model.Gb(b.AdmitGb), b.HeadroomGb, model.Gb(b.PlanGb))
}

type badFunc func(rule Rule, subject, format string, args ...any)

// checkMemory applies the residency rule on every domain: resident draws
// fit the plan budget, and each auto draw fits next to the always draws.
func (c *Checker) checkMemory(placed map[int]lane, bad badFunc) {
	type use struct {
		variant string
		gb      float64
		res     model.Residency
	}
	byDomain := map[[2]string][]use{}
	for vi := range c.p.Variants { // pool order keeps sums and messages stable
		l, ok := placed[vi]
		if !ok {
			continue
		}
		v := &c.p.Variants[vi]
		for _, d := range v.Placements[l.k].Draws {
			key := [2]string{d.Node, d.Domain}
			byDomain[key] = append(byDomain[key], use{v.ID, d.Gb, l.res})
		}
	}
	for _, n := range c.p.Nodes {
		for _, dom := range n.Domains {
			uses := byDomain[[2]string{n.ID, dom.ID}]
			if len(uses) == 0 {
				continue
			}
			delete(byDomain, [2]string{n.ID, dom.ID}) // a duplicate domain id is checked once
			// resident and always are for messages; fits decides.
			var resident, always float64
			var residentGb, alwaysGb []float64
			var who []string
			for _, u := range uses {
				if u.res.Resident() {
					resident += u.gb
					residentGb = append(residentGb, u.gb)
					who = append(who, fmt.Sprintf("%s %s %s", u.variant, u.res, model.Gb(u.gb)))
				}
				if u.res == model.Always {
					always += u.gb
					alwaysGb = append(alwaysGb, u.gb)
				}
			}
			subject := n.ID + " " + dom.ID
			if !fits(dom.Budget.PlanGb, residentGb...) {
				bad(RuleMemory, subject, "resident lanes need %s (%s); %s",
					model.Gb(resident), strings.Join(who, ", "), budgetText(dom.Budget))
			}
			for _, u := range uses {
				if u.res == model.Auto && !fitsWith(dom.Budget.PlanGb, u.gb, alwaysGb) {
					bad(RuleMemoryAuto, subject, "auto lane %s needs %s next to %s of always lanes = %s; %s",
						u.variant, model.Gb(u.gb), model.Gb(always), model.Gb(u.gb+always), budgetText(dom.Budget))
				}
			}
		}
	}
}

// serving is what a source is served by after the route checks.
type serving struct {
	model   string
	variant int // -1 for an external model
}

// checkRoutes validates every route and returns the sources they serve.
func (c *Checker) checkRoutes(routes []model.RouteChoice, placed map[int]lane, bad badFunc) map[int]serving {
	served := map[int]serving{}
	seen := map[int]bool{}
	for _, rc := range routes {
		si, ok := c.sourceIx[rc.Source]
		if !ok {
			bad(RuleUnknownSource, rc.Source, "no alias or directly requested model %q", rc.Source)
			continue
		}
		if seen[si] {
			bad(RuleDuplicateRoute, rc.Source, "more than one route")
			continue
		}
		seen[si] = true
		s := &c.sources[si]
		if rc.Model == "" {
			if rc.Variant != "" {
				bad(RuleRoute, rc.Source, "names lane %s but no model", rc.Variant)
			}
			continue
		}
		mi, ok := c.model[rc.Model]
		if !ok {
			bad(RuleRoute, rc.Source, "no model %q in the pool", rc.Model)
			continue
		}
		if !slices.Contains(s.cands, rc.Model) {
			bad(RuleRoute, rc.Source, "%s is not a candidate (candidates: %s)", rc.Model, strings.Join(s.cands, ", "))
			continue
		}
		m := &c.p.Models[mi]
		if m.External {
			switch {
			case !c.p.Settings.ExternalAllowed:
				bad(RuleRoute, rc.Source, "served by external %s, but external models are not allowed", rc.Model)
			case rc.Variant != "":
				bad(RuleRoute, rc.Source, "external %s is served by no lane, the route names %s", rc.Model, rc.Variant)
			default:
				served[si] = serving{model: rc.Model, variant: -1}
			}
			continue
		}
		if rc.Variant == "" {
			bad(RuleRoute, rc.Source, "local model %s needs the lane that serves it", rc.Model)
			continue
		}
		vi, ok := c.variant[rc.Variant]
		switch {
		case !ok:
			bad(RuleRoute, rc.Source, "no variant %q in the pool", rc.Variant)
		case !c.serves[[2]string{rc.Variant, rc.Model}]:
			bad(RuleRoute, rc.Source, "%s does not serve %s", rc.Variant, rc.Model)
		default:
			if _, on := placed[vi]; !on {
				bad(RuleRoute, rc.Source, "served by %s, which the plan does not place", rc.Variant)
				continue
			}
			served[si] = serving{model: rc.Model, variant: vi}
		}
	}
	return served
}

// checkPins checks lane pins against the lanes and route pins against the
// first available member of their route.
func (c *Checker) checkPins(placed map[int]lane, served map[int]serving, bad badFunc) {
	for _, pin := range c.p.Pins {
		label := pin.Label
		if label == "" {
			label = "pin " + pin.Variant + pin.Alias
		}
		if pin.Variant != "" {
			vi, ok := c.variant[pin.Variant]
			if !ok {
				bad(RulePinLane, label, "pins variant %s, which the pool lacks", pin.Variant)
				continue
			}
			l, on := placed[vi]
			switch {
			case !on:
				bad(RulePinLane, label, "%s must run, the plan does not place it", pin.Variant)
			case len(pin.Nodes) > 0 && !sameSet(pin.Nodes, c.p.Variants[vi].Placements[l.k].Nodes):
				bad(RulePinLane, label, "%s must run on %s, the plan puts it on %s", pin.Variant,
					strings.Join(pin.Nodes, "+"), c.p.Variants[vi].Placements[l.k].Key())
			case pin.Residency != "" && pin.Residency != l.res:
				bad(RulePinLane, label, "%s must be %s, the plan makes it %s", pin.Variant, pin.Residency, l.res)
			}
		}
		if pin.Alias != "" {
			si, ok := c.sourceIx[pin.Alias]
			if _, isAlias := c.alias[pin.Alias]; !ok || !isAlias {
				bad(RulePinRoute, label, "pins alias %s, which the pool lacks", pin.Alias)
				continue
			}
			want, why := c.firstAvailable(pin.Route, placed)
			got, covered := served[si]
			switch {
			case want == "" && covered:
				bad(RulePinRoute, label, "no member of %s is available, yet %s is served by %s",
					strings.Join(pin.Route, ","), pin.Alias, got.model)
			case want != "" && !covered:
				bad(RulePinRoute, label, "%s must be served by %s (%s), the plan leaves it uncovered", pin.Alias, want, why)
			case want != "" && got.model != want:
				bad(RulePinRoute, label, "%s must be served by %s (%s), the plan serves %s", pin.Alias, want, why, got.model)
			}
		}
	}
}

// firstAvailable is the first route member that can serve: an external
// model (when allowed) or a local model with a placed variant.
func (c *Checker) firstAvailable(route []string, placed map[int]lane) (string, string) {
	for _, m := range route {
		mi, ok := c.model[m]
		if !ok {
			continue
		}
		if c.p.Models[mi].External {
			if c.p.Settings.ExternalAllowed {
				return m, "external"
			}
			continue
		}
		for vi := range c.p.Variants {
			if _, on := placed[vi]; on && c.serves[[2]string{c.p.Variants[vi].ID, m}] {
				return m, "served by placed " + c.p.Variants[vi].ID
			}
		}
	}
	return "", ""
}

// cold is the share of requests that meet the lane cold.
func (c *Checker) cold(r model.Residency) float64 {
	switch r {
	case model.Preferred:
		return c.p.Settings.ColdFractionPreferred
	case model.Auto:
		return c.p.Settings.ColdFractionAuto
	}
	return 0
}

// latency is a served source's expected first-token and total latency.
func (c *Checker) latency(sv serving, placed map[int]lane) (ft, total float64, how string) {
	if sv.variant < 0 {
		m := &c.p.Models[c.model[sv.model]]
		ft = m.Perf.FirstTokenMs
		if ft == 0 {
			ft = c.p.Settings.ExternalFirstTokenMs
		}
		total = m.Perf.TotalMs
		if total == 0 {
			total = ft
		}
		return ft, total, "external " + sv.model
	}
	v := &c.p.Variants[sv.variant]
	l := placed[sv.variant]
	cold := c.cold(l.res) * v.LoadTimeMs
	ft = v.Perf.FirstTokenMs + cold
	total = ft
	if v.Perf.TotalMs != 0 {
		total = v.Perf.TotalMs + cold
	}
	return ft, total, fmt.Sprintf("%s %s", v.ID, l.res)
}

func (c *Checker) objective(r *Report, placed map[int]lane, served map[int]serving) {
	add := func(kind TermKind, subject string, u int64, format string, args ...any) {
		if u != 0 {
			r.Objective[3] += u
			r.Terms = append(r.Terms, Term{Kind: kind, Subject: subject, Units: u, Detail: fmt.Sprintf(format, args...)})
		}
	}
	for si := range c.sources {
		s := &c.sources[si]
		sv, ok := served[si]
		if !ok {
			r.Objective[0]++
			r.Uncovered = append(r.Uncovered, s.name)
			continue
		}
		ft, total, how := c.latency(sv, placed)
		if s.alias != nil {
			if sv.variant < 0 && slices.ContainsFunc(s.cands, func(m string) bool { return c.localFirst[m] }) {
				r.Objective[1]++
				r.ExternalFirst = append(r.ExternalFirst, s.name)
			}
			if slo := s.alias.SLO; slo != nil && (slo.FirstTokenMs > 0 && ft > slo.FirstTokenMs || slo.TotalMs > 0 && total > slo.TotalMs) {
				r.Objective[2]++
				r.SLOBroken = append(r.SLOBroken, s.name)
			}
			if cur, ok := c.curRoute[s.name]; ok && cur != sv.model {
				add(TermReroute, s.name, c.h, "served by %s, now by %s", sv.model, cur)
			}
		}
		add(TermLatency, s.name, Units(s.demand*ft/c.unit), "%g requests x %g ms (%s)", s.demand, ft, how)
	}
	load := func(v *model.Variant) int64 { return Units(c.p.Settings.ChurnWeight * v.LoadTimeMs / c.unit) }
	for vi := range c.p.Variants {
		v := &c.p.Variants[vi]
		l, on := placed[vi]
		cur := c.current[v.ID]
		if on {
			nodes, devices := v.Placements[l.k].Nodes, v.Placements[l.k].Devices
			kept := -1
			for i, cl := range cur {
				if sameSet(cl.Nodes, nodes) && sameSet(cl.Devices, devices) {
					kept = i
					break
				}
			}
			switch {
			case kept < 0 && len(cur) == 0:
				add(TermStart, v.ID, load(v)+c.h, "start on %s: load %g ms + hysteresis", nodeSet(nodes), v.LoadTimeMs)
			case kept < 0:
				add(TermMove, v.ID, load(v)+c.h, "move to %s: load %g ms + hysteresis", nodeSet(nodes), v.LoadTimeMs)
			case cur[kept].Residency.Valid() && cur[kept].Residency != l.res:
				add(TermResidency, v.ID, c.h, "residency %s -> %s", cur[kept].Residency, l.res)
			}
		}
		for _, cl := range cur {
			if !on || !sameSet(cl.Nodes, v.Placements[l.k].Nodes) || !sameSet(cl.Devices, v.Placements[l.k].Devices) {
				add(TermStop, v.ID, c.h, "stop on %s", nodeSet(cl.Nodes))
			}
		}
	}
	sort.SliceStable(r.Terms, func(i, j int) bool { return r.Terms[i].Kind < r.Terms[j].Kind })
}
