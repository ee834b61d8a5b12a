package eval_test

import (
	"testing"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

func TestCheckObjective(t *testing.T) {
	tests := []struct {
		name  string
		extra []pooltest.Part
		plan  model.Assignment
		want  model.Objective
	}{
		{
			// q: 10 x 400 ms = 4; l: 4 x (300 + 0.25 x 30000) ms = 31.2 -> 31;
			// llama starts: 30 s load + 30 h = 60; qwen-tp2 kept as it is.
			name: "latency and a start add up at level 4",
			plan: good(),
			want: model.Objective{0, 0, 0, 95},
		},
		{
			name: "an uncovered alias counts at level 1 only",
			plan: with(func(a *model.Assignment) { a.Routes = a.Routes[1:] }),
			want: model.Objective{1, 0, 0, 64},
		},
		{
			name:  "a required model without demand is a source of its own",
			extra: []pooltest.Part{pooltest.Required("qwen")},
			plan:  good(),
			want:  model.Objective{1, 0, 0, 95},
		},
		{
			// q served by gpt: 10 x 1500 = 15, plus re-route h 30; qwen-tp2 stops: 30.
			name: "serving an alias externally while a local lane could counts at level 2",
			plan: with(func(a *model.Assignment) {
				a.Lanes = a.Lanes[:1]
				a.Routes[1] = route("q", "gpt", "")
			}),
			want: model.Objective{0, 1, 0, 31 + 60 + 15 + 30 + 30},
		},
		{
			name: "an alias whose local candidates cannot run anywhere may go external freely",
			extra: []pooltest.Part{pooltest.Variant("gpu-only", 10, pooltest.On("gpu-01")),
				pooltest.Alias("g", 1, "gpu-only", "gpt")},
			plan: with(func(a *model.Assignment) { a.Routes = append(a.Routes, route("g", "gpt", "")) }),
			want: model.Objective{0, 0, 0, 95 + 2},
		},
		{
			name: "external models without metrics take the configured first-token latency",
			extra: []pooltest.Part{pooltest.External("cloud", 0), pooltest.Alias("c", 2, "cloud"),
				pooltest.Settings(func(s *model.Settings) { s.ExternalFirstTokenMs = 2500 })},
			plan: with(func(a *model.Assignment) { a.Routes = append(a.Routes, route("c", "cloud", "")) }),
			want: model.Objective{0, 0, 0, 95 + 5},
		},
		{
			name:  "a first-token SLO counts cold loads of auto lanes",
			extra: []pooltest.Part{pooltest.SLO("l", 1000, 0)},
			plan:  good(),
			want:  model.Objective{0, 0, 1, 95},
		},
		{
			// l: 4 x 300 ms = 1.2 -> 1; llama starts 60.
			name:  "an always lane meets the SLO",
			extra: []pooltest.Part{pooltest.SLO("l", 1000, 0)},
			plan:  with(func(a *model.Assignment) { a.Lanes[0].Residency = model.Always }),
			want:  model.Objective{0, 0, 0, 4 + 1 + 60},
		},
		{
			name:  "a total SLO is judged on first-token latency when total is unknown",
			extra: []pooltest.Part{pooltest.SLO("q", 0, 399)},
			plan:  good(),
			want:  model.Objective{0, 0, 1, 95},
		},
		{
			name:  "an uncovered alias breaks no SLO",
			extra: []pooltest.Part{pooltest.SLO("l", 1, 0)},
			plan:  with(func(a *model.Assignment) { a.Routes = a.Routes[1:] }),
			want:  model.Objective{1, 0, 0, 64},
		},
		{
			// Two sources of 1.5 units each round to 2 + 2, not round(3.0).
			name: "level-4 terms round half away from zero each on its own",
			extra: []pooltest.Part{pooltest.Direct("llama", 5), pooltest.Alias("l5", 5, "llama"),
				pooltest.Settings(func(s *model.Settings) { s.ColdFractionAuto = 0 })},
			plan: with(func(a *model.Assignment) {
				a.Routes = append(a.Routes, route("l5", "llama", "llama"), route("model:llama", "llama", "llama"))
			}),
			want: model.Objective{0, 0, 0, 4 + 1 + 2 + 2 + 60},
		},
		{
			name: "keeping a lane with another residency pays hysteresis",
			plan: with(func(a *model.Assignment) { a.Lanes[1].Residency = model.Preferred }),
			// q: 10 x (400 + 0.02 x 60000) = 16.
			want: model.Objective{0, 0, 0, 16 + 31 + 60 + 30},
		},
		{
			name:  "moving a lane pays its load, hysteresis, and the stop",
			extra: []pooltest.Part{pooltest.Running("gemma-recipe", model.Auto, "spark-01")},
			plan: with(func(a *model.Assignment) {
				a.Lanes = append(a.Lanes, lane("gemma-recipe", model.Auto, "spark-02"))
			}),
			want: model.Objective{0, 0, 0, 95 + 30 + 30 + 30},
		},
		{
			name:  "a current lane of a variant the pool lacks costs nothing",
			extra: []pooltest.Part{pooltest.Running("retired", model.Always, "spark-02")},
			plan:  good(),
			want:  model.Objective{0, 0, 0, 95},
		},
		{
			name:  "churn weight scales load time but not hysteresis",
			extra: []pooltest.Part{pooltest.Settings(func(s *model.Settings) { s.ChurnWeight = 2 })},
			plan:  good(),
			want:  model.Objective{0, 0, 0, 95 + 30},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := eval.Check(basePool(tc.extra...), tc.plan)
			if err := r.Err(); err != nil {
				t.Fatalf("Check = %v, want valid", err)
			}
			if r.Objective != tc.want {
				t.Errorf("Check objective = %v, want %v; terms %+v", r.Objective, tc.want, r.Terms)
			}
			var sum int64
			for _, term := range r.Terms {
				sum += term.Units
			}
			if sum != r.Objective[3] {
				t.Errorf("terms add up to %d, level 4 is %d", sum, r.Objective[3])
			}
		})
	}
}

func TestCheckNamesWhatEachLevelCounts(t *testing.T) {
	p := basePool(pooltest.SLO("l", 1000, 0), pooltest.Alias("z", 1, "qwen"))
	a := with(func(a *model.Assignment) { a.Routes[1] = route("q", "gpt", "") })
	r := eval.Check(p, a)
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	if len(r.Uncovered) != 1 || r.Uncovered[0] != "z" || len(r.ExternalFirst) != 1 || r.ExternalFirst[0] != "q" ||
		len(r.SLOBroken) != 1 || r.SLOBroken[0] != "l" {
		t.Errorf("Check = uncovered %v, external %v, slo %v; want [z] [q] [l]", r.Uncovered, r.ExternalFirst, r.SLOBroken)
	}
}

func TestCheckOfANilPoolDoesNotPanic(t *testing.T) {
	r := eval.Check(nil, good())
	if r.Valid || !r.Has(eval.RuleUnknownVariant) || !r.Has(eval.RuleUnknownSource) {
		t.Errorf("Check(nil) = %+v, want unknown variants and sources", r)
	}
}

// The evaluator re-implements eligibility; it must agree with the rules
// the encoder and greedy apply through model.Eligible.
func TestCheckAgreesWithModelEligibleOnRandomPools(t *testing.T) {
	for seed := range uint64(150) {
		p := pooltest.Random(seed, 1+int(seed%5), 1+int(seed%7))
		ix := p.Index()
		for i := range p.Variants {
			v := &p.Variants[i]
			res := model.Auto
			if fixed, ok := v.FixedResidency(); ok {
				res = fixed
			}
			for _, pl := range v.Placements {
				ok, why := model.Eligible(p, ix, v, pl)
				r := eval.Check(p, model.Assignment{Lanes: []model.LaneChoice{lane(v.ID, res, pl.Nodes...)}})
				if r.Has(eval.RuleEligibility) == ok {
					t.Fatalf("seed %d: %s on %s: model.Eligible = %v (%s), eval violations %v", seed, v.ID, pl.Key(), ok, why, r.Violations)
				}
			}
		}
	}
}
