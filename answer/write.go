package answer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/internal/printable"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
)

var errNil = errors.New("answer: nothing to write")

// writeJSON writes v with two-space indent, HTML characters kept.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// WriteResilienceJSON writes the report as a "poolsolve.resilience/v1"
// document (docs/resilience-json.md).
func WriteResilienceJSON(w io.Writer, r *Report) error {
	if r == nil {
		return errNil
	}
	return writeJSON(w, r)
}

// WriteResilienceSVG draws the worst scenario's re-plan with
// plan.WriteSVG: the lost nodes greyed, and the changes marked against
// the base plan. An undecided scenario has no plan to draw; the worst
// one that has is drawn.
func WriteResilienceSVG(w io.Writer, r *Report) error {
	if r == nil {
		return errNil
	}
	for i, pl := range r.plans {
		if pl != nil {
			title := fmt.Sprintf("poolsolve resilience — worst scenario: %s, re-planned (dry run)", r.Scenarios[i].Name)
			return plan.WriteSVGWith(w, pl, plan.SVGOptions{Title: title})
		}
	}
	return errors.New("answer: no scenario has a plan to draw")
}

// WriteResilienceText writes the report for a terminal: the base plan,
// one table of the scenarios worst first, then what each scenario that
// changes anything changes, and a summary line.
func WriteResilienceText(w io.Writer, r *Report) error {
	if r == nil {
		return errNil
	}
	// Ids come from the inputs: escaped as plan's text escapes them.
	r = printable.Copy(r)
	var t text
	t.line("poolsolve resilience — each scenario re-planned from the base plan. A dry run.")
	base := fmt.Sprintf("Base plan: objective %v, %s", r.Base.Objective, proofText(r.Base.Levels))
	if r.Fleet != "" {
		base = fmt.Sprintf("Base plan of fleet %s: objective %v, %s", r.Fleet, r.Base.Objective, proofText(r.Base.Levels))
	}
	t.line(base + ".")
	if rt := r.Routing; rt != nil && rt.Reading == model.ReadTarget {
		t.line(fmt.Sprintf("Routing: LLooM %s (%s) sends an alias to its target alone: a scenario that takes the target's lanes leaves the alias uncovered, whatever its fallbacks.", rt.Release, rt.Basis))
	}
	if len(r.Base.Uncovered) > 0 {
		t.line("The base plan already leaves uncovered: " + strings.Join(r.Base.Uncovered, ", ") + ".")
	}
	what := "the scenarios named"
	if r.Single {
		what = "every node and every link lost alone"
	}
	t.line(fmt.Sprintf("%d %s: %s, worst first.", len(r.Scenarios), plural(len(r.Scenarios), "scenario", "scenarios"), what))
	t.blank()
	if len(r.Scenarios) == 0 {
		t.line("  (no node or link to lose)")
	} else {
		rows := [][]string{{"scenario", "effect", "level 4", "status", "changes"}}
		for i := range r.Scenarios {
			s := &r.Scenarios[i]
			l4 := "-"
			if s.Objective != nil {
				l4 = fmt.Sprintf("%+d", s.Level4Change)
			}
			rows = append(rows, []string{s.Name, s.Effects(), l4, statusText(s), changeCounts(s.Summary)})
		}
		t.table(rows, map[int]bool{2: true})
	}
	for i := range r.Scenarios {
		s := &r.Scenarios[i]
		if len(s.Changes) == 0 && len(s.Explanations) == 0 && len(s.DroppedPins) == 0 {
			continue
		}
		t.blank()
		t.line(s.Name + ": " + s.Effects())
		for _, e := range s.Explanations {
			t.line("  why " + oneLine(e.Subject) + ": " + oneLine(e.Reason))
		}
		for _, d := range s.DroppedPins {
			t.line("  pin " + oneLine(d.Reason))
		}
		for _, c := range s.Changes {
			t.line("  " + plan.ChangeLine(c))
		}
	}
	t.blank()
	if n := r.Summary.ClockCut; n > 0 {
		t.line(fmt.Sprintf("* %d %s ended by the clock, not by %s work budget: this machine was slower or busier than --replan-limit's budget assumes, and %s may differ on another run (raise --replan-limit).", n, plural(n, "scenario was", "scenarios were"), plural(n, "its", "their"), plural(n, "its answer", "their answers")))
	}
	t.line(summaryLine(r))
	_, err := io.WriteString(w, t.sb.String())
	return err
}

// summaryLine counts the scenarios by what they lose and says what the
// exit code will be.
func summaryLine(r *Report) string {
	s := r.Summary
	var harm []string
	for i := range r.Scenarios {
		if r.Scenarios[i].Harmful() {
			harm = append(harm, r.Scenarios[i].Name)
		}
	}
	out := fmt.Sprintf("Resilience: %d of %d %s coverage", s.LoseCoverage, s.Scenarios, plural(s.Scenarios, "scenario loses", "scenarios lose"))
	if len(harm) > 0 {
		out += " (" + capped(harm) + ")"
	}
	out += fmt.Sprintf(", %d send aliases to the cloud, %d break an SLO; %d of %d proved", s.ToCloud, s.BreakSLO, s.Proved, s.Scenarios)
	if s.Skipped > 0 {
		out += fmt.Sprintf("; %d not re-planned: --replan-limit ran out (raise it)", s.Skipped)
	}
	out += "."
	// What the clock stopped depends on the machine and its load.
	if open := s.Scenarios - s.Proved - s.Skipped; open > 0 {
		out += fmt.Sprintf(" The %d re-planned but not proved are what the search found in its share of --replan-limit: another run, or another machine, may find another plan for them; a longer limit settles them.", open)
	}
	return out
}

// statusText is the scenario's status, marked "*" when the clock, not
// its work budget, ended it.
func statusText(s *Scenario) string {
	mark := ""
	if s.ClockCut {
		mark = " *"
	}
	if s.Status != Bounded {
		return string(s.Status) + mark
	}
	for _, l := range s.Levels {
		if l.Status != "optimal" {
			return fmt.Sprintf("bounded (level %d gap %.1f%%)", l.Index, l.Gap*100) + mark
		}
	}
	return string(s.Status) + mark
}

// proofText says how much of a plan's objective is proved.
func proofText(ls []plan.Level) string {
	var open []string
	for _, l := range ls {
		if l.Status != "optimal" {
			open = append(open, fmt.Sprintf("level %d %s", l.Index, l.Status))
		}
	}
	if len(open) == 0 {
		return "every level proved optimal"
	}
	return strings.Join(open, ", ") + ", the rest proved optimal"
}

func changeCounts(s plan.Summary) string {
	var parts []string
	add := func(n int, one, many string) {
		if n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, plural(n, one, many)))
		}
	}
	add(s.Start, "start", "starts")
	add(s.Stop, "stop", "stops")
	add(s.Move, "move", "moves")
	add(s.Residency, "residency", "residencies")
	add(s.Reroute, "re-route", "re-routes")
	add(s.Manual, "manual", "manual")
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// text builds plain text, lines trimmed on the right.
type text struct{ sb strings.Builder }

func (t *text) line(s string) { t.sb.WriteString(strings.TrimRight(s, " ") + "\n") }
func (t *text) blank()        { t.sb.WriteString("\n") }

// table writes rows with columns padded to their widest cell, two spaces
// apart; the first row is the header; columns in right are aligned
// right.
func (t *text) table(rows [][]string, right map[int]bool) {
	width := map[int]int{}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	for _, r := range rows {
		var sb strings.Builder
		sb.WriteString("  ")
		for i, c := range r {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			if right[i] {
				sb.WriteString(pad + c)
			} else {
				sb.WriteString(c + pad)
			}
			if i < len(r)-1 {
				sb.WriteString("  ")
			}
		}
		t.line(sb.String())
	}
}

// oneLine keeps free text from breaking the layout.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
