package plan

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// The picture's header, legend and footer.

func (s *svgLayout) headerLines() []textLine {
	p := s.p
	var ls []textLine
	if m := metaLine(p); m != "" {
		ls = append(ls, textLine{text: m})
	}
	if rt := routingLine(p.Routing); rt != "" {
		ls = append(ls, textLine{text: rt, wrap: true})
	}
	for _, fb := range p.Fallbacks {
		ls = append(ls, textLine{text: "Fallback: " + fb, color: colResidency})
	}
	if p.Infeasible {
		ls = append(ls, textLine{text: "No plan: the hard constraints (pins, cordons, budgets) admit none.", color: colBudget, bold: true})
		for _, e := range p.Explanations {
			ls = append(ls, textLine{text: explanationText(e), color: colBudget, wrap: true})
		}
		return ls
	}
	if len(p.Changes) == 0 {
		ls = append(ls, textLine{text: "No changes. The plan matches what runs now."})
	} else {
		ls = append(ls, textLine{text: summaryLine(p.Summary, uncovered(p))})
	}
	var lv []string
	for _, l := range p.Levels {
		lv = append(lv, fmt.Sprintf("%d %s %d %s", l.Index, l.Name, l.Value, l.Status))
	}
	if len(lv) > 0 {
		ls = append(ls, textLine{text: "Objective: " + strings.Join(lv, " · ")})
	}
	var unc []string
	for _, r := range p.Routes {
		if !r.Covered() {
			unc = append(unc, r.Source)
		}
	}
	if len(unc) > 0 {
		ls = append(ls, textLine{text: fmt.Sprintf("Uncovered (%d): %s", len(unc), strings.Join(unc, ", ")), color: colBudget, bold: true})
	}
	if n := p.Summary.Reroute; n > 0 {
		var rr []string
		for _, c := range p.Changes {
			if c.Kind == Reroute {
				to := c.To
				if to == "" {
					to = "(uncovered)"
				}
				rr = append(rr, c.Subject+" → "+to)
			}
		}
		ls = append(ls, textLine{text: "Re-routes: " + strings.Join(rr, ", ")})
	}
	return ls
}

type textLine struct {
	text, color, title string
	bold               bool
	wrap               bool // onto up to maxWrap lines, not cut to one
}

func explanationText(e Explanation) string {
	t := e.Subject + ": " + e.Reason
	if len(e.Pins) > 0 {
		t += " (conflicting: " + strings.Join(e.Pins, ", ") + ")"
	}
	return t
}

// maxWrap bounds a wrapped line; the rest is cut, and the tooltip holds
// it all.
const maxWrap = 4

// wrapLines breaks the lines marked wrap at spaces to fit width.
func wrapLines(ls []textLine, width, size float64) []textLine {
	var out []textLine
	room := max(int(width/(size*charW)), 10)
	for _, l := range ls {
		if !l.wrap {
			out = append(out, l)
			continue
		}
		words := strings.Fields(l.text)
		var cur string
		var lines []string
		for _, w := range words {
			switch {
			case cur == "":
				cur = w
			case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(w) <= room:
				cur += " " + w
			default:
				lines = append(lines, cur)
				cur = w
			}
		}
		if cur != "" {
			lines = append(lines, cur)
		}
		if len(lines) > maxWrap {
			lines = append(lines[:maxWrap-1], strings.Join(lines[maxWrap-1:], " "))
		}
		for _, x := range lines {
			out = append(out, textLine{text: x, color: l.color, bold: l.bold, title: oneLine(l.text)})
		}
	}
	return out
}

func (s *svgLayout) headerHeight(width float64) float64 {
	return s.font + 10 + float64(len(wrapLines(s.headerLines(), width-2*s.margin, s.font)))*(s.font+4) + 6
}

func (s *svgLayout) header(width float64) {
	y := s.margin + s.font + 2
	s.printf(`<text x="%s" y="%s" font-size="%s" font-weight="bold" fill="%s">%s</text>`+"\n",
		f(s.margin), f(y), f(s.font+3), colInk, esc(fit(oneLine(s.title), width-2*s.margin, s.font+3)))
	y += s.font + 8
	for _, l := range wrapLines(s.headerLines(), width-2*s.margin, s.font) {
		weight := ""
		if l.bold {
			weight = "bold"
		}
		color := l.color
		if color == "" {
			color = colInk
		}
		s.text(s.margin, y, s.font, color, weight, l.text, l.title, width-2*s.margin)
		y += s.font + 4
	}
}

// legendItem is a swatch and its words.
type legendItem struct {
	draw  func(x, y float64) // a 24 x 12 swatch at x, y
	words string
}

func (s *svgLayout) legendItems() []legendItem {
	sw := func(fill, stroke, dash string) func(x, y float64) {
		return func(x, y float64) {
			s.printf(`<rect x="%s" y="%s" width="24" height="12" fill="%s" stroke="%s"%s/>`+"\n", f(x), f(y), fill, stroke, dash)
		}
	}
	mark := func(sym, color string) func(x, y float64) {
		return func(x, y float64) {
			s.printf(`<rect x="%s" y="%s" width="24" height="12" fill="%s" stroke="%s" stroke-width="2"/>`+"\n", f(x), f(y), colPreferred, color)
			s.printf(`<text x="%s" y="%s" font-size="10" font-weight="bold" fill="%s">%s</text>`+"\n", f(x+3), f(y+10), color, esc(sym))
		}
	}
	items := []legendItem{
		{sw(colAlways, "#ffffff", ""), "always (resident)"},
		{sw(colPreferred, "#ffffff", ""), "preferred (resident)"},
		{sw(colAuto, "#ffffff", ""), "auto: on demand, next to always lanes"},
		{sw(colFree, "#bdbdbd", ""), "free in the plan budget"},
		{func(x, y float64) {
			s.printf(`<rect x="%s" y="%s" width="24" height="12" fill="url(#headroom)" stroke="#bdbdbd"/>`+"\n", f(x), f(y))
			s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"/>`+"\n", f(x), f(y-2), f(x), f(y+14), colBudget)
			s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"/>`+"\n", f(x+24), f(y-2), f(x+24), f(y+14), colInk)
		}, "headroom: red line = plan budget, bar end = admission budget"},
		{mark("+", colStart), "start"},
		{mark("~", colResidency), "residency change"},
		{mark("→", colMove), "moved here"},
		{mark("!", colManual), "manual (LLooM cannot act)"},
		{func(x, y float64) {
			s.printf(`<text x="%s" y="%s" font-size="12" font-weight="bold" fill="%s">−</text>`+"\n", f(x+8), f(y+11), colStop)
		}, "stop: listed under its node"},
		{func(x, y float64) { s.tpBadge(x+12, y+6, 1) }, "multi-node (TP) lane: same number, linked"},
		{sw(colGreyFill, colGrey, ` stroke-dasharray="3 2"`), "cordoned or unreachable (greyed)"},
	}
	if s.compact {
		items = append(items, legendItem{func(x, y float64) {
			s.printf(`<text x="%s" y="%s" font-size="10" fill="%s">a/b</text>`+"\n", f(x+2), f(y+10), colMuted)
		}, "resident/planned GiB, beside a bar"})
	}
	return items
}

// legendWidth is one item's width: swatch, gap and words.
func legendWidth(words string) float64 {
	return 24 + 6 + float64(utf8.RuneCountInString(words))*10*charW + 18
}

func (s *svgLayout) legendRows(width float64) [][]legendItem {
	var rows [][]legendItem
	var row []legendItem
	used := 0.0
	for _, it := range s.legendItems() {
		w := legendWidth(it.words)
		if len(row) > 0 && used+w > width-2*s.margin {
			rows = append(rows, row)
			row, used = nil, 0
		}
		row = append(row, it)
		used += w
	}
	return append(rows, row)
}

func (s *svgLayout) legendHeight(width float64) float64 {
	return float64(len(s.legendRows(width)))*18 + 10
}

func (s *svgLayout) legend(top, width float64) {
	y := top
	for _, row := range s.legendRows(width) {
		x := s.margin
		for _, it := range row {
			it.draw(x, y)
			s.printf(`<text x="%s" y="%s" font-size="10" fill="%s">%s</text>`+"\n", f(x+30), f(y+10), colMuted, esc(it.words))
			x += legendWidth(it.words)
		}
		y += 18
	}
}

// svgMaxSteps bounds the rollout steps a picture lists.
const svgMaxSteps = 6

// svgMarks are the change markers as the picture draws them.
var svgMarks = map[string]string{"-": "−", "+": "+", "~": "~", "!": "!"}

func (s *svgLayout) footerLines() []textLine {
	var ls []textLine
	for i, v := range s.tpNames {
		var nodes []string
		res := ""
		for _, n := range s.p.Nodes {
			for _, l := range n.Lanes {
				if l.Variant == v {
					nodes = append(nodes, n.ID)
					res = string(l.Residency)
				}
			}
		}
		t := fmt.Sprintf("TP%d %s (%s): %s", i+1, v, res, strings.Join(nodes, " + "))
		ls = append(ls, textLine{text: t, title: t})
	}
	if r := s.p.Rollout; r != nil && len(r.Steps) > 0 {
		ls = append(ls, textLine{text: "Rollout: " + rolloutHead(r), wrap: true})
		for i, st := range r.Steps {
			if i == svgMaxSteps {
				ls = append(ls, textLine{text: fmt.Sprintf("… and %d more steps (the text plan lists them all)", len(r.Steps)-i)})
				break
			}
			lab := changeLabels[stepKinds[st.Action]]
			t := fmt.Sprintf("%d. [wave %d] %s %s %s", st.Step, st.Wave, svgMarks[lab[0]], lab[1], StepText(st))
			ls = append(ls, textLine{text: t, title: t})
		}
	}
	if !s.p.Infeasible {
		for i, e := range s.p.Explanations {
			if i == svgMaxLines {
				ls = append(ls, textLine{text: fmt.Sprintf("… and %d more explanations (the text plan lists them all)", len(s.p.Explanations)-i)})
				break
			}
			ls = append(ls, textLine{text: "Why: " + explanationText(e), wrap: true})
		}
	}
	// The demand read for each source is one note per source: in the
	// picture, a count; the text plan lists them.
	var demand, other []string
	for _, n := range s.p.Notes {
		if strings.HasPrefix(n, "demand ") && !strings.HasPrefix(n, "demand of ") {
			demand = append(demand, n)
		} else {
			other = append(other, n)
		}
	}
	if len(demand) > 0 {
		ls = append(ls, textLine{text: fmt.Sprintf("Demand: read for %s (the text plan lists each)", plural(len(demand), "source", "sources")), title: strings.Join(demand, "; ")})
	}
	for i, n := range other {
		if i == svgMaxLines {
			ls = append(ls, textLine{text: fmt.Sprintf("… and %d more notes (the text plan lists them all)", len(other)-i)})
			break
		}
		ls = append(ls, textLine{text: "Note: " + n, wrap: true})
	}
	return ls
}

// svgMaxLines bounds the explanations and the notes the picture lists
// under the cards; the text plan has them all.
const svgMaxLines = 4
