package solver

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

// bruteForcePools are random pools small enough for pooltest.BruteForce.
func bruteForcePools(t *testing.T, want int) []*model.Pool {
	t.Helper()
	var out []*model.Pool
	for seed := uint64(1); len(out) < want && seed < 2000; seed++ {
		p := pooltest.Random(seed, 2+int(seed%2), 3+int(seed%3)/2)
		if pooltest.Combinations(p) <= 1<<14 {
			out = append(out, p)
		}
	}
	if len(out) < want {
		t.Fatalf("only %d random pools are small enough for brute force", len(out))
	}
	return out
}

func solve(t *testing.T, p *model.Pool, opts Options) *Result {
	t.Helper()
	if opts.TimeLimit == 0 {
		opts.TimeLimit = 20 * time.Second
	}
	res, err := Solve(context.Background(), p, opts)
	if err != nil {
		t.Fatalf("Solve: %v", err)
	}
	return res
}

// On pools small enough to enumerate, every level must be proved and the
// objective must be the brute-force lexicographic optimum; the plan must
// pass the independent evaluator with that objective.
func TestSolveProvesTheBruteForceOptimumOnSmallPools(t *testing.T) {
	for i, p := range bruteForcePools(t, 24) {
		t.Run(fmt.Sprint("pool ", i), func(t *testing.T) {
			best, _, feasible := pooltest.BruteForce(p)
			res := solve(t, p, Options{Seed: 1})
			if !feasible {
				if !res.Infeasible {
					t.Fatalf("brute force finds no valid plan, Solve returns %v", res.Objective)
				}
				if len(res.Explanations) == 0 || len(res.Explanations[0].Pins) == 0 {
					t.Fatalf("infeasible without a conflict set: %+v", res.Explanations)
				}
				return
			}
			if res.Infeasible {
				t.Fatalf("Solve says infeasible (%+v), brute force finds %v", res.Explanations, best)
			}
			if res.Objective != best {
				t.Errorf("objective = %v, brute force optimum %v", res.Objective, best)
			}
			for _, l := range res.Levels {
				if l.Status != Optimal {
					t.Errorf("level %d (%s) = %d is %s, want optimal", l.Index, l.Name, l.Value, l.Status)
				}
			}
			rep := eval.Check(p, res.Assignment)
			if !rep.Valid || rep.Objective != res.Objective {
				t.Errorf("eval: valid %v objective %v, result says %v (%v)", rep.Valid, rep.Objective, res.Objective, rep.Violations)
			}
		})
	}
}

// Same pool, same options: the same plan, byte for byte.
func TestSolveIsDeterministic(t *testing.T) {
	for _, p := range []*model.Pool{pooltest.Random(11, 4, 8), pooltest.Random(12, 6, 12)} {
		a := solve(t, p, Options{Seed: 3})
		b := solve(t, p, Options{Seed: 3})
		ja, _ := json.Marshal(a.Assignment)
		jb, _ := json.Marshal(b.Assignment)
		if string(ja) != string(jb) {
			t.Errorf("two solves differ:\n%s\n%s", ja, jb)
		}
		la, _ := json.Marshal(a.Levels)
		lb, _ := json.Marshal(b.Levels)
		if string(la) != string(lb) {
			t.Errorf("levels differ:\n%s\n%s", la, lb)
		}
	}
}
