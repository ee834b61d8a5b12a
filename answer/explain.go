package answer

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/poolsolve/poolsolve/internal/printable"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
	"github.com/poolsolve/poolsolve/solver"
)

// ExplainSchema names the JSON document WriteExplainJSON writes. A change
// that breaks a reader of the document takes a new version.
const ExplainSchema = "poolsolve.explain/v1"

// DefaultExplainLimit bounds the weighing of every option when
// ExplainOptions.Limit is zero.
const DefaultExplainLimit = 10 * time.Second

// ExplainOptions steer ExplainRoute and ExplainLane.
type ExplainOptions struct {
	// Fleet names the input, for the answer.
	Fleet string
	// Limit bounds the whole answer: the conflict sets and the re-plans
	// that price each option. Zero: DefaultExplainLimit.
	Limit time.Duration
}

// Explain is an answer: why a source routes where it does, or why a
// runtime is or is not on a node, in the base plan.
type Explain struct {
	Schema string `json:"schema"`
	Fleet  string `json:"fleet,omitempty"`
	// Question is what is asked, in words.
	Question string `json:"question"`
	// Objective is the base plan's, with Proved set when every level of
	// it is proved optimal.
	Objective model.Objective `json:"objective"`
	Proved    bool            `json:"proved"`
	Route     *RouteExplain   `json:"route,omitempty"`
	Lane      *LaneExplain    `json:"lane,omitempty"`
}

// RouteExplain answers `explain ALIAS`.
type RouteExplain struct {
	Source string `json:"source"`
	// Served is the plan's route of the source, as the plan words it.
	Served plan.Route `json:"served"`
	// Candidates are the models that may serve it first, in order:
	// members, then route profiles' members.
	Candidates []string `json:"candidates"`
	// Unread are members the config names that the release never routes
	// to (LLooM 0.2.3: the fallbacks), with the reading that says so.
	Unread  []string       `json:"unread,omitempty"`
	Routing *model.Routing `json:"routing,omitempty"`
	// Options are every way to serve it, in candidate order.
	Options []Option `json:"options"`
	// Through is the peer whose gateway the served model is forwarded
	// to, when that model is a federated name of the lane.
	Through string `json:"through,omitempty"`
}

// LaneExplain answers `explain RUNTIME --node NODE`.
type LaneExplain struct {
	Variant string `json:"variant"`
	Node    string `json:"node"`
	// Lane is where the plan runs the variant, nil when it does not run.
	Lane *model.LaneChoice `json:"lane,omitempty"`
	// Options are the variant's placements that use the node.
	Options []Option `json:"options"`
	// Forwarded are the lane's federated names, each with the peer whose
	// gateway it goes through.
	Forwarded map[string]string `json:"forwarded,omitempty"`
	// Alternatives are, for a lane the plan runs on the node, what the
	// plan was weighed against (without it there, another residency,
	// other nodes), each with its best plan's cost against the plan.
	Alternatives []Alternative `json:"alternatives,omitempty"`
	// Unweighed counts the variant's other eligible placements not
	// weighed.
	Unweighed int `json:"unweighed,omitempty"`
	// UnlistedGPUSets counts the node's GPU sets not weighed.
	UnlistedGPUSets int `json:"unlistedGpuSets,omitempty"`
}

// Alternative is a way to do without a placed lane, with what its best
// plan changes per level and against the plan.
type Alternative struct {
	solver.Alternative
	Change  *model.Objective `json:"change,omitempty"`
	Changes []plan.Change    `json:"changes,omitempty"`
}

// Option is one option with what makes it better, and what its best
// plan costs against the base plan.
type Option struct {
	solver.Option
	// Better is set for a route option earlier in the alias's order than
	// the plan's route, or with a faster first token (at its best
	// residency); every option of an uncovered source is better.
	Better bool `json:"better"`
	// Change is the best plan's objective less the base plan's, per
	// level, when the best plan is known; Changes are what that plan
	// changes against the base plan.
	Change  *model.Objective `json:"change,omitempty"`
	Changes []plan.Change    `json:"changes,omitempty"`
}

// ExplainRoute weighs every option of source sid (an alias, or
// model:<id>) against w's base plan of pool p.
func ExplainRoute(ctx context.Context, w *solver.WhatIf, p *model.Pool, sid string, opts ExplainOptions) (*Explain, error) {
	end := time.Now().Add(limitOr(opts.Limit))
	ans, err := w.WhyRoute(ctx, sid, true, end)
	if err != nil {
		return nil, err
	}
	ex := newExplain(w, opts, fmt.Sprintf("why %s routes where it does", sid))
	bp := plan.Build(p, w.Base(), plan.Meta{Fleet: opts.Fleet})
	re := &RouteExplain{Source: sid, Candidates: ans.Candidates, Options: []Option{}, Routing: p.Routing}
	for _, a := range p.Aliases {
		if a.ID == sid {
			re.Unread = a.Unread
		}
	}
	for _, r := range bp.Routes {
		if r.Source == sid {
			re.Served = r
		}
	}
	at := slices.Index(ans.Candidates, ans.Route.Model)
	ft := float64(re.Served.FirstTokenMs)
	rp := renderPool(p, w.Base().Assignment, bp)
	for _, o := range ans.Options {
		opt := Option{Option: o, Change: change(o.Best, w.Base().Objective), Changes: changes(rp, o.Best)}
		if !o.Chosen {
			i := slices.Index(ans.Candidates, o.Model)
			opt.Better = at < 0 || i < at || fastest(p, o) < ft
		}
		re.Options = append(re.Options, opt)
	}
	if vi, ok := p.Index().Variant[re.Served.Variant]; ok {
		re.Through = p.Variants[vi].Forwarded[re.Served.Model]
	}
	ex.Route = re
	return ex, nil
}

// ExplainLane weighs every placement of runtime that uses node against
// w's base plan of pool p.
func ExplainLane(ctx context.Context, w *solver.WhatIf, p *model.Pool, runtime, node string, opts ExplainOptions) (*Explain, error) {
	end := time.Now().Add(limitOr(opts.Limit))
	ans, err := w.WhyLane(ctx, runtime, node, true, end)
	if err != nil {
		return nil, err
	}
	q := fmt.Sprintf("why %s is not on %s", ans.Variant, node)
	if ans.Lane != nil && slices.Contains(ans.Lane.Nodes, node) {
		q = fmt.Sprintf("why %s is on %s", ans.Variant, node)
	}
	ex := newExplain(w, opts, q)
	le := &LaneExplain{Variant: ans.Variant, Node: node, Lane: ans.Lane, Options: []Option{}}
	rp := renderPool(p, w.Base().Assignment, plan.Build(p, w.Base(), plan.Meta{}))
	for _, o := range ans.Options {
		le.Options = append(le.Options, Option{Option: o, Change: change(o.Best, w.Base().Objective), Changes: changes(rp, o.Best)})
	}
	for _, a := range ans.Alternatives {
		le.Alternatives = append(le.Alternatives, Alternative{Alternative: a, Change: change(a.Best, w.Base().Objective), Changes: changes(rp, a.Best)})
	}
	le.Unweighed, le.UnlistedGPUSets = ans.Unweighed, ans.UnlistedGPUSets
	if vi, ok := p.Index().Variant[ans.Variant]; ok {
		le.Forwarded = p.Variants[vi].Forwarded
	}
	ex.Lane = le
	return ex, nil
}

func limitOr(d time.Duration) time.Duration {
	if d <= 0 {
		return DefaultExplainLimit
	}
	return d
}

func newExplain(w *solver.WhatIf, opts ExplainOptions, q string) *Explain {
	ex := &Explain{Schema: ExplainSchema, Fleet: opts.Fleet, Question: q, Objective: w.Base().Objective, Proved: true}
	for _, l := range w.Base().Levels {
		if l.Status != solver.Optimal {
			ex.Proved = false
		}
	}
	return ex
}

// change is the best plan's objective less base, nil without one.
func change(b *solver.Outcome, base model.Objective) *model.Objective {
	if b == nil {
		return nil
	}
	var d model.Objective
	for i := range d {
		d[i] = b.Objective[i] - base[i]
	}
	return &d
}

// changes are what the best plan b changes against the base plan, whose
// lanes and routes rp holds as running; nil without b.
func changes(rp *model.Pool, b *solver.Outcome) []plan.Change {
	if b == nil {
		return nil
	}
	return plan.Build(rp, &solver.Result{Assignment: b.Assignment, Objective: b.Objective}, plan.Meta{}).Changes
}

// fastest is an option's expected first token at its best residency.
func fastest(p *model.Pool, o solver.Option) float64 {
	ix := p.Index()
	if o.External {
		mi, ok := ix.Model[o.Model]
		if !ok {
			return 0
		}
		ft, _ := p.Settings.ExpectedExternal(&p.Models[mi])
		return ft
	}
	vi, ok := ix.Variant[o.Variant]
	if !ok {
		return 0
	}
	ft, _ := p.Settings.Expected(&p.Variants[vi], model.Always)
	return ft
}

// WriteExplainJSON writes the answer as a "poolsolve.explain/v1"
// document (docs/explain-json.md).
func WriteExplainJSON(w io.Writer, ex *Explain) error {
	if ex == nil {
		return errNil
	}
	return writeJSON(w, ex)
}

// WriteExplainText writes the answer for a terminal: what the plan does,
// then every better option with all its reasons, then the other options.
func WriteExplainText(w io.Writer, ex *Explain) error {
	if ex == nil {
		return errNil
	}
	// Ids come from the inputs: escaped as plan's text escapes them.
	ex = printable.Copy(ex)
	var t text
	t.line("poolsolve explain — " + ex.Question + ". A dry run.")
	proof := "every level proved optimal"
	if !ex.Proved {
		proof = "not every level proved optimal: a better plan may exist"
	}
	of := ""
	if ex.Fleet != "" {
		of = " of fleet " + ex.Fleet
	}
	t.line(fmt.Sprintf("Plan%s: objective %v, %s.", of, ex.Objective, proof))
	t.blank()
	switch {
	case ex.Route != nil:
		writeRoute(&t, ex.Route)
	case ex.Lane != nil:
		writeLane(&t, ex.Lane)
	}
	_, err := io.WriteString(w, t.sb.String())
	return err
}

func writeRoute(t *text, r *RouteExplain) {
	t.line(servedText(r.Source, r.Served))
	if r.Through != "" {
		t.line(fmt.Sprintf("%s is a federated name of %s: the gateway forwards it to %s's gateway, which serves it on that lane.", r.Served.Model, r.Served.Variant, r.Through))
	}
	if rt := r.Routing; rt != nil && rt.Reading == model.ReadTarget {
		line := fmt.Sprintf("Routing: LLooM %s (%s) sends %s to its target alone", rt.Release, rt.Basis, r.Source)
		if len(r.Unread) > 0 {
			line += ", never to " + strings.Join(r.Unread, ", ") + ": a fallback covers nothing"
		}
		t.line(line + ".")
	}
	var better, other []Option
	for _, o := range r.Options {
		switch {
		case o.Chosen:
		case o.Better:
			better = append(better, o)
		default:
			other = append(other, o)
		}
	}
	t.blank()
	t.line("Why not a better candidate")
	if len(better) == 0 {
		t.line("  (none: no candidate comes earlier in the order of " + r.Source + " or serves a faster first token)")
	}
	for _, o := range better {
		writeOption(t, o)
	}
	if len(other) > 0 {
		t.blank()
		t.line("Other candidates")
		for _, o := range other {
			writeOption(t, o)
		}
	}
}

func servedText(sid string, r plan.Route) string {
	if !r.Covered() {
		s := sid + " is uncovered: nothing serves it first"
		if r.Reason != "" {
			s += " (" + oneLine(r.Reason) + ")"
		}
		return s + "."
	}
	s := sid + " -> " + r.Model
	if r.External {
		s += " (external)"
	} else {
		s += fmt.Sprintf(" on %s (%s, %s)", r.Variant, strings.Join(r.Nodes, "+"), r.Residency)
	}
	if r.RouteName != "" {
		s += ", route " + r.RouteName
	}
	s += fmt.Sprintf(": %.0f ms first token", float64(r.FirstTokenMs))
	if r.SLO != nil && r.SLOStatus != "" {
		var bounds []string
		if r.SLO.FirstTokenMs > 0 {
			bounds = append(bounds, fmt.Sprintf("first token %.0f ms", float64(r.SLO.FirstTokenMs)))
		}
		if r.SLO.TotalMs > 0 {
			bounds = append(bounds, fmt.Sprintf("total %.0f ms", float64(r.SLO.TotalMs)))
		}
		verdict := "kept"
		if r.SLOStatus == plan.SLOViolated {
			verdict = "BROKEN"
		}
		s += fmt.Sprintf(", SLO %s %s", strings.Join(bounds, ", "), verdict)
	}
	return s + "."
}

func writeLane(t *text, l *LaneExplain) {
	if l.Lane != nil {
		t.line(fmt.Sprintf("%s runs on %s (%s) in the plan.", l.Variant, strings.Join(l.Lane.Nodes, "+"), l.Lane.Residency))
	} else {
		t.line(l.Variant + " does not run in the plan.")
	}
	for _, m := range slices.Sorted(maps.Keys(l.Forwarded)) {
		t.line(fmt.Sprintf("It is also asked for as %s, federated: through %s's gateway.", m, l.Forwarded[m]))
	}
	t.blank()
	t.line("On " + l.Node)
	for _, o := range l.Options {
		writeOption(t, o)
	}
	if l.UnlistedGPUSets > 0 {
		t.line(fmt.Sprintf("  (%d other GPU sets of %s on %s not weighed)", l.UnlistedGPUSets, l.Variant, l.Node))
	}
	if len(l.Alternatives) == 0 {
		return
	}
	t.blank()
	t.line("Why it is there: the plan against each alternative")
	for _, a := range l.Alternatives {
		on := model.PlacementKey(a.Nodes, a.Devices)
		var head string
		switch a.Kind {
		case "without":
			head = "without " + l.Variant + " on " + on
		case "residency":
			head = l.Variant + " on " + on + " as " + string(a.Residency)
		default:
			head = l.Variant + " on " + on + " instead"
		}
		t.line("  " + head)
		if a.Best == nil {
			t.line("    - " + oneLine(a.Reason))
			continue
		}
		t.line("    - " + bestText(Option{Option: solver.Option{Best: a.Best}, Change: a.Change, Changes: a.Changes}))
	}
	if l.Unweighed > 0 {
		t.line(fmt.Sprintf("  (%d other eligible placements of %s not weighed)", l.Unweighed, l.Variant))
	}
}

// writeOption writes one option: what it is, whether any plan can take
// it, every reason, and what its best plan costs.
func writeOption(t *text, o Option) {
	head := o.Model
	switch {
	case o.External:
		head += " (external)"
	case o.Variant != "" && o.Model != "":
		head += " via " + o.Variant + " on " + model.PlacementKey(o.Nodes, o.Devices)
	case o.Variant != "":
		head = o.Variant + " on " + model.PlacementKey(o.Nodes, o.Devices)
	}
	switch {
	case o.Chosen:
		head += ": the plan has it"
	case !o.Possible:
		head += ": no plan can take it"
	default:
		head += ": a plan could take it; this one does not"
	}
	t.line("  " + head)
	for _, r := range o.Reasons {
		t.line("    - " + string(r.Rule) + ": " + oneLine(r.Text))
	}
	if o.Best != nil {
		t.line("    - " + bestText(o))
	}
}

// bestText says what the best plan that takes an option costs.
func bestText(o Option) string {
	b := o.Best
	proved := "proved"
	if !b.Proved {
		proved = "not proved"
	}
	s := fmt.Sprintf("the best plan that takes it scores %v (%s)", b.Objective, proved)
	if o.Change != nil {
		var ds []string
		for i, d := range o.Change {
			if d != 0 {
				ds = append(ds, fmt.Sprintf("level %d %+d", i+1, d))
			}
		}
		if len(ds) == 0 {
			s += ", as good as the plan"
		} else {
			s += ": " + strings.Join(ds, ", ")
		}
	}
	var loses []string
	if len(b.Loses.Uncovered) > 0 {
		loses = append(loses, "uncovers "+strings.Join(b.Loses.Uncovered, ", "))
	}
	if len(b.Loses.ToCloud) > 0 {
		loses = append(loses, "sends "+strings.Join(b.Loses.ToCloud, ", ")+" to the cloud")
	}
	if len(b.Loses.SLOBroken) > 0 {
		loses = append(loses, "breaks the SLO of "+strings.Join(b.Loses.SLOBroken, ", "))
	}
	if len(loses) > 0 {
		s += "; it " + strings.Join(loses, ", ")
	}
	var cs []string
	for _, c := range o.Changes {
		cs = append(cs, changeWords(c))
	}
	if len(cs) > 0 {
		s += "; against the plan it would " + capped(cs)
	}
	return s
}

// changeWords is a change in a few words, without its reason.
func changeWords(c plan.Change) string {
	on := model.PlacementKey(c.Nodes, c.Devices)
	switch c.Kind {
	case plan.Start:
		return fmt.Sprintf("start %s on %s (%s)", c.Subject, on, c.Residency)
	case plan.Stop:
		return fmt.Sprintf("stop %s on %s", c.Subject, on)
	case plan.Move:
		return fmt.Sprintf("move %s to %s", c.Subject, on)
	case plan.SetResidency:
		return fmt.Sprintf("make %s %s", c.Subject, c.To)
	case plan.Reroute:
		to := c.To
		if to == "" {
			to = "nothing"
		}
		return fmt.Sprintf("route %s to %s", c.Subject, to)
	case plan.ManualStop:
		return fmt.Sprintf("stop %s on %s by hand", c.Subject, on)
	case plan.ManualStart:
		return fmt.Sprintf("start %s on %s by hand", c.Subject, on)
	}
	return c.Kind.String() + " " + c.Subject
}
