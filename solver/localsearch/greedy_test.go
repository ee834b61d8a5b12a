package localsearch

import (
	"context"
	"fmt"
	"github.com/poolsolve/poolsolve/internal/clock"
	"reflect"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

// stripPins returns p without pins, whose plans must always be valid.
func stripPins(p *model.Pool) *model.Pool {
	q := *p
	q.Pins = nil
	return &q
}

func TestGreedyPlansPassTheEvaluatorWithoutPins(t *testing.T) {
	for seed := range uint64(300) {
		nodes, variants := 1+int(seed%7), int(seed%23)
		p := stripPins(pooltest.Random(seed, nodes, variants))
		if err := eval.Check(p, Greedy(p, seed)).Err(); err != nil {
			t.Fatalf("Random(%d, %d, %d): Greedy plan: %v", seed, nodes, variants, err)
		}
	}
}

func TestGreedyHoldsPinsWheneverBruteForceCan(t *testing.T) {
	pinned := 0
	for seed := range uint64(400) {
		p := pooltest.Random(seed, 2+int(seed%2), 3)
		if len(p.Pins) == 0 || pooltest.Combinations(p) > pooltest.BruteForceLimit/8 {
			continue
		}
		pinned++
		r := eval.Check(p, Greedy(p, seed))
		_, _, feasible := pooltest.BruteForce(p)
		if feasible && !r.Valid {
			t.Errorf("Random(%d): pins can hold, but the Greedy plan breaks: %v", seed, r.Err())
		}
	}
	if pinned < 20 {
		t.Errorf("only %d pinned pools tried, want at least 20", pinned)
	}
}

func TestGreedyPlansOnLargePoolsAreValid(t *testing.T) {
	for _, size := range [][2]int{{24, 60}, {64, 250}} {
		for seed := range uint64(4) {
			p := stripPins(pooltest.Random(seed, size[0], size[1]))
			if err := eval.Check(p, Greedy(p, seed)).Err(); err != nil {
				t.Fatalf("Random(%d, %d, %d): %v", seed, size[0], size[1], err)
			}
		}
	}
}

// The search's incremental cost must be eval's objective term by term, or
// local search would optimise the wrong thing.
func TestSearchCostIsTheEvaluatorsObjective(t *testing.T) {
	for seed := range uint64(200) {
		p := pooltest.Random(seed, 1+int(seed%6), int(seed%15))
		pr := newLSProblem(p)
		st := pr.newState()
		greedyFill(st, seed)
		for step := 0; step < 3; step++ {
			r := eval.Check(p, st.assignment())
			if r.Valid != (st.total[0] == 0) || r.Objective != st.objective() {
				t.Fatalf("Random(%d) step %d: search cost %v, eval %v valid %v: %v", seed, step, st.total, r.Objective, r.Valid, r.Violations)
			}
			// Knock lanes about, then check again.
			for vi := range pr.vars {
				opts := pr.options(vi)
				st.set(vi, opts[(vi*7+step*3+int(seed))%len(opts)])
			}
		}
	}
}

func TestImproveNeverWorsensTheObjective(t *testing.T) {
	seeds := uint64(120)
	if testing.Short() {
		seeds = 40
	}
	for seed := range seeds {
		nodes, variants := 1+int(seed%6), 1+int(seed%17)
		p := pooltest.Random(seed, nodes, variants)
		a := Greedy(p, seed)
		before := eval.Check(p, a)
		b := Improve(p, a, seed, time.Now().Add(5*time.Second))
		after := eval.Check(p, b)
		if before.Valid && !after.Valid {
			t.Fatalf("Random(%d, %d, %d): Improve broke a valid plan: %v", seed, nodes, variants, after.Err())
		}
		if after.Valid && before.Valid && before.Objective.Less(after.Objective) {
			t.Fatalf("Random(%d, %d, %d): Improve went from %v to %v", seed, nodes, variants, before.Objective, after.Objective)
		}
	}
}

func TestImproveRepairsAnEmptyOrBrokenStart(t *testing.T) {
	p := stripPins(pooltest.Random(3, 4, 10))
	for _, start := range []model.Assignment{
		{},
		{Lanes: []model.LaneChoice{{Variant: "ghost", Nodes: []string{"nowhere"}, Residency: "warm"}}},
	} {
		b := Improve(p, start, 1, time.Now().Add(5*time.Second))
		if err := eval.Check(p, b).Err(); err != nil {
			t.Errorf("Improve(%+v) = invalid plan: %v", start, err)
		}
	}
}

func TestImproveFindsTheOptimumOfMostSmallPools(t *testing.T) {
	tried, optimal, coverOptimal, greedyOptimal := 0, 0, 0, 0
	seeds := uint64(150)
	if testing.Short() {
		seeds = 60
	}
	for seed := range seeds {
		p := pooltest.Random(seed, 2, 3+int(seed%2))
		if pooltest.Combinations(p) > pooltest.BruteForceLimit/16 {
			continue
		}
		want, _, feasible := pooltest.BruteForce(p)
		if !feasible {
			continue
		}
		tried++
		g := Greedy(p, seed)
		if eval.Check(p, g).Objective == want {
			greedyOptimal++
		}
		got := eval.Check(p, Improve(p, g, seed, time.Now().Add(5*time.Second)))
		if !got.Valid {
			t.Fatalf("Random(%d): Improve plan invalid: %v", seed, got.Err())
		}
		if got.Objective.Less(want) {
			t.Fatalf("Random(%d): Improve %v beats brute force %v", seed, got.Objective, want)
		}
		if got.Objective == want {
			optimal++
		}
		if got.Objective[0] == want[0] {
			coverOptimal++
		}
	}
	t.Logf("Improve optimal on %d of %d small pools, coverage-optimal on %d; Greedy alone optimal on %d",
		optimal, tried, coverOptimal, greedyOptimal)
	if tried < int(seeds)/3 || optimal*10 < tried*8 || coverOptimal*20 < tried*19 {
		t.Errorf("optimal on %d of %d small pools, coverage-optimal on %d: want 80%% and 95%%", optimal, tried, coverOptimal)
	}
}

func TestGreedyAndImproveAreDeterministicForASeed(t *testing.T) {
	p := pooltest.Random(11, 24, 60)
	a1, a2 := Greedy(p, 5), Greedy(p, 5)
	if !reflect.DeepEqual(a1, a2) {
		t.Fatal("Greedy differs between two runs")
	}
	far := time.Now().Add(time.Minute)
	b1, b2 := Improve(p, a1, 9, far), Improve(p, a1, 9, far)
	if !reflect.DeepEqual(b1, b2) {
		t.Fatal("Improve differs between two runs with the same seed")
	}
}

func TestImproveHonoursAPassedDeadline(t *testing.T) {
	p := pooltest.Random(2, 64, 250)
	a := Greedy(p, 2)
	start := time.Now()
	b := Improve(p, a, 2, start)
	if el := time.Since(start); el > 500*time.Millisecond {
		t.Errorf("Improve with a passed deadline took %v", el)
	}
	if eval.Check(p, a).Objective.Less(eval.Check(p, b).Objective) {
		t.Error("Improve with a passed deadline made the plan worse")
	}
}

func BenchmarkGreedy(b *testing.B) {
	for _, size := range [][2]int{{3, 10}, {24, 60}, {256, 1000}} {
		p := pooltest.Random(1, size[0], size[1])
		if err := eval.Check(p, Greedy(p, 1)).Err(); err != nil && len(p.Pins) == 0 {
			b.Fatalf("setup: %v", err)
		}
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			for b.Loop() {
				Greedy(p, 1)
			}
		})
	}
}

func BenchmarkImprove(b *testing.B) {
	for _, size := range [][2]int{{3, 10}, {24, 60}, {256, 1000}} {
		p := pooltest.Random(1, size[0], size[1])
		a := Greedy(p, 1)
		b.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(b *testing.B) {
			var obj model.Objective
			for b.Loop() {
				obj = eval.Check(p, Improve(p, a, 1, time.Now().Add(10*time.Second))).Objective
			}
			g := eval.Check(p, a).Objective
			b.ReportMetric(float64(g[3]-obj[3]), "L4-gain")
		})
	}
}

func FuzzGreedyAndImprove(f *testing.F) {
	f.Add(uint64(1), uint8(3), uint8(10), false)
	f.Add(uint64(7), uint8(1), uint8(0), true)
	f.Add(uint64(42), uint8(6), uint8(19), true)
	f.Fuzz(func(t *testing.T, seed uint64, nodes, variants uint8, pins bool) {
		p := pooltest.Random(seed, 1+int(nodes%8), int(variants%24))
		if !pins {
			p = stripPins(p)
		}
		a := Greedy(p, seed)
		before := eval.Check(p, a)
		if !pins && !before.Valid {
			t.Fatalf("Greedy plan without pins is invalid: %v", before.Err())
		}
		after := eval.Check(p, Improve(p, a, seed, time.Now().Add(200*time.Millisecond)))
		if before.Valid && (!after.Valid || before.Objective.Less(after.Objective)) {
			t.Fatalf("Improve went from %v to %v (%v)", before.Objective, after.Objective, after.Err())
		}
	})
}

// A counted clock ends the search at the same move on every run,
// whatever the wall clock: the same budget gives the same plan twice,
// spends the same work, and a larger one goes further.
func TestACountedClockEndsTheSearchAtTheSameMoveOnEveryRun(t *testing.T) {
	p := pooltest.Random(11, 24, 60)
	a := Greedy(p, 5)
	origin := time.Unix(0, 0)
	ctx := context.Background()
	full := clock.Counted(origin)
	ImproveOn(ctx, p, a, 9, full, origin.Add(time.Hour), StaleKicks)
	tests := []struct {
		name   string
		budget time.Duration
	}{
		{"a budget of a tenth of the search", full.Spent() / 10},
		{"a budget of half the search", full.Spent() / 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c1, c2 := clock.Counted(origin), clock.Counted(origin)
			b1 := ImproveOn(ctx, p, a, 9, c1, origin.Add(tt.budget), StaleKicks)
			b2 := ImproveOn(ctx, p, a, 9, c2, origin.Add(tt.budget), StaleKicks)
			if c1.Spent() != c2.Spent() || !reflect.DeepEqual(b1, b2) {
				t.Errorf("two runs with the same budget differ: %v and %v of work", c1.Spent(), c2.Spent())
			}
			if c1.Spent() >= full.Spent() {
				t.Errorf("the budget %v cut nothing: %v spent, the whole search %v", tt.budget, c1.Spent(), full.Spent())
			}
			if eval.Check(p, a).Objective.Less(eval.Check(p, b1).Objective) {
				t.Error("the budgeted search made the plan worse")
			}
		})
	}
}

// A Searcher built once runs the same searches as a fresh one per call,
// one after the other or at once: it only reads what it built.
func TestASearcherBuiltOnceSearchesAsAFreshOne(t *testing.T) {
	p := pooltest.Random(11, 24, 60)
	s := NewSearcher(p)
	start := Greedy(p, 1)
	want := make([]model.Assignment, 4)
	for k := range want {
		c := clock.Counted(time.Now())
		want[k] = ImproveOn(context.Background(), p, start, uint64(k), c, c.Now().Add(50*time.Millisecond), StaleKicks)
	}
	got := make([]model.Assignment, len(want))
	done := make(chan struct{})
	for k := range got {
		go func() {
			defer func() { done <- struct{}{} }()
			c := clock.Counted(time.Now())
			got[k] = s.ImproveOn(context.Background(), start, uint64(k), c, c.Now().Add(50*time.Millisecond), StaleKicks)
		}()
	}
	for range got {
		<-done
	}
	for k := range want {
		if !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("seed %d: the shared searcher's plan differs from a fresh search's", k)
		}
	}
}

// A descent the clock cuts short must have visited the variants whose
// sources cost most first: the order is every variant once, dearest
// first, ties in index order.
func TestTheDescentVisitsTheDearestVariantsFirst(t *testing.T) {
	for seed := range uint64(20) {
		p := pooltest.Random(seed, 4+int(seed%12), 10+int(seed%30))
		pr := newLSProblem(p)
		st := pr.newState()
		greedyFill(st, seed)
		order := st.byStake()
		if len(order) != len(pr.vars) {
			t.Fatalf("Random(%d): %d variants ordered of %d", seed, len(order), len(pr.vars))
		}
		seen := make([]bool, len(pr.vars))
		var last lsCost
		for k, vi := range order {
			if seen[vi] {
				t.Fatalf("Random(%d): variant %d ordered twice", seed, vi)
			}
			seen[vi] = true
			var stake lsCost
			for _, si := range pr.vars[vi].srcs {
				stake = stake.plus(st.srcCost[si])
			}
			if k > 0 && (last.less(stake) || last == stake && order[k-1] > vi) {
				t.Fatalf("Random(%d): variant %d (stake %v) after variant %d (stake %v)", seed, vi, stake, order[k-1], last)
			}
			last = stake
		}
	}
}
