package plan_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
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
		t.Errorf("colour text without escapes differs from plain text:\n%s", lineDiff(plain.String(), got))
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
		"    (system:0  plan 244 GiB of 248 admitted; resident 20 GiB; free 224 GiB)",
		"    (device:cuda:0  plan 76 GiB of 80 admitted; resident 40 GiB; free 36 GiB)",
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
