package benchmarks

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// WriteTraceSVG draws, per instance named in names (every instance when
// names is empty), the exact solver's level-4 incumbent and lower bound
// against time, from its progress reports and its final answer, with a
// mark where each level was done and where all four were proved. A
// dashed line is the level-4 optimum an external solver proved with the
// same levels 1-3, when one did. One panel per instance, stacked.
//
// The solver reports progress only after its first second, at most four
// times a second: a level done in between is marked at the first report
// that shows the next level, so the mark is late by up to 250 ms, and a
// solve that ends within a second has only its first plan and its end.
func WriteTraceSVG(w io.Writer, r *Report, names []string) error {
	for _, n := range names {
		if !slices.ContainsFunc(r.Results, func(res Result) bool { return res.Instance.Name == n }) {
			return fmt.Errorf("no instance %q in this run", n)
		}
	}
	var picked []*Result
	for i := range r.Results {
		res := &r.Results[i]
		if len(names) == 0 || slices.Contains(names, res.Instance.Name) {
			picked = append(picked, res)
		}
	}
	const (
		width, panelH = 760, 330
		head          = 50
	)
	height := head + panelH*max(len(picked), 1) + 20
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(bw, `<text x="20" y="22" font-size="14" font-weight="bold">poolsolve bench: the exact solver's level-4 incumbent and lower bound over time</text>`+"\n")
	fmt.Fprintf(bw, `<text x="20" y="38" font-size="11" fill="#555">time limit %s, load %s, %d CPUs %s</text>`+"\n",
		r.TimeLimit, html.EscapeString(orDash(r.Machine.LoadBefore)), r.Machine.CPUs, html.EscapeString(r.Machine.CPU))
	if len(picked) == 0 {
		fmt.Fprintf(bw, `<text x="80" y="%d">no results</text>`+"\n", head+40)
	}
	for i, res := range picked {
		tracePanel(bw, res, head+i*panelH, width, panelH)
	}
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// traceStep is a point of a step line: the value holds from t on.
type traceStep struct {
	t time.Duration
	v int64
}

func tracePanel(bw *bufio.Writer, res *Result, y0, width, height int) {
	const left, right, top, bott = 90, 190, 62, 50
	name := res.Instance.Name
	fmt.Fprintf(bw, `<g><text x="20" y="%d" font-size="13" font-weight="bold">%s (%dx%d)</text>`+"\n", y0+16, html.EscapeString(name), res.Nodes, res.Variants)
	defer bw.WriteString("</g>\n")
	exact := res.Run(SolverExact)
	switch {
	case res.Error != "":
		fmt.Fprintf(bw, `<text x="%d" y="%d">error: %s</text>`+"\n", left, y0+50, html.EscapeString(res.Error))
		return
	case exact == nil || !exact.OK():
		fmt.Fprintf(bw, `<text x="%d" y="%d">the exact solver did not return a plan</text>`+"\n", left, y0+50)
		return
	}
	// A pool in independent parts is solved part by part, each from
	// level 1, and the reported bound is the part's: it is drawn apart,
	// dashed, and the pool's bound only at the end.
	parts := exact.Components > 1
	for i := 1; i < len(exact.Trace); i++ {
		parts = parts || exact.Trace[i].Level < exact.Trace[i-1].Level
	}
	var inc, bound []traceStep
	for i, tp := range exact.Trace {
		inc = append(inc, traceStep{tp.At, tp.Incumbent[3]})
		if tp.Level != 4 {
			continue
		}
		// A proved bound stays proved: the best so far in this part is
		// drawn (a report with a new incumbent can carry a bound of 0).
		b := tp.Bound
		if n := len(bound); n > 0 && exact.Trace[i-1].Level == 4 {
			b = max(b, bound[n-1].v)
		}
		bound = append(bound, traceStep{tp.At, b})
	}
	end := exact.Time
	inc = append(inc, traceStep{end, exact.Objective[3]})
	poolBound := traceStep{end, exact.Levels[3].LowerBound}
	if !parts {
		if n := len(bound); n > 0 {
			poolBound.v = max(poolBound.v, bound[n-1].v)
		}
		bound = append(bound, poolBound)
	}
	// Level marks: where the reports first show the next level, which is
	// when the level was done at the latest.
	var marks []traceMark
	if exact.TimeToFirst > 0 {
		marks = append(marks, traceMark{exact.TimeToFirst, "first plan", "#555"})
	}
	if !parts {
		for l := 1; l <= 3; l++ {
			for _, tp := range exact.Trace {
				if tp.Level > l {
					word := "done"
					if exact.Levels[l-1].Status == "optimal" {
						word = "proved"
					}
					marks = addMark(marks, traceMark{tp.At, fmt.Sprintf("L%d %s by", l, word), "#555"})
					break
				}
			}
		}
	}
	if exact.Proved {
		marks = append(marks, traceMark{exact.TimeToProof, "all proved", "#1f5fb4"})
	}
	// The optimum an external solver proved, with exact's levels 1-3.
	var ref *Run
	for _, s := range ExternalSolvers {
		run := res.Run(s)
		if run != nil && run.OK() && run.Verified && run.Proved && [3]int64(run.Objective[:3]) == [3]int64(exact.Objective[:3]) {
			if ref == nil || run.TimeToProof < ref.TimeToProof {
				ref = run
			}
		}
	}
	lo, hi := int64(math.MaxInt64), int64(math.MinInt64)
	for _, s := range append(append([]traceStep{poolBound}, inc...), bound...) {
		lo, hi = min(lo, s.v), max(hi, s.v)
	}
	if ref != nil {
		lo, hi = min(lo, ref.Objective[3]), max(hi, ref.Objective[3])
	}
	vlo, vhi, step := niceRange(lo, hi)
	pw, ph := float64(width-left-right), float64(height-top-bott)
	ox, oy := float64(left), float64(y0+top)
	tmax := max(end, time.Millisecond)
	px := func(t time.Duration) float64 { return ox + pw*float64(t)/float64(tmax) }
	py := func(v int64) float64 { return oy + ph*(1-float64(v-vlo)/float64(vhi-vlo)) }
	fmt.Fprintf(bw, `<rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#333"/>`+"\n", ox, oy, pw, ph)
	for v := vlo; v <= vhi; v += step {
		y := py(v)
		fmt.Fprintf(bw, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/><text x="%.0f" y="%.1f" text-anchor="end">%d</text>`+"\n", ox, y, ox+pw, y, ox-6, y+4, v)
	}
	tstep := niceDuration(tmax)
	for t := time.Duration(0); t <= tmax; t += tstep {
		x := px(t)
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="#ddd"/><text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", x, oy, x, oy+ph, x, oy+ph+16, tickDur(t))
	}
	fmt.Fprintf(bw, `<text x="%.0f" y="%.0f" text-anchor="middle">time since the solve started</text>`+"\n", ox+pw/2, oy+ph+36)
	fmt.Fprintf(bw, `<text x="24" y="%.0f" text-anchor="middle" transform="rotate(-90 24 %.0f)">level 4 (latency+churn)</text>`+"\n", oy+ph/2, oy+ph/2)
	for _, m := range marks {
		x := px(m.t)
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="%s" stroke-dasharray="2 3"/>`+"\n", x, oy, x, oy+ph, m.color)
	}
	// Mark labels sit in rows above the plot, off the lines, each row
	// one mark further from it; in the right half they end at their line.
	for i, m := range marks {
		x, anchor := px(m.t), "start"
		if x > ox+pw/2 {
			anchor = "end"
		}
		row := oy - 5 - float64((len(marks)-1-i)%3)*12
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%.0f" x2="%.1f" y2="%.0f" stroke="%s" stroke-dasharray="2 3"/>`+"\n", x, row+2, x, oy, m.color)
		fmt.Fprintf(bw, `<text x="%.1f" y="%.0f" font-size="10" fill="%s" text-anchor="%s">%s %s</text>`+"\n", x, row, m.color, anchor, html.EscapeString(m.label), dur(m.t))
	}
	if ref != nil {
		y := py(ref.Objective[3])
		fmt.Fprintf(bw, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="%s" stroke-dasharray="6 4"/>`+"\n", ox, y, ox+pw, y, solverColors[ref.Solver])
	}
	stepPath(bw, inc, px, py, "#1f5fb4", "")
	if parts {
		stepPath(bw, bound, px, py, "#2e7d32", "5 3")
		fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="4" fill="#2e7d32"/>`+"\n", px(poolBound.t), py(poolBound.v))
	} else {
		stepPath(bw, bound, px, py, "#2e7d32", "")
	}
	// Legend and the final figures.
	lx, ly := width-right+14, int(oy)+8
	legend := func(color, dash, text string) {
		fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="%s"/><text x="%d" y="%d" font-size="11">%s</text>`+"\n", lx, ly, lx+18, ly, color, dash, lx+24, ly+4, html.EscapeString(text))
		ly += 16
	}
	legend("#1f5fb4", "none", fmt.Sprintf("incumbent %d", exact.Objective[3]))
	if parts {
		legend("#2e7d32", "none", fmt.Sprintf("lower bound %d (dot)", poolBound.v))
		legend("#2e7d32", "5 3", "the solved part's bound")
	} else {
		legend("#2e7d32", "none", fmt.Sprintf("lower bound %d", poolBound.v))
	}
	if ref != nil {
		legend(solverColors[ref.Solver], "6 4", fmt.Sprintf("%s optimum %d", ref.Solver, ref.Objective[3]))
	}
	var notes []string
	if exact.Proved {
		notes = append(notes, "all four levels proved")
	} else {
		notes = append(notes, fmt.Sprintf("level 4 %s", levelCell(exact.Levels[3])))
	}
	switch {
	case len(exact.Trace) == 0:
		notes = append(notes, "no progress reports", "(the solver reports", "after its first second)")
	case parts:
		notes = append(notes, fmt.Sprintf("%s solved one", partsText(exact.Components)), "after the other; the", "solver reports the", "bound of the part it", "solves; the pool's", "bound is the dot")
	}
	for _, n := range notes {
		fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="10" fill="#555">%s</text>`+"\n", lx, ly+4, html.EscapeString(n))
		ly += 13
	}
}

type traceMark struct {
	t     time.Duration
	label string
	color string
}

// addMark adds m, or joins its label to a mark at the same time: levels
// done between two reports all show at the next one.
func addMark(marks []traceMark, m traceMark) []traceMark {
	for i := range marks {
		if marks[i].t == m.t && marks[i].color == m.color {
			marks[i].label = strings.TrimSuffix(marks[i].label, " by") + ", " + m.label
			return marks
		}
	}
	return append(marks, m)
}

func partsText(n int) string {
	if n > 1 {
		return fmt.Sprintf("%d parts", n)
	}
	return "parts"
}

// stepPath draws a value that holds until the next report.
func stepPath(bw *bufio.Writer, pts []traceStep, px func(time.Duration) float64, py func(int64) float64, color, dash string) {
	if len(pts) == 0 {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "M%.1f %.1f", px(pts[0].t), py(pts[0].v))
	for i := 1; i < len(pts); i++ {
		fmt.Fprintf(&b, "H%.1fV%.1f", px(pts[i].t), py(pts[i].v))
	}
	if dash != "" {
		dash = fmt.Sprintf(` stroke-dasharray="%s"`, dash)
	}
	fmt.Fprintf(bw, `<path d="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", b.String(), color, dash)
	for _, p := range pts {
		fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"/>`+"\n", px(p.t), py(p.v), color)
	}
}

// niceRange widens [lo, hi] to round ticks, about five of them.
func niceRange(lo, hi int64) (int64, int64, int64) {
	if hi <= lo {
		lo, hi = lo-1, hi+1
	}
	raw := float64(hi-lo) / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := int64(mag)
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = int64(m * mag)
			break
		}
	}
	step = max(step, 1)
	l := lo / step * step
	if l > lo {
		l -= step
	}
	h := (hi + step - 1) / step * step
	if h < hi {
		h += step
	}
	if h == l {
		h = l + step
	}
	return l, h, step
}

// niceDuration is a tick step giving four to ten ticks up to d.
func niceDuration(d time.Duration) time.Duration {
	for _, s := range []time.Duration{
		time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond,
		100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond, time.Second, 2 * time.Second, 5 * time.Second,
		10 * time.Second, 20 * time.Second, 30 * time.Second, time.Minute,
	} {
		if d/s <= 10 {
			return s
		}
	}
	return d / 10
}

func tickDur(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%gs", d.Seconds())
	}
	return fmt.Sprintf("%gms", float64(d)/float64(time.Millisecond))
}
