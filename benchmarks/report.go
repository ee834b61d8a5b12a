package benchmarks

import (
	"bufio"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/poolsolve/poolsolve/model"
)

// Report is one benchmark run: the machine, the settings and every
// instance's results.
type Report struct {
	Machine   Machine       `json:"machine"`
	TimeLimit time.Duration `json:"-"`
	Seed      uint64        `json:"seed"`
	Results   []Result      `json:"-"`
}

// Machine says where the numbers were measured. The load averages matter:
// the same machine gives other times when others use it.
type Machine struct {
	CPUs       int    `json:"cpus"`
	CPU        string `json:"cpu"`
	OS         string `json:"os"`
	GoVersion  string `json:"go"`
	LoadBefore string `json:"loadBefore"`
	LoadAfter  string `json:"loadAfter,omitempty"`
}

// ThisMachine describes the machine now, load included.
func ThisMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH, GoVersion: runtime.Version(), LoadBefore: Load()}
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// Load is the 1, 5 and 15 minute load averages, or "" where unknown.
func Load() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// --- text ---

// tableHead and resultRows are the main table, shared by the text and
// markdown forms.
var tableHead = []string{"instance", "size", "solver", "L1", "L2", "L3", "L4", "first plan", "all proved", "total", "vs greedy", "exact faster", "check"}

func resultRows(r *Report) [][]string {
	var rows [][]string
	for _, res := range r.Results {
		size := fmt.Sprintf("%dx%d", res.Nodes, res.Variants)
		if res.Error != "" {
			rows = append(rows, []string{res.Instance.Name, size, "-", "error: " + res.Error, "", "", "", "", "", "", "", "", ""})
			continue
		}
		exact, greedy := res.Run(SolverExact), res.Run(SolverGreedy)
		for i := range res.Runs {
			run := &res.Runs[i]
			name, sz := "", ""
			if i == 0 {
				name, sz = res.Instance.Name, size
			}
			if i == 1 {
				sz = fmt.Sprintf("%d placements", res.Placements)
			}
			if i == 2 && exact != nil && exact.Vars > 0 {
				sz = fmt.Sprintf("%d vars %d clauses", exact.Vars, exact.Clauses)
			}
			if !run.OK() {
				why := run.Skipped
				if why == "" {
					why = "error: " + run.Error
				} else {
					why = "skipped: " + why
				}
				rows = append(rows, []string{name, sz, run.Solver, why, "", "", "", "", "", "", "", "", ""})
				continue
			}
			rows = append(rows, []string{name, sz, run.Solver,
				levelCell(run.Levels[0]), levelCell(run.Levels[1]), levelCell(run.Levels[2]), levelCell(run.Levels[3]),
				dur(run.TimeToFirst), proof(run), dur(run.Time),
				vsGreedy(run, greedy), speedup(exact, run), check(run)})
		}
	}
	return rows
}

// judgeHead and judgeRows are the per-instance verdicts (Verdict).
var judgeHead = []string{"instance", "exact proof", "fastest external", "exact faster", "never worse than greedy", "never worse than the externals"}

var seedsHead = []string{"size", "seeds", "exact proved", "worst exact faster", "on", "best", "never worse than greedy", "never worse than the externals"}

// seedRows sum up each group of seeds: how many the exact solver proved,
// the worst ratio against the fastest external proof (with its seed) and
// the best, and on how many seeds the exact plan was never worse.
func seedRows(r *Report) [][]string {
	type agg struct {
		n, proved, okGreedy, okExt int
		worst, best                Verdict
		worstAt                    string
		seen                       bool
	}
	var order []string
	groups := map[string]*agg{}
	for i := range r.Results {
		res := &r.Results[i]
		g := res.Instance.Group
		if g == "" {
			continue
		}
		a := groups[g]
		if a == nil {
			a = &agg{}
			groups[g] = a
			order = append(order, g)
		}
		a.n++
		if res.Error != "" {
			continue
		}
		v := Judge(res)
		if v.ExactProof > 0 {
			a.proved++
		}
		if v.GreedyRan && v.WorseThanGreedy == "" && v.ExactFailed == "" {
			a.okGreedy++
		}
		if len(v.WorseThan) == 0 && v.ExactFailed == "" {
			a.okExt++
		}
		if !a.seen || speedLess(v, a.worst) {
			a.worst, a.worstAt = v, res.Instance.Name
		}
		if !a.seen || speedLess(a.best, v) {
			a.best = v
		}
		a.seen = true
	}
	var rows [][]string
	for _, g := range order {
		a := groups[g]
		if a.n < 2 {
			continue
		}
		rows = append(rows, []string{g, fmt.Sprint(a.n), fmt.Sprintf("%d of %d", a.proved, a.n), a.worst.speedText(), a.worstAt, a.best.speedText(),
			fmt.Sprintf("%d of %d", a.okGreedy, a.n), fmt.Sprintf("%d of %d", a.okExt, a.n)})
	}
	return rows
}

// speedLess orders verdicts worst first: a failed exact run, then one
// only an external proved (the smaller its bound, the worse), then one
// nobody proved, then by the lower end of the ratio.
func speedLess(a, b Verdict) bool {
	ra, rb := speedRank(a), speedRank(b)
	switch {
	case ra != rb:
		return ra < rb
	case ra == rankOnlyExternal:
		return a.Speedup.Upper < b.Speedup.Upper
	}
	return a.Speedup.Lower < b.Speedup.Lower
}

const (
	rankFailed = iota
	rankOnlyExternal
	rankNeither
	rankRatio
)

func speedRank(v Verdict) int {
	switch {
	case v.ExactFailed != "":
		return rankFailed
	case !v.Speedup.Ok:
		return rankNeither
	case v.ExactProof == 0:
		return rankOnlyExternal
	}
	return rankRatio
}

func judgeRows(r *Report) [][]string {
	var rows [][]string
	for i := range r.Results {
		res := &r.Results[i]
		if res.Error != "" {
			continue
		}
		j := Judge(res)
		fastest := "none proved"
		if j.Fastest != "" {
			fastest = fmt.Sprintf("%s %s", j.Fastest, dur(j.FastestProof))
		} else if len(j.Externals) == 0 {
			fastest = "none ran"
		}
		rows = append(rows, []string{res.Instance.Name, proofOrNone(j.ExactProof), fastest, j.speedText(), j.greedyText(), j.externalsText()})
	}
	return rows
}

func proofOrNone(d time.Duration) string {
	if d <= 0 {
		return "none"
	}
	return dur(d)
}

// WriteText writes the report as two tables. The first has one row per
// solver and instance: the levels with their status (and gap to the best
// known lower bound where one is known), times, the difference from the
// greedy baseline per level, and how much faster the exact solver proved
// everything than each external solver. The second judges each instance:
// the exact solver's proof against the fastest external proof, and
// whether its plan is never worse than greedy's and the externals'.
func WriteText(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	m := r.Machine
	fmt.Fprintf(bw, "poolsolve bench: time limit %s per solver and instance, seed %d\n", r.TimeLimit, r.Seed)
	fmt.Fprintf(bw, "machine: %d CPUs, %s, %s, %s; load %s", m.CPUs, orDash(m.CPU), m.OS, m.GoVersion, orDash(m.LoadBefore))
	if m.LoadAfter != "" {
		fmt.Fprintf(bw, " before, %s after", m.LoadAfter)
	}
	bw.WriteString("\n")
	bw.WriteString("levels: value, then opt (proved optimal), a gap % (bounded) or heur (heuristic); externals solve level by level, earlier levels fixed\n\n")
	if err := writeTabs(bw, tableHead, resultRows(r)); err != nil {
		return err
	}
	if jr := judgeRows(r); len(jr) > 0 {
		bw.WriteString("\nper instance: the exact solver's proof of all four levels against the fastest external proof (exact faster: their time / exact's);\nnever worse: lexicographically, the exact plan against greedy's and each verified external plan\n\n")
		if err := writeTabs(bw, judgeHead, jr); err != nil {
			return err
		}
	}
	if sr := seedRows(r); len(sr) > 0 {
		bw.WriteString("\nacross seeds: each size's worst ratio against the fastest external proof, with the seed it was on, and its best\n\n")
		if err := writeTabs(bw, seedsHead, sr); err != nil {
			return err
		}
	}
	writeNotes(bw, r)
	return bw.Flush()
}

func writeTabs(w io.Writer, head []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, row := range rows {
		fmt.Fprintln(tw, strings.TrimRight(strings.Join(row, "\t"), "\t"))
	}
	return tw.Flush()
}

func writeNotes(bw *bufio.Writer, r *Report) {
	notes := false
	for _, res := range r.Results {
		for _, run := range res.Runs {
			if run.Note != "" {
				if !notes {
					bw.WriteString("\nnotes:\n")
					notes = true
				}
				fmt.Fprintf(bw, "  %s %s: %s\n", res.Instance.Name, run.Solver, run.Note)
			}
		}
	}
}

// --- markdown ---

// WriteMarkdown writes the text report's tables as GitHub markdown, for
// docs/benchmarks.md.
func WriteMarkdown(w io.Writer, r *Report) error {
	bw := bufio.NewWriter(w)
	m := r.Machine
	fmt.Fprintf(bw, "`poolsolve bench`, time limit %s per solver and instance, seed %d; %d CPUs, %s, %s, %s; load %s before",
		r.TimeLimit, r.Seed, m.CPUs, orDash(m.CPU), m.OS, m.GoVersion, orDash(m.LoadBefore))
	if m.LoadAfter != "" {
		fmt.Fprintf(bw, ", %s after", m.LoadAfter)
	}
	bw.WriteString(".\n\n")
	writeMDTable(bw, tableHead, resultRows(r))
	if jr := judgeRows(r); len(jr) > 0 {
		bw.WriteString("\n")
		writeMDTable(bw, judgeHead, jr)
	}
	if sr := seedRows(r); len(sr) > 0 {
		bw.WriteString("\n")
		writeMDTable(bw, seedsHead, sr)
	}
	var notes []string
	for _, res := range r.Results {
		for _, run := range res.Runs {
			if run.Note != "" {
				notes = append(notes, fmt.Sprintf("- %s %s: %s", mdCell(res.Instance.Name), run.Solver, mdCell(run.Note)))
			}
		}
	}
	if len(notes) > 0 {
		bw.WriteString("\n" + strings.Join(notes, "\n") + "\n")
	}
	return bw.Flush()
}

func writeMDTable(bw *bufio.Writer, head []string, rows [][]string) {
	bw.WriteString("| " + strings.Join(head, " | ") + " |\n|")
	for range head {
		bw.WriteString(" --- |")
	}
	bw.WriteString("\n")
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = mdCell(c)
		}
		bw.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
}

// mdCell keeps a cell inside its column: a pipe would end it.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", "\\|") }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func levelCell(l RunLevel) string {
	switch l.Status {
	case "optimal":
		return fmt.Sprintf("%d opt", l.Value)
	case "bounded":
		if l.Bound == "" && l.LowerBound == 0 {
			return fmt.Sprintf("%d unproved", l.Value)
		}
		return fmt.Sprintf("%d %s", l.Value, gapText(l.Value, l.LowerBound))
	case "heuristic":
		if l.LowerBound > 0 {
			return fmt.Sprintf("%d heur %s", l.Value, gapText(l.Value, l.LowerBound))
		}
		return fmt.Sprintf("%d heur", l.Value)
	case "":
		return "-"
	}
	return fmt.Sprintf("%d %s", l.Value, l.Status)
}

func gapText(v, lb int64) string {
	if v <= 0 {
		return "0%"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(v-lb)/float64(v))
}

// dur prints a duration with three significant digits.
func dur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%.3gms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.3gs", d.Seconds())
}

func proof(r *Run) string {
	if !r.Proved {
		if r.Solver == SolverGreedy {
			return "-"
		}
		return "none"
	}
	return dur(r.TimeToProof)
}

func vsGreedy(r, g *Run) string {
	if g == nil || !g.OK() {
		return "-"
	}
	if r == g {
		return "baseline"
	}
	d := Compare(r, g)
	parts := make([]string, 4)
	for i, x := range d {
		switch {
		case x == 0:
			parts[i] = "="
		default:
			parts[i] = fmt.Sprintf("%+d", x)
		}
	}
	s := strings.Join(parts, " ")
	if ok, _ := NotWorse(r, g); !ok {
		s += " WORSE"
	}
	return s
}

// Speedup is how many times faster the exact solver proved all four
// levels than other: Lower and Upper bound the ratio where a run stopped
// unproved (only then do they differ). Ok is false when neither proved.
type Speedup struct {
	Lower, Upper float64
	Ok           bool
}

// SpeedupOver compares the exact run with another.
func SpeedupOver(exact, other *Run) Speedup {
	if exact == nil || other == nil || !exact.OK() || !other.OK() {
		return Speedup{}
	}
	switch {
	case exact.Proved && other.Proved:
		x := ratio(other.TimeToProof, exact.TimeToProof)
		return Speedup{x, x, true}
	case exact.Proved:
		// other ran its whole time without a proof: at least this much.
		return Speedup{ratio(other.Time, exact.TimeToProof), math.Inf(1), true}
	case other.Proved:
		return Speedup{0, ratio(other.TimeToProof, exact.Time), true}
	}
	return Speedup{}
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(max(b, time.Microsecond)) }

func speedup(exact, r *Run) string {
	if r.Solver == SolverExact || r.Solver == SolverGreedy {
		return ""
	}
	s := SpeedupOver(exact, r)
	switch {
	case !s.Ok:
		return "neither proved"
	case s.Lower == s.Upper:
		return fmt.Sprintf("%.3gx", s.Lower)
	case math.IsInf(s.Upper, 1):
		return fmt.Sprintf(">%.3gx", s.Lower)
	}
	return fmt.Sprintf("<%.3gx", s.Upper)
}

func check(r *Run) string {
	if r.Verified {
		return "verified"
	}
	return "NOT VERIFIED"
}

// --- JSON ---

type jsonReport struct {
	Schema      string       `json:"schema"`
	Machine     Machine      `json:"machine"`
	TimeLimitMs float64      `json:"timeLimitMs"`
	Seed        uint64       `json:"seed"`
	Results     []jsonResult `json:"results"`
}

type jsonResult struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Group is the size the instance is one seed of (bench --seeds).
	Group      string     `json:"group,omitempty"`
	Spec       *Spec      `json:"spec,omitempty"`
	Nodes      int        `json:"nodes"`
	Variants   int        `json:"variants"`
	Placements int        `json:"placements"`
	Error      string     `json:"error,omitempty"`
	Runs       []jsonRun  `json:"runs"`
	Judge      *jsonJudge `json:"judge,omitempty"`
}

// jsonJudge is a Verdict: the exact solver against the fastest external
// proof and against every other plan.
type jsonJudge struct {
	ExactProofMs   float64 `json:"exactProofMs,omitempty"`
	Fastest        string  `json:"fastestExternal,omitempty"`
	FastestProofMs float64 `json:"fastestProofMs,omitempty"`
	// ExactFaster is the fastest external proof's time over exact's,
	// bounded where one did not prove; absent when nobody proved.
	ExactFaster *jsonSpeedup `json:"exactFaster,omitempty"`
	// AtMostFastest: exact proved all four levels no later than the
	// fastest external solver, or where none did.
	AtMostFastest           bool     `json:"atMostFastest"`
	Externals               []string `json:"externals"`
	NeverWorseThanGreedy    *bool    `json:"neverWorseThanGreedy,omitempty"` // absent: greedy did not run
	WorseThanGreedy         string   `json:"worseThanGreedy,omitempty"`
	NeverWorseThanExternals bool     `json:"neverWorseThanExternals"`
	WorseThanExternals      []string `json:"worseThanExternals,omitempty"`
	ExactFailed             string   `json:"exactFailed,omitempty"`
	// BoundsRefuted: other solvers' valid plans below a bound the exact
	// solver claimed (Verdict.Refuted); the run then exits with 4.
	BoundsRefuted []string `json:"boundsRefuted,omitempty"`
}

func toJSONSpeedup(s Speedup) *jsonSpeedup {
	if !s.Ok {
		return nil
	}
	js := &jsonSpeedup{Lower: round3(s.Lower)}
	if !math.IsInf(s.Upper, 1) {
		u := round3(s.Upper)
		js.Upper = &u
	}
	return js
}

// jsonTrace is one progress report of the exact solver.
type jsonTrace struct {
	Ms        float64         `json:"ms"`
	Level     int             `json:"level"`
	Incumbent model.Objective `json:"incumbent"`
	Bound     int64           `json:"bound"`
}

type jsonRun struct {
	Run
	TimeToFirstMs float64 `json:"timeToFirstMs"`
	TimeToProofMs float64 `json:"timeToProofMs,omitempty"`
	TimeMs        float64 `json:"timeMs"`
	// VsGreedy is this run's objective minus greedy's, per level.
	VsGreedy *[4]int64 `json:"vsGreedy,omitempty"`
	// ExactFaster bounds how many times faster the exact solver proved
	// every level than this one (externals only).
	ExactFaster *jsonSpeedup `json:"exactFaster,omitempty"`
	// Trace is the exact solver's progress reports, after its first
	// second (exact only).
	Trace []jsonTrace `json:"trace,omitempty"`
}

type jsonSpeedup struct {
	Lower float64  `json:"lower"`
	Upper *float64 `json:"upper,omitempty"` // absent: unbounded (this solver proved nothing)
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Microsecond)) / 1000 }

// WriteJSON writes the report as JSON (schema poolsolve.bench/v1), times
// in milliseconds.
func WriteJSON(w io.Writer, r *Report) error {
	out := jsonReport{Schema: "poolsolve.bench/v1", Machine: r.Machine, TimeLimitMs: ms(r.TimeLimit), Seed: r.Seed, Results: []jsonResult{}}
	for _, res := range r.Results {
		jr := jsonResult{Name: res.Instance.Name, Source: res.Instance.Source, Group: res.Instance.Group, Spec: res.Instance.Spec, Nodes: res.Nodes,
			Variants: res.Variants, Placements: res.Placements, Error: res.Error, Runs: []jsonRun{}}
		exact, greedy := res.Run(SolverExact), res.Run(SolverGreedy)
		for i := range res.Runs {
			run := &res.Runs[i]
			j := jsonRun{Run: *run, TimeToFirstMs: ms(run.TimeToFirst), TimeToProofMs: ms(run.TimeToProof), TimeMs: ms(run.Time)}
			if greedy != nil && greedy.OK() && run.OK() && run.Solver != SolverGreedy {
				d := Compare(run, greedy)
				j.VsGreedy = &d
			}
			if IsExternal(run.Solver) {
				j.ExactFaster = toJSONSpeedup(SpeedupOver(exact, run))
			}
			for _, tp := range run.Trace {
				j.Trace = append(j.Trace, jsonTrace{Ms: ms(tp.At), Level: tp.Level, Incumbent: tp.Incumbent, Bound: tp.Bound})
			}
			jr.Runs = append(jr.Runs, j)
		}
		if res.Error == "" {
			v := Judge(&res)
			jj := &jsonJudge{ExactProofMs: ms(v.ExactProof), Fastest: v.Fastest, FastestProofMs: ms(v.FastestProof),
				ExactFaster: toJSONSpeedup(v.Speedup), AtMostFastest: v.Met(), Externals: append([]string{}, v.Externals...),
				WorseThanGreedy: v.WorseThanGreedy, NeverWorseThanExternals: v.ExactFailed == "" && len(v.WorseThan) == 0,
				WorseThanExternals: v.WorseThan, ExactFailed: v.ExactFailed, BoundsRefuted: v.Refuted}
			if v.GreedyRan {
				ok := v.WorseThanGreedy == ""
				jj.NeverWorseThanGreedy = &ok
			}
			jr.Judge = jj
		}
		out.Results = append(out.Results, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// --- SVG ---

var solverColors = map[string]string{
	SolverExact: "#1f5fb4", SolverGreedy: "#7f7f7f", SolverCBC: "#c62828", SolverHiGHS: "#2e7d32", SolverClasp: "#e08a00",
}

// WriteSVG draws time against instance size for each solver, both axes
// logarithmic: size is nodes x variants, time is the time to prove every
// level (a filled dot) or, where a solver proved nothing, the time it ran
// (a hollow dot at the time limit or where it stopped). Greedy proves
// nothing and is drawn with its run time. A run that failed is a cross at
// the time it failed, and the legend counts failures and skips.
func WriteSVG(w io.Writer, r *Report) error {
	const (
		width                 = 760
		left, right, top, plt = 80, 170, 50, 320
	)
	type pt struct {
		x, y   float64
		filled bool
		failed bool
		name   string
	}
	series := map[string][]pt{}
	failed, skipped := map[string]int{}, map[string]int{}
	var xs, ys []float64
	longest := 0
	for _, res := range r.Results {
		if res.Error != "" {
			continue
		}
		size := float64(res.Nodes * res.Variants)
		for _, run := range res.Runs {
			if run.Skipped != "" {
				skipped[run.Solver]++
				continue
			}
			t, filled := run.Time, false
			if run.Error != "" {
				failed[run.Solver]++
				if t <= 0 {
					continue
				}
			} else if run.Proved {
				t, filled = run.TimeToProof, true
			}
			y := math.Max(float64(t)/float64(time.Millisecond), 0.01)
			series[run.Solver] = append(series[run.Solver], pt{size, y, filled, run.Error != "", res.Instance.Name})
			xs, ys = append(xs, size), append(ys, y)
			longest = max(longest, len(res.Instance.Name))
		}
	}
	// The instance names hang under the axis at -35 degrees; the axis
	// title goes below the longest (about 6 px a character at 10 px).
	namesY := top + plt + 30
	titleY := namesY + int(math.Ceil(float64(longest)*6*math.Sin(35*math.Pi/180))) + 18
	height := titleY + 32
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(bw, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(bw, `<text x="%d" y="22" font-size="14" font-weight="bold">poolsolve bench: time to prove all four levels against size</text>`+"\n", left)
	fmt.Fprintf(bw, `<text x="%d" y="38" font-size="11" fill="#555">time limit %s, load %s</text>`+"\n", left, r.TimeLimit, html.EscapeString(orDash(r.Machine.LoadBefore)))
	if len(xs) == 0 {
		bw.WriteString(`<text x="80" y="120">no results</text>` + "\n</svg>\n")
		return bw.Flush()
	}
	x0, x1 := decadeBounds(xs)
	y0, y1 := decadeBounds(ys)
	pw, ph := float64(width-left-right), float64(plt)
	px := func(x float64) float64 {
		return float64(left) + pw*(math.Log10(x)-math.Log10(x0))/(math.Log10(x1)-math.Log10(x0))
	}
	py := func(y float64) float64 {
		return float64(top) + ph*(1-(math.Log10(y)-math.Log10(y0))/(math.Log10(y1)-math.Log10(y0)))
	}
	fmt.Fprintf(bw, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#333"/>`+"\n", left, top, pw, ph)
	for d := x0; d <= x1*1.0001; d *= 10 {
		x := px(d)
		fmt.Fprintf(bw, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%.0f" stroke="#ddd"/>`+"\n", x, top, x, float64(top)+ph)
		fmt.Fprintf(bw, `<text x="%.1f" y="%.0f" text-anchor="middle">%s</text>`+"\n", x, float64(top)+ph+16, sizeTick(d))
	}
	for d := y0; d <= y1*1.0001; d *= 10 {
		y := py(d)
		fmt.Fprintf(bw, `<line x1="%d" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#ddd"/>`+"\n", left, y, float64(left)+pw, y)
		fmt.Fprintf(bw, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-6, y+4, timeTick(d))
	}
	fmt.Fprintf(bw, `<text x="%.0f" y="%d" text-anchor="middle">instance size: nodes x variants (log)</text>`+"\n", float64(left)+pw/2, titleY)
	fmt.Fprintf(bw, `<text x="18" y="%.0f" text-anchor="middle" transform="rotate(-90 18 %.0f)">time (log)</text>`+"\n", float64(top)+ph/2, float64(top)+ph/2)
	// Instance names under the axis, once per size.
	seen := map[float64]bool{}
	var names []pt
	for _, s := range AllSolvers {
		for _, p := range series[s] {
			if !seen[p.x] {
				seen[p.x] = true
				names = append(names, p)
			}
		}
	}
	sort.Slice(names, func(i, j int) bool { return names[i].x < names[j].x })
	for _, p := range names {
		x := px(p.x)
		fmt.Fprintf(bw, `<text x="%.1f" y="%d" font-size="10" fill="#555" text-anchor="end" transform="rotate(-35 %.1f %d)">%s</text>`+"\n",
			x, namesY, x, namesY, html.EscapeString(p.name))
	}
	ly := top + 10
	lx := width - right + 16
	for _, s := range AllSolvers {
		pts := series[s]
		c := solverColors[s]
		if len(pts) == 0 && failed[s] == 0 && skipped[s] == 0 {
			continue
		}
		sort.SliceStable(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
		var path []string
		for _, p := range pts {
			if !p.failed {
				path = append(path, fmt.Sprintf("%.1f,%.1f", px(p.x), py(p.y)))
			}
		}
		if len(path) > 0 {
			fmt.Fprintf(bw, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", strings.Join(path, " "), c)
		}
		for _, p := range pts {
			tip := fmt.Sprintf("%s %s: %s", s, p.name, dur(time.Duration(p.y*float64(time.Millisecond))))
			if p.failed {
				x, y := px(p.x), py(p.y)
				fmt.Fprintf(bw, `<path d="M%.1f %.1fL%.1f %.1fM%.1f %.1fL%.1f %.1f" stroke="%s" stroke-width="2"><title>%s, failed</title></path>`+"\n",
					x-4, y-4, x+4, y+4, x-4, y+4, x+4, y-4, c, html.EscapeString(tip))
				continue
			}
			fill := c
			if !p.filled {
				fill = "white"
			}
			fmt.Fprintf(bw, `<circle cx="%.1f" cy="%.1f" r="4" fill="%s" stroke="%s" stroke-width="1.5"><title>%s</title></circle>`+"\n",
				px(p.x), py(p.y), fill, c, html.EscapeString(tip))
		}
		fmt.Fprintf(bw, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d">%s</text>`+"\n", lx, ly, lx+20, ly, c, lx+26, ly+4, s)
		ly += 18
		var extra []string
		if n := failed[s]; n > 0 {
			extra = append(extra, fmt.Sprintf("%d failed", n))
		}
		if n := skipped[s]; n > 0 {
			extra = append(extra, fmt.Sprintf("%d skipped", n))
		}
		if len(extra) > 0 {
			fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="10" fill="#555">%s</text>`+"\n", lx+26, ly-2, strings.Join(extra, ", "))
			ly += 14
		}
	}
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="10" fill="#555">filled: all levels proved</text>`+"\n", lx, ly+8)
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="10" fill="#555">hollow: not proved</text>`+"\n", lx, ly+22)
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="10" fill="#555">cross: failed</text>`+"\n", lx, ly+36)
	fmt.Fprintf(bw, `<text x="%d" y="%d" font-size="10" fill="#555">%d CPUs %s</text>`+"\n", left, height-8, r.Machine.CPUs, html.EscapeString(r.Machine.CPU))
	bw.WriteString("</svg>\n")
	return bw.Flush()
}

// decadeBounds widens [min, max] to whole powers of ten.
func decadeBounds(v []float64) (float64, float64) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	lo = math.Pow(10, math.Floor(math.Log10(lo)))
	hi = math.Pow(10, math.Ceil(math.Log10(hi)))
	if hi <= lo {
		hi = lo * 10
	}
	return lo, hi
}

func sizeTick(x float64) string {
	switch {
	case x >= 1e6:
		return fmt.Sprintf("%gM", x/1e6)
	case x >= 1e3:
		return fmt.Sprintf("%gk", x/1e3)
	}
	return fmt.Sprintf("%g", x)
}

func timeTick(msec float64) string {
	switch {
	case msec >= 1000:
		return fmt.Sprintf("%gs", msec/1000)
	case msec >= 1:
		return fmt.Sprintf("%gms", msec)
	}
	return fmt.Sprintf("%gus", msec*1000)
}
