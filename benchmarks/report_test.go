package benchmarks

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/internal/golden"
	"github.com/poolsolve/poolsolve/model"
)

// judgedReport has what the verdicts tell apart: an instance the exact
// solver proves first, one where an external proves and exact does not
// (with a progress trace, bounds and all), one in independent parts, and
// failed and skipped external runs.
func judgedReport() *Report {
	lv := func(v int64, st string, lb int64) RunLevel { return RunLevel{Value: v, Status: st, LowerBound: lb} }
	opt := func(o model.Objective, src string) [4]RunLevel {
		var l [4]RunLevel
		for i := range l {
			l[i] = RunLevel{Value: o[i], Status: "optimal", LowerBound: o[i], Bound: src}
		}
		return l
	}
	small := model.Objective{0, 0, 0, 4508}
	tight := model.Objective{3, 1, 0, 71912}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	return &Report{
		Machine:   Machine{CPUs: 2, CPU: "Test CPU", OS: "linux/amd64", GoVersion: "go1.26", LoadBefore: "1.00 1.00 1.00", LoadAfter: "1.50 1.10 1.00"},
		TimeLimit: 10 * time.Second, Seed: 1,
		Results: []Result{
			{
				Instance: Instance{Name: "3x10", Source: "generated"}, Nodes: 3, Variants: 10, Placements: 12,
				Runs: []Run{
					{Solver: SolverExact, Objective: small, Verified: true, Proved: true, Components: 1, Vars: 208, Clauses: 2252,
						Levels: opt(small, "sat-unsat"), TimeToFirst: ms(5), TimeToProof: ms(14), Time: ms(14)},
					{Solver: SolverGreedy, Objective: small, Verified: true,
						Levels: [4]RunLevel{lv(0, "optimal", 0), lv(0, "optimal", 0), lv(0, "optimal", 0), lv(4508, "heuristic", 0)}, TimeToFirst: ms(4), Time: ms(5)},
					{Solver: SolverCBC, Objective: small, Verified: true, Proved: true, Levels: opt(small, "cbc"), TimeToFirst: ms(60), TimeToProof: ms(250), Time: ms(250)},
					{Solver: SolverHiGHS, Skipped: "the npm package highs is not installed"},
					{Solver: SolverClasp, Objective: small, Verified: true, Proved: true, Levels: opt(small, "clasp"), TimeToFirst: ms(9), TimeToProof: ms(42), Time: ms(42)},
				},
			},
			{
				Instance: Instance{Name: "24x60-tight-with-a-long-name", Source: "generated"}, Nodes: 24, Variants: 60, Placements: 235,
				Runs: []Run{
					{Solver: SolverExact, Objective: model.Objective{3, 1, 0, 74000}, Verified: true, Components: 1, Vars: 1550, Clauses: 993449,
						Levels:      [4]RunLevel{lv(3, "optimal", 3), lv(1, "optimal", 1), lv(0, "optimal", 0), {Value: 74000, Status: "bounded", LowerBound: 39613, Bound: "lp"}},
						TimeToFirst: ms(70), Time: ms(9270),
						Trace: []TracePoint{
							{At: ms(1010), Level: 2, Incumbent: model.Objective{3, 1, 2, 92228}, Bound: 0},
							{At: ms(1260), Level: 4, Incumbent: model.Objective{3, 1, 0, 137537}, Bound: 10148},
							{At: ms(1900), Level: 4, Incumbent: model.Objective{3, 1, 0, 97128}, Bound: 10487},
							{At: ms(2500), Level: 4, Incumbent: model.Objective{3, 1, 0, 77906}, Bound: 0},
							{At: ms(6000), Level: 4, Incumbent: model.Objective{3, 1, 0, 74000}, Bound: 10487},
						}},
					{Solver: SolverGreedy, Objective: model.Objective{3, 1, 2, 92228}, Verified: true,
						Levels: [4]RunLevel{lv(3, "heuristic", 0), lv(1, "heuristic", 0), lv(2, "heuristic", 0), lv(92228, "heuristic", 0)}, TimeToFirst: ms(49), Time: ms(49)},
					{Solver: SolverCBC, Objective: tight, Verified: true, Proved: true, Levels: opt(tight, "cbc"), TimeToFirst: ms(111), TimeToProof: ms(2070), Time: ms(2070)},
					{Solver: SolverHiGHS, Error: "highs: node ran out of memory", Time: ms(3000)},
					{Solver: SolverClasp, Objective: tight, Verified: true, Proved: true, Levels: opt(tight, "clasp"), TimeToFirst: ms(20), TimeToProof: ms(276), Time: ms(276)},
				},
			},
			{
				Instance: Instance{Name: "parts", Source: "generated"}, Nodes: 8, Variants: 20, Placements: 34,
				Runs: []Run{
					{Solver: SolverExact, Objective: model.Objective{1, 0, 0, 5300}, Verified: true, Components: 3,
						Levels:      [4]RunLevel{lv(1, "optimal", 1), lv(0, "optimal", 0), lv(0, "optimal", 0), {Value: 5300, Status: "bounded", LowerBound: 5000, Bound: "lp+sat-unsat"}},
						TimeToFirst: ms(8), Time: ms(3000),
						Trace: []TracePoint{
							{At: ms(1000), Level: 4, Incumbent: model.Objective{1, 0, 0, 5400}, Bound: 3000},
							{At: ms(2000), Level: 2, Incumbent: model.Objective{1, 0, 0, 5350}, Bound: 0},
							{At: ms(2500), Level: 4, Incumbent: model.Objective{1, 0, 0, 5300}, Bound: 1900},
						}},
					{Solver: SolverGreedy, Objective: model.Objective{1, 0, 0, 5283}, Verified: true, Time: ms(6)},
					{Solver: SolverCBC, Objective: model.Objective{1, 0, 0, 5290}, Verified: true, Time: ms(3000),
						Levels: [4]RunLevel{lv(1, "optimal", 1), lv(0, "optimal", 0), lv(0, "optimal", 0), lv(5290, "bounded", 0)}},
				},
			},
		},
	}
}

func TestJudgeWeighsTheExactSolverAgainstTheOthers(t *testing.T) {
	rep := judgedReport()
	tests := []struct {
		name        string
		res         *Result
		fastest     string
		met         bool
		lower       float64
		upper       float64
		greedyWorse string
		worseThan   string
	}{
		{"exact proves before the fastest external, and is never worse", &rep.Results[0], SolverClasp, true, 3, 3, "", ""},
		{"an external proves what exact does not: exact is slower and worse", &rep.Results[1], SolverClasp, false, 0, 276.0 / 9270, "", "cbc at level 4 (latency+churn): 74000, cbc 71912; clasp at level 4 (latency+churn): 74000, clasp 71912"},
		{"nobody proves: no ratio; worse than greedy and the unproved cbc at level 4", &rep.Results[2], "", false, 0, 0, "level 4 (latency+churn): 5300, greedy 5283", "cbc at level 4 (latency+churn): 5300, cbc 5290"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Judge(tc.res)
			if v.Fastest != tc.fastest || v.Met() != tc.met {
				t.Errorf("fastest %q, met %v; want %q, %v", v.Fastest, v.Met(), tc.fastest, tc.met)
			}
			if tc.fastest != "" && (math.Abs(v.Speedup.Lower-tc.lower) > 1e-9 || math.Abs(v.Speedup.Upper-tc.upper) > 1e-9) {
				t.Errorf("speedup %+v; want [%g, %g]", v.Speedup, tc.lower, tc.upper)
			}
			if v.WorseThanGreedy != tc.greedyWorse || strings.Join(v.WorseThan, "; ") != tc.worseThan {
				t.Errorf("worse than greedy %q, than externals %q; want %q, %q", v.WorseThanGreedy, v.WorseThan, tc.greedyWorse, tc.worseThan)
			}
		})
	}
	t.Run("only exact proves: at least the shortest external run over exact's proof", func(t *testing.T) {
		res := rep.Results[0]
		res.Runs = append([]Run{}, res.Runs...)
		res.Runs[2].Proved, res.Runs[2].TimeToProof = false, 0 // cbc ran 250 ms
		res.Runs[4].Proved, res.Runs[4].TimeToProof = false, 0 // clasp ran 42 ms
		v := Judge(&res)
		if v.Fastest != "" || !v.Met() || math.Abs(v.Speedup.Lower-3) > 1e-9 || !math.IsInf(v.Speedup.Upper, 1) {
			t.Fatalf("verdict %+v; want no fastest, met, at least 42/14 = 3x", v)
		}
	})
	t.Run("a valid plan below a level the exact solver proved refutes it", func(t *testing.T) {
		res := rep.Results[0]
		res.Runs = append([]Run{}, res.Runs...)
		res.Runs[4].Objective = model.Objective{0, 0, 0, 4500} // clasp's plan, below the proved 4508
		v := Judge(&res)
		if len(v.Refuted) != 1 || !strings.HasPrefix(v.Refuted[0], "clasp: level 4: a valid plan of 4500, below the bound 4508") {
			t.Fatalf("refuted %q; want clasp's plan named", v.Refuted)
		}
		var buf bytes.Buffer
		if err := WriteJSON(&buf, &Report{Results: []Result{res}}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), `"boundsRefuted": [`) {
			t.Errorf("the JSON judge does not name the refuted bound:\n%s", buf.String())
		}
	})
	t.Run("a plan the evaluator refused is not judged", func(t *testing.T) {
		res := rep.Results[0]
		res.Runs = append([]Run{}, res.Runs...)
		res.Runs[0].Verified = false
		if v := Judge(&res); v.ExactFailed == "" || v.Met() {
			t.Fatalf("verdict %+v; want the unverified exact plan named", v)
		}
	})
}

func TestEveryReportFormMatchesItsGoldenFile(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		write func(io.Writer, *Report) error
	}{
		{"the text tables", "report.txt", WriteText},
		{"the markdown tables", "report.md", WriteMarkdown},
		{"the JSON document", "report.json", WriteJSON},
		{"the time-against-size chart", "chart.svg", WriteSVG},
		{"the trace of every instance", "trace.svg", func(w io.Writer, r *Report) error { return WriteTraceSVG(w, r, nil) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := tc.write(&buf, judgedReport()); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.file, buf.Bytes())
		})
	}
}

func TestTheTextReportJudgesEachInstance(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, judgedReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"3x (at most the fastest)",
		"<0.0298x (slower)",
		"WORSE than cbc at level 4",
		"WORSE at level 4 (latency+churn): 5300, greedy 5283",
		"yes (cbc, clasp)",
		"clasp 276ms",
		"skipped: the npm package highs is not installed",
		"error: highs: node ran out of memory",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the text report lacks %q:\n%s", want, out)
		}
	}
}

func TestTheJSONReportCarriesTheVerdictAndTheTrace(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, judgedReport()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Results []struct {
			Name  string
			Judge struct {
				FastestExternal         string
				FastestProofMs          float64
				ExactFaster             *struct{ Lower, Upper float64 }
				AtMostFastest           bool
				NeverWorseThanGreedy    *bool
				NeverWorseThanExternals bool
				WorseThanExternals      []string
			}
			Runs []struct {
				Solver string
				Trace  []struct {
					Ms        float64
					Level     int
					Incumbent [4]int64
					Bound     int64
				}
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	first, second := doc.Results[0].Judge, doc.Results[1].Judge
	if first.FastestExternal != "clasp" || first.FastestProofMs != 42 || !first.AtMostFastest || first.ExactFaster == nil || first.ExactFaster.Lower != 3 ||
		first.NeverWorseThanGreedy == nil || !*first.NeverWorseThanGreedy || !first.NeverWorseThanExternals {
		t.Errorf("3x10's verdict %+v", first)
	}
	if second.AtMostFastest || second.NeverWorseThanExternals || len(second.WorseThanExternals) != 2 {
		t.Errorf("24x60's verdict %+v", second)
	}
	tr := doc.Results[1].Runs[0].Trace
	if len(tr) != 5 || tr[2].Ms != 1900 || tr[2].Incumbent[3] != 97128 || tr[2].Bound != 10487 {
		t.Errorf("the exact run's trace %+v", tr)
	}
}

func TestTheChartsAxisTitleClearsItsRotatedLabels(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSVG(&buf, judgedReport()); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	name := regexp.MustCompile(`<text x="[0-9.]+" y="([0-9]+)" font-size="10"[^>]*rotate\(-35[^>]*>24x60-tight-with-a-long-name<`).FindStringSubmatch(svg)
	title := regexp.MustCompile(`<text x="[0-9.]+" y="([0-9]+)" text-anchor="middle">instance size`).FindStringSubmatch(svg)
	if name == nil || title == nil {
		t.Fatalf("no rotated instance name or no axis title:\n%s", svg)
	}
	ny, _ := strconv.Atoi(name[1])
	ty, _ := strconv.Atoi(title[1])
	// 28 characters at 10 px, turned 35 degrees: about 100 px deep.
	if depth := float64(len("24x60-tight-with-a-long-name")) * 5 * math.Sin(35*math.Pi/180); float64(ty-ny) < depth+12 {
		t.Errorf("the axis title is %d px below the label's start; the label reaches about %.0f px down", ty-ny, depth)
	}
	for _, want := range []string{">1 failed, 1 skipped<", "cross: failed", `stroke="#2e7d32" stroke-width="2"><title>highs 24x60-tight-with-a-long-name: 3s, failed`} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %q", want)
		}
	}
}

func TestTheTraceDrawsIncumbentBoundAndLevelMarks(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteTraceSVG(&buf, judgedReport(), []string{"24x60-tight-with-a-long-name", "parts"}); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, want := range []string{
		"24x60-tight-with-a-long-name (24x60)",
		"L1 proved by 1.01s",
		"L2 proved, L3 proved by 1.26s", // levels done between reports show at the next one
		"incumbent 74000",
		"lower bound 39613",
		"clasp optimum 71912",
		"3 parts solved one",
		"the solved part&#39;s bound",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("the trace lacks %q", want)
		}
	}
	if strings.Contains(svg, "3x10 (3x10)") {
		t.Error("an instance that was not asked for is drawn")
	}
	if err := WriteTraceSVG(io.Discard, judgedReport(), []string{"64x250"}); err == nil || !strings.Contains(err.Error(), `no instance "64x250"`) {
		t.Errorf("an unknown instance: %v", err)
	}
}

// TestTheSVGsRenderToPNGs renders both SVGs with rsvg-convert, as a
// browser would draw them: a malformed document fails here.
func TestTheSVGsRenderToPNGs(t *testing.T) {
	if _, err := exec.LookPath("rsvg-convert"); err != nil {
		const msg = "rsvg-convert not installed (apt-get install librsvg2-bin)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; .ci/run installs it, so CI must have it", msg)
		}
		t.Skip(msg)
	}
	for _, tc := range []struct {
		name  string
		write func(io.Writer, *Report) error
	}{
		{"chart", WriteSVG},
		{"trace", func(w io.Writer, r *Report) error { return WriteTraceSVG(w, r, nil) }},
	} {
		t.Run("the "+tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var buf bytes.Buffer
			if err := tc.write(&buf, judgedReport()); err != nil {
				t.Fatal(err)
			}
			svg, png := filepath.Join(dir, tc.name+".svg"), filepath.Join(dir, tc.name+".png")
			if err := os.WriteFile(svg, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command("rsvg-convert", "-o", png, svg).CombinedOutput(); err != nil {
				t.Fatalf("rsvg-convert: %v: %s", err, out)
			}
			data, err := os.ReadFile(png)
			if err != nil || len(data) < 1000 || !bytes.HasPrefix(data, []byte("\x89PNG")) {
				t.Fatalf("PNG of %d bytes, %v", len(data), err)
			}
		})
	}
}

// Across seeds, a size's worst verdict is the one it loses most: an
// external proof the exact solver did not match is worse than a seed
// nobody proved, which is worse than any ratio.
func TestTheWorstSeedIsTheOneOnlyAnExternalProved(t *testing.T) {
	only := Verdict{Fastest: "highs", FastestProof: 8 * time.Second, Speedup: Speedup{0, 1.2, true}}
	closer := Verdict{Fastest: "cbc", FastestProof: 9 * time.Second, Speedup: Speedup{0, 1.1, true}}
	neither := Verdict{}
	slow := Verdict{ExactProof: time.Second, Fastest: "clasp", Speedup: Speedup{0.5, 0.5, true}}
	fast := Verdict{ExactProof: time.Second, Fastest: "clasp", Speedup: Speedup{3, 3, true}}
	failed := Verdict{ExactFailed: "panic"}
	order := []Verdict{failed, closer, only, neither, slow, fast}
	for i := range order {
		for j := range order {
			if got, want := speedLess(order[i], order[j]), i < j; got != want {
				t.Errorf("speedLess(%d, %d) = %v, want %v", i, j, got, want)
			}
		}
	}
}

func TestAPlanRefutesABoundOnlyAtTheFirstLevelWhereItDiffers(t *testing.T) {
	exact := &Run{Objective: model.Objective{2, 1, 0, 900}, Levels: [4]RunLevel{
		{Value: 2, Status: "optimal", LowerBound: 2}, {Value: 1, Status: "optimal", LowerBound: 1},
		{Value: 0, Status: "optimal", LowerBound: 0}, {Value: 900, Status: "bounded", LowerBound: 800},
	}}
	tests := []struct {
		name    string
		other   model.Objective
		refuted bool
	}{
		{"the same plan values refute nothing", model.Objective{2, 1, 0, 900}, false},
		{"a plan worse at level 1 says nothing of level 4's bound", model.Objective{3, 0, 0, 10}, false},
		{"fewer uncovered sources than proved refute level 1", model.Objective{1, 5, 5, 5000}, true},
		{"level 4 between the bound and the incumbent refutes nothing", model.Objective{2, 1, 0, 850}, false},
		{"level 4 below the bound, the levels before equal, refutes it", model.Objective{2, 1, 0, 799}, true},
		{"a better level 2 refutes its proof though level 4 is higher", model.Objective{2, 0, 0, 99999}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			why := Refutes(&Run{Objective: tc.other}, exact)
			if (why != "") != tc.refuted {
				t.Errorf("refutes %q; want refuted %v", why, tc.refuted)
			}
		})
	}
}
