package solver

import (
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/solver/localsearch"
)

func TestThePolishBesideTheWorkersEndsWithTheLevelsProof(t *testing.T) {
	for _, tc := range []struct {
		name string
		// proved is whether the level is proved before the polish starts.
		proved bool
	}{
		{"a proved level ends the polish with a valid incumbent", true},
		{"with no workers the polish runs its rounds and mends greedy's plan", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := pooltest.Random(1, 16, 40)
			x := exactFor(t, p)
			x.at = 0
			// Greedy's plan, [6 0 1 3430], which local search mends
			// to [2 0 1 2717].
			if ok, err := x.accept(localsearch.Greedy(p, 1), false); !ok || err != nil {
				t.Fatalf("greedy's plan not accepted: %v", err)
			}
			start := x.obj
			l := &levelRun{x: x, lb: 0, ub: x.obj[0], src: BoundTrivial}
			if tc.proved {
				l.lb = l.ub
			}
			done := make(chan error, 1)
			end := time.Now().Add(time.Hour)
			if !tc.proved {
				end = time.Now().Add(2 * time.Second)
			}
			go func() { done <- l.polishBeside(end) }()
			select {
			case err := <-done:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(time.Minute):
				// A polish that ran to its end (an hour away) or
				// never handed its plan over.
				t.Fatal("the polish went on past the level")
			}
			rep := eval.Check(p, x.best)
			if !rep.Valid || rep.Objective != x.obj || x.obj[0] != l.ub {
				t.Errorf("incumbent valid %v, %v against eval's %v, ub %d", rep.Valid, x.obj, rep.Objective, l.ub)
			}
			if start.Less(x.obj) {
				t.Errorf("the polish worsened the plan: %v -> %v", start, x.obj)
			}
			if !tc.proved && !x.obj.Less(start) {
				t.Errorf("the polish did not mend greedy's plan %v", start)
			}
		})
	}
}
