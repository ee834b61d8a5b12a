package solver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/internal/pooltest"
)

// lpFixture encodes pooltest.Random(seed, nodes, variants) and solves it
// once, so that the LP has an incumbent to freeze the earlier levels at.
func lpFixture(tb testing.TB, seed uint64, nodes, variants int, limit time.Duration) (*exact, *Result) {
	tb.Helper()
	p := pooltest.Random(seed, nodes, variants)
	res, err := Solve(context.Background(), p, Options{Seed: 1, TimeLimit: limit})
	if err != nil {
		tb.Fatalf("Solve: %v", err)
	}
	e, err := encode.New(p, encode.Options{})
	if err != nil {
		tb.Fatalf("encode: %v", err)
	}
	return &exact{p: p, e: e, ass: e.AssumptionLits(), obj: res.Objective, best: res.Assignment}, res
}

// BenchmarkStrongLP times level 4's strengthened LP (its cut rounds
// included) on random pools, with the earlier levels frozen at a 5 s
// solve's values.
func BenchmarkStrongLP(b *testing.B) {
	for _, sz := range [][2]int{{8, 20}, {24, 60}} {
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			x, res := lpFixture(b, 1, sz[0], sz[1], 5*time.Second)
			var lb int64
			for b.Loop() {
				sr, ok := strongLP(x, 3, res.Objective[3]-1, time.Now().Add(time.Hour))
				lb = -1
				if ok && !sr.noLP {
					lb = sr.bound
				}
			}
			b.ReportMetric(float64(len(x.e.Linear.Rows)), "rows")
			b.ReportMetric(float64(lb), "L4-lp")
			b.ReportMetric(float64(res.Objective[3]), "L4-value")
		})
	}
}

// On random pools the strengthened LP's bound of every level, with the
// earlier levels frozen at their proved values, never exceeds the proved
// optimum.
func TestTheLPBoundNeverExceedsTheProvedOptimumOnRandomPools(t *testing.T) {
	checked := 0
	for seed := uint64(1); seed <= 16; seed++ {
		nodes, variants := 2+int(seed%4), 4+int(seed%9)
		x, res := lpFixture(t, seed, nodes, variants, 10*time.Second)
		if res.Infeasible {
			continue
		}
		for i, l := range res.Levels {
			if l.Status != Optimal {
				break // later levels are optimal only given this freeze
			}
			sr, ok := strongLP(x, i, l.Value-1, time.Now().Add(time.Minute))
			lb := sr.bound
			if !ok || sr.noLP {
				t.Errorf("pool %d (%dx%d) level %d: no LP bound", seed, nodes, variants, i+1)
				continue
			}
			checked++
			if lb > l.Value {
				t.Errorf("pool %d (%dx%d) level %d: LP bound %d above the proved optimum %d",
					seed, nodes, variants, i+1, lb, l.Value)
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d levels checked", checked)
	}
}
