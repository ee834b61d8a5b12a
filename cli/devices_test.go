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

const gpuPacking = "../examples/gpu-packing.json"

// On a box whose first four GPUs are taken, the TP4 recipe goes on the
// other four: the plan names them, check accepts it, and the same plan
// moved onto the taken GPUs is refused with the device that overflows.
func TestAPlanNamesTheGPUsItChoseAndCheckHoldsItToThem(t *testing.T) {
	dir := t.TempDir()
	good := planFile(t, dir, gpuPacking, "--consider-installs")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	chosen := `"devices": [
            "h100-01/device:cuda:4",
            "h100-01/device:cuda:5",
            "h100-01/device:cuda:6",
            "h100-01/device:cuda:7"
          ]`
	if !strings.Contains(string(data), chosen) {
		t.Fatalf("the plan does not put the TP4 recipe on cuda:4-7:\n%s", data)
	}
	if code, out, errOut := run(t, "check", "--fleet", gpuPacking, "--consider-installs", "--plan", good); code != ExitOK {
		t.Fatalf("check of the plan itself: exit %d\n%s%s", code, out, errOut)
	}
	taken := strings.NewReplacer(
		`"h100-01/device:cuda:4"`, `"h100-01/device:cuda:0"`, `"h100-01/device:cuda:5"`, `"h100-01/device:cuda:1"`,
		`"h100-01/device:cuda:6"`, `"h100-01/device:cuda:2"`, `"h100-01/device:cuda:7"`, `"h100-01/device:cuda:3"`,
	).Replace(string(data))
	bad := filepath.Join(dir, "taken.json")
	if err := os.WriteFile(bad, []byte(taken), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := run(t, "check", "--fleet", gpuPacking, "--consider-installs", "--plan", bad)
	if code == ExitOK || !strings.Contains(out+errOut, "device:cuda:0") {
		t.Fatalf("check of the plan on the taken GPUs: exit %d, want a refusal naming device:cuda:0\n%s%s", code, out, errOut)
	}
	wrong := filepath.Join(dir, "nowhere.json")
	if err := os.WriteFile(wrong, []byte(strings.ReplaceAll(string(data), `"h100-01/device:cuda:7"`, `"h100-01/device:cuda:9"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, "check", "--fleet", gpuPacking, "--consider-installs", "--plan", wrong)
	if code == ExitOK || !strings.Contains(out+errOut, "is not a candidate placement") {
		t.Fatalf("check of a plan on a GPU the box lacks: exit %d\n%s%s", code, out, errOut)
	}
}
