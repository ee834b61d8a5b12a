package solver

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/internal/pooltest"
)

// When less time is left after the warm start than it took, the warm
// plan is the exact solver's answer, and the time left goes to local
// search from it, as the greedy solver's search runs to the deadline.
// Before, these three pools at 30 units got the warm start's plan alone,
// behind the greedy solver's on every level but the second: [21 0 13
// 16280], [13 0 9 31476] and [22 0 12 19730] against [8 0 9 16137],
// [10 0 4 18911] and [10 0 11 17886].
func TestAnExactAnswerThatIsTheWarmPlanGetsTheTimeLeft(t *testing.T) {
	if testing.Short() {
		t.Skip("solves 64-node pools")
	}
	for _, seed := range []uint64{1, 4, 5} {
		p := pooltest.Random(seed, 64, 250)
		var tr bytes.Buffer
		ex, err := Solve(context.Background(), p, Options{WorkLimit: 30, Seed: seed, Trace: &tr})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(tr.String(), "warm start to the deadline") {
			t.Fatalf("Random(%d, 64, 250) at 30 units: the warm plan was not the answer, or got no more search:\n%s", seed, tr.String())
		}
		gr, err := Solve(context.Background(), p, Options{WorkLimit: 30, Seed: seed, Solver: Greedy})
		if err != nil {
			t.Fatal(err)
		}
		if gr.Objective.Less(ex.Objective) {
			t.Errorf("Random(%d, 64, 250) at 30 units: exact %v, greedy %v", seed, ex.Objective, gr.Objective)
		}
	}
}
