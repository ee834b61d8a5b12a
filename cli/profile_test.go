package cli

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/lloom"
)

// sparkFiles are the three-Spark fleet as separate files, with the
// profiles folder copied to dir so a test can add to it.
func sparkFiles(t *testing.T, dir string) []string {
	t.Helper()
	src := "../examples/spark-fleet/"
	profiles := filepath.Join(dir, "profiles")
	if err := os.MkdirAll(profiles, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(src + "profiles")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		data, err := os.ReadFile(src + "profiles/" + e.Name())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(profiles, e.Name()), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"--config", src + "config.json", "--profiles", profiles, "--policy", src + "pool.toml",
		"--metrics", src + "metrics.json", "--benchmarks", src + "benchmarks/gb10-qwen38-27b-nvfp4-vllm.json",
		"--recipes", src + "recipes/linux-nvidia-gb10-qwen38-27b-nvfp4-vllm.json"}
	for _, n := range []string{"spark-node-01", "spark-node-02", "spark-node-03"} {
		args = append(args, "--status", n+"="+src+"nodes/"+n+".status.json", "--inventory", n+"="+src+"nodes/"+n+".inventory.json")
		if _, err := os.Stat(src + "nodes/" + n + ".profile.json"); err == nil {
			args = append(args, "--machine-profile", n+"="+src+"nodes/"+n+".profile.json")
		}
	}
	return args
}

// planShape is what a profile must reproduce: where lanes run, how each
// source routes, the objective and the changes. A change's reason may
// differ: with the profile, it is the profile's pin.
func planShape(t *testing.T, out string) string {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not a JSON plan: %v\n%s", err, out)
	}
	for _, c := range p["changes"].([]any) {
		delete(c.(map[string]any), "reason")
	}
	shape, _ := json.MarshalIndent(map[string]any{"nodes": p["nodes"], "routes": p["routes"], "changes": p["changes"], "objective": p["objective"]}, "", " ")
	return string(shape)
}

// TestTheEmittedProfileIsTheHandWrittenOneAndReplaysThePlan: for the two
// evidence cases of the three-Spark fleet (all nodes present; the pair
// cordoned) the emitted profile equals the hand-written sparkqwen-pair-rc16
// and standalone in routes and residency, LLooM's loader shape reads it
// back, and planning with it as --profile changes nothing in the plan.
func TestTheEmittedProfileIsTheHandWrittenOneAndReplaysThePlan(t *testing.T) {
	tests := []struct {
		name, profile string
		extra         []string
	}{
		{"all nodes present", "sparkqwen-pair-rc16", nil},
		{"the pair cordoned", "standalone", []string{"--cordon", "spark-node-01", "--cordon", "spark-node-02"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			files := sparkFiles(t, dir)
			hand, err := lloom.LoadProfile(filepath.Join(dir, "profiles", tc.profile+".json"))
			if err != nil {
				t.Fatal(err)
			}
			// Emitted under a new name next to the hand-written ones.
			name := "emitted-" + tc.profile
			out := filepath.Join(dir, "profiles", name+".json")
			args := append(append([]string{"plan", "--quiet", "--emit-profile", name, "-o", out}, files...), tc.extra...)
			code, stdout, stderr := run(t, args...)
			if code != ExitOK && code != ExitChanges || stdout != "" {
				t.Fatalf("plan --emit-profile = %d, stdout %q, stderr %s", code, stdout, stderr)
			}
			emitted, err := lloom.LoadProfile(out)
			if err != nil {
				t.Fatalf("poolsolve's LLooM loader does not read the emitted profile: %v", err)
			}
			if emitted.Name != name || !maps.Equal(emitted.Routes, hand.Routes) || !maps.Equal(emitted.Residency, hand.Residency) {
				t.Errorf("emitted routes %v residency %v\nwant (%s) routes %v residency %v", emitted.Routes, emitted.Residency, tc.profile, hand.Routes, hand.Residency)
			}
			var raw map[string]any
			data, _ := os.ReadFile(out)
			if err := json.Unmarshal(data, &raw); err != nil || !reflect.DeepEqual(slices.Sorted(maps.Keys(raw)), []string{"description", "name", "residency", "routes"}) || !strings.HasSuffix(string(data), "}\n") || !strings.HasPrefix(string(data), "{\n  \"name\": ") {
				t.Errorf("not LLooM's saved shape:\n%s", data)
			}

			_, before, _ := run(t, append(append([]string{"plan", "--quiet", "--format", "json"}, files...), tc.extra...)...)
			_, after, stderr := run(t, append(append([]string{"plan", "--quiet", "--format", "json", "--profile", name}, files...), tc.extra...)...)
			if planShape(t, before) != planShape(t, after) {
				t.Errorf("planning with the emitted profile changes the plan:\n--- without\n%s\n--- with\n%s\n%s", planShape(t, before), planShape(t, after), stderr)
			}
		})
	}
}

func TestEmitProfileSaysWhatAProfileCannotCarry(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := run(t, "plan", "--quiet", "--fleet", spark, "--cordon", "spark-node-01", "--cordon", "spark-node-02",
		"--emit-profile", "standalone", "-o", filepath.Join(dir, "other.json"))
	if code != ExitChanges || out != "" {
		t.Fatalf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{
		"poolsolve: profile standalone: qwen-image-diffusers: the plan stops it; a profile cannot stop a runtime",
		"poolsolve: profile standalone: sparkqwen-pair: stop it on spark-node-01+spark-node-02 by hand; a profile cannot",
		"LLooM finds a fleet profile by its file name: save it as profiles/standalone.json",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	_, _, stderr = run(t, "plan", "--quiet", "--fleet", spark, "--emit-profile", "standalone", "--lloom-version", "0.2.3", "-o", filepath.Join(dir, "standalone.json"))
	for _, want := range []string{
		"LLooM 0.2.3 has no fleet profiles: it will not read this file",
		"carry the plan out by its rollout instead: `poolsolve plan` without --emit-profile lists the steps in order under Rollout",
		"`poolsolve apply PLAN.json` carries them out",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	for _, bad := range [][]string{{"--emit-profile", "../x"}, {"--emit-profile", "ok", "--format", "json"}} {
		if code, _, _ := run(t, append([]string{"plan", "--fleet", spark}, bad...)...); code != ExitBadInput {
			t.Errorf("%v: exit %d, want %d", bad, code, ExitBadInput)
		}
	}
}
