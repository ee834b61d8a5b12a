package plan

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/internal/printable"
	"github.com/poolsolve/poolsolve/model"
)

// TextOptions steer WriteText. The zero value is plain text, unwrapped.
type TextOptions struct {
	// Color adds ANSI colours: red stops and lost coverage, green starts,
	// yellow changes and unproved levels, bold headings.
	Color bool
	// Verbose adds each domain's admission rule and headroom, and each
	// level's lower bound and what proves it.
	Verbose bool
	// Width wraps lines longer than Width columns at spaces, continuing
	// under the text they continue; 0 leaves lines whole.
	Width int
	// ChangesOnly prints the headline, the changes and their summary:
	// no nodes, routes, objective, explanations or notes.
	ChangesOnly bool
}

const header = "poolsolve plan — dry run: nothing is started, stopped or rerouted."

// ANSI colours; used only with TextOptions.Color.
const (
	ansiBold   = "\x1b[1m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	ansiPurple = "\x1b[35m"
	ansiReset  = "\x1b[0m"
)

// WriteText renders the plan for a terminal, like `terraform plan`: nodes
// with their lanes and memory, routes, objective levels, explanations,
// notes, and the changes with a one-line summary. Column widths follow the
// content; the same plan gives the same bytes. A nil plan writes nothing.
func WriteText(w io.Writer, p *Plan, opts TextOptions) error {
	if p == nil {
		return nil
	}
	// Ids, reasons and notes come from the inputs: a terminal must not
	// act on the control and bidi characters they may hold.
	p = printable.Copy(p)
	t := &textWriter{opts: opts}
	t.para(header)
	if meta := metaLine(p); meta != "" {
		t.para(meta)
	}
	if sl := searchLine(p); sl != "" {
		t.wrapped("", t.paint(ansiBold+ansiYellow, "NOT PROVED:")+" ", len("NOT PROVED: "), sl, "")
	}
	if rt := routingLine(p.Routing); rt != "" {
		t.para(rt)
	}
	if p.Infeasible {
		t.blank()
		t.line(t.paint(ansiBold+ansiRed, "No plan: the hard constraints (pins, cordons, budgets) admit none."))
		t.list("Fallbacks", p.Fallbacks)
		t.explanations("Why", p.Explanations)
		t.list("Notes", p.Notes)
		return t.flush(w)
	}
	lost := uncovered(p)
	t.headline(lost, p.Search)
	t.list("Fallbacks", p.Fallbacks)
	if !opts.ChangesOnly {
		t.nodes(p.Nodes)
		t.routes(p.Routes)
		t.now(p.Now)
		t.levels(p.Levels)
		t.explanations("Explanations", p.Explanations)
		t.list("Notes", p.Notes)
	}
	t.changes(p.Changes, p.Summary, lost)
	t.rollout(p.Rollout)
	return t.flush(w)
}

// uncoveredSource is a demand source nothing serves in the plan; lost
// when the plan re-routes it from what serves it now to nothing. (A
// source without a current route, such as a model asked for by its own
// id, is only known to be uncovered.)
type uncoveredSource struct {
	route Route
	lost  bool
}

func uncovered(p *Plan) []uncoveredSource {
	lost := map[string]bool{}
	for _, c := range p.Changes {
		if c.Kind == Reroute && c.To == "" {
			lost[c.Subject] = true
		}
	}
	var out []uncoveredSource
	for _, r := range p.Routes {
		if !r.Covered() {
			out = append(out, uncoveredSource{r, lost[r.Source]})
		}
	}
	// Coverage lost by this plan first, as terraform lists destroys first.
	slices.SortStableFunc(out, func(a, b uncoveredSource) int {
		if a.lost != b.lost {
			if a.lost {
				return -1
			}
			return 1
		}
		return 0
	})
	return out
}

// headline puts coverage above everything: a source the plan leaves
// without any model is what an operator must see first.
func (t *textWriter) headline(us []uncoveredSource, s *Search) {
	if len(us) == 0 {
		return
	}
	t.blank()
	// Whether the loss is proved unavoidable comes before a list that may
	// run to pages.
	if ul := unavoidableLine(s); ul != "" {
		t.para(ul)
	}
	for _, u := range us {
		what := "is not covered"
		if u.lost {
			what = "loses all coverage"
		}
		why := "nothing serves it"
		if u.route.Reason != "" {
			why = oneLine(u.route.Reason)
		}
		t.wrapped("", t.paint(ansiBold+ansiRed, "! "+u.route.Source+" "+what)+": ", 2+utf8.RuneCountInString(u.route.Source+" "+what+": "), why, "")
	}
}

func (t *textWriter) nodes(ns []Node) {
	t.heading("Nodes")
	if len(ns) == 0 {
		t.line("  (none)")
		return
	}
	// Lane columns line up across nodes: widths come from every lane.
	rows := make([][][]cell, len(ns))
	var all [][]cell
	for i, n := range ns {
		for _, l := range n.Lanes {
			rows[i] = append(rows[i], laneRow(l))
		}
		all = append(all, rows[i]...)
	}
	widths := widthsOf(all)
	records := !t.fits("      ", all, widths)
	for i, n := range ns {
		t.nodeHead(n)
		t.rows("      ", rows[i], widths, records)
	}
}

func (t *textWriter) nodeHead(n Node) {
	id := "  " + n.ID + "  "
	idWidth := utf8.RuneCountInString(id)
	if n.Unavailable != "" {
		t.wrapped("", id, idWidth, shout(oneLine(n.Unavailable)), ansiRed)
		return
	}
	if n.Federated {
		id += "[federated]  "
		idWidth += len("[federated]  ")
	}
	switch len(n.Domains) {
	case 0:
		t.line(id + "(no memory domain)")
	case 1:
		t.wrapped("", id, idWidth, "("+domainText(n.Domains[0])+")", "")
	default:
		t.line(id)
		for _, d := range n.Domains {
			t.wrapped("    ", "", 5, "("+domainText(d)+")", "")
		}
	}
	if t.opts.Verbose {
		for _, d := range n.Domains {
			t.wrapped("      ", "", 6, fmt.Sprintf("budget %s: %s, headroom %s", d.ID, oneLine(d.Rule), gb(d.HeadroomGb)), "")
		}
	}
}

// UnavailableText is how a node's unavailability reads beside its id:
// the first word capitalised, as a state, the rest as the reason says it,
// so that "cordoned (--cordon)" reads CORDONED (--cordon).
func UnavailableText(s string) string { return shout(s) }

func shout(s string) string {
	i := strings.IndexAny(s, " :")
	if i < 0 {
		return strings.ToUpper(s)
	}
	return strings.ToUpper(s[:i]) + s[i:]
}

func domainText(d Domain) string {
	s := fmt.Sprintf("%s  plan %s of %s admitted; resident %s; free %s",
		d.ID, gb(d.PlanGb), gb(d.AdmitGb), gb(d.ResidentGb), gb(d.FreeGb))
	if d.LargestAuto != "" {
		s += fmt.Sprintf("; auto up to %s (%s) next to %s always", gb(d.LargestAutoGb), d.LargestAuto, gb(d.AlwaysGb))
	}
	return s
}

func laneRow(l Lane) []cell {
	var mem []string
	for _, d := range l.Draws {
		mem = append(mem, gb(d.Gb))
	}
	if len(l.Draws) > 1 {
		for i, d := range l.Draws {
			mem[i] += " " + d.Domain
		}
	}
	var tags []string
	if l.Kind != "" && l.Kind != model.Managed {
		tags = append(tags, string(l.Kind))
	}
	if len(l.With) > 0 {
		tags = append(tags, "with "+strings.Join(l.With, ", "))
	}
	tag := ""
	if len(tags) > 0 {
		tag = "[" + strings.Join(tags, ", ") + "]"
	}
	memText := strings.Join(mem, " + ")
	if memText == "" {
		memText = "-"
	}
	return []cell{{text: l.Variant}, {text: string(l.Residency)}, {text: memText}, {text: tag}, {text: strings.Join(l.Models, ", ")}}
}

func (t *textWriter) routes(rs []Route) {
	t.heading("Routes")
	if len(rs) == 0 {
		t.line("  (no alias or requested model)")
		return
	}
	rows := [][]cell{{{text: "source"}, {text: "demand", right: true}, {text: "served by"}, {text: "first token", right: true}, {text: "SLO"}, {text: "lane"}}}
	for _, r := range rs {
		demand := cell{text: demandText(r.Demand), right: true}
		if !r.Covered() {
			why := "nothing serves it"
			if r.Reason != "" {
				why = oneLine(r.Reason)
			}
			rows = append(rows, []cell{{text: r.Source}, demand, {text: "(uncovered)", color: ansiRed}, {text: "-", right: true}, {}, {text: why}})
			continue
		}
		on := "external"
		if !r.External {
			on = r.Variant
		}
		var extra []string
		if r.RouteName != "" {
			extra = append(extra, "route "+r.RouteName)
		}
		if len(r.Fallbacks) > 0 {
			extra = append(extra, "fallback "+strings.Join(r.Fallbacks, ", "))
		}
		if len(extra) > 0 {
			on += " (" + strings.Join(extra, "; ") + ")"
		}
		slo, color := sloText(r)
		rows = append(rows, []cell{{text: r.Source}, demand, {text: r.Model}, {text: msText(r.FirstTokenMs), right: true}, {text: slo, color: color}, {text: on}})
	}
	t.table("  ", rows)
}

// now shows the status read for each configured lane, once a gateway
// said anything: with the config alone every lane is declared, and the
// section would only repeat the nodes.
func (t *textWriter) now(ls []NowLane) {
	if !slices.ContainsFunc(ls, func(l NowLane) bool { return l.Status != model.LaneDeclared }) {
		return
	}
	t.heading("Now (as the gateways report it)")
	var rows [][]cell
	for _, l := range ls {
		runs, color := "runs", ""
		if !l.Running {
			runs, color = "not running", ansiYellow
		}
		rows = append(rows, []cell{{text: l.Variant}, {text: strings.Join(l.Nodes, "+")}, {text: runs, color: color}, {text: "read: " + l.Status}})
	}
	t.table("  ", rows)
}

// demandText is a source's demand: requests in the demand window.
func demandText(d float64) string {
	d = finite(d)
	if d == math.Trunc(d) {
		return fmt.Sprintf("%.0f req", d)
	}
	return fmt.Sprintf("%.1f req", d)
}

func sloText(r Route) (string, string) {
	if r.SLO == nil || r.SLOStatus == "" {
		return "", ""
	}
	var bounds []string
	if r.SLO.FirstTokenMs > 0 {
		bounds = append(bounds, msText(r.SLO.FirstTokenMs))
	}
	if r.SLO.TotalMs > 0 {
		bounds = append(bounds, "total "+msText(r.SLO.TotalMs))
	}
	s := strings.Join(bounds, ", ")
	if r.SLOStatus == SLOViolated {
		return s + " VIOLATED", ansiRed
	}
	return s + " " + string(r.SLOStatus), ""
}

func (t *textWriter) levels(ls []Level) {
	t.heading("Objective (each level minimised before the next)")
	var rows [][]cell
	for _, l := range ls {
		status, color := statusText(l)
		if t.opts.Verbose {
			status += " " + boundText(l)
		}
		rows = append(rows, []cell{{text: fmt.Sprintf("%d %s", l.Index, l.Name)}, {text: fmt.Sprint(l.Value), right: true},
			{text: l.Unit}, {text: status, color: color}})
	}
	t.table("  ", rows)
	for _, l := range ls {
		if unit, ok := strings.CutPrefix(l.Unit, "units of "); ok {
			t.wrapped("  ", "", 2, fmt.Sprintf("%s is counted in units of %s: one unit is one request waiting %s for its first token "+
				"(demand times expected first-token latency); a start or move adds its load time, weighted, and every change a hysteresis, in the same units.", l.Name, unit, unit), "")
			break
		}
	}
}

// statusText says in plain words how good a level's value is; the solver's
// terms (status, lower bound) stay in the JSON and --verbose.
func statusText(l Level) (string, string) {
	switch l.Status {
	case "optimal":
		return "proved optimal", ""
	case "heuristic":
		return "heuristic, not proved", ansiYellow
	case "bounded":
	default:
		return l.Status, ""
	}
	// A bounded value v with a proved lower bound lb is at most
	// (v - lb) / lb above the optimum, which lies in [lb, v].
	if l.LowerBound > 0 && l.Value > l.LowerBound {
		return fmt.Sprintf("best found, at most %s above optimal", percent(float64(l.Value-l.LowerBound)/float64(l.LowerBound))), ansiYellow
	}
	return "best found, not proved optimal", ansiYellow
}

// percent prints a fraction as a percentage with one decimal, rounded up
// so that "at most" stays true.
func percent(f float64) string {
	return strconv.FormatFloat(math.Ceil(f*1000)/10, 'f', 1, 64) + "%"
}

func boundText(l Level) string { return fmt.Sprintf("(lower bound %d)", l.LowerBound) }

// changeLabels are the marker and label of each kind, as printed.
var changeLabels = map[ChangeKind][2]string{
	Stop:         {"-", "stop"},
	Start:        {"+", "start"},
	Move:         {"~", "move"},
	SetResidency: {"~", "residency"},
	Reroute:      {"~", "reroute"},
	ManualStop:   {"!", "manual stop"},
	ManualStart:  {"!", "manual start"},
}

var changeColors = map[string]string{"-": ansiRed, "+": ansiGreen, "~": ansiYellow, "!": ansiPurple}

func (t *textWriter) changes(cs []Change, s Summary, us []uncoveredSource) {
	t.heading("Changes")
	if len(cs) == 0 {
		t.line("  No changes. The plan matches what runs now.")
		return
	}
	var rows [][]cell
	for _, c := range cs {
		lab, ok := changeLabels[c.Kind]
		if !ok {
			lab = [2]string{"?", c.Kind.String()}
		}
		text := changeText(c)
		if c.Reason != "" {
			text += ": " + oneLine(c.Reason)
		}
		color := changeColors[lab[0]]
		rows = append(rows, []cell{{text: lab[0] + " " + lab[1], color: color}, {text: text}})
	}
	t.table("  ", rows)
	t.blank()
	t.wrapped("", "", 0, summaryLine(s, us), "")
}

func changeText(c Change) string {
	nodes := model.PlacementKey(c.Nodes, c.Devices)
	switch c.Kind {
	case Stop:
		return fmt.Sprintf("%s on %s (was %s)", c.Subject, nodes, orDash(string(c.Residency)))
	case Start:
		return fmt.Sprintf("%s on %s (%s)", c.Subject, nodes, orDash(string(c.Residency)))
	case Move:
		return fmt.Sprintf("%s: %s -> %s (%s)", c.Subject, strings.Join(c.FromNodes, "+"), nodes, orDash(string(c.Residency)))
	case SetResidency:
		return fmt.Sprintf("%s on %s: %s -> %s", c.Subject, nodes, c.From, c.To)
	case Reroute:
		to := c.To
		if to == "" {
			to = "(uncovered)"
		}
		s := fmt.Sprintf("%s: %s -> %s", c.Subject, c.From, to)
		if c.FromRoute != "" || c.ToRoute != "" {
			s += fmt.Sprintf(" (route %s -> %s)", orDash(c.FromRoute), orDash(c.ToRoute))
		}
		return s
	case ManualStop:
		return fmt.Sprintf("%s on %s (%s)", c.Subject, nodes, manualNote(c.LaneKind, "stop"))
	case ManualStart:
		return fmt.Sprintf("%s on %s (%s; %s)", c.Subject, nodes, orDash(string(c.Residency)), manualNote(c.LaneKind, "start"))
	}
	return c.Subject
}

func manualNote(k model.VariantKind, verb string) string {
	switch k {
	case model.Federated:
		return "federated: its own gateway must " + verb + " it"
	case model.Unmanaged:
		return "unmanaged: LLooM cannot " + verb + " it"
	}
	return "LLooM cannot " + verb + " it"
}

// summaryLine counts the changes, and first the sources left uncovered:
// "Plan: 1 alias loses all coverage; 0 to start, 5 to stop, ...".
func summaryLine(s Summary, us []uncoveredSource) string {
	lost := 0
	for _, u := range us {
		if u.lost {
			lost++
		}
	}
	var head []string
	if lost > 0 {
		head = append(head, plural(lost, "alias loses all coverage", "aliases lose all coverage"))
	}
	if n := len(us) - lost; n > 0 {
		head = append(head, plural(n, "source uncovered", "sources uncovered"))
	}
	lead := ""
	if len(head) > 0 {
		lead = strings.Join(head, ", ") + "; "
	}
	return fmt.Sprintf("Plan: %s%d to start, %d to stop, %d to move, %s, %s, %s.",
		lead, s.Start, s.Stop, s.Move, plural(s.Residency, "residency change", "residency changes"),
		plural(s.Reroute, "re-route", "re-routes"), plural(s.Manual, "manual action", "manual actions"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine keeps free text from breaking the layout.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

func gb(x GiB) string { return model.Gb(finite(float64(x))) }

func msText(x Ms) string { return fmt.Sprintf("%.0f ms", math.Round(finite(float64(x)))) }

func num(x GiB) string { return strings.TrimSuffix(gb(x), " GiB") }

// ChangeLine is one change as WriteText lists it, without colour or
// padding: its marker and label, what changes, and the reason. Other
// reports that list a plan's changes (resilience) print them so.
func ChangeLine(c Change) string {
	lab, ok := changeLabels[c.Kind]
	if !ok {
		lab = [2]string{"?", c.Kind.String()}
	}
	text := lab[0] + " " + lab[1] + "  " + changeText(c)
	if c.Reason != "" {
		text += ": " + oneLine(c.Reason)
	}
	return text
}

// stepKinds maps a rollout step's action to the change kind it is listed
// as.
var stepKinds = map[string]ChangeKind{
	"start": Start, "stop": Stop, "residency": SetResidency, "reroute": Reroute,
	"manual-start": ManualStart, "manual-stop": ManualStop,
}

// rollout lists the steps under the changes, numbered, with their wave,
// what they wait for and what they leave uncovered.
func (t *textWriter) rollout(r *Rollout) {
	if r == nil || len(r.Steps) == 0 {
		return
	}
	t.heading("Rollout")
	t.wrapped("  ", "", 2, rolloutHead(r), "")
	var rows [][]cell
	for _, s := range r.Steps {
		k := stepKinds[s.Action]
		lab, ok := changeLabels[k]
		if !ok {
			lab = [2]string{"?", s.Action}
		}
		rows = append(rows, []cell{{text: fmt.Sprintf("%d.", s.Step)}, {text: fmt.Sprintf("wave %d", s.Wave)},
			{text: lab[0] + " " + lab[1], color: changeColors[lab[0]]}, {text: StepText(s)}})
	}
	t.table("  ", rows)
}

func rolloutHead(r *Rollout) string {
	proof := "order found greedily (" + r.Method + ")"
	if r.Status == "optimal" {
		proof = "order proved optimal"
	}
	took := durText(float64(r.DurationMs))
	if !strings.HasPrefix(took, "under") {
		took = "about " + took
	}
	head := fmt.Sprintf("%s in %s, %s when each wave's steps run in parallel; %s: ",
		plural(len(r.Steps), "step", "steps"), plural(r.Waves, "wave", "waves"), took, proof)
	if r.UncoveredDemandMs == 0 {
		head += "no source covered now and in the plan loses coverage"
	} else {
		head += fmt.Sprintf("sources covered now and in the plan lose %s request-seconds of coverage", reqSeconds(r.UncoveredDemandMs))
	}
	if r.StopFirstDemandMs > r.UncoveredDemandMs {
		head += fmt.Sprintf(" (stopping everything first: %s)", reqSeconds(r.StopFirstDemandMs))
	}
	return head + "."
}

// StepText is a rollout step as WriteText lists it, after its marker:
// what it does, how long it waits, and what it leaves uncovered.
func StepText(s Step) string {
	c := Change{Kind: stepKinds[s.Action], Subject: s.Subject, LaneKind: s.LaneKind, Nodes: s.Nodes, Devices: s.Devices, Residency: s.Residency, From: s.From, To: s.To}
	text := changeText(c)
	if len(s.FromNodes) > 0 {
		text += fmt.Sprintf(", moving it from %s (stopped below)", strings.Join(s.FromNodes, "+"))
	}
	if s.WaitMs > 0 {
		text += "; wait until healthy (load " + durText(float64(s.WaitMs)) + ")"
	}
	for _, l := range s.Losses {
		if l.UntilStep > 0 {
			text += fmt.Sprintf("; %s uncovered for %s, until step %d", l.Source, durText(float64(l.ForMs)), l.UntilStep)
		} else {
			text += fmt.Sprintf("; %s loses coverage (the plan leaves it uncovered)", l.Source)
		}
	}
	if len(s.OverBudget) > 0 {
		text += "; over LLooM's budget on " + strings.Join(s.OverBudget, ", ") + ": no order avoids it"
	}
	return text
}

// durText writes milliseconds as an operator reads a wait: 20 s, 2 min
// 30 s, 1 h 5 min.
func durText(ms float64) string {
	s := int64(math.Round(finite(ms) / 1000))
	switch {
	case s < 1:
		return "under 1 s"
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s < 3600:
		if s%60 == 0 {
			return fmt.Sprintf("%d min", s/60)
		}
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	}
	if m := s / 60 % 60; m != 0 {
		return fmt.Sprintf("%d h %d min", s/3600, m)
	}
	return fmt.Sprintf("%d h", s/3600)
}

func reqSeconds(demandMs float64) string {
	return fmt.Sprintf("%.0f", math.Round(finite(demandMs)/1000))
}
