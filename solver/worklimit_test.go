package solver

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/poolsolve/poolsolve/internal/pooltest"
)

// Under a work limit the plan depends on the pool, the seed and the limit
// only: a search cut short by the limit and one proved give the same
// bytes idle and beside goroutines that keep both cores busy.
func TestAWorkLimitGivesTheSamePlanUnderAnyLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("solves 24- and 64-node pools four times")
	}
	tests := []struct {
		name        string
		nodes, vars int
		work        int64
		wantProved  bool
	}{
		{"a 24-node pool cut short at 40 units", 24, 60, 40, false},
		{"a 64-node pool cut short at 300 units", 64, 250, 300, false},
		{"a 24-node pool proved within 3000 units", 24, 60, 3000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := pooltest.Random(1, tt.nodes, tt.vars)
			solve := func() (string, *Result) {
				res, err := Solve(context.Background(), p, Options{WorkLimit: tt.work, Seed: 1})
				if err != nil {
					t.Fatal(err)
				}
				b, err := json.Marshal(struct {
					A any
					L any
					E any
				}{res.Assignment, res.Levels, res.Explanations})
				if err != nil {
					t.Fatal(err)
				}
				return string(b), res
			}
			idle, res := solve()
			if got := res.Stop == StopProved; got != tt.wantProved {
				t.Fatalf("proved %v (stop %s, objective %v), want %v", got, res.Stop, res.Objective, tt.wantProved)
			}
			if res.Stats.Workers != WorkersNone {
				t.Errorf("workers %q under a work limit, want none", res.Stats.Workers)
			}
			var stop atomic.Bool
			var wg sync.WaitGroup
			for range 2 {
				wg.Go(func() {
					for n := 0; !stop.Load(); n++ {
						_ = n * n
					}
				})
			}
			busy, _ := solve()
			stop.Store(true)
			wg.Wait()
			if busy != idle {
				t.Errorf("the plan beside two busy goroutines differs from the idle one")
			}
		})
	}
}

// A work limit past MaxWorkLimit would overflow the counted clock's time
// and end the search at once; it is refused, as a negative one is.
func TestAWorkLimitOutOfRangeIsRefused(t *testing.T) {
	p := pooltest.Random(1, 3, 5)
	for _, w := range []int64{-1, MaxWorkLimit + 1, 9_000_000_000_000_000_000} {
		if _, err := Solve(context.Background(), p, Options{WorkLimit: w}); err == nil {
			t.Errorf("work limit %d: no error", w)
		}
	}
	if _, err := Solve(context.Background(), p, Options{WorkLimit: MaxWorkLimit}); err != nil {
		t.Errorf("work limit %d: %v", MaxWorkLimit, err)
	}
}
