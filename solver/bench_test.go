package solver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/internal/pooltest"
)

// BenchmarkSolve runs the exact solver with the default 5 s limit on
// pooltest.Random pools; it reports the encoding's size, how many levels
// were proved, and level 4's gap.
func BenchmarkSolve(b *testing.B) {
	for _, sz := range [][2]int{{3, 10}, {8, 20}, {24, 60}} {
		p := pooltest.Random(1, sz[0], sz[1])
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			if testing.Short() && sz[0] > 8 {
				b.Skip("large size skipped in -short")
			}
			var res *Result
			for b.Loop() {
				var err error
				res, err = Solve(context.Background(), p, Options{Seed: 1, TimeLimit: 5 * time.Second})
				if err != nil {
					b.Fatal(err)
				}
			}
			proved := 0
			for _, l := range res.Levels {
				if l.Status == Optimal {
					proved++
				}
			}
			b.ReportMetric(float64(res.Stats.Vars), "vars")
			b.ReportMetric(float64(res.Stats.Clauses), "clauses")
			b.ReportMetric(float64(proved), "proved-levels")
			b.ReportMetric(res.Levels[3].Gap, "L4-gap")
			b.ReportMetric(float64(res.Stats.TimeToFirst.Microseconds())/1000, "ms-to-first")
		})
	}
}
