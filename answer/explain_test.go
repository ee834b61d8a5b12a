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
		{"explain-27b-on-03", "spark-fleet.json", catalog.Options{}, "qwen38-27b-nvfp4", "spark-node-03"},
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

// explain of a lane the plan runs tells why it is there: every
// alternative weighed, each with the levels its best plan changes, or why
// no plan takes it.
func TestExplainOfAPlacedLaneWeighsEachAlternativeWithWhatItCosts(t *testing.T) {
	tests := []struct {
		name     string
		opts     catalog.Options
		runtime  string
		node     string
		kinds    []string
		without  model.Objective // the change the lane's absence makes
		loses    []string        // sources the plan without it uncovers
		wantText []string
	}{
		{"the embedding lane is there because without it embeddings loses coverage",
			catalog.Options{}, "qwen3-embedding-4b", "spark-node-03",
			[]string{"without", "residency", "residency"}, model.Objective{1, 0, 0, -3270}, []string{"embeddings"},
			[]string{"Why it is there: the plan against each alternative", "  without qwen3-embedding-4b on spark-node-03", "level 1 +1", "it uncovers embeddings"}},
		{"the 27B is there and auto because always or preferred would stop the image lane",
			catalog.Options{}, "qwen38-27b-nvfp4", "spark-node-03",
			[]string{"without", "residency", "residency"}, model.Objective{0, 0, 0, 30}, nil,
			[]string{"  qwen38-27b-nvfp4 on spark-node-03 as always", "level 4 +60", "stop qwen-image-diffusers on spark-node-03"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, base := example(t, "spark-fleet.json", tc.opts)
			w, err := solver.NewWhatIf(p, base, 0, time.Now().Add(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			ex, err := answer.ExplainLane(context.Background(), w, p, tc.runtime, tc.node, answer.ExplainOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []string
			for _, a := range ex.Lane.Alternatives {
				kinds = append(kinds, a.Kind)
				if a.Best == nil && a.Reason == "" {
					t.Errorf("alternative %s %v has neither a plan nor a reason", a.Kind, a.Nodes)
				}
				if a.Best != nil && a.Change == nil {
					t.Errorf("alternative %s %v has a plan but no change per level", a.Kind, a.Nodes)
				}
			}
			if !slices.Equal(kinds, tc.kinds) {
				t.Fatalf("alternatives %v, want %v", kinds, tc.kinds)
			}
			without := ex.Lane.Alternatives[0]
			if without.Best == nil || *without.Change != tc.without || !slices.Equal(without.Best.Loses.Uncovered, tc.loses) && len(tc.loses) > 0 {
				t.Errorf("without the lane: %+v change %v, want change %v losing %v", without.Best, without.Change, tc.without, tc.loses)
			}
			var txt bytes.Buffer
			if err := answer.WriteExplainText(&txt, ex); err != nil {
				t.Fatal(err)
			}
			for _, want := range tc.wantText {
				if !strings.Contains(txt.String(), want) {
					t.Errorf("text lacks %q:\n%s", want, txt.String())
				}
			}
		})
	}
}
