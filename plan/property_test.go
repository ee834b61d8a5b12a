package plan_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/golden"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
	"github.com/poolsolve/poolsolve/solver"
)

// randomResult places each variant of p with probability 1/2 on a random
// candidate placement and residency (fixed residency where the variant has
// one), and routes each demand source to a random candidate the lanes can
// serve, or leaves it uncovered. Routes are valid, so that eval counts
// them as the plan does; lanes need not fit.
func randomResult(p *model.Pool, r *rand.Rand) *solver.Result {
	var a model.Assignment
	placed := map[string]bool{}
	for _, v := range p.Variants {
		if len(v.Placements) == 0 || r.IntN(2) == 0 {
			continue
		}
		res := model.Residencies[r.IntN(3)]
		if fixed, ok := v.FixedResidency(); ok {
			res = fixed
		}
		a.Lanes = append(a.Lanes, model.LaneChoice{Variant: v.ID, Nodes: v.Placements[r.IntN(len(v.Placements))].Nodes, Residency: res})
		placed[v.ID] = true
	}
	ix := p.Index()
	options := func(src string, cands []string) []model.RouteChoice {
		opts := []model.RouteChoice{{Source: src}}
		for _, m := range cands {
			i, ok := ix.Model[m]
			if !ok {
				continue
			}
			mm := &p.Models[i]
			if mm.External {
				if p.Settings.ExternalAllowed {
					opts = append(opts, model.RouteChoice{Source: src, Model: m})
				}
				continue
			}
			for _, v := range p.Variants {
				if placed[v.ID] && (slices.Contains(v.Models, m) || slices.Contains(mm.Variants, v.ID)) {
					opts = append(opts, model.RouteChoice{Source: src, Model: m, Variant: v.ID})
				}
			}
		}
		return opts
	}
	for i := range p.Aliases {
		opts := options(p.Aliases[i].ID, p.Aliases[i].Candidates())
		a.Routes = append(a.Routes, opts[r.IntN(len(opts))])
	}
	for _, m := range p.Models {
		if m.DirectDemand > 0 || m.Required {
			opts := options(model.DirectSource(m.ID), []string{m.ID})
			a.Routes = append(a.Routes, opts[r.IntN(len(opts))])
		}
	}
	rep := eval.Check(p, a)
	res := &solver.Result{Assignment: a, Objective: rep.Objective, Stats: solver.Stats{Solver: "random"}}
	for i := range res.Levels {
		res.Levels[i] = solver.Level{Index: i + 1, Name: model.LevelNames[i], Value: rep.Objective[i], Status: solver.Heuristic}
	}
	for _, u := range rep.Uncovered {
		res.Explanations = append(res.Explanations, solver.Explanation{Subject: u, Reason: "left uncovered by the random plan"})
	}
	return res
}

// churn is what the plan's diff charges per docs/objective.md, in eval's
// terms: each entry a term kind and its subject.
func churn(cs []plan.Change, p *model.Pool) []string {
	running := map[string]bool{}
	for _, l := range p.Current.Lanes {
		running[l.Variant] = true
	}
	var out []string
	for _, c := range cs {
		switch c.Kind {
		case plan.Start:
			out = append(out, string(eval.TermStart)+" "+c.Subject)
		case plan.ManualStart:
			if running[c.Subject] {
				out = append(out, string(eval.TermMove)+" "+c.Subject)
			} else {
				out = append(out, string(eval.TermStart)+" "+c.Subject)
			}
		case plan.Move:
			out = append(out, string(eval.TermMove)+" "+c.Subject, string(eval.TermStop)+" "+c.Subject)
		case plan.Stop, plan.ManualStop:
			out = append(out, string(eval.TermStop)+" "+c.Subject)
		case plan.SetResidency:
			out = append(out, string(eval.TermResidency)+" "+c.Subject)
		case plan.Reroute:
			if c.To != "" { // an uncovered alias pays no re-route
				out = append(out, string(eval.TermReroute)+" "+c.Subject)
			}
		}
	}
	slices.Sort(out)
	return out
}

func evalChurn(p *model.Pool, a model.Assignment) []string {
	var out []string
	for _, t := range eval.Check(p, a).Terms {
		if t.Kind != eval.TermLatency {
			out = append(out, string(t.Kind)+" "+t.Subject)
		}
	}
	slices.Sort(out)
	return out
}

// The diff is the churn the objective charges: every change the evaluator
// pays hysteresis for is in the plan, and nothing else.
func TestDiffMatchesTheEvaluatorsChurnOnRandomPools(t *testing.T) {
	for seed := range uint64(300) {
		p := pooltest.Random(seed, 2+int(seed%4), 3+int(seed%6))
		res := randomResult(p, rand.New(rand.NewPCG(seed, 7)))
		pl := plan.Build(p, res, plan.Meta{})
		if got, want := churn(pl.Changes, p), evalChurn(p, res.Assignment); !slices.Equal(got, want) {
			t.Fatalf("seed %d: diff charges %q, eval charges %q\nchanges: %q", seed, got, want, showAll(pl.Changes))
		}
	}
}

// Routes count levels 1 and 3 as the evaluator does: the uncovered sources
// and the aliases whose expected latency breaks their SLO.
func TestRoutesMatchTheEvaluatorsCoverageAndSLOs(t *testing.T) {
	seen := 0 // SLO violations met, so that the test is not vacuous
	for seed := range uint64(300) {
		p := pooltest.Random(seed, 2+int(seed%4), 3+int(seed%6))
		res := randomResult(p, rand.New(rand.NewPCG(seed, 13)))
		rep := eval.Check(p, res.Assignment)
		var uncovered, broken []string
		for _, r := range plan.Build(p, res, plan.Meta{}).Routes {
			if !r.Covered() {
				uncovered = append(uncovered, r.Source)
			}
			if r.SLOStatus == plan.SLOViolated {
				broken = append(broken, r.Source)
			}
		}
		want := slices.Sorted(slices.Values(rep.Uncovered))
		if slices.Sort(uncovered); !slices.Equal(uncovered, want) {
			t.Fatalf("seed %d: uncovered %q, eval says %q", seed, uncovered, want)
		}
		want = slices.Sorted(slices.Values(rep.SLOBroken))
		if slices.Sort(broken); !slices.Equal(broken, want) {
			t.Fatalf("seed %d: SLO violated on %q, eval says %q", seed, broken, want)
		}
		seen += len(broken)
	}
	if seen == 0 {
		t.Error("no random plan broke an SLO; the comparison proves nothing")
	}
}

// FuzzBuild checks on random pools and plans that Build and the three
// renderings never panic, are deterministic, and write valid JSON that
// carries the schema and an SVG that parses.
func FuzzBuild(f *testing.F) {
	for _, seed := range []uint64{0, 1, 7, 42} {
		f.Add(seed, uint8(3), uint8(5), false)
	}
	f.Add(uint64(9), uint8(1), uint8(0), true)
	f.Fuzz(func(t *testing.T, seed uint64, nodes, variants uint8, infeasible bool) {
		p := pooltest.Random(seed, 1+int(nodes%6), int(variants%10))
		res := randomResult(p, rand.New(rand.NewPCG(seed, 11)))
		res.Infeasible = infeasible
		first := renderAll(t, plan.Build(p, res, plan.Meta{Fleet: "fuzz"}))
		q := pooltest.Random(seed, 1+int(nodes%6), int(variants%10))
		again := randomResult(q, rand.New(rand.NewPCG(seed, 11)))
		again.Infeasible = infeasible
		if second := renderAll(t, plan.Build(q, again, plan.Meta{Fleet: "fuzz"})); second != first {
			t.Fatalf("same inputs render differently:\n%s", golden.Diff(first, second))
		}
	})
}

func renderAll(t *testing.T, pl *plan.Plan) string {
	t.Helper()
	var txt, js bytes.Buffer
	if err := plan.WriteText(&txt, pl, plan.TextOptions{Color: true, Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if err := plan.WriteJSON(&js, pl); err != nil {
		t.Fatal(err)
	}
	var doc struct{ Schema string }
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil || doc.Schema != plan.Schema {
		t.Fatalf("JSON is invalid or lacks the schema (%v):\n%s", err, js.String())
	}
	if !strings.HasPrefix(txt.String(), "poolsolve plan") {
		t.Fatalf("text lacks the header:\n%s", txt.String())
	}
	svg := svgOf(t, pl)
	pic := parseSVG(t, svg)
	for _, n := range pl.Nodes {
		if !strings.Contains(pic.all, n.ID) {
			t.Fatalf("the SVG does not name node %s", n.ID)
		}
	}
	return txt.String() + js.String() + string(svg)
}

// BenchmarkBuild builds and renders plans of random pools by size.
func BenchmarkBuild(b *testing.B) {
	for _, size := range []struct {
		name            string
		nodes, variants int
	}{{"nodes=3/variants=6", 3, 6}, {"nodes=8/variants=24", 8, 24}, {"nodes=32/variants=120", 32, 120}} {
		p := pooltest.Random(1, size.nodes, size.variants)
		res := randomResult(p, rand.New(rand.NewPCG(1, 2)))
		b.Run(size.name, func(b *testing.B) {
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				pl := plan.Build(p, res, plan.Meta{})
				if err := plan.WriteText(&buf, pl, plan.TextOptions{}); err != nil {
					b.Fatal(err)
				}
				if err := plan.WriteJSON(&buf, pl); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
