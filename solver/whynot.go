package solver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
)

// Why-not answers weigh one option against a plan: a candidate that could
// serve a demand source first, or a placement a lane could take. Every
// reason comes out, not the first: every eligibility rule the placement
// breaks (model.Ineligible), then disjoint minimal sets of assumptions
// that gini's failed assumptions name and deletion shrinks — first among
// pins and cordons (no plan at all takes the option), then, per
// residency, among the plan's own lanes as well (the option does not fit
// next to them) — and, where it fits, what it costs: a broken SLO, a
// cloud model first, slower first tokens.

// Rules an explanation names beyond eligibility (model.Rule holds those).
const (
	RulePin       model.Rule = "pin"       // a pin rules the option out
	RulePlacement model.Rule = "placement" // the runtime runs elsewhere in the plan
	RuleSLO       model.Rule = "slo"       // the route would break the alias's SLO
	RuleExternal  model.Rule = "external"  // a cloud model first, while a local lane could serve
	RuleLatency   model.Rule = "latency"   // slower first tokens than the plan's route
	RuleObjective model.Rule = "objective" // the best plan that takes it is worse on a level
	RuleConflict  model.Rule = "conflict"  // a conflict the words above do not cover
)

// Option is one way to serve a source first (Model, through Variant on
// Nodes, or an External model), or one placement of a lane (Variant on
// Nodes), with every reason the plan does not take it.
type Option struct {
	Model    string   `json:"model,omitempty"`
	External bool     `json:"external,omitempty"`
	Variant  string   `json:"variant,omitempty"`
	Nodes    []string `json:"nodes,omitempty"`
	Devices  []string `json:"devices,omitempty"`
	// Chosen is set for the option the plan takes.
	Chosen bool `json:"chosen,omitempty"`
	// Possible is set when some plan, under the pins and cordons, takes
	// the option; the reasons are then the plan's lanes and the
	// objective, not hard rules.
	Possible bool           `json:"possible"`
	Reasons  []model.Reason `json:"reasons,omitempty"`
	// Pins are the pins and cordons in the minimal conflict sets behind
	// the reasons, as labelled.
	Pins []string `json:"pins,omitempty"`
	// Best is the best plan that takes the option, when asked for.
	Best *Outcome `json:"best,omitempty"`
}

// Outcome is how good the best plan that takes an option is.
type Outcome struct {
	Objective model.Objective `json:"objective"`
	// Proved is set when every level of it is proved optimal.
	Proved bool `json:"proved"`
	// Loses is what it loses against the plan: sources uncovered,
	// aliases served from the cloud first, SLOs broken, that the plan
	// covers, serves locally, or keeps.
	Loses Shortfall `json:"loses"`
	// Assignment is the plan itself, for callers that diff it.
	Assignment model.Assignment `json:"-"`
}

// Shortfall is what a plan leaves short: sources it leaves uncovered,
// aliases it serves from an external model first, aliases whose SLO it
// breaks. Slices are in source order, never nil.
type Shortfall struct {
	Uncovered []string `json:"uncovered"`
	ToCloud   []string `json:"toCloud"`
	SLOBroken []string `json:"sloBroken"`
}

// Minus is what s falls short of and t does not.
func (s Shortfall) Minus(t Shortfall) Shortfall {
	return Shortfall{Uncovered: missing(s.Uncovered, t.Uncovered), ToCloud: missing(s.ToCloud, t.ToCloud),
		SLOBroken: missing(s.SLOBroken, t.SLOBroken)}
}

// Empty reports whether nothing falls short.
func (s Shortfall) Empty() bool {
	return len(s.Uncovered) == 0 && len(s.ToCloud) == 0 && len(s.SLOBroken) == 0
}

// shortfall is plan a's shortfall on pool p, as eval counts it.
func shortfall(p *model.Pool, a model.Assignment) Shortfall { return ShortfallOf(p, a) }

// ShortfallOf is what plan a of pool p leaves short, as eval counts it.
func ShortfallOf(p *model.Pool, a model.Assignment) Shortfall {
	rep := eval.Check(p, a)
	return Shortfall{Uncovered: orEmpty(rep.Uncovered), ToCloud: orEmpty(servedExternally(p, a)), SLOBroken: orEmpty(rep.SLOBroken)}
}

func orEmpty(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}

// asker answers why-not questions on one encoding of pool p (e.Pool is
// p) against one plan of it.
type asker struct {
	p        *model.Pool
	ix       *model.PoolIndex
	e        *encode.Encoding
	plan     model.Assignment
	deadline time.Time
	calls    int
	// fixed are assumed in every call (a what-if's scenario); dropped
	// pins are not assumed at all.
	fixed   []z.Lit
	dropped map[int]bool
	// static skips the SAT checks: with memory figures too fine to count
	// exactly, an UNSAT answer may be the rounding's, not the pool's.
	static bool
	// hardOnly stops at whether any plan can take an option: what keeps
	// it from this plan is not weighed.
	hardOnly bool
	// unavoidable are sources proved uncovered in every plan (by a
	// presolve), whatever the SAT checks of their options found in time.
	unavoidable map[string]bool
}

// item is a named assumption a conflict set may name.
type item struct {
	lit   z.Lit
	label string
	kind  itemKind
	pin   int    // pinItem: index into Pool.Pins
	node  string // cordonItem
	lane  int    // laneItem, resItem: index into plan.Lanes
}

type itemKind int

const (
	pinItem itemKind = iota
	cordonItem
	laneItem
	resItem
)

// rules are the pin and cordon assumptions: what every plan must meet.
func (k *asker) rules() []item {
	var out []item
	for _, a := range k.e.Assumptions {
		if a.Kind == encode.AssumePin && k.dropped[a.Pin] {
			continue
		}
		it := item{lit: a.Lit, label: a.Label, pin: a.Pin, node: a.Node}
		if a.Kind == encode.AssumeCordon {
			it.kind = cordonItem
		}
		out = append(out, it)
	}
	return out
}

// kept are the plan's own decisions as assumptions: each lane on its
// nodes, and its residency; but those of variant except, which the
// question moves.
func (k *asker) kept(except string) []item {
	var out []item
	for li, l := range k.plan.Lanes {
		if l.Variant == except {
			continue
		}
		x, ok := k.laneLit(l.Variant, l.Nodes, l.Devices)
		if !ok {
			continue
		}
		out = append(out, item{lit: x, kind: laneItem, lane: li, label: fmt.Sprintf("%s on %s", l.Variant, strings.Join(l.Nodes, "+"))})
		if r, ok := k.resLit(l.Variant, l.Residency); ok && r != k.e.T {
			out = append(out, item{lit: r, kind: resItem, lane: li, label: fmt.Sprintf("%s %s", l.Variant, l.Residency)})
		}
	}
	return out
}

// laneLit is the x literal of variant id on nodes.
// A lane named without devices is its first device set on those nodes.
func (k *asker) laneLit(id string, nodes, devices []string) (z.Lit, bool) {
	vi, ok := k.e.Index.Variant[id]
	if !ok {
		return 0, false
	}
	v := &k.p.Variants[vi]
	for _, li := range k.e.Variants[vi].Lanes {
		pl := &v.Placements[k.e.Lanes[li].Placement]
		if pl.On(nodes, devices) || len(devices) == 0 && pl.On(nodes, pl.Devices) {
			return k.e.Lanes[li].Lit, true
		}
	}
	return 0, false
}

// resLit is the literal of variant id taking residency r; false where
// the variant cannot take it.
func (k *asker) resLit(id string, r model.Residency) (z.Lit, bool) {
	vi, ok := k.e.Index.Variant[id]
	if !ok {
		return 0, false
	}
	i := slices.Index(model.Residencies, r)
	if i < 0 {
		return 0, false
	}
	m := k.e.Variants[vi].Res[i]
	return m, m != k.e.F()
}

// routeLit is the literal of source sid served first by model m through
// variant vid ("" for an external model).
func (k *asker) routeLit(sid, m, vid string) (z.Lit, bool) {
	s := findSource(k.e, sid)
	if s == nil {
		return 0, false
	}
	vi := -1
	if vid != "" {
		var ok bool
		if vi, ok = k.e.Index.Variant[vid]; !ok {
			return 0, false
		}
	}
	for _, r := range s.Routes {
		if r.Model == m && r.Variant == vi {
			return r.Lit, true
		}
	}
	return 0, false
}

// try runs one bounded gini call under ms.
func (k *asker) try(ms []z.Lit) int {
	left := k.e.Clock.Until(k.deadline)
	if left <= 0 {
		return 0
	}
	k.calls++
	return k.e.TryUnder(min(explainTry, left), k.fixed, ms)
}

// cores returns disjoint minimal conflict sets among set, under fixed:
// the first set gini's Why names, shrunk by deletion, then the next among
// what is left, until the rest admits a plan (or time runs out). ok is
// false when fixed and the whole set are not shown UNSAT.
func (k *asker) cores(fixed []z.Lit, set []item) (out [][]item, ok bool) {
	active := slices.Clone(set)
	for len(active) > 0 || !ok {
		r, c := k.core(fixed, active)
		if r != -1 {
			return out, ok
		}
		ok = true
		if len(c) == 0 {
			return out, ok // fixed alone admits no plan
		}
		var core []item
		var rest []item
		for i, it := range active {
			if slices.Contains(c, i) {
				core = append(core, it)
			} else {
				rest = append(rest, it)
			}
		}
		out = append(out, core)
		active = rest
	}
	return out, ok
}

// core is one minimal conflict set (indexes into set), as core in
// explain.go but on the asker's clock and telling UNSAT from the rest.
func (k *asker) core(fixed []z.Lit, set []item) (int, []int) {
	ix := map[z.Lit]int{}
	for i, it := range set {
		ix[it.lit] = i
	}
	solve := func(sub []int) (int, []int) {
		ms := slices.Clone(fixed)
		for _, i := range sub {
			ms = append(ms, set[i].lit)
		}
		r := k.try(ms)
		if r != -1 {
			return r, nil
		}
		var why []int
		for _, m := range k.e.Why(nil) {
			// Only what sub assumed: a member's literal may also be
			// among the fixed ones.
			if i, ok := ix[m]; ok && slices.Contains(sub, i) {
				why = append(why, i)
			}
		}
		slices.Sort(why)
		return -1, slices.Compact(why)
	}
	all := make([]int, len(set))
	for i := range all {
		all[i] = i
	}
	r, c := solve(all)
	if r != -1 {
		return r, nil
	}
	for i := 0; i < len(c); {
		rest := slices.Delete(slices.Clone(c), i, i+1)
		if r, why := solve(rest); r == -1 {
			c = why
			i = min(i, len(c))
			continue
		}
		i++
	}
	return -1, c
}

// option weighs variant v on placement pl (nil for an external model m)
// as what serves source sid first (sid empty: a lane alone).
func (k *asker) option(sid, m string, v *model.Variant, pl *model.Placement) Option {
	o := Option{Model: m}
	if v == nil {
		o.External = true
		return k.external(o, sid)
	}
	o.Variant, o.Nodes, o.Devices = v.ID, slices.Clone(pl.Nodes), slices.Clone(pl.Devices)
	o.Reasons = model.Ineligible(k.p, k.ix, v, *pl)
	if len(o.Reasons) > 0 || k.static {
		return o
	}
	x, ok := k.laneLit(v.ID, pl.Nodes, pl.Devices)
	if !ok {
		o.Reasons = []model.Reason{{Rule: RuleConflict, Text: fmt.Sprintf("%s on %s is a duplicate of another of its placements", v.ID, pl.Key())}}
		return o
	}
	fixed := []z.Lit{x}
	if sid != "" {
		r, ok := k.routeLit(sid, m, v.ID)
		if !ok {
			o.Reasons = []model.Reason{{Rule: RuleConflict, Text: fmt.Sprintf("%s cannot serve %s first", m, sid)}}
			return o
		}
		fixed = append(fixed, r)
	}
	if cs, unsat := k.cores(fixed, k.rules()); unsat {
		o.Reasons = k.render(v, pl, "", cs)
		o.Pins = ruleLabels(cs)
		if len(o.Reasons) == 0 {
			o.Reasons = []model.Reason{{Rule: RuleConflict, Text: "no plan can take it (no conflict set found in time)"}}
		}
		return o
	}
	o.Possible = true
	if k.chosen(sid, m, v.ID, pl.Nodes) {
		o.Chosen = true
		return o
	}
	if k.hardOnly {
		return o
	}
	// Per residency: does it fit next to the plan's own lanes, and what
	// would it cost the source.
	type verdict struct {
		res     []model.Residency
		reasons []model.Reason
	}
	var vs []verdict
	keep := append(k.rules(), k.kept(v.ID)...)
	for _, r := range model.Residencies {
		rl, ok := k.resLit(v.ID, r)
		if !ok {
			continue
		}
		var rs []model.Reason
		if cs, unsat := k.cores(append(slices.Clone(fixed), rl), keep); unsat {
			rs = k.render(v, pl, r, cs)
			o.Pins = append(o.Pins, ruleLabels(cs)...)
		} else if sid != "" {
			rs = k.cost(sid, v, r)
		}
		if n := len(vs); n > 0 && sameReasons(vs[n-1].reasons, rs) {
			vs[n-1].res = append(vs[n-1].res, r)
			continue
		}
		vs = append(vs, verdict{[]model.Residency{r}, rs})
	}
	o.Pins = sortedUnique(o.Pins)
	_, fixedRes := v.FixedResidency()
	for _, vd := range vs {
		for _, r := range vd.reasons {
			if !fixedRes {
				r.Text = "as " + resList(vd.res) + ": " + r.Text
			}
			o.Reasons = append(o.Reasons, r)
		}
	}
	return o
}

// chosen reports whether the plan takes the option.
func (k *asker) chosen(sid, m, vid string, nodes []string) bool {
	if sid == "" {
		for _, l := range k.plan.Lanes {
			if l.Variant == vid && slices.Equal(sortedUnique(l.Nodes), sortedUnique(nodes)) {
				return true
			}
		}
		return false
	}
	for _, rc := range k.plan.Routes {
		if rc.Source == sid {
			if rc.Model != m || rc.Variant != vid {
				return false
			}
			if vid == "" {
				return true
			}
			for _, l := range k.plan.Lanes {
				if l.Variant == vid {
					return slices.Equal(sortedUnique(l.Nodes), sortedUnique(nodes))
				}
			}
		}
	}
	return false
}

// candidates are the options of source sid, in the alias's order of
// preference: each candidate model, through each variant that serves it,
// on each of its placements; an external model as one option.
func (k *asker) candidates(sid string) ([]string, []candidate) {
	var cands []string
	if ai, ok := k.ix.Alias[sid]; ok {
		cands = k.p.Aliases[ai].Candidates()
	} else if m, ok := strings.CutPrefix(sid, "model:"); ok {
		cands = []string{m}
	}
	var out []candidate
	for _, m := range cands {
		mi, ok := k.ix.Model[m]
		if !ok {
			out = append(out, candidate{model: m, missing: m + " is not a model of the pool"})
			continue
		}
		if k.p.Models[mi].External {
			out = append(out, candidate{model: m})
			continue
		}
		n := 0
		for vi := range k.p.Variants {
			v := &k.p.Variants[vi]
			if !slices.Contains(v.Models, m) && !slices.Contains(k.p.Models[mi].Variants, v.ID) {
				continue
			}
			for pi := range v.Placements {
				out = append(out, candidate{model: m, v: v, pl: &v.Placements[pi]})
				n++
			}
		}
		if n == 0 {
			out = append(out, candidate{model: m, missing: m + " has no variant that serves it"})
		}
	}
	return cands, out
}

type candidate struct {
	model   string
	v       *model.Variant
	pl      *model.Placement
	missing string // why the candidate has no option at all
}

// weigh turns a candidate into an option.
func (k *asker) weigh(sid string, c candidate) Option {
	if c.missing != "" {
		return Option{Model: c.model, Reasons: []model.Reason{{Rule: RuleConflict, Text: c.missing}}}
	}
	return k.option(sid, c.model, c.v, c.pl)
}

// short is an option's reasons on one line, for a plan's explanations:
// "m via v on nodes: reason, reason".
func (o Option) short() string {
	var rs []string
	for _, r := range o.Reasons {
		rs = append(rs, r.Text)
	}
	subject := o.Model
	if o.Variant != "" {
		subject += " via " + o.Variant + " on " + strings.Join(o.Nodes, "+")
	}
	if len(rs) == 0 {
		return subject
	}
	return subject + ": " + strings.Join(rs, " and ")
}

// ruleLabels are the labels of the pins and cordons in conflict sets.
func ruleLabels(cs [][]item) []string {
	var out []string
	for _, c := range cs {
		for _, it := range c {
			if it.kind == pinItem || it.kind == cordonItem {
				out = append(out, it.label)
			}
		}
	}
	return sortedUnique(out)
}

// shortOr is short, or fallback when the option has no reason.
func (o Option) shortOr(fallback string) string {
	if len(o.Reasons) == 0 {
		return fallback
	}
	return o.short()
}

// RouteAnswer says why a source routes where it does in the base plan:
// every option of every candidate, in the alias's order, each with its
// reasons.
type RouteAnswer struct {
	Source string `json:"source"`
	// Route is the plan's route of the source (Model empty: uncovered).
	Route model.RouteChoice `json:"route"`
	// Candidates are the models that may serve it first, in order.
	Candidates []string `json:"candidates"`
	Options    []Option `json:"options"`
}

// LaneAnswer says why a runtime does or does not run on a node in the
// base plan: every placement of it that uses the node.
type LaneAnswer struct {
	Variant string `json:"variant"`
	Node    string `json:"node"`
	// Lane is where the plan runs the variant, nil when it does not.
	Lane    *model.LaneChoice `json:"lane,omitempty"`
	Options []Option          `json:"options"`
	// Alternatives are, for a lane the plan runs on the node, the other
	// ways the plan was weighed against: without the lane there, with
	// another residency, on other nodes.
	Alternatives []Alternative `json:"alternatives,omitempty"`
	// Unweighed counts the other eligible placements not weighed
	// (beyond maxMoves).
	Unweighed int `json:"unweighed,omitempty"`
	// UnlistedGPUSets counts the GPU sets on the node past the first
	// maxGPUSets (and the plan's own), not weighed.
	UnlistedGPUSets int `json:"unlistedGpuSets,omitempty"`
}

// maxGPUSets bounds the GPU sets of one node an answer weighs: on an
// 8-GPU box a TP4 lane has 70, most alike.
const maxGPUSets = 4

// Alternative is one way the plan could do without a lane it runs, and
// the best plan that takes it.
type Alternative struct {
	// Kind is "without" (the lane not on the node), "residency" (the lane
	// where it is, with Residency) or "move" (the lane on Nodes).
	Kind      string          `json:"kind"`
	Nodes     []string        `json:"nodes,omitempty"`
	Devices   []string        `json:"devices,omitempty"`
	Residency model.Residency `json:"residency,omitempty"`
	// Best is the best plan that takes it, nil when none was found:
	// Reason then says why (no plan can, or none was found in time).
	Best   *Outcome `json:"best,omitempty"`
	Reason string   `json:"reason,omitempty"`
}

// maxMoves bounds the other eligible placements a placed lane is weighed
// against: a recipe may go on any of hundreds of nodes, and each costs a
// re-plan. The first in the variant's placement order are weighed, so the
// answer does not depend on timing.
const maxMoves = 4

// WhyRoute weighs every option of source sid (an alias, or model:<id>)
// against the base plan. With best, each option some plan could take but
// the base plan does not is re-planned with it forced (Replan), so its
// Best says what it would cost.
func (w *WhatIf) WhyRoute(ctx context.Context, sid string, best bool, deadline time.Time) (*RouteAnswer, error) {
	if findSource(w.e, sid) == nil {
		return nil, fmt.Errorf("alias %q: %w", sid, ErrUnknown)
	}
	k := w.asker(deadline)
	defer func() { w.Calls += k.calls }()
	ans := &RouteAnswer{Source: sid, Route: model.RouteChoice{Source: sid}}
	for _, rc := range w.base.Assignment.Routes {
		if rc.Source == sid {
			ans.Route = rc
		}
	}
	var cands []candidate
	ans.Candidates, cands = k.candidates(sid)
	for _, c := range cands {
		o := k.weigh(sid, c)
		if best && o.Possible && !o.Chosen {
			sc := Scenario{Routes: []model.RouteChoice{{Source: sid, Model: o.Model, Variant: o.Variant}}}
			if o.Variant != "" {
				sc.Lanes = []model.LaneChoice{{Variant: o.Variant, Nodes: o.Nodes, Devices: o.Devices}}
			}
			out, err := w.outcome(ctx, sc, deadline)
			if err != nil {
				return nil, err
			}
			o.Best = out
		}
		ans.Options = append(ans.Options, o)
	}
	return ans, nil
}

// WhyLane weighs every placement of the runtime (a variant id, or a
// runtime name) that uses node against the base plan; with best, as
// WhyRoute.
func (w *WhatIf) WhyLane(ctx context.Context, runtime, node string, best bool, deadline time.Time) (*LaneAnswer, error) {
	ix := w.e.Index
	if _, ok := ix.Node[node]; !ok {
		return nil, fmt.Errorf("node %q: %w", node, ErrUnknown)
	}
	vi, ok := ix.Variant[runtime]
	if !ok {
		vi = -1
		for i := range w.p.Variants {
			if w.p.Variants[i].Runtime == runtime && vi < 0 {
				vi = i
			}
		}
		if vi < 0 {
			return nil, fmt.Errorf("runtime %q: %w", runtime, ErrUnknown)
		}
	}
	v := &w.p.Variants[vi]
	k := w.asker(deadline)
	defer func() { w.Calls += k.calls }()
	ans := &LaneAnswer{Variant: v.ID, Node: node}
	for _, l := range w.base.Assignment.Lanes {
		if l.Variant == v.ID {
			l := l
			ans.Lane = &l
		}
	}
	sets := map[string]int{} // node set -> GPU sets listed
	for pi := range v.Placements {
		pl := &v.Placements[pi]
		if !slices.Contains(pl.Nodes, node) {
			continue
		}
		if len(pl.Devices) > 0 {
			key := strings.Join(pl.Nodes, "+")
			mine := ans.Lane != nil && pl.On(ans.Lane.Nodes, ans.Lane.Devices)
			if sets[key] >= maxGPUSets && !mine {
				ans.UnlistedGPUSets++
				continue
			}
			sets[key]++
		}
		o := k.option("", "", v, pl)
		if best && o.Possible && !o.Chosen {
			out, err := w.outcome(ctx, Scenario{Lanes: []model.LaneChoice{{Variant: v.ID, Nodes: pl.Nodes, Devices: pl.Devices}}}, deadline)
			if err != nil {
				return nil, err
			}
			o.Best = out
		}
		ans.Options = append(ans.Options, o)
	}
	if len(ans.Options) == 0 {
		ans.Options = []Option{{Variant: v.ID, Nodes: []string{node},
			Reasons: []model.Reason{{Rule: RulePlacement, Node: node, Text: noPlacement(w.p, v, []string{node})}}}}
	}
	if best && ans.Lane != nil && slices.Contains(ans.Lane.Nodes, node) {
		if err := w.alternatives(ctx, ans, v, deadline); err != nil {
			return nil, err
		}
	}
	return ans, nil
}

// alternatives weighs a lane the plan runs on ans.Node against doing
// without it there, another residency, and the first maxMoves other
// placements, each by a re-plan with it forced; the time left is shared
// evenly among those not yet asked.
func (w *WhatIf) alternatives(ctx context.Context, ans *LaneAnswer, v *model.Variant, deadline time.Time) error {
	lane := ans.Lane
	alts := []Alternative{{Kind: "without", Nodes: []string{ans.Node}}}
	scs := []Scenario{{Off: []model.LaneChoice{{Variant: v.ID, Nodes: []string{ans.Node}}}}}
	if _, fixed := v.FixedResidency(); !fixed {
		for _, r := range []model.Residency{model.Always, model.Preferred, model.Auto} {
			if r != lane.Residency {
				alts = append(alts, Alternative{Kind: "residency", Nodes: lane.Nodes, Residency: r})
				scs = append(scs, Scenario{Lanes: []model.LaneChoice{{Variant: v.ID, Nodes: lane.Nodes, Devices: lane.Devices, Residency: r}}})
			}
		}
	}
	moves := 0
	for pi := range v.Placements {
		pl := &v.Placements[pi]
		if slices.Contains(pl.Nodes, ans.Node) {
			continue
		}
		if ok, _ := model.Eligible(w.p, w.e.Index, v, *pl); !ok {
			continue // no plan can take it, whatever else runs
		}
		if moves == maxMoves {
			ans.Unweighed++
			continue
		}
		moves++
		alts = append(alts, Alternative{Kind: "move", Nodes: pl.Nodes, Devices: pl.Devices})
		scs = append(scs, Scenario{Lanes: []model.LaneChoice{{Variant: v.ID, Nodes: pl.Nodes, Devices: pl.Devices}}})
	}
	for i := range alts {
		end := time.Now().Add(partOf(nil, deadline, 1, len(alts)-i))
		r, err := w.Replan(ctx, scs[i], end)
		switch {
		case errors.Is(err, ErrNoPlan):
			alts[i].Reason = "no plan that takes it was found in its time"
		case err != nil:
			return err
		case r.Result.Infeasible:
			var why []string
			for _, e := range r.Result.Explanations {
				why = append(why, e.Reason)
			}
			alts[i].Reason = "no plan can take it: " + strings.Join(why, "; ")
		case r.TimedOut:
			alts[i].Reason = "no plan that takes it was found in its time"
		default:
			alts[i].Best = &Outcome{Objective: r.Result.Objective, Proved: r.Proved(), Loses: r.Shortfall().Minus(w.BaseShortfall()),
				Assignment: r.Result.Assignment}
		}
	}
	ans.Alternatives = alts
	return nil
}

func (w *WhatIf) asker(deadline time.Time) *asker {
	return &asker{p: w.p, ix: w.e.Index, e: w.e, plan: w.base.Assignment, deadline: deadline, static: !w.e.Exact}
}

// outcome re-plans with sc forced and says what it loses against the
// base plan; nil when no plan was found in time.
func (w *WhatIf) outcome(ctx context.Context, sc Scenario, deadline time.Time) (*Outcome, error) {
	r, err := w.Replan(ctx, sc, deadline)
	if errors.Is(err, ErrNoPlan) {
		return nil, nil
	}
	if err != nil || r.Result.Infeasible || r.TimedOut {
		return nil, err
	}
	return &Outcome{Objective: r.Result.Objective, Proved: r.Proved(), Loses: r.Shortfall().Minus(w.BaseShortfall()),
		Assignment: r.Result.Assignment}, nil
}

// missing lists the members of xs that are not in ys.
func missing(xs, ys []string) []string {
	out := []string{}
	for _, x := range xs {
		if !slices.Contains(ys, x) {
			out = append(out, x)
		}
	}
	return out
}

// servedExternally lists the aliases a plan serves first from an external
// model, in source order.
func servedExternally(p *model.Pool, a model.Assignment) []string {
	ix := p.Index()
	var out []string
	for _, rc := range a.Routes {
		if _, alias := ix.Alias[rc.Source]; !alias || rc.Model == "" {
			continue
		}
		if mi, ok := ix.Model[rc.Model]; ok && p.Models[mi].External {
			out = append(out, rc.Source)
		}
	}
	return out
}

// sortedUnique is xs sorted, each once, in a new slice.
func sortedUnique(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}
