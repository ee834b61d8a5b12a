package answer_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/answer"
	"github.com/poolsolve/poolsolve/benchmarks"
	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/internal/golden"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

// sparkFleet is examples/spark-fleet.json as the planner sees it, with
// the catalog options given, and its plan and the catalog's notes.
func sparkFleet(t testing.TB, opts catalog.Options) (*model.Pool, *solver.Result, []string) {
	t.Helper()
	cat := exampleCatalog(t, "spark-fleet.json", opts)
	return cat.Pool, solveExample(t, cat.Pool), cat.Notes
}

func exampleCatalog(t testing.TB, name string, opts catalog.Options) *catalog.Catalog {
	t.Helper()
	in, err := fleet.LoadBundle("../examples/" + name)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Build(in, opts)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func solveExample(t testing.TB, p *model.Pool) *solver.Result {
	t.Helper()
	res, err := solver.Solve(context.Background(), p, solver.Options{TimeLimit: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestTheSparkFleetsSingleLossesMatchTheGoldenReport(t *testing.T) {
	p, base, notes := sparkFleet(t, catalog.Options{})
	r, err := answer.Resilience(context.Background(), p, base, answer.ResilienceOptions{Fleet: "examples/spark-fleet.json", Notes: notes})
	if err != nil {
		t.Fatal(err)
	}
	var txt, js bytes.Buffer
	if err := answer.WriteResilienceText(&txt, r); err != nil {
		t.Fatal(err)
	}
	if err := answer.WriteResilienceJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "resilience-spark.txt", txt.Bytes())
	golden.Check(t, "resilience-spark.json", js.Bytes())
}

// The picture is the worst scenario's re-plan: every node named, the lost
// one marked DOWN, its stops marked; rsvg-convert draws it.
func TestTheResiliencePictureIsTheWorstScenarioAndRenders(t *testing.T) {
	p, base, _ := sparkFleet(t, catalog.Options{})
	r, err := answer.Resilience(context.Background(), p, base, answer.ResilienceOptions{Fleet: "examples/spark-fleet.json"})
	if err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := answer.WriteResilienceSVG(&svg, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{">spark-node-01<", ">spark-node-02<", ">spark-node-03<", ">DOWN<",
		"spark-node-03 down", ">− stop qwen3-embedding-4b (was always)<"} {
		if !strings.Contains(svg.String(), want) {
			t.Errorf("the picture lacks %q", want)
		}
	}
	if _, err := exec.LookPath("rsvg-convert"); err != nil {
		const msg = "rsvg-convert not installed (apt-get install librsvg2-bin)"
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s; .ci/run installs it, so CI must have it", msg)
		}
		t.Skip(msg)
	}
	dir := t.TempDir()
	in, png := filepath.Join(dir, "worst.svg"), filepath.Join(dir, "worst.png")
	if err := os.WriteFile(in, svg.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("rsvg-convert", "-o", png, in).CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("rsvg-convert: %v: %s", err, out)
	}
	data, err := os.ReadFile(png)
	if err != nil || len(data) < 5000 || !bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("PNG of %d bytes, %v", len(data), err)
	}
}

// Exit code 1 exactly when some scenario loses coverage; the named
// scenarios that keep it give 0. The report is the same bytes twice.
func TestKeepsCoverageDecidesTheExitAndTheReportIsDeterministic(t *testing.T) {
	p, base, _ := sparkFleet(t, catalog.Options{})
	run := func(scs ...string) (*answer.Report, []byte) {
		var list []solver.Scenario
		for _, s := range scs {
			sc, err := answer.ParseScenario(s, p)
			if err != nil {
				t.Fatal(err)
			}
			list = append(list, sc)
		}
		r, err := answer.Resilience(context.Background(), p, base, answer.ResilienceOptions{Scenarios: list})
		if err != nil {
			t.Fatal(err)
		}
		var js bytes.Buffer
		if err := answer.WriteResilienceJSON(&js, r); err != nil {
			t.Fatal(err)
		}
		return r, js.Bytes()
	}
	all, first := run()
	_, again := run()
	if all.Summary.KeepsCoverage || all.Summary.LoseCoverage != 1 || !bytes.Equal(first, again) {
		t.Errorf("N-1: keeps %v, lose %d; same bytes twice %v", all.Summary.KeepsCoverage, all.Summary.LoseCoverage, bytes.Equal(first, again))
	}
	if all.Scenarios[0].Name != "spark-node-03 down" {
		t.Errorf("worst first is %q, want spark-node-03 down", all.Scenarios[0].Name)
	}
	if pair, _ := run("spark-node-01,spark-node-02"); !pair.Summary.KeepsCoverage {
		t.Errorf("losing the pair keeps coverage (the 27B takes over), report says %+v", pair.Summary)
	}
	both, _ := run("spark-node-01,spark-node-03")
	if l := both.Scenarios[0].Loses; both.Summary.KeepsCoverage || !slices.Equal(l.Uncovered, []string{"embeddings"}) ||
		!slices.Equal(l.ToCloud, []string{"enntity-presence", "q38fn"}) {
		t.Errorf("losing 01 and 03 uncovers embeddings and sends the pair's aliases to the cloud; report says %+v", l)
	}
	if got := both.Scenarios[0].Effects(); got != "embeddings uncovered; enntity-presence, q38fn to cloud" {
		t.Errorf("effects %q", got)
	}
}

// sizePool is the benchmark generator's fleet of that size (seed 1).
func sizePool(t testing.TB, size string) *model.Pool {
	t.Helper()
	inst, err := benchmarks.SizeInstance(size, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := inst.Pool()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A scenario that takes away nothing the base plan uses changes nothing:
// churn counts from the base plan, so no swap of equivalent lanes or
// residencies is as good as keeping it.
func TestALinkLossThatTakesNoLaneOfThePlanChangesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("plans a 24-node fleet")
	}
	tests := []struct {
		name string
		size string
	}{
		{"on the bench suite's 24-node fleet, whose lanes have equivalent twins", "24x60"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := sizePool(t, tc.size)
			base := solveExample(t, p)
			var scs []solver.Scenario
			for _, sc := range answer.SingleLosses(p) {
				if len(sc.Links) == 1 && !slices.ContainsFunc(base.Assignment.Lanes, func(l model.LaneChoice) bool {
					return slices.Contains(l.Nodes, sc.Links[0].A) && slices.Contains(l.Nodes, sc.Links[0].B)
				}) {
					scs = append(scs, sc)
				}
			}
			if len(scs) == 0 {
				t.Fatal("no link loss leaves every lane of the plan alone: the fleet tests nothing")
			}
			r, err := answer.Resilience(context.Background(), p, base, answer.ResilienceOptions{Scenarios: scs, Seed: 1, Limit: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, s := range r.Scenarios {
				if s.Status != answer.Proved {
					continue
				}
				checked++
				if len(s.Changes) > 0 || s.Level4Change != 0 {
					t.Errorf("%s takes no lane of the plan, yet changes %d things (level 4 %+d): %v", s.Name, len(s.Changes), s.Level4Change, s.Changes)
				}
			}
			if checked == 0 {
				t.Fatalf("none of %d scenarios was proved: nothing checked", len(scs))
			}
		})
	}
}

// Scenarios that take nothing the plan uses are decided without a
// search: the same answer on every run, however short the limit.
func TestScenariosThatTakeNothingThePlanUsesAreTheSameOnEveryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("plans a 24-node fleet")
	}
	p := sizePool(t, "24x60")
	base := solveExample(t, p)
	var runs [2][]byte
	for i := range runs {
		r, err := answer.Resilience(context.Background(), p, base, answer.ResilienceOptions{Seed: 1, Limit: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		decided := 0
		for _, s := range r.Scenarios {
			switch s.Status {
			case answer.Proved, answer.Bounded:
				decided++
				if len(s.Changes) > 0 || s.Level4Change != 0 || !s.Loses.Empty() {
					t.Errorf("%s is decided without a search, yet changes or loses something: %+v", s.Name, s)
				}
			case answer.Skipped, answer.Undecided:
			default:
				t.Errorf("%s: status %s within a 1 ms limit", s.Name, s.Status)
			}
		}
		if decided == 0 {
			t.Fatal("no scenario was decided without a search")
		}
		var buf bytes.Buffer
		if err := answer.WriteResilienceJSON(&buf, r); err != nil {
			t.Fatal(err)
		}
		runs[i] = buf.Bytes()
	}
	if !bytes.Equal(runs[0], runs[1]) {
		t.Error("two runs within a 1 ms limit differ")
	}
}

// Two runs on the same pool, base plan and options give the same bytes:
// each search ends by its work budget, never where the clock stopped,
// unless the report says the clock cut it (a machine slower or busier
// than the budget assumes). 8x20 is the smallest of the bench suite's
// fleets whose re-plans a 100 ms limit cuts short.
func TestResilienceGivesTheSameReportOnEveryRun(t *testing.T) {
	p := sizePool(t, "8x20")
	base, err := solver.Solve(context.Background(), p, solver.Options{Seed: 1, TimeLimit: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts answer.ResilienceOptions
		// mayCut: the clock may cut a search on a slow machine, and the
		// report then says so.
		mayCut bool
	}{
		{"with a 100 ms limit, short of what the searches need", answer.ResilienceOptions{Seed: 1, Limit: 100 * time.Millisecond}, true},
		{"with a small work budget and a clock that never cuts", answer.ResilienceOptions{Seed: 1, Limit: time.Minute, Work: 60_000}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var first []byte
			var firstR *answer.Report
			for run := range 3 {
				r, err := answer.Resilience(context.Background(), p, base, tt.opts)
				if err != nil {
					t.Fatal(err)
				}
				var js, txt bytes.Buffer
				if err := answer.WriteResilienceJSON(&js, r); err != nil {
					t.Fatal(err)
				}
				if err := answer.WriteResilienceText(&txt, r); err != nil {
					t.Fatal(err)
				}
				out := append(js.Bytes(), txt.Bytes()...)
				if !tt.mayCut && r.Summary.ClockCut > 0 {
					t.Fatalf("run %d: %d scenarios cut by the clock, want none", run, r.Summary.ClockCut)
				}
				if r.Summary.Proved == r.Summary.Scenarios {
					t.Fatalf("run %d: every scenario proved: nothing cut a search short, so the test shows nothing", run)
				}
				if run == 0 {
					first, firstR = out, r
					continue
				}
				if bytes.Equal(out, first) {
					continue
				}
				if !tt.mayCut || firstR.Summary.ClockCut+r.Summary.ClockCut == 0 {
					t.Fatalf("run %d differs from run 0:\n%s", run, firstDiff(first, out))
				}
				// Only a scenario the clock cut in either run may differ.
				if d := unflaggedDiffs(firstR, r); len(d) > 0 {
					t.Fatalf("run %d: scenarios no clock cut differ from run 0: %s", run, strings.Join(d, "; "))
				}
				t.Logf("run %d: the clock cut %d scenarios (run 0: %d), each flagged: this machine is slower than the budget assumes", run, r.Summary.ClockCut, firstR.Summary.ClockCut)
			}
		})
	}
}

// unflaggedDiffs names the scenarios that differ between a and b though
// neither report says the clock cut them.
func unflaggedDiffs(a, b *answer.Report) []string {
	byName := map[string]answer.Scenario{}
	for _, s := range a.Scenarios {
		byName[s.Name] = s
	}
	var out []string
	for _, s := range b.Scenarios {
		o := byName[s.Name]
		if o.ClockCut || s.ClockCut {
			continue
		}
		o.ElapsedMs, s.ElapsedMs = 0, 0
		if !reflect.DeepEqual(o, s) {
			out = append(out, s.Name)
		}
	}
	return out
}

// firstDiff is the line where a and b first differ, from each.
func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return fmt.Sprintf("line %d:\n  %s\n  %s", i+1, la[i], lb[i])
		}
	}
	return fmt.Sprintf("one is longer: %d and %d lines", len(la), len(lb))
}

// A scenario the clock cut, not its work budget, is marked in the table
// and explained under it; a report without one says nothing of the clock.
func TestTheTextSaysWhichScenariosTheClockCut(t *testing.T) {
	p, base, _ := sparkFleet(t, catalog.Options{})
	tests := []struct {
		name      string
		cut       bool
		want, not []string
	}{
		{"a report the clock cut one scenario of", true,
			[]string{"proved *", "* 1 scenario was ended by the clock, not by its work budget", "its answer may differ on another run"}, nil},
		{"a report the clock cut nothing of", false, nil, []string{"*", "clock"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := answer.Resilience(context.Background(), p, base, answer.ResilienceOptions{Fleet: "examples/spark-fleet.json"})
			if err != nil {
				t.Fatal(err)
			}
			if tt.cut {
				i := slices.IndexFunc(r.Scenarios, func(s answer.Scenario) bool { return s.Status == answer.Proved })
				r.Scenarios[i].ClockCut = true
				r.Summary.ClockCut = 1
			}
			var txt bytes.Buffer
			if err := answer.WriteResilienceText(&txt, r); err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(txt.String(), w) {
					t.Errorf("text lacks %q:\n%s", w, txt.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(txt.String(), n) {
					t.Errorf("text has %q:\n%s", n, txt.String())
				}
			}
		})
	}
}
