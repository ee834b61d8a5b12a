package solver

import (
	"strings"
	"testing"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/localsearch"
	"github.com/poolsolve/poolsolve/solver/pb"
)

// greedyAtLevelOne is a 16x40 pool's search at level 1 with greedy's
// plan, [6 0 1 3430], as its incumbent; local search mends it to
// [2 0 1 2717].
func greedyAtLevelOne(t *testing.T) (*model.Pool, *exact, model.Objective) {
	t.Helper()
	p := pooltest.Random(1, 16, 40)
	x := exactFor(t, p)
	x.at = 0
	if ok, err := x.accept(localsearch.Greedy(p, 1), false); !ok || err != nil {
		t.Fatalf("greedy's plan not accepted: %v", err)
	}
	return p, x, x.obj
}

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
			p, x, start := greedyAtLevelOne(t)
			l := &levelRun{x: x, lb: 0, ub: x.obj[0], src: BoundTrivial}
			if tc.proved {
				l.lb = l.ub
			}
			done := make(chan error, 1)
			end := time.Now().Add(time.Hour)
			if !tc.proved {
				end = time.Now().Add(2 * time.Second)
			}
			go func() { done <- l.polishBeside(end, polishStale) }()
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

// linearFrom sends parts of lanes or more down the linear path until the
// test ends, and returns the size it replaced.
func linearFrom(t *testing.T, lanes int) int {
	saved := linearPartLanes
	linearPartLanes = lanes
	t.Cleanup(func() { linearPartLanes = saved })
	return saved
}

func TestALinearLevelIsBoundedByWhatItsPresolveForces(t *testing.T) {
	savedLanes := linearFrom(t, 10)
	raised := 0
	for seed := uint64(1); seed <= 12; seed++ {
		p := pooltest.Random(seed, 12, 30)
		x := exactFor(t, p)
		if !x.e.LinearMemory {
			t.Fatalf("seed %d: the part is not encoded with linear memory", seed)
		}
		if ok, err := x.accept(localsearch.Greedy(p, 1), false); !ok || err != nil {
			continue // greedy's plan breaks a rule here
		}
		// The default path's proof of level 1, made apart.
		linearPartLanes = savedLanes
		want := solve(t, p, Options{Seed: 1})
		linearPartLanes = 10
		if want.Infeasible || want.Levels[0].Status != Optimal {
			continue
		}
		x.at = 0
		l := &levelRun{x: x, end: time.Now().Add(time.Hour), lb: x.e.Offset(0), src: BoundTrivial, ub: x.obj[0]}
		if err := l.linearPresolve(); err != nil {
			t.Fatal(err)
		}
		if l.lb > want.Objective[0] {
			t.Fatalf("seed %d: level 1 bounded at %d (%s), above its optimum %d", seed, l.lb, l.src, want.Objective[0])
		}
		t.Logf("seed %d: level 1 bounded at %d (%s), optimum %d", seed, l.lb, l.src, want.Objective[0])
		if l.src == BoundPresolve && l.lb > x.e.Offset(0) {
			raised++
		}
	}
	if raised == 0 {
		t.Error("no pool's level 1 was bounded by its presolve: the test does not reach the bound")
	}
}

// A source a linear part's presolve finds uncovered in every plan is
// explained so, and no plan covers it: gini, on the whole encoding with
// the pins and cordons, finds none.
func TestASourceExplainedUnavoidableIsUncoveredInEveryPlan(t *testing.T) {
	linearFrom(t, 10)
	named := 0
	for seed := uint64(1); seed <= 12; seed++ {
		p := pooltest.Random(seed, 16, 40)
		res := solve(t, p, Options{Seed: 1, TimeLimit: 5 * time.Second})
		if res.Infeasible {
			continue
		}
		e, err := encode.New(p, encode.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range res.Explanations {
			if !strings.HasSuffix(ex.Reason, unavoidableText) {
				continue
			}
			named++
			src := findSource(e, ex.Subject)
			if src == nil {
				t.Fatalf("seed %d: %s explained, but the encoding has no such source", seed, ex.Subject)
			}
			if got := e.TryUnder(10*time.Second, e.AssumptionLits(), []z.Lit{src.U.Not()}); got != -1 {
				t.Errorf("seed %d: %s explained as uncovered in every plan, but gini answers %d with it covered", seed, ex.Subject, got)
			}
		}
	}
	if named == 0 {
		t.Error("no source was explained as uncovered in every plan: the test does not reach it")
	}
}

// In level 1's last quarter, with its workers still searching, local
// search polishes the incumbent beside them, and the level still ends
// on time. The workers here are a stand-in that never answers.
func TestLevelOnesLastQuarterPolishesBesideItsWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("a 0.4 s polish: under the race detector's pace it may not finish a round")
	}
	for _, tc := range []struct {
		name     string
		polished bool
		workers  bool
	}{
		{"with the workers searching, greedy's plan is mended", true, true},
		{"with no workers left, the level only takes their answers", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, x, start := greedyAtLevelOne(t)
			l := &levelRun{x: x, lb: 0, ub: x.obj[0], src: BoundTrivial, end: time.Now().Add(1600 * time.Millisecond)}
			l.pw = &pbLevel{x: x, runs: map[int]*pb.Run{}, out: make(chan pb.Msg)}
			if tc.workers {
				l.pw.runs[0] = nil // alive, and silent
			}
			if err := l.lastAnswers(); err != nil {
				t.Fatal(err)
			}
			if late := time.Since(l.end); late > 2*time.Second {
				t.Errorf("the level ended %v past its end", late)
			}
			rep := eval.Check(p, x.best)
			if !rep.Valid || rep.Objective != x.obj {
				t.Fatalf("incumbent valid %v, %v against eval's %v", rep.Valid, x.obj, rep.Objective)
			}
			if got := x.obj.Less(start); got != tc.polished {
				t.Errorf("polished %v (%v -> %v), want %v", got, start, x.obj, tc.polished)
			}
		})
	}
}
