package solver

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

// The brief's example: keepWarm lanes hold 108 GiB of spark-node-02's
// 111.6 GiB plan budget, and a pin asks for 40 GiB more. A fourth pin on
// another node has nothing to do with it and must not be named.
func TestConflictingPinsGiveAMinimalExplanationInOperatorTerms(t *testing.T) {
	spark := func(id string) pooltest.Part {
		return pooltest.Node(id, 121.69, pooltest.Spark(), pooltest.BudgetGb(115.6))
	}
	p := pooltest.New(
		spark("spark-node-01"), spark("spark-node-02"),
		pooltest.Variant("held-a", 60, pooltest.Serves("a"), pooltest.On("spark-node-02")),
		pooltest.Variant("held-b", 48, pooltest.Serves("b"), pooltest.On("spark-node-02")),
		pooltest.Variant("qwen38-27b-nvfp4", 40, pooltest.Serves("qwen"), pooltest.On("spark-node-02")),
		pooltest.Variant("other", 30, pooltest.Serves("o"), pooltest.On("spark-node-01")),
		pooltest.Alias("q", 5, "qwen"),
		pooltest.PinLane("held-a", model.Always, "spark-node-02"),
		pooltest.PinLane("other", model.Always, "spark-node-01"),
		pooltest.PinLane("held-b", model.Always, "spark-node-02"),
		pooltest.PinLane("qwen38-27b-nvfp4", "", "spark-node-02"),
	)
	res := solve(t, p, Options{})
	if !res.Infeasible {
		t.Fatalf("Solve = %v, want infeasible", res.Objective)
	}
	if len(res.Explanations) != 1 {
		t.Fatalf("explanations = %+v, want one", res.Explanations)
	}
	ex := res.Explanations[0]
	want := []string{"held-a@spark-node-02:always", "held-b@spark-node-02:always", "qwen38-27b-nvfp4@spark-node-02"}
	got := slices.Clone(ex.Pins)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("conflict set = %v, want the minimal %v", ex.Pins, want)
	}
	for _, part := range []string{"needs 40 GiB", "budget 115.6 GiB - headroom 4 = 111.6 GiB", "holds 108 GiB of always-resident lanes"} {
		if !strings.Contains(ex.Reason, part) {
			t.Errorf("reason %q lacks %q", ex.Reason, part)
		}
	}
}

func TestAPinOnACordonedNodeNamesTheCordon(t *testing.T) {
	p := pooltest.New(
		pooltest.Node("mac-01", 64, pooltest.Mac(), pooltest.Cordoned()),
		pooltest.Variant("llama", 20, pooltest.Serves("llama"), pooltest.On("mac-01")),
		pooltest.Alias("l", 1, "llama"),
		pooltest.PinLane("llama", "", "mac-01"),
	)
	res := solve(t, p, Options{})
	if !res.Infeasible || len(res.Explanations) != 1 {
		t.Fatalf("Solve = %+v, want one infeasibility explanation", res)
	}
	ex := res.Explanations[0]
	if len(ex.Pins) != 2 || !strings.Contains(ex.Reason, "mac-01 is cordoned") {
		t.Errorf("explanation %+v, want the pin and the cordon of mac-01", ex)
	}
}

func TestEveryUncoveredSourceIsExplained(t *testing.T) {
	p := pooltest.New(
		pooltest.Node("mac-01", 32, pooltest.Mac()),
		pooltest.Variant("big", 40, pooltest.Serves("big"), pooltest.On("mac-01")),
		pooltest.Variant("cuda", 10, pooltest.Serves("cu"), pooltest.Archs("sm_121"), pooltest.On("mac-01")),
		pooltest.Alias("b", 3, "big"),
		pooltest.Alias("c", 3, "cu"),
		pooltest.Alias("gone", 3, "nope"),
	)
	res := solve(t, p, Options{})
	if res.Objective[0] != 3 {
		t.Fatalf("objective %v, want three uncovered aliases", res.Objective)
	}
	reasons := map[string]string{}
	for _, ex := range res.Explanations {
		reasons[ex.Subject] = ex.Reason
	}
	for subject, part := range map[string]string{
		"b":    "budget",
		"c":    "needs sm_121",
		"gone": "nope is not a model of the pool",
	} {
		if !strings.Contains(reasons[subject], part) {
			t.Errorf("reason for %s = %q, want it to mention %q", subject, reasons[subject], part)
		}
	}
}

// Regression for gini's stale deadline: after a Try
// that times out, a plain Solve (or GoSolve) inherits the expired deadline
// and gives up at its first tick, which is why the solver never calls
// Solve. A new Try sets a fresh deadline and must get its full time.
func TestTryAfterAnExpiredTryGetsItsFullTime(t *testing.T) {
	g := gini.New()
	php(g, 10, 9) // pigeonhole: UNSAT and slow to refute
	if r := g.Try(time.Millisecond); r != 0 {
		t.Skipf("pigeonhole answered %d within 1 ms; no timeout to test", r)
	}
	start := time.Now()
	r := g.Try(300 * time.Millisecond)
	if el := time.Since(start); r == 0 && el < 200*time.Millisecond {
		t.Errorf("Try(300ms) after an expired Try gave up after %v: stale deadline", el)
	}
}

// php adds pigeons-into-holes clauses: pigeons > holes is UNSAT.
func php(g *gini.Gini, pigeons, holes int) {
	v := make([][]z.Lit, pigeons)
	for i := range v {
		v[i] = make([]z.Lit, holes)
		for j := range v[i] {
			v[i][j] = g.Lit()
		}
		for _, m := range v[i] {
			g.Add(m)
		}
		g.Add(0)
	}
	for j := 0; j < holes; j++ {
		for a := 0; a < pigeons; a++ {
			for b := a + 1; b < pigeons; b++ {
				g.Add(v[a][j].Not())
				g.Add(v[b][j].Not())
				g.Add(0)
			}
		}
	}
}
