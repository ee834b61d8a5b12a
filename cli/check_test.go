package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planFile writes the spark fleet's plan (or another fleet's) as JSON.
func planFile(t *testing.T, dir, fleet string, extra ...string) string {
	t.Helper()
	out := filepath.Join(dir, "plan-"+filepath.Base(fleet))
	code, stdout, stderr := run(t, append([]string{"plan", "--fleet", fleet, "--format", "json", "-q", "-o", out}, extra...)...)
	if code != ExitOK && code != ExitChanges {
		t.Fatalf("plan: exit %d\n%s%s", code, stdout, stderr)
	}
	return out
}

func TestCheckJudgesPlans(t *testing.T) {
	dir := t.TempDir()
	good := planFile(t, dir, spark)
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// The plan claims another objective than it scores.
	lying := write("lying.json", strings.Replace(string(data), "\"objective\": [\n    0,", "\"objective\": [\n    3,", 1))
	// By hand: the image model pinned always next to everything else.
	overfull := write("overfull.json", `{"schema": "poolsolve.plan/v1",
  "nodes": [
    {"id": "spark-node-03", "lanes": [
      {"variant": "qwen-image-diffusers", "residency": "always"},
      {"variant": "qwen38-27b-nvfp4", "residency": "always"},
      {"variant": "qwen3-embedding-4b", "residency": "always"},
      {"variant": "spark03-stt", "residency": "always"},
      {"variant": "spark03-tts-custom", "residency": "always"}]}],
  "routes": [{"source": "q38fn", "model": "qwen38-27b-nvfp4", "variant": "qwen38-27b-nvfp4"}]}`)
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"poolsolve's own plan is valid", []string{"--plan", good}, ExitOK, []string{"valid, every hard constraint holds", "objective [0 0 0 9284]", "states the same objective"}},
		{"the same plan with a node cordoned breaks eligibility", []string{"--plan", good, "--cordon", "spark-node-02"}, exitInvalid,
			[]string{"INVALID", "eligibility", "spark-node-02 is cordoned"}},
		{"a hand-written plan that overfills a node", []string{"--plan", overfull}, exitInvalid, []string{"INVALID", "memory", "spark-node-03 unified:0"}},
		{"a plan whose stated objective is wrong", []string{"--plan", lying}, exitInvalid, []string{"INVALID, its stated objective is wrong", "states objective [3 0 0 9284], but it scores [0 0 0 9284]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, append([]string{"check", "--fleet", spark}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("stdout lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
	code, stdout, _ := run(t, "check", "--fleet", spark, "--plan", good, "--format", "json")
	var res struct {
		Valid      bool    `json:"valid"`
		Objective  [4]int  `json:"objective"`
		Violations []any   `json:"violations"`
		Stated     *[4]int `json:"stated"`
	}
	if err := json.Unmarshal([]byte(stdout), &res); err != nil || code != ExitOK || !res.Valid || res.Objective != [4]int{0, 0, 0, 9284} || res.Violations == nil || res.Stated == nil {
		t.Errorf("check --format json: exit %d, %+v, %v\n%s", code, res, err, stdout)
	}
}

func TestCheckRejectsBadPlanFilesWithExitTwo(t *testing.T) {
	dir := t.TempDir()
	good := planFile(t, dir, spark)
	other := planFile(t, dir, "../examples/hetero-fleet.json")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	truncated := write("truncated.json", string(data[:len(data)/2]))
	schema := write("schema.json", strings.Replace(string(data), "poolsolve.plan/v1", "poolsolve.plan/v9", 1))
	unknown := write("unknown.json", `{"schema": "poolsolve.plan/v1", "nodes": [{"id": "spark-node-03", "lanes": [{"variant": "llama-70b", "residency": "auto"}]}]}`)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"a truncated plan names the file and where it ends", []string{"--plan", truncated}, []string{"truncated.json:", "$.", "truncated"}},
		{"a plan of another schema", []string{"--plan", schema}, []string{"schema.json", "$.schema", "poolsolve.plan/v9"}},
		{"a plan for another fleet", []string{"--plan", other}, []string{"plan-hetero-fleet.json", "$.nodes[", "is the plan for another fleet?"}},
		{"a plan naming an unknown lane", []string{"--plan", unknown}, []string{"unknown.json:1:", "$.nodes[0].lanes[0].variant", `no variant "llama-70b"`}},
		{"a plan file that does not exist", []string{"--plan", filepath.Join(dir, "nope.json")}, []string{"nope.json"}},
		{"no --plan", nil, []string{"plan"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, append([]string{"check", "--fleet", spark}, tc.args...)...)
			if code != ExitBadInput {
				t.Fatalf("exit %d, want %d\n%s%s", code, ExitBadInput, stdout, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
}

func TestExportAndCheckHelpDocumentExitCodes(t *testing.T) {
	wants := map[string][]string{
		"export": {"Exit codes:", "3  the file was written, but the instance is infeasible", "--fix", "--flatten", "Examples:", "docs/export-formats.md"},
		"check":  {"Exit codes:", "0  the plan is valid", "1  the plan is invalid", "2  bad flags or input files", "Examples:"},
	}
	for cmd, ws := range wants {
		code, out, _ := run(t, cmd, "--help")
		if code != ExitOK {
			t.Fatalf("%s --help: exit %d", cmd, code)
		}
		for _, w := range ws {
			if !strings.Contains(out, w) {
				t.Errorf("%s --help lacks %q", cmd, w)
			}
		}
	}
}
