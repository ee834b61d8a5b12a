package plan_test

import (
	"fmt"
	"os"

	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
	"github.com/poolsolve/poolsolve/solver"
)

// A Mac that runs a model on demand today; the plan keeps it warm.
func ExampleWriteText() {
	pool := pooltest.New(
		pooltest.Node("mac-01", 64, pooltest.Mac()),
		pooltest.Variant("qwen-mlx", 20, pooltest.On("mac-01"), pooltest.Serves("qwen"), pooltest.Perf(600, 0)),
		pooltest.Alias("chat", 500, "qwen"),
		pooltest.Running("qwen-mlx", model.Auto, "mac-01"),
		pooltest.Routed("chat", "qwen"),
	)
	res := &solver.Result{
		Assignment: model.Assignment{
			Lanes:  []model.LaneChoice{{Variant: "qwen-mlx", Nodes: []string{"mac-01"}, Residency: model.Always}},
			Routes: []model.RouteChoice{{Source: "chat", Model: "qwen", Variant: "qwen-mlx"}},
		},
		Objective: model.Objective{0, 0, 0, 330},
		Levels: [4]solver.Level{
			{Index: 1, Value: 0, Status: solver.Optimal, BoundSource: "trivial"},
			{Index: 2, Value: 0, Status: solver.Optimal, BoundSource: "trivial"},
			{Index: 3, Value: 0, Status: solver.Optimal, BoundSource: "trivial"},
			{Index: 4, Value: 330, LowerBound: 330, Status: solver.Optimal, BoundSource: "sat-unsat"},
		},
	}
	p := plan.Build(pool, res, plan.Meta{Solver: "exact"})
	if err := plan.WriteText(os.Stdout, p, plan.TextOptions{}); err != nil {
		fmt.Println(err)
	}
	fmt.Println("changes:", p.HasChanges())
	// Output:
	// poolsolve plan — dry run: nothing is started, stopped or rerouted.
	// Planned solver exact.
	//
	// Nodes
	//   mac-01  (unified:0  plan 52 GiB of 56 GiB admitted; resident 20 GiB; free 32 GiB)
	//       qwen-mlx  always  20 GiB  qwen
	//
	// Routes
	//   source   demand  served by  first token  SLO  lane
	//   chat    500 req  qwen            600 ms       qwen-mlx
	//
	// Now (as the gateways report it)
	//   qwen-mlx  mac-01  runs  read: running
	//
	// Objective (each level minimised before the next)
	//   1 coverage             0  uncovered sources       proved optimal
	//   2 external-fallback    0  aliases external first  proved optimal
	//   3 slo                  0  SLO violations          proved optimal
	//   4 latency+churn      330  units of 1 s            proved optimal
	//   latency+churn is counted in units of 1 s: one unit is one request waiting 1 s for its first token (demand times expected first-token latency); a start or move adds its load time, weighted, and every change a hysteresis, in the same units.
	//
	// Changes
	//   ~ residency  qwen-mlx on mac-01: auto -> always: latency: chat expects 600 ms first token instead of 8100 ms as auto
	//
	// Plan: 0 to start, 0 to stop, 0 to move, 1 residency change, 0 re-routes, 0 manual actions.
	//
	// Rollout
	//   1 step in 1 wave, about 30 s when each wave's steps run in parallel; order proved optimal: no source covered now and in the plan loses coverage.
	//   1.  wave 1  ~ residency  qwen-mlx on mac-01: auto -> always; wait until healthy (load 30 s)
	// changes: true
}
