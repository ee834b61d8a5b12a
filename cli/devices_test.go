package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const gpuBox = "../catalog/testdata/gpu-box-fleet.json"

// On a box with one 80 GiB GPU, two lanes that each need 60 GiB of it
// cannot both be resident, and a recipe that needs 90 GiB is never
// installed; check judges plans by the GPU's budget, not the host's.
func TestAGPUsOwnMemoryBoundsTheLanesThatNeedIt(t *testing.T) {
	dir := t.TempDir()
	good := planFile(t, dir, gpuBox, "--consider-installs")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	plan := string(data)
	for _, want := range []string{`"domain": "device:cuda:0"`} {
		if !strings.Contains(plan, want) {
			t.Errorf("the plan lacks %s:\n%s", want, plan)
		}
	}
	var doc planDoc
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	for _, n := range doc.Nodes {
		for _, l := range n.Lanes {
			if l.Variant != "chat-a" {
				t.Errorf("the plan places %s on %s, which the GPU cannot hold beside chat-a", l.Variant, n.ID)
			}
		}
	}
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	both := write("both.json", `{"schema": "poolsolve.plan/v1",
  "nodes": [{"id": "gpu-box", "lanes": [
    {"variant": "chat-a", "residency": "always"},
    {"variant": "chat-b", "residency": "always"}]}],
  "routes": [{"source": "a", "model": "org/chat-a", "variant": "chat-a"}, {"source": "b", "model": "org/chat-b", "variant": "chat-b"}]}`)
	big := write("big.json", `{"schema": "poolsolve.plan/v1",
  "nodes": [{"id": "gpu-box", "lanes": [
    {"variant": "chat-a", "residency": "always"},
    {"variant": "recipe:big-chat-vllm/big-chat", "residency": "auto"}]}],
  "routes": [{"source": "a", "model": "org/chat-a", "variant": "chat-a"}]}`)
	tests := []struct {
		name string
		plan string
		code int
		want []string
	}{
		{"poolsolve's own plan is valid", good, ExitOK, []string{"valid, every hard constraint holds"}},
		{"two 60 GiB lanes always on the one 80 GiB GPU over-commit it", both, exitInvalid, []string{"INVALID", "gpu-box device:cuda:0"}},
		{"a recipe needing 90 GiB of GPU memory cannot be installed beside anything", big, exitInvalid, []string{"INVALID", "90 GiB", "device:cuda:0"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := run(t, "check", "--fleet", gpuBox, "--consider-installs", "--plan", tc.plan)
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
}
