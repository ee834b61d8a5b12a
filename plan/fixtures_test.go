package plan_test

import (
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

// sparkFleet is the three-Spark fleet of the LLooM docs: an unmanaged TP2
// pair lane on 01+02 serving qwen3.8-flash-next, and the 27B, embedding
// and image lanes on 03. Budgets follow the fleet's runtimePolicy
// (maxMemoryUtilization 0.95 of 121.69 GiB = 115.6 admitted, 111.6 to
// plan after 4 GiB headroom).
func sparkFleet(extra ...pooltest.Part) *model.Pool {
	parts := []pooltest.Part{
		pooltest.Node("spark-node-01", 121.69, pooltest.Spark()),
		pooltest.Node("spark-node-02", 121.69, pooltest.Spark()),
		pooltest.Node("spark-node-03", 121.69, pooltest.Spark()),
		pooltest.Link("spark-node-01", "spark-node-02"),
		pooltest.Link("spark-node-01", "spark-node-03"),
		pooltest.Link("spark-node-02", "spark-node-03"),
		pooltest.Variant("sparkqwen-pair", 108, pooltest.Kind(model.Unmanaged), pooltest.TP(2),
			pooltest.On("spark-node-01", "spark-node-02"), pooltest.Serves("qwen3.8-flash-next"),
			pooltest.Perf(850, 0), pooltest.LoadMs(600000), pooltest.DefaultResidency(model.Always)),
		pooltest.Variant("qwen38-27b-nvfp4", 40, pooltest.On("spark-node-03"), pooltest.Perf(900, 0), pooltest.LoadMs(120000)),
		pooltest.Variant("qwen3-embedding-4b", 12, pooltest.On("spark-node-03"), pooltest.Serves("Qwen/Qwen3-Embedding-4B"),
			pooltest.Perf(150, 0), pooltest.LoadMs(30000), pooltest.DefaultResidency(model.Always)),
		pooltest.Variant("qwen-image-diffusers", 70, pooltest.On("spark-node-03"), pooltest.Serves("Qwen/Qwen-Image-2.1-Diffusers"),
			pooltest.Perf(4000, 0), pooltest.LoadMs(90000), pooltest.DefaultResidency(model.Preferred)),
		pooltest.Variant("recipe:spark-stt/whisper", 6, pooltest.Kind(model.Recipe), pooltest.On("spark-node-03"),
			pooltest.Serves("openai/whisper-large-v3-turbo"), pooltest.Perf(300, 0), pooltest.LoadMs(20000)),
		pooltest.External("cloud/openrouter/q38fn", 1500),
		pooltest.Alias("q38fn", 1840, "qwen3.8-flash-next", "cloud/openrouter/q38fn"),
		pooltest.RouteProfile("q38fn", "local-first", "qwen3.8-flash-next", "cloud/openrouter/q38fn"),
		pooltest.RouteProfile("q38fn", "standalone", "qwen38-27b-nvfp4", "cloud/openrouter/q38fn"),
		pooltest.RouteProfile("q38fn", "cloud", "cloud/openrouter/q38fn"),
		pooltest.SLO("q38fn", 2000, 0),
		pooltest.Alias("enntity-presence", 5200, "qwen3.8-flash-next", "cloud/openrouter/q38fn"),
		pooltest.RouteProfile("enntity-presence", "local", "qwen3.8-flash-next", "cloud/openrouter/q38fn"),
		pooltest.RouteProfile("enntity-presence", "standalone", "qwen38-27b-nvfp4", "cloud/openrouter/q38fn"),
		pooltest.Alias("embeddings", 22000, "Qwen/Qwen3-Embedding-4B"),
		pooltest.Alias("stt", 300, "openai/whisper-large-v3-turbo"),
		pooltest.Direct("Qwen/Qwen-Image-2.1-Diffusers", 40),
		pooltest.Running("sparkqwen-pair", model.Always, "spark-node-01", "spark-node-02"),
		pooltest.Running("qwen38-27b-nvfp4", model.Auto, "spark-node-03"),
		pooltest.Running("qwen3-embedding-4b", model.Always, "spark-node-03"),
		pooltest.Running("qwen-image-diffusers", model.Preferred, "spark-node-03"),
		pooltest.Routed("q38fn", "qwen3.8-flash-next"),
		pooltest.Routed("enntity-presence", "qwen3.8-flash-next"),
		pooltest.Routed("embeddings", "Qwen/Qwen3-Embedding-4B"),
	}
	p := pooltest.New(append(parts, extra...)...)
	for i := range p.Nodes {
		for j := range p.Nodes[i].Domains {
			total, util := 121.69, 0.95
			p.Nodes[i].Domains[j].Budget = model.ComputeBudget(model.BudgetInputs{
				Primary: true, ConfiguredTotalGb: &total, PolicyMaxUtil: &util, HeadroomGb: p.Settings.HeadroomGb,
			})
		}
	}
	for i := range p.Aliases {
		switch p.Aliases[i].ID {
		case "q38fn":
			p.Aliases[i].ActiveRoute = "local-first"
		case "enntity-presence":
			p.Aliases[i].ActiveRoute = "local"
		}
	}
	for i := range p.Current.Routes {
		switch p.Current.Routes[i].Alias {
		case "q38fn":
			p.Current.Routes[i].Route = "local-first"
		case "enntity-presence":
			p.Current.Routes[i].Route = "local"
		}
	}
	return p
}

// cordonedPair is the fleet with spark-node-02 cordoned, so the pair lane
// cannot run, and the plan a solver finds for it: the 27B goes always and
// serves both cognition aliases, the image lane no longer fits next to it,
// and the speech recipe starts.
func cordonedPair() (*model.Pool, *solver.Result) {
	p := sparkFleet()
	for i := range p.Nodes {
		if p.Nodes[i].ID == "spark-node-02" {
			p.Nodes[i].Unavailable = "cordoned (--cordon)"
		}
	}
	res := &solver.Result{
		Assignment: model.Assignment{
			Lanes: []model.LaneChoice{
				{Variant: "qwen3-embedding-4b", Nodes: []string{"spark-node-03"}, Residency: model.Always},
				{Variant: "qwen38-27b-nvfp4", Nodes: []string{"spark-node-03"}, Residency: model.Always},
				{Variant: "recipe:spark-stt/whisper", Nodes: []string{"spark-node-03"}, Residency: model.Auto},
			},
			Routes: []model.RouteChoice{
				{Source: "embeddings", Model: "Qwen/Qwen3-Embedding-4B", Variant: "qwen3-embedding-4b"},
				{Source: "enntity-presence", Model: "qwen38-27b-nvfp4", Variant: "qwen38-27b-nvfp4"},
				{Source: "model:Qwen/Qwen-Image-2.1-Diffusers"},
				{Source: "q38fn", Model: "qwen38-27b-nvfp4", Variant: "qwen38-27b-nvfp4"},
				{Source: "stt", Model: "openai/whisper-large-v3-turbo", Variant: "recipe:spark-stt/whisper"},
			},
		},
		Objective: model.Objective{1, 0, 0, 412},
		Levels: [4]solver.Level{
			{Index: 1, Name: "coverage", Value: 1, Status: solver.Optimal, LowerBound: 1, BoundSource: "sat-unsat"},
			{Index: 2, Name: "external-fallback", Value: 0, Status: solver.Optimal, LowerBound: 0, BoundSource: "trivial"},
			{Index: 3, Name: "slo", Value: 0, Status: solver.Optimal, LowerBound: 0, BoundSource: "sat-unsat"},
			{Index: 4, Name: "latency+churn", Value: 412, Status: solver.Bounded, LowerBound: 400, BoundSource: "lp", Gap: 12.0 / 412},
		},
		Explanations: []solver.Explanation{{
			Subject: "model:Qwen/Qwen-Image-2.1-Diffusers",
			Reason:  "qwen-image-diffusers needs 70 GiB on spark-node-03 unified:0, where qwen3-embedding-4b and qwen38-27b-nvfp4 keep 52 GiB always; plan budget 111.6 GiB",
			Pins:    []string{"--cordon spark-node-02"},
		}},
		Stats: solver.Stats{Solver: "exact"},
	}
	return p, res
}

// steady is the fleet with every node present and a plan that keeps
// everything as it runs.
func steady() (*model.Pool, *solver.Result) {
	p := sparkFleet()
	res := &solver.Result{
		Assignment: model.Assignment{
			Lanes: []model.LaneChoice{
				{Variant: "qwen-image-diffusers", Nodes: []string{"spark-node-03"}, Residency: model.Preferred},
				{Variant: "qwen3-embedding-4b", Nodes: []string{"spark-node-03"}, Residency: model.Always},
				{Variant: "qwen38-27b-nvfp4", Nodes: []string{"spark-node-03"}, Residency: model.Auto},
				{Variant: "sparkqwen-pair", Nodes: []string{"spark-node-01", "spark-node-02"}, Residency: model.Always},
			},
			Routes: []model.RouteChoice{
				{Source: "embeddings", Model: "Qwen/Qwen3-Embedding-4B", Variant: "qwen3-embedding-4b"},
				{Source: "enntity-presence", Model: "qwen3.8-flash-next", Variant: "sparkqwen-pair"},
				{Source: "model:Qwen/Qwen-Image-2.1-Diffusers", Model: "Qwen/Qwen-Image-2.1-Diffusers", Variant: "qwen-image-diffusers"},
				{Source: "q38fn", Model: "qwen3.8-flash-next", Variant: "sparkqwen-pair"},
				{Source: "stt"},
			},
		},
		Objective: model.Objective{1, 0, 0, 12},
		Levels: [4]solver.Level{
			{Index: 1, Name: "coverage", Value: 1, Status: solver.Optimal, LowerBound: 1, BoundSource: "sat-unsat"},
			{Index: 2, Name: "external-fallback", Value: 0, Status: solver.Optimal, LowerBound: 0, BoundSource: "trivial"},
			{Index: 3, Name: "slo", Value: 0, Status: solver.Optimal, LowerBound: 0, BoundSource: "sat-unsat"},
			{Index: 4, Name: "latency+churn", Value: 12, Status: solver.Optimal, LowerBound: 12, BoundSource: "sat-unsat"},
		},
		Explanations: []solver.Explanation{{Subject: "stt", Reason: "starting recipe:spark-stt/whisper costs more than the 300 requests it would serve"}},
		Stats:        solver.Stats{Solver: "exact"},
	}
	return p, res
}

// infeasible is the fleet with pins that cannot hold together.
func infeasible() (*model.Pool, *solver.Result) {
	p := sparkFleet(
		pooltest.PinLane("qwen-image-diffusers", model.Always, "spark-node-03"),
		pooltest.PinLane("qwen38-27b-nvfp4", model.Always, "spark-node-03"),
	)
	res := &solver.Result{
		Infeasible: true,
		Explanations: []solver.Explanation{{
			Subject: "qwen-image-diffusers@spark-node-03:always",
			Reason:  "70 GiB + 40 GiB + 12 GiB always on spark-node-03 unified:0 exceed its plan budget of 111.6 GiB",
			Pins:    []string{"qwen-image-diffusers@spark-node-03:always", "qwen38-27b-nvfp4@spark-node-03:always", "keepWarm qwen3-embedding-4b"},
		}},
		Stats: solver.Stats{Solver: "exact"},
	}
	return p, res
}
