package lloom

import (
	"testing"
)

func TestParseBenchmarkSuiteReadsResults(t *testing.T) {
	s, err := LoadBenchmarkSuite("testdata/benchmarks/dgx-spark-qwen36-27b.json")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "id", s.ID, "dgx-spark-qwen36-27b-unsloth-vllm025")
	check(t, "methodology is free-form", s.Methodology["measurementRuns"], 3.0)
	check(t, "license is kept as written", string(s.License), `{ "id": "CC0-1.0" }`)
	if len(s.Results) != 3 {
		t.Fatalf("results = %d, want 3", len(s.Results))
	}
	r := s.Results[0]
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"the recipe version is read from a number", r.RecipeVersion, Version("2")},
		{"and from a string", s.Results[2].RecipeVersion, Version("2")},
		{"the chip is named", r.Machine.Chip, "NVIDIA DGX Spark / GB10"},
		{"one node", deref(r.Machine.NodeCount), 1},
		{"cluster memory", deref(r.Machine.ClusterMemoryGb), 128.0},
		{"concurrency 1", deref(r.Workload.Concurrency), 1},
		{"20.8 tokens per second", deref(r.Metrics.GenerationTokPerSec), 20.8},
		{"1042 ms to the first token", deref(r.Metrics.TimeToFirstTokenMs), 1042.0},
		{"peak memory", deref(r.Metrics.PeakMemoryGb), 61.2},
		{"context window", deref(r.Metrics.ContextWindow), 262144},
		{"other metrics are kept", r.Metrics.Extra["x-decodeP50"], 21.1},
		{"settings are free-form", r.Settings["tensorParallelSize"], 1.0},
		{"ranking eligibility is read", deref(r.Ranking), true},
		{"an unset eligibility stays nil", s.Results[1].Ranking, (*bool)(nil)},
		{"c8 is not eligible", deref(s.Results[2].Ranking), false},
		{"c8 decodes at 55.8", deref(s.Results[2].Metrics.GenerationTokPerSec), 55.8},
		{"notes may be a list", s.Results[2].Notes, []any{"queueing dominates TTFT at c8"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.name, tc.got, tc.want) })
	}
	if err := s.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestBenchmarkSuiteValidateReportsEachProblem(t *testing.T) {
	doc := `{"schemaVersion": 1, "results": [
		{"id": "a", "recipeId": "r", "backendId": "b", "model": "m", "metrics": {"generationTokPerSec": -1}},
		{"id": "a", "workload": {"concurrency": 0}}]}`
	s, err := ParseBenchmarkSuite([]byte(doc), "b.json")
	if err != nil {
		t.Fatal(err)
	}
	wantProblems(t, s.Validate(), []string{
		`b.json: $.results[0].metrics.generationTokPerSec: expected a number >= 0, got -1`,
		`b.json: $.results[1].recipeId: missing`,
		`b.json: $.results[1].backendId: missing`,
		`b.json: $.results[1].model: missing`,
		`b.json: $.results[1].id: duplicate result id "a"`,
		`b.json: $.results[1].workload.concurrency: expected an integer >= 1, got 0`,
	}, true)
	if _, err := ParseBenchmarkSuite([]byte(`{"schemaVersion": 3}`), "b.json"); err == nil {
		t.Error("schemaVersion 3 should be refused")
	}
	_, err = ParseBenchmarkSuite([]byte(`{"results": [{"x-rankingEligible": "yes"}]}`), "b.json")
	if err == nil || err.Error() != `b.json:1:36: $.results[0]["x-rankingEligible"]: expected true or false, got string "yes"` {
		t.Errorf("error = %v", err)
	}
}
