package answer_test

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/answer"
	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/internal/golden"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

// example builds an example bundle's pool with opts and plans it.
func example(t testing.TB, name string, opts catalog.Options) (*model.Pool, *solver.Result) {
	t.Helper()
	p := exampleCatalog(t, name, opts).Pool
	return p, solveExample(t, p)
}

// The explain answers on the example fleets match their golden files,
// text and JSON.
func TestExplainAnswersMatchTheGoldenFiles(t *testing.T) {
	tests := []struct {
		golden  string
		fleet   string
		opts    catalog.Options
		subject string
		node    string
	}{
		{"explain-q38fn", "spark-fleet.json", catalog.Options{}, "q38fn", ""},
		{"explain-q38fn-pair-cordoned", "spark-fleet.json", catalog.Options{Cordons: []string{"spark-node-02"}}, "q38fn", ""},
		{"explain-embeddings-cordoned", "spark-fleet.json", catalog.Options{Cordons: []string{"spark-node-03"}}, "embeddings", ""},
		{"explain-chat-arch", "rule-arch-mismatch.json", catalog.Options{}, "chat", ""},
		{"explain-tp2-unlinked", "rule-unlinked-tp.json", catalog.Options{}, "tp2-chat", ""},
		{"explain-27b-on-01", "spark-fleet.json", catalog.Options{}, "qwen38-27b-nvfp4", "spark-node-01"},
		{"explain-recipe-on-02", "spark-fleet.json", catalog.Options{ConsiderInstalls: true}, "recipe:linux-nvidia-gb10-qwen38-27b-nvfp4-vllm/qwen38-27b-nvfp4", "spark-node-02"},
	}
	for _, tc := range tests {
		t.Run(tc.golden, func(t *testing.T) {
			p, base := example(t, tc.fleet, tc.opts)
			w, err := solver.NewWhatIf(p, base, 0, time.Now().Add(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			opts := answer.ExplainOptions{Fleet: "examples/" + tc.fleet}
			var ex *answer.Explain
			if tc.node != "" {
				ex, err = answer.ExplainLane(context.Background(), w, p, tc.subject, tc.node, opts)
			} else {
				ex, err = answer.ExplainRoute(context.Background(), w, p, tc.subject, opts)
			}
			if err != nil {
				t.Fatal(err)
			}
			var txt, js bytes.Buffer
			if err := answer.WriteExplainText(&txt, ex); err != nil {
				t.Fatal(err)
			}
			if err := answer.WriteExplainJSON(&js, ex); err != nil {
				t.Fatal(err)
			}
			golden.Check(t, tc.golden+".txt", txt.Bytes())
			golden.Check(t, tc.golden+".json", js.Bytes())
		})
	}
}

// Every option of every alias of the example fleets is either taken,
// or carries at least one reason; and no option that some plan can take
// is called impossible.
func TestEveryOptionNotTakenHasAReason(t *testing.T) {
	for _, name := range []string{"spark-fleet.json", "hetero-fleet.json", "rule-arch-mismatch.json", "rule-headroom.json", "rule-unlinked-tp.json"} {
		t.Run(name, func(t *testing.T) {
			p, base := example(t, name, catalog.Options{ConsiderInstalls: true})
			w, err := solver.NewWhatIf(p, base, 0, time.Now().Add(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			for _, a := range p.Aliases {
				ex, err := answer.ExplainRoute(context.Background(), w, p, a.ID, answer.ExplainOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range ex.Route.Options {
					if o.Chosen {
						continue
					}
					if len(o.Reasons) == 0 && o.Best == nil {
						t.Errorf("%s: option %s via %s on %s has no reason", a.ID, o.Model, o.Variant, strings.Join(o.Nodes, "+"))
					}
					if o.Best != nil && !o.Possible {
						t.Errorf("%s: option %s has a best plan but is called impossible", a.ID, o.Model)
					}
					if o.Best != nil && o.Best.Objective.Less(base.Objective) {
						t.Errorf("%s: option %s's best plan %v beats the proved plan %v", a.ID, o.Model, o.Best.Objective, base.Objective)
					}
					// The best plan takes the option: this model through
					// this lane, not another lane of the model.
					if o.Best != nil && !slices.ContainsFunc(o.Best.Assignment.Routes, func(r model.RouteChoice) bool {
						return r.Source == a.ID && r.Model == o.Model && r.Variant == o.Variant
					}) {
						t.Errorf("%s: the best plan for %s via %s routes %+v", a.ID, o.Model, o.Variant, o.Best.Assignment.Routes)
					}
				}
			}
		})
	}
}
