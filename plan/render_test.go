package plan_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/internal/golden"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
	"github.com/poolsolve/poolsolve/solver"
)

func equalJSON(t *testing.T, a, b any) bool {
	t.Helper()
	x, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	y, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(x, y)
}

func TestNoChangesSaysSo(t *testing.T) {
	p, res := steady()
	pl := plan.Build(p, res, plan.Meta{})
	if pl.HasChanges() {
		t.Fatalf("steady plan has changes %q", showAll(pl.Changes))
	}
	var buf bytes.Buffer
	if err := plan.WriteText(&buf, pl, plan.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "No changes. The plan matches what runs now.") || strings.Contains(buf.String(), "Plan: ") {
		t.Errorf("text does not say there are no changes:\n%s", buf.String())
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func TestColourOnlyAddsEscapes(t *testing.T) {
	p, res := cordonedPair()
	pl := plan.Build(p, res, plan.Meta{Fleet: "f"})
	var plain, colour bytes.Buffer
	if err := plan.WriteText(&plain, pl, plan.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := plan.WriteText(&colour, pl, plan.TextOptions{Color: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b") {
		t.Error("plain text carries escapes")
	}
	if !strings.Contains(colour.String(), "\x1b[31m- stop") {
		t.Errorf("colour text does not colour the stop:\n%s", colour.String())
	}
	if got := ansi.ReplaceAllString(colour.String(), ""); got != plain.String() {
		t.Errorf("colour text without escapes differs from plain text:\n%s", golden.Diff(plain.String(), got))
	}
}

func TestVerboseAddsBudgetRules(t *testing.T) {
	p, res := steady()
	var buf bytes.Buffer
	if err := plan.WriteText(&buf, plan.Build(p, res, plan.Meta{}), plan.TextOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "budget unified:0: total 121.7 GiB x maxMemoryUtilization 0.95, headroom 4 GiB") {
		t.Errorf("verbose text lacks the budget rule:\n%s", buf.String())
	}
}

func TestTextOfAMultiDomainNodeListsEachDomain(t *testing.T) {
	p := pooltest.New(pooltest.Node("gpu-01", 256, pooltest.GPU(80)),
		pooltest.Variant("llama", 20, pooltest.DeviceGb(40), pooltest.On("gpu-01")))
	pl := plan.Build(p, result([]model.LaneChoice{lane("llama", model.Always, "gpu-01")}), plan.Meta{})
	var buf bytes.Buffer
	if err := plan.WriteText(&buf, pl, plan.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"  gpu-01\n",
		"    (system:0  plan 244 GiB of 248 GiB admitted; resident 20 GiB; free 224 GiB)",
		"    (device:cuda:0  plan 76 GiB of 80 GiB admitted; resident 40 GiB; free 36 GiB)",
		"llama  always  20 GiB system:0 + 40 GiB device:cuda:0  llama",
		"+ start  llama on gpu-01 (always)",
	} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
}

func TestJSONIsVersionedIndentedAndRounded(t *testing.T) {
	p, res := cordonedPair()
	var buf bytes.Buffer
	if err := plan.WriteJSON(&buf, plan.Build(p, res, plan.Meta{})); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.HasPrefix(out, "{\n  \"schema\": \"poolsolve.plan/v1\",\n") || !strings.HasSuffix(out, "}\n") {
		t.Errorf("document does not start with the schema at two-space indent:\n%.200s", out)
	}
	if strings.Contains(out, "115.60") || !strings.Contains(out, `"admitGb": 115.6,`) {
		t.Errorf("memory is not rounded to 0.1 GiB")
	}
	if !strings.Contains(out, `"firstTokenMs": 900,`) {
		t.Errorf("latency is not in whole milliseconds")
	}
	var doc map[string]any
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("document is not JSON: %v", err)
	}
	for _, key := range []string{"schema", "infeasible", "objective", "levels", "nodes", "routes", "changes", "summary", "explanations"} {
		if _, ok := doc[key]; !ok {
			t.Errorf("document lacks %q", key)
		}
	}
	var back plan.Plan
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatalf("document does not read back into a Plan: %v", err)
	}
	if len(back.Changes) != 6 || back.Changes[0].Kind != plan.Stop {
		t.Errorf("changes read back as %q", showAll(back.Changes))
	}
}

func TestFiguresThatAreNotFiniteDoNotBreakJSON(t *testing.T) {
	p := pooltest.New(pooltest.Node("n1", 100), pooltest.Variant("a", 10, pooltest.On("n1")), pooltest.Alias("x", 1, "a"))
	nan := 0.0
	nan /= nan
	p.Nodes[0].Domains[0].Budget.PlanGb = nan
	p.Aliases[0].Demand = nan
	p.Variants[0].Perf.FirstTokenMs = nan
	res := result([]model.LaneChoice{lane("a", model.Always, "n1")}, route("x", "a", "a"))
	res.Levels[3].Gap = nan
	var buf bytes.Buffer
	if err := plan.WriteJSON(&buf, plan.Build(p, res, plan.Meta{})); err != nil {
		t.Fatalf("WriteJSON: %v", err)
	}
	if !json.Valid(buf.Bytes()) {
		t.Errorf("not JSON:\n%s", buf.String())
	}
}

// The plan must never carry endpoints or keys: the pool below has canary
// secrets in every field the plan has no business printing, and URLs and
// keys in free text that it does print.
func TestPlansNeverPrintSecrets(t *testing.T) {
	p, res := cordonedPair()
	for i := range p.Nodes {
		p.Nodes[i].Source = "http://secret.node/status"
		p.Nodes[i].Images = []string{"https://registry.secret/vllm"}
		p.Nodes[i].ModelRoots = []model.ModelRoot{{Path: "https://secret.mount", FreeGb: 1}}
	}
	for i := range p.Variants {
		v := &p.Variants[i]
		v.MemorySource = "http://secret.host:8100/gateway/status"
		v.Perf.Source = "https://secret.bench/apiKey=sk-canary"
		v.Req.Sources = map[string]string{"memoryGb": "apiKey sk-canary"}
		v.Req.Images = []string{"http://secret.registry/image"}
	}
	for i := range p.Aliases {
		p.Aliases[i].DemandSource = "https://metrics.secret/gateway/metrics?apiKey=sk-canary"
	}
	for i := range p.Links {
		p.Links[i].Source = "http://secret.link"
	}
	res.Explanations[0].Reason += " (backend http://10.0.0.1:8206/v1 with key sk-canary-123)"
	meta := plan.Meta{
		Fleet: "examples/spark-fleet.json", Solver: "exact",
		Notes:     []string{"metrics from https://gateway.secret/metrics were 3 days old", "no demand window"},
		Fallbacks: []string{"status of spark-node-03 unreachable at http://10.100.196.2:8100"},
	}
	pl := plan.Build(p, res, meta)
	var buf bytes.Buffer
	for _, color := range []bool{false, true} {
		if err := plan.WriteText(&buf, pl, plan.TextOptions{Color: color, Verbose: true}); err != nil {
			t.Fatal(err)
		}
	}
	if err := plan.WriteJSON(&buf, pl); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, secret := range []string{"http://", "https://", "apiKey", "sk-", "secret", "10.0.0.1", "10.100.196.2"} {
		if strings.Contains(out, secret) {
			i := strings.Index(out, secret)
			t.Errorf("output carries %q: ...%s...", secret, out[max(0, i-60):min(len(out), i+60)])
		}
	}
	if !strings.Contains(out, "metrics from <url> were 3 days old") {
		t.Errorf("notes lost more than their URL:\n%s", out)
	}
}

// Every key the JSON document can carry is documented in docs/plan-json.md.
func TestEveryJSONFieldIsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "plan-json.md"))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]bool{}
	for _, tc := range goldenCases {
		p, res := tc.make()
		var buf bytes.Buffer
		if err := plan.WriteJSON(&buf, plan.Build(p, res, tc.meta)); err != nil {
			t.Fatal(err)
		}
		var v any
		if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		collectKeys(v, keys)
	}
	// Keys the golden cases leave empty.
	for _, k := range []string{"fallbacks", "federated", "with", "external", "fromNodes", "unavailable", "totalMs"} {
		keys[k] = true
	}
	for k := range keys {
		if !strings.Contains(string(doc), "`"+k+"`") {
			t.Errorf("docs/plan-json.md does not document %q", k)
		}
	}
}

func collectKeys(v any, keys map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			keys[k] = true
			collectKeys(e, keys)
		}
	case []any:
		for _, e := range x {
			collectKeys(e, keys)
		}
	}
}

func TestLostCoverageIsTheHeadlineAndTheSummaryCountsIt(t *testing.T) {
	p, res := cordonedPair()
	pl := plan.Build(p, res, plan.Meta{})
	// Something serves embeddings now; the plan leaves it uncovered.
	pl.Routes[0] = plan.Route{Source: "embeddings", Demand: 22000, Reason: "spark-node-03 is cordoned (--cordon)"}
	pl.Changes = append(pl.Changes, plan.Change{Kind: plan.Reroute, Subject: "embeddings", From: "Qwen/Qwen3-Embedding-4B"})
	var buf bytes.Buffer
	if err := plan.WriteText(&buf, pl, plan.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	// The third line says the search was cut short (the fixture's level 4
	// is only bounded); the headline follows it.
	if !strings.HasPrefix(lines[2], "NOT PROVED: ") ||
		!strings.HasPrefix(lines[4], "Proved unavoidable: ") ||
		lines[5] != "! embeddings loses all coverage: spark-node-03 is cordoned (--cordon)" ||
		lines[6] != "! model:Qwen/Qwen-Image-2.1-Diffusers is not covered: qwen-image-diffusers needs 70 GiB on spark-node-03 unified:0, where qwen3-embedding-4b and qwen38-27b-nvfp4 keep 52 GiB always; plan budget 111.6 GiB" {
		t.Errorf("lost coverage is not the headline, lost first:\n%s", strings.Join(lines[:8], "\n"))
	}
	if !strings.Contains(buf.String(), "\nPlan: 1 alias loses all coverage, 1 source uncovered; 1 to start, ") {
		t.Errorf("the summary does not count lost coverage:\n%s", buf.String())
	}
}

func TestLevelsSayInPlainWordsHowGoodTheyAre(t *testing.T) {
	tests := []struct {
		name  string
		level plan.Level
		want  string
	}{
		{"a proved level", plan.Level{Index: 4, Value: 330, Status: "optimal", LowerBound: 330}, "proved optimal"},
		{"a bounded level bounds its distance from the optimum, not from itself",
			plan.Level{Index: 4, Value: 1045, Status: "bounded", LowerBound: 1000, Gap: 0.043}, "best found, at most 4.5% above optimal"},
		{"a bounded level without a useful bound", plan.Level{Index: 4, Value: 10, Status: "bounded"}, "best found, not proved optimal"},
		{"a greedy level", plan.Level{Index: 4, Value: 9284, Status: "heuristic", Gap: 1}, "heuristic, not proved"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := &plan.Plan{Schema: plan.Schema, Levels: []plan.Level{tc.level}}
			var buf bytes.Buffer
			if err := plan.WriteText(&buf, pl, plan.TextOptions{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), tc.want) {
				t.Errorf("text lacks %q:\n%s", tc.want, buf.String())
			}
			for _, term := range []string{"gap", "lagrangian", "trivial", "100.0%", "lower bound"} {
				if strings.Contains(buf.String(), term) {
					t.Errorf("plain text uses the solver's term %q:\n%s", term, buf.String())
				}
			}
			buf.Reset()
			if err := plan.WriteText(&buf, pl, plan.TextOptions{Verbose: true}); err != nil {
				t.Fatal(err)
			}
			if want := "(lower bound " + strconv.FormatInt(tc.level.LowerBound, 10) + ")"; !strings.Contains(buf.String(), want) {
				t.Errorf("verbose text lacks %q:\n%s", want, buf.String())
			}
		})
	}
}

func TestEveryFigureCarriesItsUnit(t *testing.T) {
	p, res := cordonedPair()
	var buf bytes.Buffer
	if err := plan.WriteText(&buf, plan.Build(p, res, plan.Meta{}), plan.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	// A number followed by something other than a unit, in the sections
	// that print figures (names like qwen3 or spark-node-03 are not figures).
	bare := regexp.MustCompile(`(^|[ (])[0-9]+(\.[0-9]+)?([ ,;)]|$)`)
	units := regexp.MustCompile(`^ ?(GiB|ms|req|uncovered sources|aliases external first|SLO violations|units of 1 s|s|min|h|steps|waves|request-seconds|to start|to stop|to move|residency|re-route|manual|source|alias)`)
	// Step numbers and references to steps and waves are ordinals, not figures.
	ordinal := regexp.MustCompile(`^ +[0-9]+\.|(step|wave) [0-9]+`)
	for _, l := range strings.Split(buf.String(), "\n") {
		l = ordinal.ReplaceAllString(l, "")
		if strings.HasPrefix(l, "  - ") || strings.Contains(l, "% above optimal") && false {
			continue
		}
		for _, m := range bare.FindAllStringIndex(l, -1) {
			rest := l[m[1]-1:]
			if strings.HasPrefix(strings.TrimLeft(l[m[0]:m[1]], " ("), "1 ") && strings.Contains(l, "coverage") {
				continue
			}
			if !units.MatchString(rest) && !strings.HasPrefix(strings.TrimSpace(l), "1 coverage") && !strings.HasPrefix(strings.TrimSpace(l), "2 external") &&
				!strings.HasPrefix(strings.TrimSpace(l), "3 slo") && !strings.HasPrefix(strings.TrimSpace(l), "4 latency") {
				t.Errorf("a figure without a unit in %q at %q", l, l[m[0]:])
			}
		}
	}
}

func TestChangesOnlyLeavesOutEverythingButTheDiff(t *testing.T) {
	p, res := cordonedPair()
	var buf bytes.Buffer
	if err := plan.WriteText(&buf, plan.Build(p, res, plan.Meta{}), plan.TextOptions{ChangesOnly: true}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, gone := range []string{"\nNodes\n", "\nRoutes\n", "\nObjective", "\nExplanations\n", "\nNotes\n"} {
		if strings.Contains(out, gone) {
			t.Errorf("--changes-only prints %q:\n%s", gone, out)
		}
	}
	for _, kept := range []string{"! model:Qwen/Qwen-Image-2.1-Diffusers is not covered", "\nChanges\n", "- stop         qwen-image-diffusers", "\nPlan: 1 source uncovered; 1 to start"} {
		if !strings.Contains(out, kept) {
			t.Errorf("--changes-only lacks %q:\n%s", kept, out)
		}
	}
}

func TestTextWrapsToTheWidthAndKeepsEveryWord(t *testing.T) {
	p, res := cordonedPair()
	pl := plan.Build(p, res, plan.Meta{Fleet: "examples/spark-fleet.json"})
	var whole bytes.Buffer
	if err := plan.WriteText(&whole, pl, plan.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{60, 80, 120} {
		var buf bytes.Buffer
		if err := plan.WriteText(&buf, pl, plan.TextOptions{Width: width, Color: true}); err != nil {
			t.Fatal(err)
		}
		plain := ansi.ReplaceAllString(buf.String(), "")
		for _, l := range strings.Split(plain, "\n") {
			if n := utf8.RuneCountInString(l); n > width && strings.Contains(strings.TrimSpace(l), " ") {
				// Only the table columns before the free text may not
				// fit, and then the line holds no space after them.
				if !strings.HasPrefix(l, "  source") && !strings.Contains(l, " req ") {
					t.Errorf("width %d: a %d-column line with spaces to wrap at:\n%s", width, n, l)
				}
			}
		}
		if got, want := strings.Fields(plain), strings.Fields(whole.String()); !slices.Equal(got, want) {
			t.Errorf("width %d: wrapping changed the words:\n%s", width, plain)
		}
	}
	var buf bytes.Buffer
	if err := plan.WriteText(&buf, pl, plan.TextOptions{Width: 80}); err != nil {
		t.Fatal(err)
	}
	// The reason of a long change continues under its own start.
	if !strings.Contains(buf.String(), "  - stop         qwen-image-diffusers on spark-node-03 (was preferred): does not\n                 fit: ") {
		t.Errorf("a wrapped change does not continue under its text:\n%s", buf.String())
	}
}

func TestAPlanNotProvedSaysSoInItsFirstLinesAndTellsUnavoidableLossFromUnremoved(t *testing.T) {
	tests := []struct {
		name   string
		change func(res *solver.Result)
		meta   plan.Meta
		want   []string // in the first lines, before "Nodes"
		absent []string
	}{
		{"a proved plan has no NOT PROVED line and calls its uncovered source unavoidable",
			func(res *solver.Result) {
				res.Levels[3].Status, res.Levels[3].LowerBound, res.Stop = solver.Optimal, 412, solver.StopProved
			}, plan.Meta{TimeLimit: 5 * time.Second},
			[]string{"\nProved unavoidable: every plan leaves at least 1 source uncovered."}, []string{"NOT PROVED"}},
		{"a plan cut by its time limit names the limit, the proved levels, the gap and what the bound allows",
			func(res *solver.Result) { res.Stop = solver.StopDeadline }, plan.Meta{TimeLimit: time.Second},
			[]string{"NOT PROVED: the 1s time limit cut the search short. Proved optimal: coverage, external-fallback and slo; latency+churn is 412 units of 1 s, proved at least 400 units of 1 s, at most 3.0% above optimal. A longer --time-limit may do better: the bound allows latency+churn down to 400 units of 1 s."},
			nil},
		{"a plan cut by its work limit names the limit in units and points at --work-limit",
			func(res *solver.Result) { res.Stop = solver.StopDeadline }, plan.Meta{TimeLimit: 5 * time.Second, WorkLimit: 250},
			[]string{"NOT PROVED: the work limit of 250 units cut the search short. Proved optimal: coverage, external-fallback and slo; latency+churn is 412 units of 1 s, proved at least 400 units of 1 s, at most 3.0% above optimal. A longer --work-limit may do better: the bound allows latency+churn down to 400 units of 1 s."},
			[]string{"time limit"}},
		{"coverage not proved tells the sources proved unavoidable from those the search did not cover",
			func(res *solver.Result) {
				res.Stop = solver.StopDeadline
				res.Levels[0] = solver.Level{Index: 1, Name: "coverage", Value: 3, Status: solver.Bounded, LowerBound: 1, BoundSource: "lp"}
			}, plan.Meta{TimeLimit: 2 * time.Second},
			[]string{"NOT PROVED: the 2s time limit cut the search short. No level is proved optimal; coverage is 3 uncovered sources, proved at least 1 uncovered sources, at most 200.0% above optimal, and the levels after it are minimised with it held there. A longer --time-limit may do better: the bound allows coverage down to 1 uncovered sources.",
				"\nOf the 3 sources uncovered, every plan leaves at least 1 uncovered (proved unavoidable); the other 2 the search did not cover in its time, and a longer search may."},
			[]string{"Proved unavoidable:"}},
		{"coverage without a bound says no uncovered source is proved unavoidable",
			func(res *solver.Result) {
				res.Stop = solver.StopDeadline
				res.Levels[0] = solver.Level{Index: 1, Name: "coverage", Value: 1, Status: solver.Bounded, LowerBound: 0}
			}, plan.Meta{},
			[]string{"NOT PROVED: the time limit cut the search short.", "\nNot proved unavoidable (1 source uncovered): "}, nil},
		{"the greedy solver's plan points at the exact solver",
			func(res *solver.Result) {
				res.Stop = solver.StopHeuristic
				res.Levels[3].Status = solver.Heuristic
			}, plan.Meta{Solver: "greedy", TimeLimit: 2 * time.Second},
			[]string{"NOT PROVED: this is the greedy solver's plan, with no search for proofs beyond the trivial bounds.", "--solver exact may do better"}, []string{"--time-limit may"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, res := cordonedPair()
			tc.change(res)
			pl := plan.Build(p, res, tc.meta)
			for _, changesOnly := range []bool{false, true} {
				var buf bytes.Buffer
				if err := plan.WriteText(&buf, pl, plan.TextOptions{ChangesOnly: changesOnly}); err != nil {
					t.Fatal(err)
				}
				head, _, _ := strings.Cut(buf.String(), "\nNodes\n")
				head, _, _ = strings.Cut(head, "\nChanges\n")
				for _, w := range tc.want {
					if !strings.Contains(head, w) {
						t.Errorf("changes only %v: the first lines lack %q:\n%s", changesOnly, w, head)
					}
				}
				for _, a := range tc.absent {
					if strings.Contains(buf.String(), a) {
						t.Errorf("changes only %v: the plan says %q:\n%s", changesOnly, a, buf.String())
					}
				}
				if strings.Contains(head, "NOT PROVED") != !pl.Search.AllProved() {
					t.Errorf("NOT PROVED in the text and search.firstOpen %d disagree", pl.Search.FirstOpen)
				}
			}
		})
	}
}
