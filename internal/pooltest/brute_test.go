package pooltest_test

import (
	"testing"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

func TestBruteForceFindsTheKnownOptimum(t *testing.T) {
	// One Spark fits either the fast 80 GiB lane or the slow 30 GiB one
	// resident; both as auto fit too. Demand 20 on the alias makes the
	// fast lane always (20 x 200 ms = 4) plus start (10 + 30) the optimum:
	// [0 0 0 44]. Anything else pays more latency or more starts.
	p := pooltest.New(
		pooltest.Node("spark-01", 121.69, pooltest.Spark()),
		pooltest.Variant("fast", 80, pooltest.Serves("m"), pooltest.On("spark-01"), pooltest.Perf(200, 0), pooltest.LoadMs(10000)),
		pooltest.Variant("slow", 30, pooltest.Serves("m"), pooltest.On("spark-01"), pooltest.Perf(900, 0), pooltest.LoadMs(10000)),
		pooltest.External("gpt", 1500),
		pooltest.Alias("a", 20, "m", "gpt"),
	)
	got, plan, ok := pooltest.BruteForce(p)
	if want := (model.Objective{0, 0, 0, 44}); !ok || got != want {
		t.Fatalf("BruteForce = %v, %v, want %v, true", got, ok, want)
	}
	if r := eval.Check(p, plan); r.Err() != nil || r.Objective != got {
		t.Errorf("BruteForce plan checks as %v, %v", r.Objective, r.Err())
	}
	if len(plan.Lanes) != 1 || plan.Lanes[0].Variant != "fast" || plan.Lanes[0].Residency != model.Always {
		t.Errorf("BruteForce plan lanes = %+v, want fast always", plan.Lanes)
	}
}

func TestBruteForceReportsConflictingPinsAsInfeasible(t *testing.T) {
	p := pooltest.New(
		pooltest.Node("mac-01", 64, pooltest.Mac()),
		pooltest.Variant("a", 40, pooltest.On("mac-01")),
		pooltest.Variant("b", 40, pooltest.On("mac-01")),
		pooltest.PinLane("a", model.Always),
		pooltest.PinLane("b", model.Preferred),
	)
	if _, _, ok := pooltest.BruteForce(p); ok {
		t.Errorf("BruteForce found a plan for 80 GiB of pinned resident lanes on a 52 GiB budget")
	}
}

func TestBruteForceRandomPoolsStayWithinTheLimit(t *testing.T) {
	fits := 0
	for seed := range uint64(40) {
		p := pooltest.Random(seed, 2, 3)
		if pooltest.Combinations(p) <= pooltest.BruteForceLimit/16 {
			fits++
		}
	}
	if fits < 30 {
		t.Errorf("%d of 40 small random pools are cheap to brute-force, want most", fits)
	}
}
