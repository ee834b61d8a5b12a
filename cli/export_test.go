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
		{"a memory limit of nothing", []string{"export", "--fleet", spark, "--format", "opb", "--memory-limit", "0"}, "--memory-limit 0"},
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

// fineSpark is the spark fleet with three lanes' memory figures given to
// the decimals named, written next to the test.
func fineSpark(t *testing.T, figures ...string) string {
	t.Helper()
	data, err := os.ReadFile(spark)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for i, was := range []string{`"memoryGb": 40,`, `"memoryGb": 12,`, `"memoryGb": 70,`}[:len(figures)] {
		s = strings.Replace(s, was, `"memoryGb": `+figures[i]+`,`, 1)
	}
	file := filepath.Join(t.TempDir(), "fleet.json")
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// Memory is counted in the fleet's own decimals, so the export is exact;
// where that makes a number too large for a reader, the header and
// stderr name the reader and the row. Figures too fine to count exactly
// are rounded and said to be, and an infeasible export then blames the
// rounding, never the --fix bounds alone.
func TestExportNamesTheReadersItsFileIsPast(t *testing.T) {
	seven := fineSpark(t, "40.1234567", "12.7654321", "70.0000001")
	finer := fineSpark(t, "40.123456789012345", "12.765432109876543")
	tests := []struct {
		name     string
		args     []string
		code     int
		stderr   []string
		header   string
		unwanted string
	}{
		{"whole GiB: no reader is past its limit", []string{"--fleet", spark, "--format", "opb", "--level", "4"}, ExitOK,
			nil, "* memory in units of 1/1 GiB\n", "warning"},
		{"seven decimals: OPB in 10^-7 GiB is past clasp's 32 bits", []string{"--fleet", seven, "--format", "opb", "--level", "4"}, ExitOK,
			[]string{"poolsolve: warning: clasp 3.3.5 cannot read this file: row memory-"}, "* WARNING: clasp 3.3.5 cannot read this file: row memory-", "rounded"},
		{"seven decimals: LP in 10^-7 GiB is past the MIP solvers' tolerance", []string{"--fleet", seven, "--format", "lp", "--level", "4"}, ExitOK,
			[]string{"poolsolve: warning: CBC and HiGHS may misread this file: row memory-"}, "\\ WARNING: CBC and HiGHS may misread", "rounded"},
		{"fifteen decimals are rounded, and the export says so", []string{"--fleet", finer, "--format", "lp", "--level", "4"}, ExitOK,
			[]string{"warning: memory is counted in units of 1/1000000000000 GiB, draws rounded up"}, "draws rounded up and budgets down", ""},
		{"an infeasible export of rounded memory blames the rounding too", []string{"--fleet", finer, "--format", "cnf", "--fix", "L1=0,L4=0"}, ExitInfeasible,
			[]string{"the rounding may be to blame"}, "c memory in units", "the --fix bounds admit no plan"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			code, stdout, stderr := run(t, append([]string{"export", "-o", out}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if tc.unwanted != "" && strings.Contains(stderr, tc.unwanted) {
				t.Errorf("stderr says %q:\n%s", tc.unwanted, stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data[:min(len(data), 3000)]), tc.header) {
				t.Errorf("the header lacks %q:\n%s", tc.header, data[:min(len(data), 600)])
			}
		})
	}
}

// An instance too large for the memory it may take ends with an error
// that says so, and nothing is written: the kernel would otherwise kill
// the command without a word.
func TestAnExportPastItsMemoryLimitEndsWithAnErrorAndWritesNothing(t *testing.T) {
	dir := t.TempDir()
	fleetFile := filepath.Join(dir, "fleet.json")
	if code, stdout, stderr := run(t, "bench", "--sizes", "64x250", "--write-fleet", fleetFile); code != ExitOK {
		t.Fatalf("bench --write-fleet: exit %d\n%s%s", code, stdout, stderr)
	}
	out := filepath.Join(dir, "out.opb")
	code, stdout, stderr := run(t, "export", "--fleet", fleetFile, "--consider-installs", "--format", "opb", "--memory-limit", "1", "-o", out)
	if code != ExitFailure {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitFailure, stdout, stderr)
	}
	if !strings.Contains(stderr, "passed the memory limit of 1 MiB") || !strings.Contains(stderr, "placements") {
		t.Errorf("stderr does not say the limit was passed:\n%s", stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("%s was written (%v)", out, err)
	}
	// The same export within its limit is written.
	if code, stdout, stderr := run(t, "export", "--fleet", fleetFile, "--consider-installs", "--format", "opb", "--memory-limit", "4096", "-o", out); code != ExitOK {
		t.Fatalf("within the limit: exit %d\n%s%s", code, stdout, stderr)
	}
}
