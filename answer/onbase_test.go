package answer

import (
	"context"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/benchmarks"
	"github.com/poolsolve/poolsolve/plan"
	"github.com/poolsolve/poolsolve/solver"
)

// A re-plan that loses nothing the base plan uses keeps the base plan: on
// the pool scenarios re-plan on, a swap of equivalent lanes or
// residencies costs churn. (Resilience decides such scenarios without a
// search; this asks the search itself.)
func TestARePlanThatLosesNothingThePlanUsesKeepsThePlan(t *testing.T) {
	if testing.Short() {
		t.Skip("plans a 24-node fleet")
	}
	tests := []struct {
		name string
		size string
	}{
		{"the bench suite's 24-node fleet, whose lanes have equivalent twins", "24x60"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inst, err := benchmarks.SizeInstance(tc.size, 1)
			if err != nil {
				t.Fatal(err)
			}
			p, err := inst.Pool()
			if err != nil {
				t.Fatal(err)
			}
			base, err := solver.Solve(context.Background(), p, solver.Options{TimeLimit: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			rp, onBase, rep := onBasePlan(p, base, plan.Build(p, base, plan.Meta{}))
			w, err := solver.NewWhatIf(rp, onBase, 1, time.Now().Add(10*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			keep := newKeeper(rp, base.Assignment, rep.ExternalFirst)
			for _, sc := range SingleLosses(p) {
				if !keep.keeps(sc) {
					continue
				}
				re, err := w.Replan(context.Background(), sc, time.Now().Add(500*time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				if !re.Proved() {
					continue
				}
				checked++
				if d := changes(rp, &solver.Outcome{Assignment: re.Result.Assignment, Objective: re.Result.Objective}); len(d) > 0 {
					t.Errorf("%s takes nothing the plan uses, yet the re-plan changes %d things: %v", sc.Name(), len(d), d)
				}
				// What Resilience reports for it without a search.
				if re.Result.Objective != onBase.Objective {
					t.Errorf("%s: the re-plan scores %v, the base plan %v", sc.Name(), re.Result.Objective, onBase.Objective)
				}
			}
			if checked == 0 {
				t.Fatal("no such scenario was proved: nothing checked")
			}
		})
	}
}
