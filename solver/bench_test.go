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

// BenchmarkSolveShortLimit measures how far past a short limit Solve
// returns on a pool too big to prove in it (64x250): ms-over-limit is the
// worst overshoot of the runs, which the explanations' grace bounds on an
// idle machine and load stretches.
func BenchmarkSolveShortLimit(b *testing.B) {
	p := pooltest.Random(1, 64, 250)
	for _, limit := range []time.Duration{100 * time.Millisecond, time.Second} {
		b.Run(fmt.Sprintf("64x250/%v", limit), func(b *testing.B) {
			var worst time.Duration
			for b.Loop() {
				start := time.Now()
				if _, err := Solve(context.Background(), p, Options{Seed: 1, TimeLimit: limit}); err != nil {
					b.Fatal(err)
				}
				worst = max(worst, time.Since(start)-limit)
			}
			b.ReportMetric(float64(worst.Microseconds())/1000, "ms-over-limit")
		})
	}
}

// BenchmarkSolveCancelled measures how soon Solve returns once its
// context is cancelled (plan's first Ctrl-C) during the search of a
// 64x250 pool with a minute's limit: ms-after-cancel is the worst.
func BenchmarkSolveCancelled(b *testing.B) {
	p := pooltest.Random(1, 64, 250)
	for _, after := range []time.Duration{300 * time.Millisecond, 1500 * time.Millisecond} {
		b.Run(fmt.Sprintf("64x250/after-%v", after), func(b *testing.B) {
			var worst time.Duration
			for b.Loop() {
				ctx, cancel := context.WithCancel(context.Background())
				at := make(chan time.Time, 1)
				tm := time.AfterFunc(after, func() { at <- time.Now(); cancel() })
				if _, err := Solve(ctx, p, Options{Seed: 1, TimeLimit: time.Minute}); err != nil {
					b.Fatal(err)
				}
				tm.Stop()
				cancel()
				select {
				case t := <-at:
					worst = max(worst, time.Since(t))
				default:
				}
			}
			b.ReportMetric(float64(worst.Microseconds())/1000, "ms-after-cancel")
		})
	}
}
