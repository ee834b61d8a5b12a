package eval_test

import (
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

// basePool: two linked Sparks (plan budget 121.69 - 8 - 4 = 109.69 GiB), a
// 64 GiB Mac (52 GiB), a cordoned GPU box, and lanes of every kind.
func basePool(extra ...pooltest.Part) *model.Pool {
	parts := []pooltest.Part{
		pooltest.Node("spark-01", 121.69, pooltest.Spark(), pooltest.Commands("vllm")),
		pooltest.Node("spark-02", 121.69, pooltest.Spark(), pooltest.Commands("vllm")),
		pooltest.Node("mac-01", 64, pooltest.Mac()),
		pooltest.Node("gpu-01", 128, pooltest.GPU(80), pooltest.Cordoned()),
		pooltest.Link("spark-01", "spark-02"),
		pooltest.Variant("qwen-tp2", 60, pooltest.Serves("qwen"), pooltest.TP(2), pooltest.On("spark-01", "spark-02"),
			pooltest.Perf(400, 0), pooltest.LoadMs(60000)),
		pooltest.Variant("qwen-mac", 40, pooltest.Serves("qwen"), pooltest.On("mac-01"), pooltest.Perf(900, 0)),
		pooltest.Variant("llama", 40, pooltest.On("spark-01"), pooltest.Perf(300, 0), pooltest.Archs("sm_121")),
		pooltest.Variant("big", 70, pooltest.On("spark-01")),
		pooltest.Variant("gemma-recipe", 30, pooltest.Kind(model.Recipe), pooltest.On("spark-01"), pooltest.On("spark-02"),
			pooltest.On("mac-01"), pooltest.Archs("sm_121"), pooltest.Needs([]string{"vllm"}, nil)),
		pooltest.Variant("sgl-recipe", 10, pooltest.Kind(model.Recipe), pooltest.On("spark-02"), pooltest.Needs([]string{"sglang"}, nil)),
		pooltest.Variant("tp-unlinked", 10, pooltest.TP(2), pooltest.On("mac-01", "spark-02")),
		pooltest.Variant("hand", 20, pooltest.Kind(model.Unmanaged), pooltest.On("spark-02")),
		pooltest.Variant("gpu-lane", 10, pooltest.On("gpu-01")),
		pooltest.External("gpt", 1500),
		pooltest.Alias("q", 10, "qwen", "gpt"),
		pooltest.RouteProfile("q", "cloud", "gpt"),
		pooltest.Alias("l", 4, "llama"),
		pooltest.Running("qwen-tp2", model.Always, "spark-01", "spark-02"),
		pooltest.Routed("q", "qwen"),
	}
	return pooltest.New(append(parts, extra...)...)
}

func lane(variant string, r model.Residency, nodes ...string) model.LaneChoice {
	return model.LaneChoice{Variant: variant, Nodes: nodes, Residency: r}
}

func route(source, m, variant string) model.RouteChoice {
	return model.RouteChoice{Source: source, Model: m, Variant: variant}
}

// good is a valid plan of basePool: [0 0 0 95], see the first case.
func good() model.Assignment {
	return model.Assignment{
		Lanes: []model.LaneChoice{
			lane("llama", model.Auto, "spark-01"),
			lane("qwen-tp2", model.Always, "spark-01", "spark-02"),
		},
		Routes: []model.RouteChoice{route("l", "llama", "llama"), route("q", "qwen", "qwen-tp2")},
	}
}

func with(f func(*model.Assignment)) model.Assignment {
	a := good()
	f(&a)
	return a
}

func TestCheckRules(t *testing.T) {
	tests := []struct {
		name     string
		extra    []pooltest.Part
		plan     model.Assignment
		wantRule eval.Rule // "" means valid
		wantIn   string    // a piece of the message
	}{
		{
			name: "a plan within every budget and rule is valid",
			plan: good(),
		},
		{
			name:     "resident lanes over a domain's plan budget break the memory rule",
			plan:     with(func(a *model.Assignment) { a.Lanes[0] = lane("big", model.Preferred, "spark-01") }),
			wantRule: eval.RuleMemory,
			wantIn:   "resident lanes need 130 GiB (big preferred 70 GiB, qwen-tp2 always 60 GiB); budget 113.7 GiB - headroom 4 = 109.7 GiB",
		},
		{
			name:     "an auto lane that does not fit next to the always lanes breaks the auto rule",
			plan:     with(func(a *model.Assignment) { a.Lanes[0] = lane("big", model.Auto, "spark-01") }),
			wantRule: eval.RuleMemoryAuto,
			wantIn:   "auto lane big needs 70 GiB next to 60 GiB of always lanes = 130 GiB",
		},
		{
			name: "auto lanes may exceed the budget together when each fits next to the always lanes",
			plan: with(func(a *model.Assignment) {
				a.Lanes = []model.LaneChoice{lane("big", model.Auto, "spark-01"), lane("llama", model.Auto, "spark-01"),
					lane("qwen-tp2", model.Preferred, "spark-01", "spark-02")}
			}),
		},
		{
			name:     "a lane of an unknown variant is a violation, not a panic",
			plan:     with(func(a *model.Assignment) { a.Lanes = append(a.Lanes, lane("nope", model.Auto, "spark-01")) }),
			wantRule: eval.RuleUnknownVariant,
		},
		{
			name:     "placing a variant twice is a violation",
			plan:     with(func(a *model.Assignment) { a.Lanes = append(a.Lanes, lane("llama", model.Auto, "spark-01")) }),
			wantRule: eval.RuleDuplicateLane,
			wantIn:   "listed twice on spark-01",
		},
		{
			name: "a variant placed on two nodes is named as placed twice, with both nodes",
			plan: with(func(a *model.Assignment) {
				a.Lanes = append(a.Lanes, lane("gemma-recipe", model.Auto, "spark-02"), lane("gemma-recipe", model.Auto, "mac-01"))
			}),
			wantRule: eval.RuleDuplicateLane,
			wantIn:   "placed twice: on spark-02 and on mac-01",
		},
		{
			name: "a variant placed twice is named even when its first lane is on no candidate",
			plan: with(func(a *model.Assignment) {
				a.Lanes = append([]model.LaneChoice{lane("llama", model.Auto, "spark-02")}, a.Lanes...)
			}),
			wantRule: eval.RuleDuplicateLane,
			wantIn:   "placed twice: on spark-02 and on spark-01",
		},
		{
			name: "three lanes of one variant are counted",
			plan: with(func(a *model.Assignment) {
				a.Lanes = append(a.Lanes, lane("qwen-tp2", model.Always, "spark-02", "spark-01"), lane("qwen-tp2", model.Always, "spark-01", "spark-02"))
			}),
			wantRule: eval.RuleDuplicateLane,
			wantIn:   "listed 3 times on spark-01+spark-02",
		},
		{
			name:     "a lane on an unknown node is a violation",
			plan:     with(func(a *model.Assignment) { a.Lanes[0] = lane("llama", model.Auto, "spark-99") }),
			wantRule: eval.RuleUnknownNode,
		},
		{
			name:     "a fixed variant may only run on its own placement",
			plan:     with(func(a *model.Assignment) { a.Lanes[0] = lane("llama", model.Auto, "spark-02") }),
			wantRule: eval.RulePlacement,
			wantIn:   "spark-02 is not a candidate placement (candidates: spark-01)",
		},
		{
			name: "node order in a lane does not matter",
			plan: with(func(a *model.Assignment) { a.Lanes[1].Nodes = []string{"spark-02", "spark-01"} }),
		},
		{
			name: "a cordoned node carries no lanes",
			plan: with(func(a *model.Assignment) {
				a.Lanes = append(a.Lanes, lane("gpu-lane", model.Auto, "gpu-01"))
			}),
			wantRule: eval.RuleEligibility,
			wantIn:   "gpu-01 is cordoned",
		},
		{
			name:     "a recipe needs a node with a matching arch",
			plan:     with(func(a *model.Assignment) { a.Lanes = append(a.Lanes, lane("gemma-recipe", model.Auto, "mac-01")) }),
			wantRule: eval.RuleEligibility,
			wantIn:   "mac-01 has arch apple-metal, needs sm_121",
		},
		{
			name: "a recipe may go to any of its eligible candidates",
			plan: with(func(a *model.Assignment) { a.Lanes = append(a.Lanes, lane("gemma-recipe", model.Auto, "spark-02")) }),
		},
		{
			name:     "a recipe needs its backend installed",
			plan:     with(func(a *model.Assignment) { a.Lanes = append(a.Lanes, lane("sgl-recipe", model.Auto, "spark-02")) }),
			wantRule: eval.RuleEligibility,
			wantIn:   "spark-02 lacks command sglang",
		},
		{
			name: "tensor parallel needs directly linked nodes",
			plan: with(func(a *model.Assignment) {
				a.Lanes = append(a.Lanes, lane("tp-unlinked", model.Auto, "mac-01", "spark-02"))
			}),
			wantRule: eval.RuleEligibility,
			wantIn:   "mac-01 and spark-02 are not directly linked",
		},
		{
			name:     "a residency must be always, preferred or auto",
			plan:     with(func(a *model.Assignment) { a.Lanes[0].Residency = "warm" }),
			wantRule: eval.RuleResidency,
		},
		{
			name:     "an unmanaged lane keeps residency always",
			plan:     with(func(a *model.Assignment) { a.Lanes = append(a.Lanes, lane("hand", model.Auto, "spark-02")) }),
			wantRule: eval.RuleResidency,
			wantIn:   "unmanaged lanes keep residency always",
		},
		{
			name:     "a pinned variant must run",
			extra:    []pooltest.Part{pooltest.PinLane("qwen-mac", "")},
			plan:     good(),
			wantRule: eval.RulePinLane,
			wantIn:   "qwen-mac must run",
		},
		{
			name:     "a lane pin with nodes fixes the placement",
			extra:    []pooltest.Part{pooltest.PinLane("gemma-recipe", "", "spark-02")},
			plan:     with(func(a *model.Assignment) { a.Lanes = append(a.Lanes, lane("gemma-recipe", model.Auto, "spark-01")) }),
			wantRule: eval.RulePinLane,
			wantIn:   "must run on spark-02, the plan puts it on spark-01",
		},
		{
			name:     "a lane pin with a residency fixes the residency",
			extra:    []pooltest.Part{pooltest.PinLane("llama", model.Always)},
			plan:     good(),
			wantRule: eval.RulePinLane,
			wantIn:   "llama must be always, the plan makes it auto",
		},
		{
			name:     "a pin naming an unknown variant cannot hold",
			extra:    []pooltest.Part{pooltest.PinLane("ghost", "")},
			plan:     good(),
			wantRule: eval.RulePinLane,
		},
		{
			name:     "a route pin serves from its first available member",
			extra:    []pooltest.Part{pooltest.PinRoute("q", "gpt", "qwen")},
			plan:     good(),
			wantRule: eval.RulePinRoute,
			wantIn:   "q must be served by gpt (external), the plan serves qwen",
		},
		{
			name:  "a route pin skips members without a placed lane",
			extra: []pooltest.Part{pooltest.PinRoute("q", "qwen", "gpt")},
			plan: with(func(a *model.Assignment) {
				a.Lanes = a.Lanes[:1]
				a.Routes[1] = route("q", "gpt", "")
			}),
		},
		{
			name: "a route pin skips external members when external models are not allowed",
			extra: []pooltest.Part{pooltest.PinRoute("q", "gpt", "qwen"),
				pooltest.Settings(func(s *model.Settings) { s.ExternalAllowed = false })},
			plan: good(),
		},
		{
			name:  "a route pin with no available member leaves its alias uncovered",
			extra: []pooltest.Part{pooltest.PinRoute("q", "qwen"), pooltest.Settings(func(s *model.Settings) { s.ExternalAllowed = false })},
			plan: with(func(a *model.Assignment) {
				a.Lanes = a.Lanes[:1]
				a.Routes = a.Routes[:1]
			}),
		},
		{
			name:     "a route pin on an unknown alias cannot hold",
			extra:    []pooltest.Part{pooltest.PinRoute("ghost", "gpt")},
			plan:     good(),
			wantRule: eval.RulePinRoute,
		},
		{
			name:     "a route serves only candidates of its source",
			plan:     with(func(a *model.Assignment) { a.Routes[0] = route("l", "qwen", "qwen-tp2") }),
			wantRule: eval.RuleRoute,
			wantIn:   "qwen is not a candidate (candidates: llama)",
		},
		{
			name:     "a route needs its lane placed",
			plan:     with(func(a *model.Assignment) { a.Routes[1] = route("q", "qwen", "qwen-mac") }),
			wantRule: eval.RuleRoute,
			wantIn:   "served by qwen-mac, which the plan does not place",
		},
		{
			name:     "a route's lane must serve the model",
			plan:     with(func(a *model.Assignment) { a.Routes[1] = route("q", "qwen", "llama") }),
			wantRule: eval.RuleRoute,
			wantIn:   "llama does not serve qwen",
		},
		{
			name:     "a route to a local model names its lane",
			plan:     with(func(a *model.Assignment) { a.Routes[1] = route("q", "qwen", "") }),
			wantRule: eval.RuleRoute,
		},
		{
			name:     "a route to an external model names no lane",
			plan:     with(func(a *model.Assignment) { a.Routes[1] = route("q", "gpt", "qwen-tp2") }),
			wantRule: eval.RuleRoute,
		},
		{
			name:     "external models serve nothing when they are not allowed",
			extra:    []pooltest.Part{pooltest.Settings(func(s *model.Settings) { s.ExternalAllowed = false })},
			plan:     with(func(a *model.Assignment) { a.Routes[1] = route("q", "gpt", "") }),
			wantRule: eval.RuleRoute,
		},
		{
			name:     "a route to an unknown model is a violation",
			plan:     with(func(a *model.Assignment) { a.Routes[1] = route("q", "nope", "") }),
			wantRule: eval.RuleRoute,
		},
		{
			name:     "a route for something that is not a demand source is a violation",
			plan:     with(func(a *model.Assignment) { a.Routes = append(a.Routes, route("model:llama", "llama", "llama")) }),
			wantRule: eval.RuleUnknownSource,
		},
		{
			name:  "a directly requested model is its own demand source",
			extra: []pooltest.Part{pooltest.Direct("llama", 2)},
			plan:  with(func(a *model.Assignment) { a.Routes = append(a.Routes, route("model:llama", "llama", "llama")) }),
		},
		{
			name:     "one route per source",
			plan:     with(func(a *model.Assignment) { a.Routes = append(a.Routes, route("q", "gpt", "")) }),
			wantRule: eval.RuleDuplicateRoute,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := eval.Check(basePool(tc.extra...), tc.plan)
			if tc.wantRule == "" {
				if err := r.Err(); err != nil {
					t.Fatalf("Check = %v, want valid", err)
				}
				return
			}
			if r.Valid || !r.Has(tc.wantRule) {
				t.Fatalf("Check violations = %v, want rule %s", r.Violations, tc.wantRule)
			}
			found := false
			for _, v := range r.Violations {
				found = found || v.Rule == tc.wantRule && strings.Contains(v.Message, tc.wantIn)
			}
			if !found {
				t.Errorf("Check violations = %v, want a %s message containing %q", r.Violations, tc.wantRule, tc.wantIn)
			}
		})
	}
}

func TestALinkTakenFromALaneHoldsOnlyWhenThatLaneIsSeenRunning(t *testing.T) {
	tests := []struct {
		name, source, status string
		linked               bool
	}{
		{"a link from the config's discovery holds", "config discovery", model.LaneDeclared, true},
		{"a lane a gateway shows healthy across the pair is a link", "running lane qwen-tp2", "external, healthy", true},
		{"a lane the config only declares is no link", "running lane qwen-tp2", model.LaneDeclared, false},
		{"a lane running but unhealthy is no link", "running lane qwen-tp2", "running, unhealthy", false},
		{"a link assumed from a configured lane is no link", "assumed: qwen-tp2 is configured there and not known to be stopped", "external, healthy", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := basePool()
			for i := range p.Links {
				p.Links[i].Source = tc.source
			}
			for i := range p.Current.Lanes {
				p.Current.Lanes[i].Status = tc.status
			}
			rep := eval.Check(p, good())
			broken := false
			for _, v := range rep.Violations {
				if v.Rule == eval.RuleEligibility && strings.Contains(v.Message, "spark-01 and spark-02 are not directly linked") {
					broken = true
				}
			}
			if broken == tc.linked {
				t.Errorf("linked = %v, want %v; violations %+v", !broken, tc.linked, rep.Violations)
			}
		})
	}
}
