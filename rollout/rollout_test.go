package rollout_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/rollout"
)

func lane(v string, gb, loadMs float64, res model.Residency, nodes ...string) rollout.Lane {
	l := rollout.Lane{Variant: v, Nodes: nodes, Residency: res, LoadMs: loadMs, Models: []string{"m-" + strings.SplitN(v, "@", 2)[0]}}
	for _, n := range nodes {
		l.Draws = append(l.Draws, model.Draw{Node: n, Domain: "unified:0", Gb: gb})
	}
	return l
}

func budgets(gb float64, nodes ...string) map[[2]string]float64 {
	out := map[[2]string]float64{}
	for _, n := range nodes {
		out[[2]string{n, "unified:0"}] = gb
	}
	return out
}

// moved serves the same alias from the same model before and after.
func moved(name string, demand float64, variant string) rollout.Source {
	return rollout.Source{Name: name, Demand: demand, Now: "m-" + variant, Planned: "m-" + variant, PlannedVariant: variant}
}

// swapped re-routes an alias from one lane's model to another's.
func swapped(name string, demand float64, from, to string) rollout.Source {
	return rollout.Source{Name: name, Demand: demand, Now: "m-" + from, Planned: "m-" + to, PlannedVariant: to, Reroute: true}
}

// brief is a step as the table expects it.
func brief(s rollout.Step) string {
	out := string(s.Action) + " " + s.Subject
	if len(s.Nodes) > 0 {
		out += "@" + strings.Join(s.Nodes, "+")
	}
	return out
}

func TestARolloutOrdersHandCasesAsTheirMemoryAndCoverageRequire(t *testing.T) {
	cases := []struct {
		name       string
		in         rollout.Input
		wantSteps  []string
		wantLosses map[string]float64 // source -> ForMs
		wantCost   float64
		wantWaves  int
	}{
		{
			name: "a swap on a full node must stop first and says what it costs",
			in: rollout.Input{
				Budgets: budgets(100, "n1"),
				Now:     []rollout.Lane{lane("a", 60, 1000, model.Always, "n1")},
				Planned: []rollout.Lane{lane("b", 60, 30000, model.Always, "n1")},
				Sources: []rollout.Source{swapped("chat", 10, "a", "b")},
			},
			wantSteps:  []string{"stop a@n1", "start b@n1", "reroute chat"},
			wantLosses: map[string]float64{"chat": 30000},
			wantCost:   10 * 30000,
			wantWaves:  3,
		},
		{
			name: "a tensor-parallel pair moves make-before-break when the other pair has room",
			in: rollout.Input{
				Budgets: budgets(120, "n1", "n2", "n3", "n4"),
				Now:     []rollout.Lane{lane("tp", 100, 300000, model.Always, "n1", "n2")},
				Planned: []rollout.Lane{lane("tp", 100, 300000, model.Always, "n3", "n4")},
				Sources: []rollout.Source{moved("big", 50, "tp")},
			},
			wantSteps:  []string{"start tp@n3+n4", "stop tp@n1+n2"},
			wantLosses: map[string]float64{},
			wantCost:   0,
			wantWaves:  2,
		},
		{
			name: "a chain of three moves starts at its free end",
			in: rollout.Input{
				Budgets: budgets(50, "n1", "n2", "n3", "n4"),
				Now: []rollout.Lane{
					lane("x", 40, 1000, model.Always, "n1"),
					lane("y", 40, 1000, model.Always, "n2"),
					lane("z", 40, 1000, model.Always, "n3"),
				},
				Planned: []rollout.Lane{
					lane("x", 40, 1000, model.Always, "n2"),
					lane("y", 40, 1000, model.Always, "n3"),
					lane("z", 40, 1000, model.Always, "n4"),
				},
				Sources: []rollout.Source{moved("ax", 1, "x"), moved("ay", 1, "y"), moved("az", 1, "z")},
			},
			wantSteps:  []string{"start z@n4", "stop z@n3", "start y@n3", "stop y@n2", "start x@n2", "stop x@n1"},
			wantLosses: map[string]float64{},
			wantCost:   0,
			wantWaves:  6,
		},
		{
			name: "when make-before-break is impossible the cheap alias loses coverage, not the busy one",
			in: rollout.Input{
				Budgets: budgets(100, "n1"),
				Now: []rollout.Lane{
					lane("l1", 40, 1000, model.Always, "n1"),
					lane("l2", 40, 1000, model.Always, "n1"),
				},
				Planned: []rollout.Lane{
					lane("m1", 60, 60000, model.Always, "n1"),
					lane("m2", 20, 10000, model.Always, "n1"),
				},
				Sources: []rollout.Source{swapped("busy", 1000, "l1", "m1"), swapped("quiet", 1, "l2", "m2")},
			},
			wantSteps:  []string{"stop l2@n1", "start m1@n1", "reroute busy", "stop l1@n1", "start m2@n1", "reroute quiet"},
			wantLosses: map[string]float64{"quiet": 70000},
			wantCost:   70000,
			wantWaves:  6,
		},
		{
			name: "a demotion frees the memory a start needs before the start",
			in: rollout.Input{
				Budgets: budgets(100, "n1"),
				Now:     []rollout.Lane{lane("keep", 60, 1000, model.Always, "n1")},
				Planned: []rollout.Lane{lane("keep", 60, 1000, model.Auto, "n1"), lane("new", 50, 5000, model.Preferred, "n1")},
				Sources: []rollout.Source{moved("k", 5, "keep")},
			},
			wantSteps:  []string{"residency keep@n1", "start new@n1"},
			wantLosses: map[string]float64{},
			wantCost:   0,
			wantWaves:  2,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := rollout.Plan(tc.in)
			if r == nil {
				t.Fatal("no rollout")
			}
			var got []string
			losses := map[string]float64{}
			for _, s := range r.Steps {
				got = append(got, brief(s))
				for _, l := range s.Losses {
					losses[l.Source] += l.ForMs
					// The step it names is the one that covers it again: its
					// re-route, or the start of its lane when it keeps its model.
					back := r.Steps[l.UntilStep-1]
					if !(back.Action == rollout.Reroute && back.Subject == l.Source || back.Action == rollout.Start && !slices.ContainsFunc(tc.in.Sources, func(s rollout.Source) bool { return s.Name == l.Source && s.Reroute })) {
						t.Errorf("%s is said to be covered again after step %d, %s", l.Source, l.UntilStep, brief(back))
					}
				}
			}
			if !reflect.DeepEqual(got, tc.wantSteps) {
				t.Errorf("steps\n got %v\nwant %v", got, tc.wantSteps)
			}
			if !reflect.DeepEqual(losses, tc.wantLosses) {
				t.Errorf("losses %v, want %v", losses, tc.wantLosses)
			}
			if r.UncoveredDemandMs != tc.wantCost || r.Status != "optimal" {
				t.Errorf("cost %g (%s), want %g (optimal)", r.UncoveredDemandMs, r.Status, tc.wantCost)
			}
			if r.Waves != tc.wantWaves {
				t.Errorf("%d waves, want %d: %s", r.Waves, tc.wantWaves, waves(r))
			}
		})
	}
}

func waves(r *rollout.Rollout) string {
	var sb strings.Builder
	for _, s := range r.Steps {
		fmt.Fprintf(&sb, "[%d] %s ", s.Wave, brief(s))
	}
	return sb.String()
}

func TestTheSameChangeSetGivesTheSameRollout(t *testing.T) {
	in := rollout.Input{
		Budgets: budgets(100, "n1", "n2"),
		Now:     []rollout.Lane{lane("b", 40, 1000, model.Always, "n2"), lane("a", 60, 1000, model.Always, "n1")},
		Planned: []rollout.Lane{lane("c", 60, 3000, model.Always, "n1"), lane("a", 60, 2000, model.Always, "n2")},
		Sources: []rollout.Source{swapped("s2", 3, "b", "c"), moved("s1", 2, "a")},
	}
	want := rollout.Plan(in)
	for range 20 {
		in.Now[0], in.Now[1] = in.Now[1], in.Now[0]
		in.Sources[0], in.Sources[1] = in.Sources[1], in.Sources[0]
		if got := rollout.Plan(in); !reflect.DeepEqual(got, want) {
			t.Fatalf("rollouts differ:\n%s\n%s", waves(got), waves(want))
		}
	}
}

func TestPastTheExactLimitTheRolloutIsHeuristicAndNoWorseThanStoppingFirst(t *testing.T) {
	in := rollout.Input{
		Budgets:    budgets(100, "n1"),
		Now:        []rollout.Lane{lane("l1", 40, 1000, model.Always, "n1"), lane("l2", 40, 1000, model.Always, "n1")},
		Planned:    []rollout.Lane{lane("m1", 60, 60000, model.Always, "n1"), lane("m2", 20, 10000, model.Always, "n1")},
		Sources:    []rollout.Source{swapped("busy", 1000, "l1", "m1"), swapped("quiet", 1, "l2", "m2")},
		ExactLimit: -1,
	}
	r := rollout.Plan(in)
	if r.Status != "heuristic" {
		t.Fatalf("status %s, want heuristic", r.Status)
	}
	if r.UncoveredDemandMs > r.StopFirstDemandMs {
		t.Errorf("greedy %g is worse than stopping first %g", r.UncoveredDemandMs, r.StopFirstDemandMs)
	}
}

func TestNothingToChangeGivesNoRollout(t *testing.T) {
	l := lane("a", 10, 1000, model.Always, "n1")
	if r := rollout.Plan(rollout.Input{Budgets: budgets(100, "n1"), Now: []rollout.Lane{l}, Planned: []rollout.Lane{l}}); r != nil {
		t.Fatalf("got %s", waves(r))
	}
}

func TestAPlanOverLLooMsBudgetIsOrderedHeuristicallyAndNamesTheDomain(t *testing.T) {
	r := rollout.Plan(rollout.Input{
		Budgets: budgets(100, "n1"),
		Now:     []rollout.Lane{lane("a", 60, 1000, model.Always, "n1")},
		Planned: []rollout.Lane{lane("a", 60, 1000, model.Always, "n1"), lane("b", 50, 1000, model.Always, "n1")},
	})
	if r == nil || r.Status != "heuristic" || len(r.Steps) != 1 {
		t.Fatalf("got %+v", r)
	}
	if got := r.Steps[0].OverBudget; !slices.Equal(got, []string{"n1 unified:0"}) {
		t.Errorf("over budget on %v, want n1 unified:0", got)
	}
}
