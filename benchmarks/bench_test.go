package benchmarks

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
	"github.com/poolsolve/poolsolve/solver/localsearch"
)

// benchSizes are the sizes of `poolsolve bench`'s default suite; the
// large ones are skipped with -short.
var benchSizes = []struct {
	size  string
	large bool
}{
	{"3x10", false},
	{"8x20", false},
	{"8x30", false},
	{"16x60", false},
	{"24x60", false},
	{"24x60-tight", false},
	{"64x250", true},
	{"256x1000", true},
	{"256x1000-tight", true},
}

var (
	poolsOnce sync.Once
	pools     map[string]*model.Pool
	poolsErr  error
)

// benchPools generates each size once, seed 1, as the suite does.
func benchPools(b *testing.B) map[string]*model.Pool {
	poolsOnce.Do(func() {
		pools = map[string]*model.Pool{}
		for _, s := range benchSizes {
			p, err := SizePool(s.size, 1)
			if err != nil {
				poolsErr = err
				return
			}
			pools[s.size] = p
		}
	})
	if poolsErr != nil {
		b.Fatal(poolsErr)
	}
	return pools
}

// BenchmarkPlan runs the exact solver with a 10 s limit, as `poolsolve
// bench` does, on each size. Besides ns/op it reports the levels proved
// (of 4), the level-4 gap in percent, the time to the first plan, and the
// encoding's size.
func BenchmarkPlan(b *testing.B) {
	ps := benchPools(b)
	for _, s := range benchSizes {
		b.Run(s.size, func(b *testing.B) {
			if s.large && testing.Short() {
				b.Skip("large instance; run without -short")
			}
			p := ps[s.size]
			var res *solver.Result
			for b.Loop() {
				var err error
				res, err = solver.Solve(context.Background(), p, solver.Options{TimeLimit: 10 * time.Second, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
			}
			if res.Infeasible {
				b.Fatal("the generated fleet has no plan")
			}
			proved := 0
			for _, l := range res.Levels {
				if l.Status == solver.Optimal {
					proved++
				}
			}
			l4 := res.Levels[3]
			b.ReportMetric(float64(proved), "levels-proved")
			b.ReportMetric(100*l4.Gap, "L4-gap-%")
			b.ReportMetric(float64(res.Stats.TimeToFirst.Microseconds())/1000, "first-ms")
			b.ReportMetric(float64(res.Stats.Vars), "vars")
			b.ReportMetric(float64(res.Stats.Clauses), "clauses")
		})
	}
}

// BenchmarkGenerate measures the generator alone.
func BenchmarkGenerate(b *testing.B) {
	for _, s := range []string{"24x60-tight", "256x1000"} {
		b.Run(s, func(b *testing.B) {
			sz, err := ParseSize(s)
			if err != nil {
				b.Fatal(err)
			}
			sp := sz.Spec(1)
			for b.Loop() {
				if _, err := Generate(sp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheck measures the evaluator on the greedy plan: the solver
// checks every plan it accepts with it, the warm start's too.
func BenchmarkCheck(b *testing.B) {
	ps := benchPools(b)
	for _, s := range []string{"24x60-tight", "256x1000"} {
		b.Run(s, func(b *testing.B) {
			p := ps[s]
			a := localsearch.Greedy(p, 1)
			for b.Loop() {
				if rep := eval.Check(p, a); !rep.Valid {
					b.Fatal(rep.Err())
				}
			}
		})
	}
}

// BenchmarkLoad measures reading a fleet bundle and building its pool,
// the part of `poolsolve plan`'s time limit spent before the solve.
func BenchmarkLoad(b *testing.B) {
	for _, s := range []string{"24x60-tight", "256x1000"} {
		b.Run(s, func(b *testing.B) {
			in, err := SizeInstance(s, 1)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := in.Pool(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMemoryPerPlacement measures what a plan holds, per placement:
// the pool built from a generated fleet, then its encoding beside it in
// the form the solver gives parts of 20,000 placements and more (memory
// rules as linear rows only, gini kept out), each as the live heap after
// a collection.
// Memory that grows linearly with the placements keeps these figures
// flat across sizes. -short stops at 256 nodes.
func BenchmarkMemoryPerPlacement(b *testing.B) {
	for _, s := range []struct {
		size  string
		large bool
	}{{"64x250", false}, {"256x1000", false}, {"512x2000", true}, {"1024x4000", true}} {
		b.Run(s.size, func(b *testing.B) {
			if s.large && testing.Short() {
				b.Skip("-short")
			}
			in, err := SizeInstance(s.size, 1)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				base := liveHeap()
				p, err := in.Pool()
				if err != nil {
					b.Fatal(err)
				}
				withPool := liveHeap()
				e, err := encode.New(p, encode.Options{LinearMemory: true, NoSAT: true})
				if err != nil {
					b.Fatal(err)
				}
				withEncoding := liveHeap()
				n := 0
				for _, v := range p.Variants {
					n += len(v.Placements)
				}
				b.ReportMetric(float64(n), "placements")
				b.ReportMetric(float64(withPool-base)/float64(n), "pool-B/placement")
				b.ReportMetric(float64(withEncoding-withPool)/float64(n), "encoding-B/placement")
				runtime.KeepAlive(p)
				runtime.KeepAlive(e)
			}
		})
	}
}

// liveHeap is the heap in use after a full collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}
