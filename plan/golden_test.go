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

// Which prover closes a proved level first (the LP, or a PB worker beside
// it) depends on timing; two solves that differ only there must give the
// same document, in JSON and in verbose text.
func TestTheDocumentDoesNotSayWhichProverFinishedFirst(t *testing.T) {
	render := func(src solver.BoundSource) (string, string) {
		p, res := steady()
		for i := range res.Levels {
			res.Levels[i].BoundSource = src
		}
		pl := plan.Build(p, res, plan.Meta{Fleet: "examples/spark-fleet.json", Solver: "exact"})
		var txt, js bytes.Buffer
		if err := plan.WriteText(&txt, pl, plan.TextOptions{Verbose: true}); err != nil {
			t.Fatal(err)
		}
		if err := plan.WriteJSON(&js, pl); err != nil {
			t.Fatal(err)
		}
		return txt.String(), js.String()
	}
	lpText, lpJSON := render(solver.BoundLP)
	for _, src := range []solver.BoundSource{"lp+pb", solver.BoundPB, solver.BoundSATUnsat} {
		text, js := render(src)
		if js != lpJSON {
			t.Errorf("the JSON plan differs when %s proved it instead of lp", src)
		}
		if text != lpText {
			t.Errorf("the verbose text plan differs when %s proved it instead of lp", src)
		}
	}
}
