package solver

import (
	"fmt"
	"testing"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

// gpuPools are seeded pools of 1-4 GPU boxes small enough to enumerate.
func gpuPools(t *testing.T, want int) []*model.Pool {
	return smallPools(t, want, 1<<15, func(seed uint64) *model.Pool { return pooltest.RandomGPUs(seed, 2+int(seed%2), 3+int(seed%2)) })
}

// Lanes packed per GPU, with the solver choosing the GPUs and the
// symmetry between alike GPUs broken: every level proved, at the
// brute-force optimum, and the plan valid by the independent evaluator.
func TestSolveProvesTheBruteForceOptimumWhenLanesPackPerGPU(t *testing.T) {
	n := 30
	if testing.Short() {
		n = 10
	}
	swaps := 0
	for i, p := range gpuPools(t, n) {
		t.Run(fmt.Sprint("pool ", i), func(t *testing.T) {
			best, _, feasible := pooltest.BruteForce(p)
			res := solve(t, p, Options{Seed: 1})
			if !feasible {
				if !res.Infeasible {
					t.Fatalf("brute force finds no valid plan, Solve returns %v", res.Objective)
				}
				return
			}
			if res.Infeasible || res.Objective != best {
				t.Fatalf("objective = %v (infeasible %v), brute force optimum %v", res.Objective, res.Infeasible, best)
			}
			for _, l := range res.Levels {
				if l.Status != Optimal {
					t.Errorf("level %d = %d is %s, want optimal", l.Index, l.Value, l.Status)
				}
			}
			if rep := eval.Check(p, res.Assignment); !rep.Valid || rep.Objective != res.Objective {
				t.Errorf("eval: valid %v objective %v, result says %v (%v)", rep.Valid, rep.Objective, res.Objective, rep.Violations)
			}
			swaps += len(exactFor(t, p).sym.devs)
		})
	}
	if swaps == 0 {
		t.Error("no pool had a symmetry between GPUs: the test does not reach the device swaps")
	}
}

func TestTheSymmetryBetweenGPUsIsFoundOnlyWhereSwappingThemChangesNothing(t *testing.T) {
	recipe := func(k int) pooltest.Part {
		return pooltest.Variant("recipe:r/rt", 8, pooltest.Kind(model.Recipe), pooltest.On("box"), pooltest.PerGPU(k, 30))
	}
	tests := []struct {
		name  string
		parts []pooltest.Part
		want  []string
	}{
		{"four alike GPUs under a one-GPU recipe give three swaps",
			[]pooltest.Part{pooltest.Node("box", 512, pooltest.GPUs(4, 80)), recipe(1)},
			[]string{"symmetry[box:device:cuda:0>=device:cuda:1]", "symmetry[box:device:cuda:1>=device:cuda:2]", "symmetry[box:device:cuda:2>=device:cuda:3]"}},
		{"a lane running now on one GPU keeps that GPU out of every swap",
			[]pooltest.Part{pooltest.Node("box", 512, pooltest.GPUs(3, 80)), recipe(1), pooltest.RunningOn("recipe:r/rt", model.Auto, "box", "device:cuda:1")},
			[]string{"symmetry[box:device:cuda:0>=device:cuda:2]"}},
		{"a runtime on the first GPUs only makes those GPUs unlike the rest",
			[]pooltest.Part{pooltest.Node("box", 512, pooltest.GPUs(3, 80)), recipe(1),
				pooltest.Variant("fixed", 8, pooltest.On("box"), pooltest.FirstGPUs(1, 20))},
			[]string{"symmetry[box:device:cuda:1>=device:cuda:2]"}},
		{"a lane taking every GPU moves under no swap, so none is needed",
			[]pooltest.Part{pooltest.Node("box", 512, pooltest.GPUs(2, 80)), recipe(2)},
			nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := exactFor(t, pooltest.New(tc.parts...))
			var got []string
			for _, ds := range x.sym.devs {
				got = append(got, ds.name)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("device swaps = %v, want %v", got, tc.want)
			}
		})
	}
}

// A plan found outside the solver on the "wrong" GPUs is moved to the
// ones the symmetry constraints keep, without changing its objective.
func TestCanonicalMovesAPlanOntoTheGPUsTheSymmetryConstraintsKeep(t *testing.T) {
	p := pooltest.New(
		pooltest.Node("box", 512, pooltest.GPUs(4, 80)),
		pooltest.Variant("recipe:a/rt", 8, pooltest.Kind(model.Recipe), pooltest.On("box"), pooltest.PerGPU(1, 60), pooltest.DefaultResidency(model.Always)),
		pooltest.Variant("recipe:b/rt", 8, pooltest.Kind(model.Recipe), pooltest.On("box"), pooltest.PerGPU(2, 50), pooltest.DefaultResidency(model.Always)),
	)
	x := exactFor(t, p)
	a := model.Assignment{Lanes: []model.LaneChoice{
		{Variant: "recipe:a/rt", Nodes: []string{"box"}, Devices: []string{"box/device:cuda:3"}, Residency: model.Always},
		{Variant: "recipe:b/rt", Nodes: []string{"box"}, Devices: []string{"box/device:cuda:1", "box/device:cuda:2"}, Residency: model.Always},
	}}
	before := eval.Check(p, a)
	if !before.Valid {
		t.Fatalf("the hand-made plan is invalid: %v", before.Violations)
	}
	c := x.sym.canonical(a)
	after := eval.Check(p, c)
	if !after.Valid || after.Objective != before.Objective {
		t.Fatalf("canonical plan: valid %v objective %v, was %v (%v)", after.Valid, after.Objective, before.Objective, after.Violations)
	}
	vals, err := x.e.Values(c)
	if err != nil {
		t.Fatal(err)
	}
	if bad := x.e.Unsatisfied(vals); len(bad) > 0 {
		t.Errorf("the canonical plan %+v breaks %d clauses", c.Lanes, len(bad))
	}
	if c.Lanes[0].Devices[0] == "box/device:cuda:3" {
		t.Errorf("canonical left the one-GPU lane on cuda:3: %+v", c.Lanes)
	}
}

// Four one-GPU recipes of exactly half a GPU's plan budget fill two GPUs
// to the byte when kept always; a fifth of a hundredth of a GiB more
// does not fit beside them, and the solver proves it leaves one out.
func TestLanesThatFillTheirGPUsExactlyFitAndNotAHundredthMore(t *testing.T) {
	box := pooltest.New(pooltest.Node("box", 512, pooltest.GPUs(2, 80)))
	half := box.Nodes[0].Domains[1].Budget.PlanGb / 2
	build := func(extra float64) *model.Pool {
		parts := []pooltest.Part{pooltest.Node("box", 512, pooltest.GPUs(2, 80)), pooltest.External("ext", 5000)}
		for i, gb := range []float64{half, half, half, half + extra} {
			id := fmt.Sprintf("recipe:r%d/rt", i)
			m := fmt.Sprintf("m%d", i)
			parts = append(parts, pooltest.Variant(id, 8, pooltest.Kind(model.Recipe), pooltest.On("box"), pooltest.PerGPU(1, gb),
				pooltest.Serves(m), pooltest.DefaultResidency(model.Always)),
				pooltest.PinLane(id, model.Always), pooltest.LocalModel(m), pooltest.Alias("a"+m, 1, m))
		}
		return pooltest.New(parts...)
	}
	if res := solve(t, build(0), Options{Seed: 1}); res.Infeasible {
		t.Fatalf("four lanes of exactly half a GPU each, pinned always, found infeasible: %+v", res.Explanations)
	} else if rep := eval.Check(build(0), res.Assignment); !rep.Valid {
		t.Fatalf("the exact fit is invalid by the evaluator: %v", rep.Violations)
	}
	if res := solve(t, build(0.01), Options{Seed: 1}); !res.Infeasible {
		t.Fatalf("a lane 0.01 GiB over half a GPU fitted beside three halves: %+v", res.Assignment.Lanes)
	}
}
