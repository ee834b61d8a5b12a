package plan_test

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/plan"
)

// stepsOf lists what a plan's changes ask of a rollout: a move is a start
// where it goes and a stop where it runs.
func stepsOf(cs []plan.Change) []string {
	var out []string
	for _, c := range cs {
		nodes := strings.Join(c.Nodes, "+")
		switch c.Kind {
		case plan.Start, plan.ManualStart, plan.Stop, plan.ManualStop, plan.SetResidency:
			out = append(out, c.Kind.String()+" "+c.Subject+"@"+nodes)
		case plan.Move:
			out = append(out, "start "+c.Subject+"@"+nodes, "stop "+c.Subject+"@"+strings.Join(c.FromNodes, "+"))
		case plan.Reroute:
			out = append(out, "reroute "+c.Subject)
		}
	}
	slices.Sort(out)
	return out
}

// TestEveryChangeOfARandomPlanIsOneRolloutStep checks the rollout against
// the diff it orders: each change is made by its steps, once, and steps
// are numbered in order with waves that never go back.
func TestEveryChangeOfARandomPlanIsOneRolloutStep(t *testing.T) {
	withSteps := 0
	for seed := range uint64(300) {
		p := pooltest.Random(seed, 2+int(seed%4), 3+int(seed%6))
		pl := plan.Build(p, randomResult(p, rand.New(rand.NewPCG(seed, 7))), plan.Meta{})
		want := stepsOf(pl.Changes)
		if pl.Rollout == nil {
			if len(want) > 0 {
				t.Fatalf("seed %d: %d changes and no rollout", seed, len(pl.Changes))
			}
			continue
		}
		withSteps++
		var got []string
		for i, s := range pl.Rollout.Steps {
			if s.Step != i+1 || i > 0 && s.Wave < pl.Rollout.Steps[i-1].Wave || s.Wave < 1 {
				t.Fatalf("seed %d: step %d numbered %d in wave %d", seed, i+1, s.Step, s.Wave)
			}
			k := s.Action
			if k == "residency" {
				k = plan.SetResidency.String()
			}
			if k == "reroute" {
				got = append(got, "reroute "+s.Subject)
				continue
			}
			got = append(got, k+" "+s.Subject+"@"+strings.Join(s.Nodes, "+"))
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: the rollout makes\n%q\nthe changes ask for\n%q", seed, got, want)
		}
		if pl.Rollout.UncoveredDemandMs > pl.Rollout.StopFirstDemandMs {
			t.Fatalf("seed %d: the rollout (%g) is worse than stopping first (%g)", seed, pl.Rollout.UncoveredDemandMs, pl.Rollout.StopFirstDemandMs)
		}
	}
	if withSteps < 100 {
		t.Errorf("only %d of 300 plans changed anything", withSteps)
	}
}
