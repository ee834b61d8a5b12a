package solver

import (
	"context"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
)

// FuzzSolveGivesValidPlans: on any random pool, Solve returns without
// error; an infeasible answer names a conflict, any other answer is a
// plan the evaluator accepts with the reported objective.
func FuzzSolveGivesValidPlans(f *testing.F) {
	f.Add(uint64(1), uint8(2), uint8(3), false)
	f.Add(uint64(7), uint8(5), uint8(9), true)
	f.Fuzz(func(t *testing.T, seed uint64, nodes, variants uint8, noExternal bool) {
		p := pooltest.Random(seed, 1+int(nodes%8), int(variants%16))
		p.Settings.ExternalAllowed = !noExternal
		res, err := Solve(context.Background(), p, Options{Seed: seed, TimeLimit: 200 * time.Millisecond})
		if err != nil {
			t.Fatalf("Solve: %v", err)
		}
		if res.Infeasible {
			if len(res.Explanations) == 0 {
				t.Fatal("infeasible without an explanation")
			}
			return
		}
		if rep := eval.Check(p, res.Assignment); !rep.Valid || rep.Objective != res.Objective {
			t.Fatalf("plan: valid %v objective %v, reported %v (%v)", rep.Valid, rep.Objective, res.Objective, rep.Err())
		}
	})
}
