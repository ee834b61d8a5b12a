package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExportWritesEachFormatToAFile(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		starts string
		stderr []string
	}{
		{"OPB flattened by default", []string{"--format", "opb"}, "* #variable= ", []string{"flattened"}},
		{"LP of level 3 takes levels 1 and 2 from poolsolve's solve", []string{"--format", "lp", "--level", "3"}, `\ poolsolve export, format lp`,
			[]string{"level 1 (coverage) bounded at 0, poolsolve's value, proved optimal", "level 2 (external-fallback) bounded at 0"}},
		{"LP of level 2 with level 1 given", []string{"--format", "lp", "--level", "2", "--fix", "L1=0"}, `\ poolsolve export`, []string{"level 2 (external-fallback)"}},
		{"WCNF of level 4 with the fixes repeated", []string{"--format", "wcnf", "--level", "4", "--fix", "L1=0", "--fix", "2=0,L3=0"}, "c poolsolve export, format wcnf", []string{"wrote"}},
		{"CNF of the hard constraints", []string{"--format", "cnf"}, "c poolsolve export, format cnf", []string{"clauses on the CNF side"}},
		{"JSON of the linear model", []string{"--format", "json", "--level", "1"}, "{\n  \"schema\": \"poolsolve.instance/v1\"", []string{"wrote"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			args := append([]string{"export", "--fleet", spark, "-o", out}, tc.args...)
			code, stdout, stderr := run(t, args...)
			if code != ExitOK {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(string(data), tc.starts) {
				t.Errorf("file starts %q, want %q", string(data[:min(len(data), 60)]), tc.starts)
			}
			if stdout != "" {
				t.Errorf("stdout is not empty with -o: %q", stdout)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

func TestExportIsByteForByteDeterministic(t *testing.T) {
	for _, f := range []string{"opb", "lp", "wcnf", "cnf", "json"} {
		t.Run(f, func(t *testing.T) {
			_, a, _ := run(t, "export", "--fleet", spark, "--format", f, "--fix", "L1=0")
			_, b, _ := run(t, "export", "--fleet", spark, "--format", f, "--fix", "L1=0")
			if a == "" || a != b {
				t.Fatalf("two exports to stdout differ or are empty (%d and %d bytes)", len(a), len(b))
			}
		})
	}
}

func TestExportOfAnInfeasibleInstanceWritesTheFileAndExitsThree(t *testing.T) {
	dir := t.TempDir()
	// The image model and the 27B always on spark-node-03, next to the
	// keepWarm embeddings: 70 + 40 + 12 GiB > 111.6 GiB.
	pins := filepath.Join(dir, "pins.toml")
	if err := os.WriteFile(pins, []byte(`[[pins]]
runtime = "qwen-image-diffusers"
nodes = ["spark-node-03"]
residency = "always"

[[pins]]
runtime = "qwen38-27b-nvfp4"
nodes = ["spark-node-03"]
residency = "always"
`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		why  string
	}{
		{"pins that cannot hold together, flattened OPB", []string{"--policy", pins, "--format", "opb"}, "pins and cordons"},
		{"pins that cannot hold together, LP of level 3", []string{"--policy", pins, "--format", "lp", "--level", "3"}, "pins and cordons"},
		{"a --fix below the optimum", []string{"--format", "cnf", "--fix", "L1=0,L4=10"}, "--fix bounds admit no plan"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_"))
			code, stdout, stderr := run(t, append([]string{"export", "--fleet", spark, "-o", out}, tc.args...)...)
			if code != ExitInfeasible {
				t.Fatalf("exit %d, want %d\n%s%s", code, ExitInfeasible, stdout, stderr)
			}
			if !strings.Contains(stderr, "infeasible") || !strings.Contains(stderr, tc.why) {
				t.Errorf("stderr does not say why it is infeasible (%q):\n%s", tc.why, stderr)
			}
			if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
				t.Errorf("the file was not written: %v", err)
			}
		})
	}
}

func TestExportRejectsBadFlags(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no format", []string{"export", "--fleet", spark}, "format"},
		{"an unknown format", []string{"export", "--fleet", spark, "--format", "mps"}, `--format "mps"`},
		{"a level out of range", []string{"export", "--fleet", spark, "--format", "opb", "--level", "5"}, "--level 5"},
		{"a level and --flatten", []string{"export", "--fleet", spark, "--format", "opb", "--level", "2", "--flatten"}, "exclude each other"},
		{"an objective on CNF", []string{"export", "--fleet", spark, "--format", "cnf", "--level", "1"}, "no objective"},
		{"a malformed --fix", []string{"export", "--fleet", spark, "--format", "opb", "--fix", "coverage=0"}, `--fix "coverage=0"`},
		{"a --fix of level 7", []string{"export", "--fleet", spark, "--format", "opb", "--fix", "L7=0"}, "levels are 1 to 4"},
		{"a level fixed twice", []string{"export", "--fleet", spark, "--format", "opb", "--fix", "L1=0,L1=2"}, "given twice"},
		{"no inputs", []string{"export", "--format", "opb"}, "no inputs"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, tc.args...)
			if code != ExitBadInput {
				t.Fatalf("exit %d, want %d\n%s%s", code, ExitBadInput, stdout, stderr)
			}
			if !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr)
			}
		})
	}
}
