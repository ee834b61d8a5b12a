package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/benchmarks"
)

// TestAPlanInATerminalKeepsEveryRowWithinItsWidth plans generated fleets
// at the widths of real terminals: no line may run past the width (a
// terminal would fold it, and the fold reads as another row), and in the
// nodes, a line at the lanes' indent starts a lane, never the tail of one.
func TestAPlanInATerminalKeepsEveryRowWithinItsWidth(t *testing.T) {
	sizes := []string{"64x250", "256x1000"}
	if testing.Short() {
		sizes = sizes[:1]
	}
	// Relative names: a long temporary path is a word no width can hold.
	dir := t.TempDir()
	t.Chdir(dir)
	for _, size := range sizes {
		sz, err := benchmarks.ParseSize(size)
		if err != nil {
			t.Fatal(err)
		}
		data, err := benchmarks.Generate(sz.Spec(1))
		if err != nil {
			t.Fatal(err)
		}
		fleetFile := size + ".json"
		if err := os.WriteFile(fleetFile, data, 0o644); err != nil {
			t.Fatal(err)
		}
		lanes := variantIDs(t, fleetFile)
		for _, width := range []int{80, 100, 200} {
			t.Run(fmt.Sprintf("%s at %d columns", size, width), func(t *testing.T) {
				t.Setenv("COLUMNS", fmt.Sprint(width))
				code, out, errOut := run(t, "plan", "--fleet", fleetFile, "--solver", "greedy", "--time-limit", "1s", "--quiet")
				if code != ExitOK && code != ExitChanges {
					t.Fatalf("plan exit %d\n%s", code, errOut)
				}
				section := ""
				for i, l := range strings.Split(out, "\n") {
					if n := utf8.RuneCountInString(l); n > width {
						t.Fatalf("line %d is %d columns wide, past %d:\n%s", i+1, n, width, l)
					}
					if l != "" && l[0] != ' ' {
						section = l
						continue
					}
					if section == "Nodes" && strings.HasPrefix(l, "      ") && l[6] != ' ' {
						if first := strings.Fields(l)[0]; !lanes[first] {
							t.Fatalf("line %d, at the lanes' indent, starts with %q, which is no lane:\n%s", i+1, first, l)
						}
					}
				}
				if !strings.Contains(out, "\nNodes\n") {
					t.Fatalf("no Nodes section:\n%s", out)
				}
			})
		}
	}
}

// variantIDs are the ids of the pool's variants, as catalog lists them.
func variantIDs(t *testing.T, fleetFile string) map[string]bool {
	t.Helper()
	code, out, errOut := run(t, "catalog", "--fleet", fleetFile, "--format", "json")
	if code != ExitOK {
		t.Fatalf("catalog exit %d\n%s", code, errOut)
	}
	var doc struct {
		Pool struct {
			Variants []struct {
				ID string `json:"id"`
			} `json:"variants"`
		} `json:"pool"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, v := range doc.Pool.Variants {
		ids[v.ID] = true
	}
	return ids
}

// TestEveryFileWrittenIsAnnouncedOnStderr: a command that writes its
// answer to a file says which file, as export and snapshot do.
func TestEveryFileWrittenIsAnnouncedOnStderr(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
	}{
		{"a text plan", []string{"plan", "--fleet", spark, "-o", dir + "/plan.txt"}},
		{"a JSON plan", []string{"plan", "--fleet", spark, "--format", "json", "-o", dir + "/plan.json"}},
		{"a plan drawn as SVG", []string{"plan", "--fleet", spark, "--format", "svg", "-o", dir + "/plan.svg"}},
		{"an explain answer", []string{"explain", "q38fn", "--fleet", spark, "-o", dir + "/why.txt"}},
		{"a resilience report", []string{"resilience", "--fleet", spark, "--format", "json", "--time-limit", "2s", "-o", dir + "/res.json"}},
		{"an inventory", []string{"inventory", "--format", "json", "-o", dir + "/inv.json"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.args...)
			if code != ExitOK && code != ExitChanges {
				t.Fatalf("exit %d\n%s", code, errOut)
			}
			file := tc.args[len(tc.args)-1]
			if out != "" {
				t.Errorf("printed on stdout what it wrote to %s:\n%s", file, out)
			}
			if !strings.Contains(errOut, "wrote "+file+" (") {
				t.Errorf("stderr does not say it wrote %s:\n%s", file, errOut)
			}
		})
	}
}

// TestCatalogKeepsAReasonsCase: a node's state word is capitalised, the
// reason after it is printed as written.
func TestCatalogKeepsAReasonsCase(t *testing.T) {
	code, out, errOut := run(t, "catalog", "--fleet", spark, "--cordon", "spark-node-01")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.Contains(out, "  spark-node-01  CORDONED (--cordon)\n") {
		t.Errorf("catalog does not print the cordon as CORDONED (--cordon):\n%s", out)
	}
}
