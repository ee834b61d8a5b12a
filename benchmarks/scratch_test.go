package benchmarks

import (
	"os"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/solver"
)

func TestScratchGreedy(t *testing.T) {
	name := os.Getenv("SCRATCH")
	if name == "" {
		t.Skip()
	}
	sz, _ := ParseSize(name)
	insts, _ := SizeInstances([]Size{sz}, 1)
	p, err := insts[0].Pool()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	a := solver.Greedy(p, 1)
	t.Logf("greedy %v", time.Since(start))
	rep := eval.Check(p, a)
	t.Logf("valid %v obj %v (%v)", rep.Valid, rep.Objective, time.Since(start))
	for i, v := range rep.Violations {
		if i < 10 {
			t.Logf("  %v", v)
		}
	}
	t.Logf("%d violations", len(rep.Violations))
	a2 := solver.Improve(p, a, 1, time.Now().Add(2*time.Second))
	rep = eval.Check(p, a2)
	t.Logf("improved valid %v obj %v (%v) %d violations", rep.Valid, rep.Objective, time.Since(start), len(rep.Violations))
}

func TestScratchCompact(t *testing.T) {
	name := os.Getenv("SCRATCH2")
	if name == "" {
		t.Skip()
	}
	sz, _ := ParseSize(name)
	insts, _ := SizeInstances([]Size{sz}, 1)
	p, _ := insts[0].Pool()
	in, lp := exportLP(t, p)
	os.WriteFile("/tmp/h9/c1.lp", compactLP(lp, in), 0o644)
	os.WriteFile("/tmp/h9/o1.lp", lp, 0o644)
}
