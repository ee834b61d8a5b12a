package plan

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/model"
)

type textWriter struct {
	opts TextOptions
	sb   strings.Builder
}

func (t *textWriter) line(s string) { t.sb.WriteString(strings.TrimRight(s, " ") + "\n") }

// para writes plain text wrapped to the width.
func (t *textWriter) para(s string) { t.wrapped("", "", 0, s, "") }
func (t *textWriter) blank()        { t.sb.WriteString("\n") }

// wrapped writes indent and prefix (already painted) and then text,
// painted with color, wrapped at spaces to the width. start is the column
// the text starts at (the visible width of indent and prefix); every
// continuation line starts there too, unless that leaves too little room,
// when continuations start at column six.
func (t *textWriter) wrapped(indent, prefix string, start int, text, color string) {
	hang := start
	if t.opts.Width > 0 && (t.opts.Width-start < 30 || t.opts.Width-start < longestWord(text)) {
		hang = min(start, 6)
	}
	lines := wrapText(text, t.opts.Width-start, t.opts.Width-hang)
	for i, l := range lines {
		if i == 0 {
			t.line(indent + prefix + t.paint(color, l))
			continue
		}
		t.line(strings.Repeat(" ", hang) + t.paint(color, l))
	}
}

// unitWords splits text at spaces, keeping a figure with its unit ("40
// GiB", "850 ms", "22000 req") as one word, so no line ends between them.
func unitWords(text string) []string {
	var out []string
	for _, w := range strings.Fields(text) {
		unit := strings.TrimRight(w, ",;:.)")
		if n := len(out); n > 0 && (unit == "GiB" || unit == "ms" || unit == "req") {
			out[n-1] += " " + w
			continue
		}
		out = append(out, w)
	}
	return out
}

func longestWord(text string) int {
	n := 0
	for _, w := range unitWords(text) {
		n = max(n, utf8.RuneCountInString(w))
	}
	return n
}

// wrapText splits text at spaces into lines of at most first columns for
// the first line and rest for the others; a word longer than a line
// stands alone. A non-positive width leaves the text whole.
func wrapText(text string, first, rest int) []string {
	if first <= 0 && rest <= 0 || utf8.RuneCountInString(text) <= first {
		return []string{text}
	}
	first = max(first, 0)
	rest = max(rest, 1)
	var lines []string
	var cur strings.Builder
	n, limit := 0, first
	for i, word := range unitWords(text) {
		wn := utf8.RuneCountInString(word)
		// A first word that does not fit where the text starts, but
		// would on a continuation line, goes there.
		if i == 0 && wn > first && first < rest {
			lines = append(lines, "")
			limit = rest
		}
		if n > 0 && n+1+wn > limit {
			lines = append(lines, cur.String())
			cur.Reset()
			n, limit = 0, rest
		}
		if n > 0 {
			cur.WriteByte(' ')
			n++
		}
		cur.WriteString(word)
		n += wn
	}
	if n > 0 || len(lines) == 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

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

// searchLine says, for a plan not proved optimal on every level, what is
// proved, the gap, the time the search had, and what a longer search may
// gain by the bound; empty for a proved plan. Levels go by name, so that
// every figure in it is one with a unit.
func searchLine(p *Plan) string {
	s := p.Search
	if s == nil || s.AllProved() {
		return ""
	}
	var b strings.Builder
	switch s.Stop {
	case "heuristic":
		b.WriteString("this is the greedy solver's plan, with no search for proofs beyond the trivial bounds")
	case "interrupted":
		b.WriteString("a signal stopped the search")
	case "not-searched":
		fmt.Fprintf(&b, "the %s time limit ran out while the inputs were read: this is the greedy start, not searched", s.TimeLimit)
	default:
		if s.WorkLimit > 0 {
			fmt.Fprintf(&b, "the work limit of %d units cut the search short", s.WorkLimit)
		} else if s.TimeLimit != "" {
			fmt.Fprintf(&b, "the %s time limit cut the search short", s.TimeLimit)
		} else {
			b.WriteString("the time limit cut the search short")
		}
	}
	b.WriteString(". ")
	// A level after the first open one is optimal only with that one
	// held at its value: not worth calling proved.
	var names []string
	for _, l := range s.Proved {
		if l < s.FirstOpen {
			names = append(names, levelName(l))
		}
	}
	if len(names) == 0 {
		b.WriteString("No level is proved optimal")
	} else {
		b.WriteString("Proved optimal: " + andList(names))
	}
	name, unit := levelName(s.FirstOpen), ""
	if i := slices.IndexFunc(p.Levels, func(l Level) bool { return l.Index == s.FirstOpen }); i >= 0 && p.Levels[i].Unit != "" {
		unit = " " + p.Levels[i].Unit
	}
	fmt.Fprintf(&b, "; %s is %d%s, proved at least %d%s", name, s.OpenValue, unit, s.OpenBound, unit)
	if s.OpenBound > 0 && s.OpenValue > s.OpenBound {
		fmt.Fprintf(&b, ", at most %s above optimal", percent(float64(s.OpenValue-s.OpenBound)/float64(s.OpenBound)))
	}
	if s.FirstOpen < len(model.LevelNames) {
		b.WriteString(", and the levels after it are minimised with it held there")
	}
	b.WriteString(".")
	limit := "--time-limit"
	if s.WorkLimit > 0 {
		limit = "--work-limit"
	}
	switch {
	case s.OpenValue <= s.OpenBound:
		fmt.Fprintf(&b, " A longer %s may prove it.", limit)
	case s.Stop == "heuristic":
		fmt.Fprintf(&b, " --solver exact may do better: the bound allows %s down to %d%s.", name, s.OpenBound, unit)
	default:
		fmt.Fprintf(&b, " A longer %s may do better: the bound allows %s down to %d%s.", limit, name, s.OpenBound, unit)
	}
	return b.String()
}

// levelName is a level's name by its index (1..4).
func levelName(i int) string {
	if i >= 1 && i <= len(model.LevelNames) {
		return model.LevelNames[i-1]
	}
	return "level " + strconv.Itoa(i)
}

// andList is "a", "a and b", "a, b and c".
func andList(xs []string) string {
	if len(xs) <= 1 {
		return strings.Join(xs, "")
	}
	return strings.Join(xs[:len(xs)-1], ", ") + " and " + xs[len(xs)-1]
}

// unavoidableLine tells lost coverage proved unavoidable (every plan
// leaves that many sources uncovered) from coverage the search did not
// restore in its time.
func unavoidableLine(s *Search) string {
	if s == nil || s.Uncovered == 0 {
		return ""
	}
	sources := func(n int64) string {
		if n == 1 {
			return "1 source"
		}
		return fmt.Sprintf("%d sources", n)
	}
	switch {
	case s.UncoveredProved >= s.Uncovered:
		return fmt.Sprintf("Proved unavoidable: every plan leaves at least %s uncovered.", sources(s.Uncovered))
	case s.UncoveredProved == 0:
		return fmt.Sprintf("Not proved unavoidable (%s uncovered): the search did not cover them in its time, and no bound shows that any must stay uncovered.", sources(s.Uncovered))
	}
	return fmt.Sprintf("Of the %s uncovered, every plan leaves at least %d uncovered (proved unavoidable); the other %d the search did not cover in its time, and a longer search may.",
		sources(s.Uncovered), s.UncoveredProved, s.Uncovered-s.UncoveredProved)
}

// routingLine states the reading the plan was made with.
func routingLine(r *model.Routing) string {
	if r == nil {
		return ""
	}
	what := "an alias goes to its first available member; route profiles and fleet profiles apply."
	if r.Reading == model.ReadTarget {
		what = "an alias goes to its target alone; fallbacks are not taken, so an alias whose target is not planned is uncovered."
	}
	return fmt.Sprintf("Routing: LLooM %s (%s): %s", r.Release, r.Basis, what)
}

func (t *textWriter) list(title string, xs []string) {
	if len(xs) == 0 {
		return
	}
	t.heading(title)
	for _, x := range xs {
		t.wrapped("  ", "- ", 4, oneLine(x), "")
	}
}

func (t *textWriter) explanations(title string, es []Explanation) {
	if len(es) == 0 {
		return
	}
	t.heading(title)
	for _, e := range es {
		s := oneLine(e.Reason)
		if len(e.Pins) > 0 {
			s += " (conflicting: " + oneLine(strings.Join(e.Pins, ", ")) + ")"
		}
		subject := oneLine(e.Subject) + ": "
		t.wrapped("  ", subject, 2+utf8.RuneCountInString(subject), s, "")
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
	widths := widthsOf(rows)
	t.rows(indent, rows, widths, !t.fits(indent, rows, widths))
}

// minLastCell is the room a row's last cell needs beside the columns
// before it; with less, the table is printed as records.
const minLastCell = 24

// fits reports whether every row keeps its columns within the width,
// with room for its last cell to wrap under its own start. A table that
// does not fit would have a terminal fold it, and a folded cell reads as
// another row.
func (t *textWriter) fits(indent string, rows [][]cell, widths []int) bool {
	if t.opts.Width <= 0 {
		return true
	}
	for _, r := range rows {
		col := utf8.RuneCountInString(indent)
		last := lastCell(r)
		for i := 0; i < last; i++ {
			if r[i].text == "" && widths[i] == 0 {
				continue
			}
			col += widths[i] + 2
		}
		if last < 0 {
			continue
		}
		n := utf8.RuneCountInString(r[last].text)
		if r[last].right {
			n = widths[last]
		} else {
			n = min(n, minLastCell)
		}
		if col+n > t.opts.Width {
			return false
		}
	}
	return true
}

// records writes rows too wide for the width as two-line records: the
// first cell at the indent, the others after it, two spaces apart, on
// lines indented four more, each wrapped within the width.
func (t *textWriter) records(indent string, rows [][]cell) {
	in := utf8.RuneCountInString(indent)
	for _, r := range rows {
		var rest []cell
		for i, c := range r {
			if i > 0 && c.text != "" {
				rest = append(rest, c)
			}
		}
		if len(r) == 0 {
			t.line("")
			continue
		}
		t.wrapped(indent, "", in, r[0].text, r[0].color)
		if len(rest) > 0 {
			t.cellLines(strings.Repeat(" ", in+4), rest)
		}
	}
}

// cellLines writes cells two spaces apart, each in its colour, wrapped
// at spaces to the width after indent.
func (t *textWriter) cellLines(indent string, cs []cell) {
	limit := t.opts.Width - utf8.RuneCountInString(indent)
	var sb strings.Builder
	n := 0
	flush := func() {
		t.line(indent + sb.String())
		sb.Reset()
		n = 0
	}
	for _, c := range cs {
		words := unitWords(c.text)
		for j := 0; j < len(words); {
			// The longest run of this cell's words that fits the line.
			sep := 1
			if j == 0 {
				sep = 2
			}
			if n == 0 {
				sep = 0
			}
			k, w := j, n+sep
			for k < len(words) {
				wn := utf8.RuneCountInString(words[k])
				if k > j {
					wn++
				}
				if w+wn > limit && (k > j || n > 0) {
					break
				}
				w += wn
				k++
			}
			if k == j {
				flush()
				continue
			}
			sb.WriteString(strings.Repeat(" ", sep))
			sb.WriteString(t.paint(c.color, strings.Join(words[j:k], " ")))
			n, j = w, k
		}
	}
	if n > 0 {
		flush()
	}
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
// A row's last cell, free text, wraps to the width under its own start.
// As records, when the columns do not fit the width.
func (t *textWriter) rows(indent string, rows [][]cell, widths []int, records bool) {
	if records {
		t.records(indent, rows)
		return
	}
	for _, r := range rows {
		var sb strings.Builder
		sb.WriteString(indent)
		col := utf8.RuneCountInString(indent)
		last := lastCell(r)
		for i := 0; i < last; i++ {
			c := r[i]
			if c.text == "" && widths[i] == 0 {
				continue // a column empty in every row takes no room
			}
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c.text))
			if c.right {
				sb.WriteString(pad)
			}
			sb.WriteString(t.paint(c.color, c.text))
			if !c.right {
				sb.WriteString(pad)
			}
			sb.WriteString("  ")
			col += widths[i] + 2
		}
		if last < 0 {
			t.line(sb.String())
			continue
		}
		c := r[last]
		if c.right {
			t.line(sb.String() + strings.Repeat(" ", widths[last]-utf8.RuneCountInString(c.text)) + t.paint(c.color, c.text))
			continue
		}
		t.wrapped("", sb.String(), col, c.text, c.color)
	}
}
