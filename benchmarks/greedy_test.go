package benchmarks

import (
	"fmt"
	"testing"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/solver/localsearch"
)

// TestGreedyHoldsEveryPinOfTheLargestFleets: the greedy start is the
// plan every later phase stands on. It once offered a keepWarm lane of
// low demand no `always` option, so 27 pins of 256x1000 broke and short
// limits returned no plan at all.
func TestGreedyHoldsEveryPinOfTheLargestFleets(t *testing.T) {
	if testing.Short() {
		t.Skip("generates 256-node fleets")
	}
	for _, size := range []string{"64x250", "256x1000", "256x1000-tight"} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", size, seed), func(t *testing.T) {
				p, err := SizePool(size, seed)
				if err != nil {
					t.Fatal(err)
				}
				rep := eval.Check(p, localsearch.Greedy(p, seed))
				if !rep.Valid {
					t.Fatalf("greedy plan breaks %d rules, first: %v", len(rep.Violations), rep.Violations[0])
				}
			})
		}
	}
}
