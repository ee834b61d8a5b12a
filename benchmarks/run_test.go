package benchmarks

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/export"
	"github.com/poolsolve/poolsolve/model"
)

func TestTheDefaultSuiteLoadsEveryInstance(t *testing.T) {
	insts, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, in := range insts {
		names = append(names, in.Name)
		if len(in.Bundle) == 0 || in.Source == "" {
			t.Errorf("%s: empty bundle or source", in.Name)
		}
	}
	want := "spark-fleet 3x10 8x20 8x30 16x60 24x60 24x60-tight 64x250 256x1000 256x1000-tight"
	if got := strings.Join(names, " "); got != want {
		t.Fatalf("suite = %s, want %s", got, want)
	}
	// The committed bundles are small; large ones come from their seed.
	for _, e := range committedSuite(t).Instances {
		if e.File == "" {
			continue
		}
		st, err := os.Stat(filepath.Join("fixtures", e.File))
		if err != nil || st.Size() > 256<<10 {
			t.Errorf("fixture %s: %v, %d bytes (keep committed fixtures under 256 KiB)", e.File, err, st.Size())
		}
	}
}

func TestLoadSuiteReadsAManifestOrEveryBundleInAFolder(t *testing.T) {
	dir := t.TempDir()
	data, err := fixtures.ReadFile("fixtures/3x10.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	insts, err := LoadSuite(dir)
	if err != nil || len(insts) != 2 || insts[0].Name != "a" || insts[1].Name != "b" {
		t.Fatalf("LoadSuite(folder of bundles) = %v, %v; want a and b", insts, err)
	}
	manifest := `{"schema":"poolsolve.bench-suite/v1","instances":[{"name":"gen","spec":{"nodes":3,"variants":5,"mix":"spark","topology":"pairs","skew":1.1,"seed":2}},{"name":"file","file":"a.json"}]}`
	if err := os.WriteFile(filepath.Join(dir, "suite.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	insts, err = LoadSuite(dir)
	if err != nil || len(insts) != 2 || insts[0].Source != "generated" || insts[1].Name != "file" {
		t.Fatalf("LoadSuite(manifest) = %+v, %v", insts, err)
	}
	for _, bad := range []string{
		`{"schema":"other/v1","instances":[]}`,
		`{"schema":"poolsolve.bench-suite/v1","instances":[{"name":"x"}]}`,
		`{"schema":"poolsolve.bench-suite/v1","instances":[{"name":"x","file":"missing.json"}]}`,
		`{"schema":"poolsolve.bench-suite/v1","instances":[{"name":"x","spec":{"nodes":1,"variants":5}}]}`,
		`{"schema":"poolsolve.bench-suite/v1","instances":[{"name":"x","fiel":"a.json"}]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, "suite.json"), []byte(bad), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadSuite(dir); err == nil {
			t.Errorf("LoadSuite accepted %s", bad)
		}
	}
	if _, err := LoadSuite(t.TempDir()); err == nil {
		t.Error("LoadSuite of an empty folder should fail")
	}
}

// neverWorseInstances are the committed suite's small instances plus
// small generated fleets of every mix, several seeds each.
func neverWorseInstances(t *testing.T) []Instance {
	all, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	var out []Instance
	for _, in := range all {
		if in.Source == "generated" || (testing.Short() && in.Name == "24x60-tight") {
			continue
		}
		out = append(out, in)
	}
	for _, mix := range Mixes {
		for seed := uint64(1); seed <= 3; seed++ {
			sp := Spec{Nodes: 4 + int(seed), Variants: 8 + 3*int(seed), Mix: mix, Topology: TopoPairs, Kinds: DefaultKinds, Tight: seed%2 == 1, Skew: 1.1, Seed: seed}
			data, err := Generate(sp)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, Instance{Name: sp.Name() + "-seed" + string(rune('0'+seed)), Source: "generated", Spec: &sp, Bundle: data})
		}
	}
	return out
}

func TestTheExactSolverIsNeverWorseThanGreedy(t *testing.T) {
	insts := neverWorseInstances(t)
	res, err := Measure(context.Background(), insts, Options{TimeLimit: 3 * time.Second, Seed: 1, Solvers: []string{SolverExact, SolverGreedy}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		t.Run(r.Instance.Name, func(t *testing.T) {
			if r.Error != "" {
				t.Fatal(r.Error)
			}
			exact, greedy := r.Run(SolverExact), r.Run(SolverGreedy)
			for _, run := range []*Run{exact, greedy} {
				if !run.OK() || !run.Verified {
					t.Fatalf("%s: error %q, verified %v, %s", run.Solver, run.Error, run.Verified, run.Note)
				}
			}
			if ok, why := NotWorse(exact, greedy); !ok {
				t.Fatalf("exact %v is worse than greedy %v at %s", exact.Objective, greedy.Objective, why)
			}
			for i := range exact.Objective {
				if exact.Objective[i] > greedy.Objective[i] {
					t.Logf("level %d (%s) is worse than greedy's (%d > %d), paid for by a better earlier level", i+1, model.LevelNames[i], exact.Objective[i], greedy.Objective[i])
				}
			}
		})
	}
}

func TestNotWorseIsLexicographic(t *testing.T) {
	run := func(o ...int64) *Run { return &Run{Objective: model.Objective{o[0], o[1], o[2], o[3]}} }
	tests := []struct {
		name  string
		r, g  *Run
		ok    bool
		level string
	}{
		{"equal is not worse", run(0, 0, 0, 5), run(0, 0, 0, 5), true, ""},
		{"better everywhere is not worse", run(0, 0, 0, 4), run(1, 0, 0, 5), true, ""},
		{"worse latency bought with better coverage is not worse", run(0, 0, 0, 9), run(1, 0, 0, 5), true, ""},
		{"worse latency alone is worse", run(0, 0, 0, 6), run(0, 0, 0, 5), false, "level 4"},
		{"worse coverage is worse whatever follows", run(1, 0, 0, 0), run(0, 3, 3, 9), false, "level 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := NotWorse(tc.r, tc.g)
			if ok != tc.ok || !strings.Contains(why, tc.level) {
				t.Fatalf("NotWorse = %v, %q; want %v, %q", ok, why, tc.ok, tc.level)
			}
		})
	}
}

func TestAnExternalSolverThatIsNotInstalledIsSkipped(t *testing.T) {
	insts, err := SizeInstances([]Size{{Nodes: 3, Variants: 6}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Measure(context.Background(), insts, Options{
		TimeLimit: time.Second, Solvers: []string{SolverGreedy, SolverCBC, SolverHiGHS},
		Externals: map[string]External{SolverCBC: CBC{Path: "/nonexistent/cbc"}, SolverHiGHS: HiGHS{Dir: t.TempDir()}},
	})
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	if len(r.Runs) != 4 || r.Runs[0].Solver != SolverExact {
		t.Fatalf("runs %+v; want exact first, then greedy, cbc, highs", r.Runs)
	}
	for _, s := range []string{SolverCBC, SolverHiGHS} {
		if run := r.Run(s); run == nil || run.Skipped == "" {
			t.Errorf("%s: %+v; want skipped", s, run)
		}
	}
	if _, err := Measure(context.Background(), insts, Options{Solvers: []string{"gurobi"}}); err == nil {
		t.Error("an unknown solver should be refused")
	}
}

// TestExternalSolversAgreeWithTheExactSolver runs CBC and HiGHS when they
// are installed (HiGHS from benchmarks/.tools): their lexicographic
// optimum must equal the exact solver's proved one.
func TestExternalSolversAgreeWithTheExactSolver(t *testing.T) {
	if testing.Short() {
		t.Skip("runs external solvers for seconds")
	}
	exts := map[string]External{SolverCBC: CBC{}, SolverHiGHS: HiGHS{Dir: ".tools"}}
	var solvers []string
	for _, s := range []string{SolverCBC, SolverHiGHS} {
		if err := exts[s].Ready(); err != nil {
			t.Logf("%s: %v", s, err)
			continue
		}
		solvers = append(solvers, s)
	}
	if len(solvers) == 0 {
		t.Skip("neither cbc nor highs is installed")
	}
	insts, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	res, err := Measure(context.Background(), insts[1:3], Options{TimeLimit: 20 * time.Second, Seed: 1, Solvers: solvers, Externals: exts})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		exact := r.Run(SolverExact)
		for _, s := range solvers {
			run := r.Run(s)
			if !run.OK() || !run.Verified {
				t.Errorf("%s %s: %+v", r.Instance.Name, s, run)
				continue
			}
			if exact.Proved && run.Proved && run.Objective != exact.Objective {
				t.Errorf("%s: %s proves %v, exact proves %v", r.Instance.Name, s, run.Objective, exact.Objective)
			}
		}
	}
}

func sampleReport() *Report {
	lv := func(v int64, st string, lb int64) RunLevel { return RunLevel{Value: v, Status: st, LowerBound: lb} }
	return &Report{
		Machine:   Machine{CPUs: 2, CPU: "Test CPU", OS: "linux/amd64", GoVersion: "go1.26", LoadBefore: "1.00 1.00 1.00"},
		TimeLimit: 10 * time.Second, Seed: 1,
		Results: []Result{{
			Instance: Instance{Name: "24x60-tight", Source: "generated"}, Nodes: 24, Variants: 60, Placements: 235,
			Runs: []Run{
				{Solver: SolverExact, Objective: model.Objective{3, 1, 0, 72000}, Verified: true, Vars: 900, Clauses: 9000,
					Levels:      [4]RunLevel{lv(3, "optimal", 3), lv(1, "optimal", 1), lv(0, "optimal", 0), {Value: 72000, Status: "bounded", LowerBound: 36000, Bound: "lp"}},
					TimeToFirst: 20 * time.Millisecond, Time: 10 * time.Second},
				{Solver: SolverGreedy, Objective: model.Objective{3, 1, 0, 74000}, Verified: true,
					Levels: [4]RunLevel{lv(3, "heuristic", 0), lv(1, "heuristic", 0), lv(0, "optimal", 0), lv(74000, "heuristic", 0)}, Time: 20 * time.Millisecond},
				{Solver: SolverCBC, Objective: model.Objective{3, 1, 0, 71912}, Verified: true, Proved: true,
					Levels:      [4]RunLevel{lv(3, "optimal", 0), lv(1, "optimal", 0), lv(0, "optimal", 0), lv(71912, "optimal", 0)},
					TimeToFirst: 200 * time.Millisecond, TimeToProof: 3 * time.Second, Time: 3 * time.Second},
				{Solver: SolverHiGHS, Skipped: "not installed"},
			},
		}},
	}
}

func TestTheTextReportShowsLevelsTimesAndComparisons(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteText(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"72000 50.0%", // bounded level 4 with its gap
		"3 opt",
		"71912 opt",
		"= = = -2000", // exact against greedy
		"<0.3x",       // exact unproved, CBC proved in 3 s of exact's 10 s
		"skipped: not installed",
		"load 1.00 1.00 1.00",
		"900 vars 9000 clauses",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
	table, verdicts, _ := strings.Cut(out, "per instance:")
	if strings.Contains(table, "WORSE") || !strings.Contains(verdicts, "never worse than greedy") {
		t.Errorf("nothing here is worse than greedy:\n%s", out)
	}
}

func TestTheJSONReportHasMillisecondsAndComparisons(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Schema  string
		Results []struct {
			Name string
			Runs []struct {
				Solver        string
				TimeMs        float64
				TimeToProofMs float64
				VsGreedy      *[4]int64
				ExactFaster   *struct {
					Lower float64
					Upper *float64
				}
			}
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	if doc.Schema != "poolsolve.bench/v1" || len(doc.Results) != 1 || len(doc.Results[0].Runs) != 4 {
		t.Fatalf("document %+v", doc)
	}
	exact, cbc := doc.Results[0].Runs[0], doc.Results[0].Runs[2]
	if exact.TimeMs != 10000 || exact.VsGreedy == nil || exact.VsGreedy[3] != -2000 {
		t.Errorf("exact run %+v", exact)
	}
	if cbc.TimeToProofMs != 3000 || cbc.ExactFaster == nil || cbc.ExactFaster.Upper == nil || *cbc.ExactFaster.Upper != 0.3 {
		t.Errorf("cbc run %+v", cbc)
	}
}

func TestTheSVGChartDrawsEverySolverThatRan(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteSVG(&buf, sampleReport()); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	if !strings.HasPrefix(svg, "<svg ") || !strings.HasSuffix(svg, "</svg>\n") {
		t.Fatalf("not an SVG document:\n%s", svg)
	}
	for _, s := range []string{SolverExact, SolverGreedy, SolverCBC} {
		if !strings.Contains(svg, solverColors[s]) || !strings.Contains(svg, ">"+s+"</text>") {
			t.Errorf("the chart has no %s series", s)
		}
	}
	if strings.Contains(svg, `stroke="`+solverColors[SolverHiGHS]+`" stroke-width="1.5"`) || !strings.Contains(svg, ">1 skipped<") {
		t.Error("a skipped solver is drawn, or not listed as skipped")
	}
	var again bytes.Buffer
	_ = WriteSVG(&again, sampleReport())
	if again.String() != svg {
		t.Error("the same report draws two different charts")
	}
	var empty bytes.Buffer
	if err := WriteSVG(&empty, &Report{}); err != nil || !strings.Contains(empty.String(), "no results") {
		t.Errorf("an empty report: %v\n%s", err, empty.String())
	}
}

func TestCompactLPKeepsOnlyShortNames(t *testing.T) {
	insts, err := SizeInstances([]Size{{Nodes: 3, Variants: 6}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := insts[0].Pool()
	if err != nil {
		t.Fatal(err)
	}
	in, lp := exportLP(t, p)
	short := string(compactLP(lp, in))
	for _, line := range strings.Split(short, "\n") {
		for _, tok := range strings.Fields(line) {
			if len(tok) > 12 {
				t.Fatalf("token %q survives compactLP", tok)
			}
		}
	}
	for _, want := range []string{"Minimize", "Subject To", "Binary", "End", " r0:"} {
		if !strings.Contains(short, want) {
			t.Errorf("compact LP lacks %q", want)
		}
	}
}

func exportLP(t *testing.T, p *model.Pool) (*export.Instance, []byte) {
	t.Helper()
	in, err := export.New(p, export.Options{Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := in.WriteLP(&buf); err != nil {
		t.Fatal(err)
	}
	return in, buf.Bytes()
}
