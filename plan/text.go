package plan

import (
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/internal/printable"
	"github.com/poolsolve/poolsolve/model"
)

// TextOptions steer WriteText. The zero value is plain text.
type TextOptions struct {
	// Color adds ANSI colours (changes by kind, broken SLOs, headings).
	Color bool
	// Verbose adds each domain's admission rule and headroom.
	Verbose bool
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
	t.line(header)
	if meta := metaLine(p); meta != "" {
		t.line(meta)
	}
	t.list("Fallbacks", p.Fallbacks)
	if p.Infeasible {
		t.blank()
		t.line(t.paint(ansiRed, "No plan: the hard constraints (pins, cordons, budgets) admit none."))
		t.explanations("Why", p.Explanations)
		t.list("Notes", p.Notes)
		return t.flush(w)
	}
	t.nodes(p.Nodes)
	t.routes(p.Routes)
	t.levels(p.Levels)
	t.explanations("Explanations", p.Explanations)
	t.list("Notes", p.Notes)
	t.changes(p.Changes, p.Summary)
	return t.flush(w)
}

type textWriter struct {
	opts TextOptions
	sb   strings.Builder
}

func (t *textWriter) line(s string) { t.sb.WriteString(strings.TrimRight(s, " ") + "\n") }
func (t *textWriter) blank()        { t.sb.WriteString("\n") }

func (t *textWriter) heading(s string) {
	t.blank()
	t.line(t.paint(ansiBold, s))
}

func (t *textWriter) paint(color, s string) string {
	if !t.opts.Color || color == "" || s == "" {
		return s
	}
	return color + s + ansiReset
}

func (t *textWriter) flush(w io.Writer) error {
	_, err := io.WriteString(w, t.sb.String())
	return err
}

func metaLine(p *Plan) string {
	var parts []string
	if p.Fleet != "" {
		parts = append(parts, "fleet "+p.Fleet)
	}
	if p.Solver != "" {
		parts = append(parts, "solver "+p.Solver)
	}
	interrupted := ""
	if p.Interrupted {
		interrupted = "INTERRUPTED: a signal stopped the search; this is the best plan found by then, and each level says what was proved."
	}
	if len(parts) == 0 {
		return interrupted
	}
	return strings.TrimSpace("Planned " + strings.Join(parts, ", ") + ". " + interrupted)
}

func (t *textWriter) list(title string, xs []string) {
	if len(xs) == 0 {
		return
	}
	t.heading(title)
	for _, x := range xs {
		t.line("  - " + oneLine(x))
	}
}

func (t *textWriter) explanations(title string, es []Explanation) {
	if len(es) == 0 {
		return
	}
	t.heading(title)
	for _, e := range es {
		s := "  " + oneLine(e.Subject) + ": " + oneLine(e.Reason)
		if len(e.Pins) > 0 {
			s += " (conflicting: " + oneLine(strings.Join(e.Pins, ", ")) + ")"
		}
		t.line(s)
	}
}

// cell is one table cell; color is applied after padding so that escapes
// never count towards a width.
type cell struct {
	text, color string
	right       bool // align right (numbers)
}

// table writes rows with columns padded to their widest cell, two spaces
// apart.
func (t *textWriter) table(indent string, rows [][]cell) {
	t.rows(indent, rows, widthsOf(rows))
}

// widthsOf is each column's widest cell among the cells that get padded:
// a row's last non-empty cell is not (unless right-aligned), so a long
// reason at the end of one row does not push every other row apart.
func widthsOf(rows [][]cell) []int {
	var widths []int
	for _, r := range rows {
		for len(widths) < len(r) {
			widths = append(widths, 0)
		}
		last := lastCell(r)
		for i := 0; i <= last; i++ {
			if i < last || r[i].right {
				widths[i] = max(widths[i], utf8.RuneCountInString(r[i].text))
			}
		}
	}
	return widths
}

func lastCell(r []cell) int {
	last := len(r) - 1
	for last >= 0 && r[last].text == "" {
		last--
	}
	return last
}

// rows writes rows padded to widths, which cover at least their columns.
func (t *textWriter) rows(indent string, rows [][]cell, widths []int) {
	for _, r := range rows {
		var sb strings.Builder
		sb.WriteString(indent)
		last := lastCell(r)
		for i := 0; i <= last; i++ {
			c := r[i]
			if c.text == "" && widths[i] == 0 {
				continue // a column empty in every row takes no room
			}
			pad := ""
			if i < last || c.right {
				pad = strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text))
			}
			if c.right {
				sb.WriteString(pad)
			}
			sb.WriteString(t.paint(c.color, c.text))
			if i < last {
				if !c.right {
					sb.WriteString(pad)
				}
				sb.WriteString("  ")
			}
		}
		t.line(sb.String())
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
	for i, n := range ns {
		t.nodeHead(n)
		t.rows("      ", rows[i], widths)
	}
}

func (t *textWriter) nodeHead(n Node) {
	id := "  " + n.ID
	if n.Unavailable != "" {
		t.line(id + "  " + t.paint(ansiRed, shout(oneLine(n.Unavailable))))
		return
	}
	tag := ""
	if n.Federated {
		tag = "  [federated]"
	}
	switch len(n.Domains) {
	case 0:
		t.line(id + tag + "  (no memory domain)")
	case 1:
		t.line(id + tag + "  (" + domainText(n.Domains[0]) + ")")
	default:
		t.line(id + tag)
		for _, d := range n.Domains {
			t.line("    (" + domainText(d) + ")")
		}
	}
	if t.opts.Verbose {
		for _, d := range n.Domains {
			t.line(fmt.Sprintf("      budget %s: %s, headroom %s", d.ID, oneLine(d.Rule), gb(d.HeadroomGb)))
		}
	}
}

// shout capitalises the first word of an unavailability reason, so that
// "cordoned (--cordon)" reads CORDONED (--cordon).
func shout(s string) string {
	i := strings.IndexAny(s, " :")
	if i < 0 {
		return strings.ToUpper(s)
	}
	return strings.ToUpper(s[:i]) + s[i:]
}

func domainText(d Domain) string {
	s := fmt.Sprintf("%s  plan %s of %s admitted; resident %s; free %s",
		d.ID, gb(d.PlanGb), num(d.AdmitGb), gb(d.ResidentGb), gb(d.FreeGb))
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
	var rows [][]cell
	for _, r := range rs {
		if !r.Covered() {
			why := "nothing serves it"
			if r.Reason != "" {
				why = oneLine(r.Reason)
			}
			rows = append(rows, []cell{{text: r.Source}, {text: "-> (uncovered)", color: ansiRed}, {text: why}})
			continue
		}
		on := "external"
		if !r.External {
			on = "on " + r.Variant
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
		rows = append(rows, []cell{{text: r.Source}, {text: "-> " + r.Model}, {text: on}, {text: msText(r.FirstTokenMs), right: true}, {text: slo, color: color}})
	}
	t.table("  ", rows)
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
	s := "SLO " + strings.Join(bounds, ", ")
	if r.SLOStatus == SLOViolated {
		return s + " VIOLATED", ansiRed
	}
	return s + " " + string(r.SLOStatus), ""
}

func (t *textWriter) levels(ls []Level) {
	t.heading("Objective")
	var rows [][]cell
	for _, l := range ls {
		bound := "(no bound)"
		if l.BoundSource != "" {
			bound = fmt.Sprintf("(lower bound %d, %s", l.LowerBound, l.BoundSource)
			if l.Gap > 0 {
				bound += fmt.Sprintf("; gap %.1f%%", l.Gap*100)
			}
			bound += ")"
		}
		color := ""
		if l.Status != "optimal" {
			color = ansiYellow
		}
		rows = append(rows, []cell{{text: fmt.Sprintf("%d %s", l.Index, l.Name)}, {text: fmt.Sprint(l.Value), right: true},
			{text: l.Status, color: color}, {text: bound}})
	}
	t.table("  ", rows)
}

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

func (t *textWriter) changes(cs []Change, s Summary) {
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
	t.line(summaryLine(s))
}

func changeText(c Change) string {
	nodes := strings.Join(c.Nodes, "+")
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

func summaryLine(s Summary) string {
	return fmt.Sprintf("Plan: %d to start, %d to stop, %d to move, %s, %s, %s.",
		s.Start, s.Stop, s.Move, plural(s.Residency, "residency change", "residency changes"),
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

func num(x GiB) string { return strings.TrimSuffix(gb(x), " GiB") }

func msText(x Ms) string { return fmt.Sprintf("%.0f ms", math.Round(finite(float64(x)))) }
