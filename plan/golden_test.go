package plan_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
	"github.com/poolsolve/poolsolve/solver"
)

// goldenCases are the scenarios rendered under testdata/<name>.{txt,json}.golden.
var goldenCases = []struct {
	name string
	make func() (*model.Pool, *solver.Result)
	meta plan.Meta
}{
	{"cordoned-pair", cordonedPair, plan.Meta{
		Fleet: "examples/spark-fleet.json", Solver: "exact",
		Notes: []string{"spark-node-02 is cordoned (--cordon): lanes on it must stop or move"},
	}},
	{"steady", steady, plan.Meta{Fleet: "examples/spark-fleet.json"}},
	{"infeasible", infeasible, plan.Meta{Fleet: "examples/spark-fleet.json", Solver: "exact"}},
}

// TestGolden compares the text and JSON renderings with the files under
// testdata. UPDATE_GOLDEN=1 rewrites them; review the diff.
func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			p, res := tc.make()
			pl := plan.Build(p, res, tc.meta)
			var txt, js bytes.Buffer
			if err := plan.WriteText(&txt, pl, plan.TextOptions{}); err != nil {
				t.Fatalf("WriteText: %v", err)
			}
			if err := plan.WriteJSON(&js, pl); err != nil {
				t.Fatalf("WriteJSON: %v", err)
			}
			golden(t, tc.name+".txt.golden", txt.Bytes())
			golden(t, tc.name+".json.golden", js.Bytes())
		})
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (UPDATE_GOLDEN=1 rewrites it):\n%s", name, lineDiff(string(want), string(got)))
	}
}

// lineDiff shows the first lines that differ, as want/have pairs.
func lineDiff(want, have string) string {
	w, h := strings.Split(want, "\n"), strings.Split(have, "\n")
	var out []string
	for i := 0; i < max(len(w), len(h)) && len(out) < 20; i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(h) {
			b = h[i]
		}
		if a != b {
			out = append(out, "line "+itoa(i+1)+":\n  want "+a+"\n  have "+b)
		}
	}
	return strings.Join(out, "\n")
}

func itoa(i int) string {
	var b []byte
	for i >= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
		i /= 10
	}
	return string(append([]byte{byte('0' + i)}, b...))
}
