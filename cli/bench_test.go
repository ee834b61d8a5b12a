package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestBenchOnASmallSizePrintsARowPerSolver(t *testing.T) {
	code, out, errOut := run(t, "bench", "--sizes", "3x10", "--solvers", "exact,greedy", "--time-limit", "3s")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"time limit 3s", "3x10", "exact", "greedy", "baseline", "verified", "4508 opt"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"bench: 1 instances, solvers exact,greedy", "[1/1] 3x10 (3x10, 12 placements): exact proved in"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks the progress line %q:\n%s", want, errOut)
		}
	}
}

func TestBenchWritesJSONAndAnSVGChart(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "bench.svg")
	code, out, errOut := run(t, "bench", "--sizes", "3x6", "--solvers", "greedy", "--time-limit", "2s", "--format", "json", "--svg", svg, "-q")
	// --quiet leaves only the line that says which file was written.
	if code != ExitOK || !strings.HasPrefix(errOut, "wrote "+svg+" (") || strings.Count(errOut, "\n") != 1 {
		t.Fatalf("exit %d, stderr %q\n%s", code, errOut, out)
	}
	var doc struct {
		Schema  string `json:"schema"`
		Results []struct {
			Name string `json:"name"`
			Runs []struct {
				Solver   string `json:"solver"`
				Verified bool   `json:"verified"`
			} `json:"runs"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if doc.Schema != "poolsolve.bench/v1" || len(doc.Results) != 1 || doc.Results[0].Name != "3x6" || len(doc.Results[0].Runs) != 2 {
		t.Fatalf("document %+v", doc)
	}
	data, err := os.ReadFile(svg)
	if err != nil || !strings.HasPrefix(string(data), "<svg ") || !strings.Contains(string(data), "<polyline") {
		t.Fatalf("SVG %v:\n%.300s", err, data)
	}
}

func TestBenchWritesAGeneratedFleetThatPlanReads(t *testing.T) {
	file := filepath.Join(t.TempDir(), "fleet.json")
	if code, out, errOut := run(t, "bench", "--sizes", "8x20-tight", "--write-fleet", file); code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := run(t, "plan", "--fleet", file, "--consider-installs", "--time-limit", "2s")
	if code != ExitOK && code != ExitChanges {
		t.Fatalf("plan on a generated fleet: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "latency+churn") {
		t.Errorf("no objective in the plan:\n%s", out)
	}
}

func TestBenchReadsASuiteFolder(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile("../benchmarks/fixtures/3x10.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "small.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "bench", "--suite", dir, "--solvers", "greedy", "--time-limit", "2s", "-q")
	if code != ExitOK || !strings.Contains(out, "small") {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
}

func TestBenchRefusesBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a size out of range", []string{"--sizes", "2x10"}, "outside 3..1024"},
		{"a size that is no size", []string{"--sizes", "big"}, "expected NODESxVARIANTS"},
		{"an unknown solver", []string{"--sizes", "3x10", "--solvers", "exact,gurobi"}, `unknown solver "gurobi"`},
		{"both a suite and sizes", []string{"--suite", ".", "--sizes", "3x10"}, "not both"},
		{"a suite folder without bundles", []string{"--suite", t.TempDir()}, "no suite.json and no *.json bundle"},
		{"a time limit of zero", []string{"--sizes", "3x10", "--time-limit", "0s"}, "positive duration"},
		{"an unknown format", []string{"--sizes", "3x10", "--format", "csv"}, `--format "csv": expected text, json or markdown`},
		{"writing a fleet for two sizes", []string{"--sizes", "3x10,3x12", "--write-fleet", "x.json"}, "exactly one size"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, append([]string{"bench"}, tc.args...)...)
			if code != ExitBadInput || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, want %d with %q; stderr:\n%s\nstdout:\n%s", code, ExitBadInput, tc.want, errOut, out)
			}
		})
	}
}

func TestBenchWritesMarkdownAndRefusesBadTraceFlags(t *testing.T) {
	code, out, errOut := run(t, "bench", "--sizes", "3x10", "--solvers", "exact,greedy", "--time-limit", "2s", "--format", "markdown", "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	for _, want := range []string{"| instance | size | solver | L1 |", "| --- |", "| 3x10 | 3x10 | exact | 0 opt | 0 opt | 0 opt | 4508 opt |", "| instance | exact proof | fastest external |"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an instance the run does not have", []string{"--sizes", "3x10", "--trace-svg", "t.svg", "--trace-of", "8x20"}, `no instance "8x20" in this run (3x10)`},
		{"instances to trace without a file", []string{"--sizes", "3x10", "--trace-of", "3x10"}, "give --trace-svg FILE"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, append([]string{"bench"}, tc.args...)...)
			if code != ExitBadInput || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, want %d with %q; stderr:\n%s\nstdout:\n%s", code, ExitBadInput, tc.want, errOut, out)
			}
		})
	}
}

func TestBenchRunsClaspNextToTheOthers(t *testing.T) {
	if _, err := exec.LookPath("clasp"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("clasp not installed; .ci/run installs it, so CI must have it")
		}
		t.Skip("clasp not installed (apt-get install clasp)")
	}
	code, out, errOut := run(t, "bench", "--sizes", "3x10", "--solvers", "exact,clasp", "--time-limit", "5s", "-q")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	if !regexp.MustCompile(`(?m)^ +.*clasp +0 opt +0 opt +0 opt +4508 opt .* verified$`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^3x10 +[0-9.]+m?s +clasp [0-9.]+m?s .* yes \(clasp\)$`).MatchString(out) {
		t.Fatalf("no proved clasp row, or no verdict against clasp:\n%s", out)
	}
}
