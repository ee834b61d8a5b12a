package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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
	if code != ExitOK || errOut != "" {
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
		{"a size out of range", []string{"--sizes", "2x10"}, "outside 3..512"},
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

// A bench script is a command and what must hold after it, one a line:
// `exec poolsolve ARGS` (words split on spaces, 'quoted' words kept
// whole), `code N`, `stdout RE` and `stderr RE` (a multi-line regexp
// that must match), `grep FILE RE` (the file must exist and match), and
// any of them but exec after `! ` to say it must not hold. `#` starts a
// comment. Files are relative to a fresh folder the command runs in.
type benchScript struct {
	name  string
	args  []string
	lines []string
}

func readBenchScripts(t *testing.T) []benchScript {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "bench", "*.script"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no bench scripts in testdata/bench: %v", err)
	}
	var out []benchScript
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		s := benchScript{name: filepath.Base(f)}
		for _, l := range strings.Split(string(data), "\n") {
			l = strings.TrimSpace(l)
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			if cmd, ok := strings.CutPrefix(l, "exec poolsolve "); ok {
				s.args = scriptWords(cmd)
				continue
			}
			s.lines = append(s.lines, l)
		}
		if s.args == nil {
			t.Fatalf("%s: no exec line", f)
		}
		out = append(out, s)
	}
	return out
}

// scriptWords splits a command line on spaces, keeping 'quoted' words
// whole.
func scriptWords(s string) []string {
	var words []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				words = append(words, cur.String())
				cur.Reset()
				any = false
			}
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		words = append(words, cur.String())
	}
	return words
}

func TestBenchScriptsRunAsWritten(t *testing.T) {
	// Help examples name examples/ as from the repository's root.
	examples, err := filepath.Abs(filepath.Join("..", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range readBenchScripts(t) {
		t.Run(s.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Symlink(examples, filepath.Join(dir, "examples")); err != nil {
				t.Fatal(err)
			}
			t.Chdir(dir)
			code, out, errOut := run(t, s.args...)
			for _, l := range s.lines {
				neg := strings.HasPrefix(l, "! ")
				l = strings.TrimPrefix(l, "! ")
				verb, rest, _ := strings.Cut(l, " ")
				words := scriptWords(rest)
				var ok bool
				switch {
				case verb == "code" && len(words) == 1:
					ok = words[0] == strconv.Itoa(code)
				case (verb == "stdout" || verb == "stderr") && len(words) == 1:
					text := out
					if verb == "stderr" {
						text = errOut
					}
					ok = regexp.MustCompile("(?m)" + words[0]).MatchString(text)
				case verb == "grep" && len(words) == 2:
					data, err := os.ReadFile(words[0])
					ok = err == nil && regexp.MustCompile("(?m)"+words[1]).Match(data)
				default:
					t.Fatalf("%s: cannot read the line %q", s.name, l)
				}
				if ok == neg {
					t.Errorf("%s: %q does not hold (exit %d)\nstdout:\n%s\nstderr:\n%s", s.name, l, code, out, errOut)
				}
			}
		})
	}
}

func TestEveryTraceExampleInTheHelpIsAScript(t *testing.T) {
	scripts := map[string]bool{}
	for _, s := range readBenchScripts(t) {
		scripts[strings.Join(s.args, " ")] = true
	}
	_, examples, ok := strings.Cut(benchHelp, "Examples:")
	if !ok {
		t.Fatal("the help has no examples")
	}
	found := false
	for _, l := range strings.Split(examples, "\n") {
		cmd, ok := strings.CutPrefix(strings.TrimSpace(l), "poolsolve ")
		if !ok || !strings.Contains(cmd, "--trace-svg") {
			continue
		}
		found = true
		if !scripts[cmd] {
			t.Errorf("the help example %q has no script in testdata/bench that runs it as written", l)
		}
	}
	if !found {
		t.Error("the help shows no --trace-svg example")
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
