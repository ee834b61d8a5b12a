package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/inventory"
)

func TestInventoryPrintsThisMachine(t *testing.T) {
	root := t.TempDir()
	out := filepath.Join(t.TempDir(), "inv.json")
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, stdout string)
	}{
		{
			name: "text names the node and its memory",
			args: []string{"inventory", "--node-id", "test-node"},
			check: func(t *testing.T, stdout string) {
				for _, want := range []string{"Node test-node", "Memory domains", "Model roots"} {
					if !strings.Contains(stdout, want) {
						t.Errorf("text lacks %q:\n%s", want, stdout)
					}
				}
			},
		},
		{
			name: "json is the inventory document, with the extra model root",
			args: []string{"inventory", "--node-id", "test-node", "--format", "json", "--model-root", root},
			check: func(t *testing.T, stdout string) {
				inv, err := inventory.Parse([]byte(stdout), "stdout")
				if err != nil {
					t.Fatalf("not an inventory: %v\n%s", err, stdout)
				}
				if inv.Schema != inventory.Schema || inv.NodeID != "test-node" {
					t.Errorf("schema %q node %q", inv.Schema, inv.NodeID)
				}
				var roots []string
				for _, r := range inv.ModelRoots {
					roots = append(roots, r.Path)
				}
				if !slices.Contains(roots, root) {
					t.Errorf("model roots %v lack %s", roots, root)
				}
			},
		},
		{
			name: "-o writes the file and nothing to stdout",
			args: []string{"inventory", "--node-id", "test-node", "--format", "json", "-o", out},
			check: func(t *testing.T, stdout string) {
				if stdout != "" {
					t.Errorf("stdout = %q", stdout)
				}
				data, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := inventory.Parse(data, out); err != nil {
					t.Error(err)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			tc.check(t, stdout)
		})
	}
	if code, _, stderr := runCLI(t, "inventory", "--format", "yaml"); code != ExitBadInput || !strings.Contains(stderr, `--format "yaml"`) {
		t.Errorf("a bad format: exit %d, %q", code, stderr)
	}
}

// TestOfflinePlanWithThisMachinesInventory: without a gateway, a config
// and the inventory this machine writes are enough to plan.
func TestOfflinePlanWithThisMachinesInventory(t *testing.T) {
	f := newLiveFleet(t, "", newerGateway, nil)
	inv := filepath.Join(f.dir, "spark-node-03.json")
	if code, _, stderr := runCLI(t, "inventory", "--node-id", "spark-node-03", "--format", "json", "-o", inv); code != ExitOK {
		t.Fatalf("inventory exited %d: %s", code, stderr)
	}
	code, out, stderr := runCLI(t, "plan", "--config", f.config, "--policy", f.policy, "--inventory", "spark-node-03="+inv, "--solver", "greedy")
	if code != ExitOK && code != ExitChanges {
		t.Fatalf("plan exited %d: %s", code, stderr)
	}
	if !strings.Contains(out, "spark-node-03") || !strings.Contains(out, "Objective") {
		t.Errorf("the plan does not cover spark-node-03:\n%s", out)
	}
	code, cat, stderr := runCLI(t, "catalog", "--config", f.config, "--inventory", "spark-node-03="+inv)
	if code != ExitOK || !strings.Contains(cat, "(from inventory)") {
		t.Errorf("catalog exited %d (%s); spark-node-03 should be read from its inventory:\n%s", code, stderr, cat)
	}
}
