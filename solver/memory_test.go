package solver

import (
	"slices"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

// Memory figures of any precision give the true optimum, and every level
// status tells the truth: with exact memory each level is proved; where
// figures are too fine to count exactly, no level is proved by an UNSAT
// answer or an LP over the rounded rows, a level reported optimal has the
// optimum's value, and no lower bound passes the optimum.
func TestFineMemoryFiguresGiveTheTrueOptimumAndTruthfulStatus(t *testing.T) {
	tests := []struct {
		name      string
		pool      *model.Pool
		wantExact bool
	}{
		{"a keepWarm lane of 56.1111111 GiB and a preferred one of 40.2222222 fill 96.3333333 exactly",
			pooltest.FineMemory(100.3333333, 56.1111111, 40.2222222), true},
		{"one ten-millionth of a GiB less budget leaves the second lane out, proved",
			pooltest.FineMemory(100.3333332, 56.1111111, 40.2222222), true},
		{"figures too fine to count exactly still give a verified plan with honest levels",
			pooltest.FineMemory(100.33333333333333, 56.11111111111111, 40.22222222222222), false},
		{"figures too fine to count exactly and a pair that does not fit: level 1 is bounded, not proved by the rounding",
			pooltest.FineMemory(100.33333333333332, 56.11111111111111, 40.22222222222222), false},
	}
	for _, tc := range tests {
		for _, linear := range []bool{false, true} {
			name := tc.name
			if linear {
				name += ", on the linear path"
			}
			t.Run(name, func(t *testing.T) {
				if linear {
					linearFrom(t, 1)
				}
				e, err := encode.New(tc.pool, encode.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if e.Exact != tc.wantExact {
					t.Fatalf("encoding exact = %v, want %v (scale %d)", e.Exact, tc.wantExact, e.Scale)
				}
				best, _, feasible := pooltest.BruteForce(tc.pool)
				if !feasible {
					t.Fatal("brute force finds no valid plan")
				}
				res := solve(t, tc.pool, Options{Seed: 1, TimeLimit: 5 * time.Second})
				rep := eval.Check(tc.pool, res.Assignment)
				if !rep.Valid || rep.Objective != res.Objective {
					t.Fatalf("eval: valid %v objective %v, result says %v (%v)", rep.Valid, rep.Objective, res.Objective, rep.Violations)
				}
				if tc.wantExact && res.Objective != best {
					t.Fatalf("objective %v, brute-force optimum %v", res.Objective, best)
				}
				for i, l := range res.Levels {
					t.Logf("level %d = %d %s, bound %d (%s); optimum %d", l.Index, l.Value, l.Status, l.LowerBound, l.BoundSource, best[i])
					if tc.wantExact && l.Status != Optimal {
						t.Errorf("level %d = %d is %s, want optimal", l.Index, l.Value, l.Status)
					}
					if !tc.wantExact && slices.ContainsFunc(l.BoundSource.Sources(), func(s BoundSource) bool {
						return s == BoundSATUnsat || s == BoundLP || s == BoundPresolve || s == BoundPB
					}) {
						t.Errorf("level %d bound %d comes from %q over rounded memory", l.Index, l.LowerBound, l.BoundSource)
					}
					if l.LowerBound > best[i] {
						t.Errorf("level %d lower bound %d passes the optimum %d", l.Index, l.LowerBound, best[i])
					}
					if l.Status == Optimal && l.Value != best[i] {
						t.Errorf("level %d = %d reported optimal, the optimum is %d", l.Index, l.Value, best[i])
					}
					if res.Objective[i] != best[i] {
						break // later levels are optimal given this one's freeze
					}
				}
			})
		}
	}
}
