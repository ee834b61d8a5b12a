package plan_test

import (
	"bytes"
	"testing"

	"github.com/poolsolve/poolsolve/internal/golden"
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
			golden.Check(t, tc.name+".txt.golden", txt.Bytes())
			golden.Check(t, tc.name+".json.golden", js.Bytes())
		})
	}
}
