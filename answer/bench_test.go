package answer_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/answer"
	"github.com/poolsolve/poolsolve/benchmarks"
	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

// BenchmarkResilience times the full N-1 table in process: the base plan
// (solver.Solve, 5 s limit) and every node and link re-planned on one
// encoding. It reports the split, how many scenarios were proved at
// every level and at levels 1-3, and the scenario count; cpu-ms-replans
// is the process's CPU time in the re-plans (the machine is shared). 24x60 is the
// bench suite's instance (seed 1), 24x60-random pooltest.Random(1, 24,
// 60), whose level 4 the solver does not prove in 5 s either.
func BenchmarkResilience(b *testing.B) {
	spark, _, _ := sparkFleet(b, catalog.Options{})
	sz, err := benchmarks.ParseSize("24x60")
	if err != nil {
		b.Fatal(err)
	}
	insts, err := benchmarks.SizeInstances([]benchmarks.Size{sz}, 1)
	if err != nil {
		b.Fatal(err)
	}
	suite, err := insts[0].Pool()
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		pool *model.Pool
	}{
		{"spark-fleet", spark},
		{"24x60", suite},
		{"24x60-random", pooltest.Random(1, 24, 60)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			if testing.Short() && bc.name != "spark-fleet" {
				b.Skip("large size skipped in -short")
			}
			var r *answer.Report
			var solveTime, replanTime, replanCPU time.Duration
			for b.Loop() {
				t0 := time.Now()
				base, err := solver.Solve(context.Background(), bc.pool, solver.Options{Seed: 1, TimeLimit: 5 * time.Second})
				if err != nil {
					b.Fatal(err)
				}
				t1, c1 := time.Now(), cpuTime()
				r, err = answer.Resilience(context.Background(), bc.pool, base, answer.ResilienceOptions{Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				solveTime += t1.Sub(t0)
				replanTime += time.Since(t1)
				replanCPU += cpuTime() - c1
			}
			first3 := 0
			for _, s := range r.Scenarios {
				ok := len(s.Levels) == 4
				for _, l := range s.Levels[:min(3, len(s.Levels))] {
					ok = ok && l.Status == "optimal"
				}
				if ok {
					first3++
				}
			}
			n := float64(b.N)
			b.ReportMetric(float64(solveTime.Microseconds())/1000/n, "ms-base")
			b.ReportMetric(float64(replanTime.Microseconds())/1000/n, "ms-replans")
			b.ReportMetric(float64(replanCPU.Microseconds())/1000/n, "cpu-ms-replans")
			b.ReportMetric(float64(len(r.Scenarios)), "scenarios")
			b.ReportMetric(float64(r.Summary.Proved), "proved")
			b.ReportMetric(float64(first3), "L1-3-proved")
		})
	}
}

// BenchmarkResilienceWithinTheReplanLimit times Resilience alone (the
// base plan is solved once, outside the timer) against its Limit, by
// size: over-limit-% is how far the run went past the limit (0 when
// within), which must stay under 5. It reports the scenarios re-planned,
// proved, skipped and cut by the clock, and runs-differ, how many runs'
// JSON differ from the first's (0 is what the work budget is for; run
// with -benchtime 2x or more to compare).
func BenchmarkResilienceWithinTheReplanLimit(b *testing.B) {
	const limit = 5 * time.Second
	for _, size := range []string{"24x60", "256x1000"} {
		b.Run(size, func(b *testing.B) {
			if testing.Short() {
				b.Skip("large sizes skipped in -short")
			}
			p := sizePool(b, size)
			base, err := solver.Solve(context.Background(), p, solver.Options{Seed: 1, TimeLimit: 5 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			var r *answer.Report
			var worst time.Duration
			var first []byte
			differ := 0
			b.ResetTimer()
			for b.Loop() {
				t0 := time.Now()
				r, err = answer.Resilience(context.Background(), p, base, answer.ResilienceOptions{Seed: 1, Limit: limit})
				if err != nil {
					b.Fatal(err)
				}
				worst = max(worst, time.Since(t0))
				var js bytes.Buffer
				if err := answer.WriteResilienceJSON(&js, r); err != nil {
					b.Fatal(err)
				}
				if first == nil {
					first = js.Bytes()
				} else if !bytes.Equal(js.Bytes(), first) {
					differ++
				}
			}
			b.ReportMetric(float64(worst.Microseconds())/1000, "ms-worst")
			b.ReportMetric(max(0, float64(worst-limit)/float64(limit)*100), "over-limit-%")
			b.ReportMetric(float64(len(r.Scenarios)), "scenarios")
			b.ReportMetric(float64(r.Summary.Proved), "proved")
			b.ReportMetric(float64(r.Summary.Skipped), "skipped")
			b.ReportMetric(float64(r.Summary.ClockCut), "clock-cut")
			b.ReportMetric(float64(differ), "runs-differ")
		})
	}
}
