package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

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
