package plan

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/model"
)

// WriteSVG draws the plan as a self-contained SVG picture: a card per
// node with one bar per memory domain, lanes stacked and coloured by
// residency, the plan budget (the headroom line) and the admission budget,
// free memory, the changes marked, multi-node lanes numbered and linked,
// unavailable nodes greyed with their reason, and a legend. Cards wrap
// into columns as the pool grows. Every text is escaped and the same plan
// gives the same bytes. A nil plan is an error.
func WriteSVG(w io.Writer, p *Plan) error { return WriteSVGWith(w, p, SVGOptions{}) }

// SVGOptions steer WriteSVGWith. The zero value draws a plan as WriteSVG.
type SVGOptions struct {
	// Title names the picture, in its <title> and its heading: what it
	// shows, so that two pictures side by side are told apart. Empty is
	// the plan's own heading.
	Title string
}

// WriteSVGWith is WriteSVG with a title of the caller's.
func WriteSVGWith(w io.Writer, p *Plan, opts SVGOptions) error {
	if p == nil {
		return errNilPlan
	}
	s := newSVGLayout(p)
	s.title = header
	if opts.Title != "" {
		s.title = opts.Title
	}
	_, err := io.WriteString(w, s.render())
	return err
}

// Colours. Residency is the fill; a change is the outline and a symbol
// before the lane's name.
const (
	colAlways    = "#1f4e96"
	colPreferred = "#7fb0e0"
	colAuto      = "#f2b233"
	colOther     = "#9e9e9e"
	colFree      = "#ffffff"
	colBudget    = "#c62828"
	colStart     = "#2e7d32"
	colStop      = "#c62828"
	colMove      = "#6a1b9a"
	colResidency = "#e65100"
	colManual    = "#ad1457"
	colGrey      = "#9e9e9e"
	colGreyFill  = "#eeeeee"
	colInk       = "#212121"
	colMuted     = "#616161"
)

// charW is the width of an average character as a share of the font size
// (DejaVu Sans, the usual fallback, runs wide); truncation uses it.
const charW = 0.62

// svgLayout holds the sizes that follow the pool's size.
type svgLayout struct {
	p                  *Plan
	title              string
	cols               int
	cardW, pad         float64
	font, small, barH  float64
	autoH, gap, margin float64
	// compact puts a domain's id left of its bar and its figures right,
	// instead of a line above: a pool of many nodes needs the height.
	compact bool
	idChars int // the longest domain id, bounded: compact's id column

	marks   map[laneAt]laneMark // change marks by lane and node
	notes   map[string][]note   // stops and moves away, by node
	tp      map[string]int      // multi-node lane -> its number
	tpNames []string            // by number - 1
	// cut are, by node, the lanes whose name its bar cannot hold: the
	// card names them under its bars. Found by a first pass over the
	// cards while collecting.
	cut        map[string][]string
	collecting bool
	sb         *strings.Builder
}

type laneAt struct{ variant, node string }

type laneMark struct {
	sym, color, title string
}

type note struct{ text, color string }

func newSVGLayout(p *Plan) *svgLayout {
	n := len(p.Nodes)
	s := &svgLayout{p: p, margin: 16, pad: 8, sb: &strings.Builder{}}
	switch {
	case n <= 4:
		s.cols, s.cardW, s.font, s.small, s.barH = 1, 960, 13, 11, 24
	case n <= 12:
		s.cols, s.cardW, s.font, s.small, s.barH = 2, 600, 12, 10, 18
	case n <= 27:
		s.cols, s.cardW, s.font, s.small, s.barH = 3, 500, 12, 10, 16
	default:
		s.cols, s.cardW, s.font, s.small, s.barH = 4, 460, 11, 9.5, 14
	}
	s.compact = n > 4
	s.autoH = max(math.Round(s.barH*0.6), 10)
	for _, nd := range p.Nodes {
		for _, d := range nd.Domains {
			s.idChars = max(s.idChars, utf8.RuneCountInString(d.ID))
		}
	}
	s.idChars = min(max(s.idChars, 8), 18)
	s.gap = 10
	s.indexChanges()
	s.indexTP()
	return s
}

// indexChanges maps each lane change onto the lanes it marks, and each
// stop or move away onto the node it leaves, where no lane is left to
// mark.
func (s *svgLayout) indexChanges() {
	s.marks = map[laneAt]laneMark{}
	s.notes = map[string][]note{}
	for _, c := range s.p.Changes {
		var m laneMark
		switch c.Kind {
		case Start:
			m = laneMark{"+", colStart, "starts"}
		case Move:
			m = laneMark{"→", colMove, "moves here from " + strings.Join(c.FromNodes, ", ")}
			for _, from := range c.FromNodes {
				if !slices.Contains(c.Nodes, from) {
					s.notes[from] = append(s.notes[from], note{"→ " + c.Subject + " moves to " + strings.Join(c.Nodes, ", "), colMove})
				}
			}
		case SetResidency:
			m = laneMark{"~", colResidency, "residency " + c.From + " → " + c.To}
		case ManualStart:
			m = laneMark{"!", colManual, "manual start (" + string(c.LaneKind) + ")"}
		case Stop, ManualStop:
			verb, col := "− stop ", colStop
			if c.Kind == ManualStop {
				verb, col = "! manual stop ", colManual
			}
			for _, n := range c.Nodes {
				s.notes[n] = append(s.notes[n], note{verb + c.Subject + " (was " + orDash(string(c.Residency)) + ")", col})
			}
			continue
		default:
			continue // re-routes are counted in the header
		}
		if c.Reason != "" {
			m.title += ": " + c.Reason
		}
		for _, n := range c.Nodes {
			// A move marks only the nodes it gains.
			if c.Kind != Move || !slices.Contains(c.FromNodes, n) {
				s.marks[laneAt{c.Subject, n}] = m
			}
		}
	}
}

// indexTP numbers the multi-node lanes by variant, so that the number on
// each node's segment names the same lane.
func (s *svgLayout) indexTP() {
	s.tp = map[string]int{}
	seen := map[string]bool{}
	for _, n := range s.p.Nodes {
		for _, l := range n.Lanes {
			if len(l.With) > 0 && !seen[l.Variant] {
				seen[l.Variant] = true
				s.tpNames = append(s.tpNames, l.Variant)
			}
		}
	}
	sort.Strings(s.tpNames)
	for i, v := range s.tpNames {
		s.tp[v] = i + 1
	}
}

// cardAt is where a card goes, and where each multi-node lane's segment
// sits on it, for the links between cards.
type cardAt struct {
	x, y, h float64
	col     int
	segs    map[string]segPos
}

type segPos struct {
	x, top, bottom float64
	// clearAbove and clearBelow: nothing of the card lies between the
	// segment and the card's edge, so a link may leave it that way
	// without crossing another bar or a note.
	clearAbove, clearBelow bool
}

func (s *svgLayout) render() string {
	p := s.p
	s.cut = map[string][]string{}
	s.collecting = true
	draw := s.sb
	for _, n := range p.Nodes {
		s.sb = &strings.Builder{}
		s.card(n, 0, 0)
	}
	s.sb, s.collecting = draw, false
	cardH := make([]float64, len(p.Nodes))
	for i, n := range p.Nodes {
		cardH[i] = s.cardHeight(n)
	}
	totalW := s.margin*2 + float64(s.cols)*s.cardW + float64(s.cols-1)*s.gap*2
	headerH := s.headerHeight(totalW)
	legendH := s.legendHeight(totalW)
	top := s.margin + headerH + legendH
	cols := splitColumns(cardH, s.cols, s.gap)
	place := make([]cardAt, len(p.Nodes))
	bottom := top
	for c, idx := range cols {
		y := top
		x := s.margin + float64(c)*(s.cardW+s.gap*2)
		for _, i := range idx {
			place[i] = cardAt{x: x, y: y, h: cardH[i], col: c}
			y += cardH[i] + s.gap
		}
		bottom = max(bottom, y)
	}
	footer := wrapLines(s.footerLines(), totalW-2*s.margin, s.small)
	totalH := bottom + float64(len(footer))*(s.small+5) + s.margin

	s.printf(`<svg xmlns="http://www.w3.org/2000/svg" width="%s" height="%s" viewBox="0 0 %s %s" font-family="DejaVu Sans, Verdana, sans-serif" font-size="%s">`+"\n",
		f(totalW), f(totalH), f(totalW), f(totalH), f(s.font))
	s.printf("<title>%s</title>\n", esc(s.title))
	s.raw(`<defs><pattern id="headroom" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">` +
		`<rect width="6" height="6" fill="#f5f5f5"/><line x1="0" y1="0" x2="0" y2="6" stroke="#bdbdbd" stroke-width="2"/></pattern></defs>` + "\n")
	s.printf(`<rect width="%s" height="%s" fill="#fafafa"/>`+"\n", f(totalW), f(totalH))
	s.header(totalW)
	s.legend(s.margin+headerH, totalW)
	// Cards' contents go over the links, which show between the bars.
	for i, n := range p.Nodes {
		s.cardBackground(n, place[i].x, place[i].y, place[i].h)
	}
	head := s.sb
	s.sb = &strings.Builder{}
	for i, n := range p.Nodes {
		place[i].segs = s.card(n, place[i].x, place[i].y)
	}
	contents := s.sb.String()
	s.sb = head
	s.links(place)
	s.raw(contents)
	y := bottom + s.small
	for _, l := range footer {
		s.text(s.margin, y, s.small, colInk, "", l.text, l.title, totalW-2*s.margin)
		y += s.small + 5
	}
	s.raw("</svg>\n")
	return s.sb.String()
}

// splitColumns cuts the cards, in order, into up to cols columns of
// about equal height, so that the picture reads down then across and
// neighbouring nodes (often a linked clique) sit one above the other.
func splitColumns(h []float64, cols int, gap float64) [][]int {
	total := 0.0
	for _, x := range h {
		total += x + gap
	}
	target := total / float64(cols)
	var out [][]int
	var cur []int
	acc := 0.0
	for i, x := range h {
		left := len(h) - i
		if len(cur) > 0 && len(out) < cols-1 && (acc+(x+gap)/2 > target || left < cols-len(out)) {
			out = append(out, cur)
			cur, acc = nil, 0
		}
		cur = append(cur, i)
		acc += x + gap
	}
	if len(cur) > 0 || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}

// --- cards ---

// barFor is the height of domain d's bar on node n: the GPUs of a box
// with many are thinner bars when the picture is compact, so that an
// 8-GPU card stays about as tall as the others.
func (s *svgLayout) barFor(n Node, d Domain) float64 {
	if !s.compact || !strings.HasPrefix(d.ID, "device:") {
		return s.barH
	}
	devices := 0
	for _, e := range n.Domains {
		if strings.HasPrefix(e.ID, "device:") {
			devices++
		}
	}
	if devices <= 2 {
		return s.barH
	}
	return max(math.Round(s.barH*0.6), s.small+1)
}

func (s *svgLayout) domainHeight(n Node, d Domain) float64 {
	h := s.barFor(n, d) + float64(len(s.autoRows(n, d)))*(s.autoH+2) + 5
	if !s.compact {
		h += s.small + 7
	}
	return h
}

func (s *svgLayout) cardHeight(n Node) float64 {
	h := s.pad + s.font + 8
	for _, d := range n.Domains {
		h += s.domainHeight(n, d)
	}
	if len(n.Domains) == 0 {
		h += s.small + 6
	}
	h += float64(len(s.cardNotes(n))) * (s.small + 4)
	return h + s.pad
}

// cardNotes are the lines under a node's bars: what stops or moves away,
// and lanes drawing on no domain of the node.
func (s *svgLayout) cardNotes(n Node) []note {
	out := append([]note(nil), s.notes[n.ID]...)
	for _, l := range n.Lanes {
		if len(l.Draws) == 0 {
			out = append(out, note{"(no memory drawn) " + l.Variant + " " + string(l.Residency), colMuted})
		}
	}
	if cut := s.cut[n.ID]; len(cut) > 0 {
		ls := wrapLines([]textLine{{text: "in the bars: " + strings.Join(cut, ", "), wrap: true}}, s.cardW-2*s.pad, s.small)
		for _, l := range ls {
			out = append(out, note{l.text, colMuted})
		}
	}
	return out
}

type laneDraw struct {
	lane Lane
	gb   float64
}

// autoDraws are the auto lanes drawing on one domain, in lane order.
func autoDraws(n Node, domain string) []laneDraw {
	var out []laneDraw
	for _, l := range n.Lanes {
		if l.Residency != model.Auto {
			continue
		}
		for _, d := range l.Draws {
			if d.Domain == domain {
				out = append(out, laneDraw{l, max(finite(float64(d.Gb)), 0)})
			}
		}
	}
	return out
}

// autoRows are the auto lanes drawn under domain d's bar: all of them,
// but on a thin GPU bar only the largest, the one the residency rule
// binds (the others are counted beside it).
func (s *svgLayout) autoRows(n Node, d Domain) []laneDraw {
	autos := autoDraws(n, d.ID)
	if len(autos) <= 1 || s.barFor(n, d) == s.barH {
		return autos
	}
	big := 0
	for i, a := range autos {
		if a.gb > autos[big].gb {
			big = i
		}
	}
	return autos[big : big+1]
}

func (s *svgLayout) cardBackground(n Node, x, y, h float64) {
	fill, stroke, dash := "#ffffff", "#bdbdbd", ""
	if n.Unavailable != "" {
		fill, stroke, dash = colGreyFill, colGrey, ` stroke-dasharray="4 3"`
	}
	s.printf(`<rect x="%s" y="%s" width="%s" height="%s" rx="4" fill="%s" stroke="%s"%s/>`+"\n", f(x), f(y), f(s.cardW), f(h), fill, stroke, dash)
}

// card draws a node's contents and says where its multi-node lanes sit.
func (s *svgLayout) card(n Node, x, y float64) map[string]segPos {
	grey := n.Unavailable != ""
	s.printf(`<g><title>%s</title>`+"\n", esc(nodeTitle(n)))
	// The id in bold, then its state.
	ty := y + s.pad + s.font
	idColor := colInk
	if grey {
		idColor = colMuted
	}
	inner := s.cardW - 2*s.pad
	idW := s.text(x+s.pad, ty, s.font, idColor, "bold", n.ID, n.ID, inner*0.6)
	tag := ""
	tagColor := colMuted
	switch {
	case grey:
		tag, tagColor = shout(oneLine(n.Unavailable)), colBudget
	case n.Federated:
		tag = "federated: its own gateway acts"
	}
	if tag != "" {
		s.text(x+s.pad+idW+10, ty, s.small, tagColor, "bold", tag, n.Unavailable, inner-idW-10)
	}
	s.raw("</g>\n")
	cy := ty + 8
	segs := map[string]segPos{}
	if len(n.Domains) == 0 {
		s.text(x+s.pad, cy+s.small, s.small, colMuted, "", "no memory domain", "", inner)
		cy += s.small + 6
	}
	for i, d := range n.Domains {
		before := len(segs)
		seen := make(map[string]bool, before)
		for v := range segs {
			seen[v] = true
		}
		s.domain(n, d, x+s.pad, cy, inner, grey, segs)
		if len(segs) > before {
			// Where the bar starts (under its figures unless compact),
			// and where the domain's last auto row ends.
			top := cy
			if !s.compact {
				top += s.small + 4
			}
			bottom := top + s.barFor(n, d) + float64(len(s.autoRows(n, d)))*(s.autoH+2)
			for v, sp := range segs {
				if seen[v] {
					continue
				}
				sp.clearAbove = i == 0 && sp.top <= top+0.5
				sp.clearBelow = i == len(n.Domains)-1 && len(s.cardNotes(n)) == 0 && sp.bottom >= bottom-0.5
				segs[v] = sp
			}
		}
		cy += s.domainHeight(n, d)
	}
	for _, nt := range s.cardNotes(n) {
		cy += s.small
		s.text(x+s.pad, cy, s.small, nt.color, "", nt.text, nt.text, inner)
		cy += 4
	}
	return segs
}

func nodeTitle(n Node) string {
	t := n.ID
	if n.Unavailable != "" {
		t += ": " + n.Unavailable
	}
	if n.Federated {
		t += " (federated)"
	}
	return t
}

// domain draws one domain: its figures, the bar of resident lanes, free
// memory and headroom, and a thin row under it per auto lane, starting
// where the always lanes end since that is where an auto lane loads.
func (s *svgLayout) domain(n Node, d Domain, x, y, w float64, grey bool, segs map[string]segPos) {
	barH := s.barFor(n, d)
	// Figures below zero are drawn as zero, so no mark leaves its bar.
	plan, admit := max(finite(float64(d.PlanGb)), 0), max(finite(float64(d.AdmitGb)), 0)
	resident, always := 0.0, max(finite(float64(d.AlwaysGb)), 0)
	var stack []laneDraw
	for _, l := range n.Lanes {
		if l.Residency == model.Auto {
			continue
		}
		for _, dr := range l.Draws {
			if dr.Domain == d.ID {
				stack = append(stack, laneDraw{l, max(finite(float64(dr.Gb)), 0)})
				resident += max(finite(float64(dr.Gb)), 0)
			}
		}
	}
	autos := autoDraws(n, d.ID)
	rows := s.autoRows(n, d)
	// The bar spans the admission budget, or more when the plan draws
	// more, so that nothing is drawn outside it.
	full := max(admit, plan, resident)
	for _, a := range autos {
		full = max(full, always+a.gb)
	}
	label := fmt.Sprintf("%s · resident %s of %s planned (admit %s, headroom %s) · free %s",
		d.ID, num(GiB(resident)), num(GiB(plan)), num(GiB(admit)), num(d.HeadroomGb), gb(GiB(plan-resident)))
	title := label
	if d.Rule != "" {
		title += " · " + d.Rule
	}
	by := y + s.small + 4
	if s.compact {
		// id | bar | resident/planned
		idW, figW := float64(s.idChars+1)*s.small*charW, 10*s.small*charW
		by = y
		ty := by + barH/2 + s.small*0.36
		s.text(x, ty, s.small, colMuted, "", d.ID, title, idW-4)
		s.text(x+w-figW+4, ty, s.small, colMuted, "", num(GiB(resident))+"/"+num(GiB(plan)), title, figW-4)
		x, w = x+idW, w-idW-figW
	} else {
		s.text(x, y+s.small, s.small, colMuted, "", label, title, w)
	}
	if full <= 0 {
		s.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="url(#headroom)" stroke="#bdbdbd"/>`+"\n", f(x), f(by), f(w), f(barH))
		return
	}
	scale := w / full
	// Free and headroom first, lanes over them.
	s.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="#bdbdbd"/>`+"\n", f(x), f(by), f(w), f(barH), colFree)
	if admit > plan {
		s.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="url(#headroom)"><title>%s</title></rect>`+"\n",
			f(x+plan*scale), f(by), f((admit-plan)*scale), f(barH), esc("headroom "+gb(GiB(admit-plan))+" kept free above the plan budget"))
	}
	if free := plan - resident; free > 0 {
		fx := x + resident*scale
		fw := free * scale
		word := "free " + gb(GiB(free))
		if grey {
			// Nothing may be placed here, so nothing is free.
			word = "takes no lanes"
			s.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"/>`+"\n", f(fx), f(by), f(fw), f(barH), colGreyFill)
		}
		if txt := fit(word, fw-6, s.small); txt != "" {
			s.printf(`<text x="%s" y="%s" font-size="%s" fill="%s">%s</text>`+"\n", f(fx+4), f(by+barH/2+s.small*0.36), f(s.small), colMuted, esc(txt))
		}
	}
	cx := x
	for _, a := range stack {
		sw := a.gb * scale
		s.segment(n, a.lane, a.gb, cx, by, sw, barH, grey, segs)
		cx += sw
	}
	ay := by + barH + 2
	for _, a := range rows {
		s.segment(n, a.lane, a.gb, x+always*scale, ay, a.gb*scale, s.autoH, grey, segs)
		ay += s.autoH + 2
	}
	if more := len(autos) - len(rows); more > 0 {
		s.printf(`<text x="%s" y="%s" font-size="%s" fill="%s">%s</text>`+"\n", f(x+w+4), f(ay-4), f(s.small), colMuted,
			esc(fmt.Sprintf("+%d auto", more)))
	}
	// The plan budget is the headroom line; the bar's end at the admission
	// budget. Both cross the auto rows, which must fit within them too.
	bottom := by + barH + float64(len(rows))*(s.autoH+2)
	s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="2"><title>%s</title></line>`+"\n",
		f(x+plan*scale), f(by-3), f(x+plan*scale), f(bottom+1), colBudget, esc("plan budget "+gb(GiB(plan))))
	s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="1.5"><title>%s</title></line>`+"\n",
		f(x+admit*scale), f(by-3), f(x+admit*scale), f(bottom+1), colInk, esc("admission budget "+gb(GiB(admit))))
}

// segment draws one lane's draw on one domain, with its change mark and
// multi-node number, and a tooltip that says everything in full.
func (s *svgLayout) segment(n Node, l Lane, gbs, x, y, w, h float64, grey bool, segs map[string]segPos) {
	fill, ink := colOther, colInk
	switch l.Residency {
	case model.Always:
		fill, ink = colAlways, "#ffffff"
	case model.Preferred:
		fill = colPreferred
	case model.Auto:
		fill = colAuto
	}
	if grey {
		fill, ink = colGrey, colInk
	}
	m, marked := s.marks[laneAt{l.Variant, n.ID}]
	stroke, sw := "#ffffff", "1"
	if marked {
		stroke, sw = m.color, "2.5"
	}
	title := fmt.Sprintf("%s: %s, %s on %s", l.Variant, orDash(string(l.Residency)), gb(GiB(gbs)), n.ID)
	if l.Kind != "" && l.Kind != model.Managed {
		title += " [" + string(l.Kind) + "]"
	}
	if len(l.Models) > 0 {
		title += "; serves " + strings.Join(l.Models, ", ")
	}
	if len(l.With) > 0 {
		title += "; with " + strings.Join(l.With, ", ")
	}
	if marked {
		title += "; " + m.sym + " " + m.title
	}
	w = max(w, 1) // a tiny lane still shows
	s.printf(`<g><title>%s</title><rect x="%s" y="%s" width="%s" height="%s" fill="%s" stroke="%s" stroke-width="%s"/>`,
		esc(title), f(x), f(y), f(w), f(h), fill, stroke, sw)
	tx, room := x+3, w-6
	if num := s.tp[l.Variant]; num > 0 && len(l.With) > 0 {
		r := min(h/2, 8)
		if w >= 2*r+2 {
			s.tpBadge(x+r+2, y+h/2, num)
			tx, room = tx+2*r+2, room-2*r-2
		}
		if _, ok := segs[l.Variant]; !ok {
			// Near the right end: a lane's name starts at its left.
			segs[l.Variant] = segPos{x: x + w - min(w/2, 14), top: y, bottom: y + h}
		}
	}
	size := s.small
	if h < s.small+2 {
		size = math.Max(h-2, 7)
	}
	name := l.Variant
	if marked {
		name = m.sym + " " + name
	}
	// A wide segment says more than the name: its size, kind and nodes.
	more := []string{gb(GiB(gbs))}
	if l.Kind != "" && l.Kind != model.Managed {
		more = append(more, string(l.Kind))
	}
	if len(l.With) > 0 {
		more = append(more, "with "+strings.Join(l.With, ", "))
	}
	if long := name + " · " + strings.Join(more, " · "); fit(long, room, size) == long {
		name = long
	}
	if s.collecting && fit(l.Variant, room, size) != l.Variant && !slices.Contains(s.cut[n.ID], l.Variant) {
		s.cut[n.ID] = append(s.cut[n.ID], l.Variant)
	}
	if txt := fit(name, room, size); txt != "" {
		weight := ""
		if marked {
			weight = ` font-weight="bold"`
		}
		s.printf(`<text x="%s" y="%s" font-size="%s" fill="%s"%s>%s</text>`, f(tx), f(y+h/2+size*0.36), f(size), ink, weight, esc(txt))
	}
	s.raw("</g>\n")
}

// tpBadge is a multi-node lane's number in a circle centred at x, y.
func (s *svgLayout) tpBadge(x, y float64, num int) {
	r := 7.0
	s.printf(`<circle cx="%s" cy="%s" r="%s" fill="#ffffff" stroke="%s" stroke-width="1.5"/><text x="%s" y="%s" font-size="9" font-weight="bold" text-anchor="middle" fill="%s">%d</text>`,
		f(x), f(y), f(r), colInk, f(x), f(y+3.2), colInk, num)
}

// links joins a multi-node lane's segments on cards that sit one above
// the other in a column, so that one lane reads as one across its nodes;
// members elsewhere share its number.
func (s *svgLayout) links(place []cardAt) {
	for _, v := range s.tpNames {
		prev := -1
		for i := range place {
			if _, ok := place[i].segs[v]; !ok {
				continue
			}
			// Only between cards one right above the other, from a lane
			// with nothing under it to one with nothing over it: a link
			// must not cross another node's bars or notes.
			if prev >= 0 && prev == i-1 && place[prev].col == place[i].col && place[prev].segs[v].clearBelow && place[i].segs[v].clearAbove {
				a, b := place[prev].segs[v], place[i].segs[v]
				s.printf(`<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="3" stroke-opacity="0.6"><title>%s</title></line>`+"\n",
					f(a.x), f(a.bottom), f(b.x), f(b.top), colInk, esc(fmt.Sprintf("TP%d %s", s.tp[v], v)))
			}
			prev = i
		}
	}
}

// --- text ---

func (s *svgLayout) printf(format string, args ...any) { fmt.Fprintf(s.sb, format, args...) }
func (s *svgLayout) raw(x string)                      { s.sb.WriteString(x) }

// text writes one line cut to width, with the full text as a tooltip
// when it was cut or title says more; it returns the width used.
func (s *svgLayout) text(x, y, size float64, color, weight, txt, title string, width float64) float64 {
	txt = oneLine(txt)
	cut := fit(txt, width, size)
	attr := ""
	if weight != "" {
		attr = ` font-weight="` + weight + `"`
	}
	tip := ""
	if title = oneLine(title); cut != txt || (title != "" && title != txt) {
		if title == "" {
			title = txt
		}
		tip = "<title>" + esc(title) + "</title>"
	}
	s.printf(`<text x="%s" y="%s" font-size="%s" fill="%s"%s>%s%s</text>`+"\n", f(x), f(y), f(size), color, attr, tip, esc(cut))
	return float64(utf8.RuneCountInString(cut)) * size * charW
}

// fit cuts txt to what width holds at size, ending a cut with "…"; empty
// when not even two characters fit.
func fit(txt string, width, size float64) string {
	room := int(width / (size * charW))
	n := utf8.RuneCountInString(txt)
	if n <= room {
		return txt
	}
	if room < 3 {
		return ""
	}
	r := []rune(txt)
	return string(r[:room-1]) + "…"
}

// esc makes text safe inside an element or attribute: markup escaped,
// and characters XML cannot hold (controls, broken UTF-8) replaced.
func esc(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == '\t' || r == '\n' || r == '\r':
			b.WriteByte(' ')
		case r < 0x20, r == utf8.RuneError, r >= 0xD800 && r <= 0xDFFF, r == 0xFFFE, r == 0xFFFF:
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// f prints a coordinate with at most one decimal, the same way each time.
func f(x float64) string {
	x = roundTo(finite(x), 10)
	return strconv.FormatFloat(x, 'f', -1, 64)
}
