package solver

import (
	"context"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

func TestSolveSaysWhyItStopped(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	// Two pins that each fill spark-02: no plan holds both.
	stuck := pooltest.New(
		pooltest.Node("spark-01", 121.69, pooltest.Spark()),
		pooltest.Node("spark-02", 121.69, pooltest.Spark()),
		pooltest.Variant("a", 80, pooltest.Serves("a"), pooltest.On("spark-02")),
		pooltest.Variant("b", 80, pooltest.Serves("b"), pooltest.On("spark-02")),
		pooltest.PinLane("a", model.Always, "spark-02"),
		pooltest.PinLane("b", model.Always, "spark-02"),
	)
	for _, tc := range []struct {
		name string
		ctx  context.Context
		pool *model.Pool
		opts Options
		want Stop
	}{
		{"a small pool searched to the end is proved", context.Background(), pooltest.Random(1, 3, 6), Options{Seed: 1}, StopProved},
		{"the greedy solver's plan is heuristic", context.Background(), pooltest.Random(5, 6, 12), Options{Solver: Greedy, TimeLimit: time.Second}, StopHeuristic},
		{"pins that cannot hold together are infeasible", context.Background(), stuck, Options{}, StopInfeasible},
		{"a context cancelled before the search is an interrupt", cancelled, pooltest.Random(1, 8, 20), Options{Seed: 1}, StopInterrupted},
		{"a limit that leaves no time to search is the deadline", context.Background(), pooltest.Random(1, 8, 20), Options{Seed: 1, TimeLimit: time.Millisecond}, StopDeadline},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Solve(tc.ctx, tc.pool, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			if res.Stop != tc.want {
				t.Errorf("Stop = %q, want %q (infeasible %v, levels %+v)", res.Stop, tc.want, res.Infeasible, res.Levels)
			}
		})
	}
}

func TestStopReason(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	levels := func(st ...Status) (out [4]Level) {
		for i := range out {
			out[i].Status = Optimal
		}
		for i, s := range st {
			out[i].Status = s
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		ctx    context.Context
		res    Result
		greedy bool
		want   Stop
	}{
		{"every level optimal is proved", context.Background(), Result{Levels: levels()}, false, StopProved},
		{"a proof stands when the interrupt comes after it", cancelled, Result{Levels: levels()}, false, StopProved},
		{"a greedy plan the trivial bounds prove is proved", context.Background(), Result{Levels: levels()}, true, StopProved},
		{"no plan at all is infeasible, interrupted or not", cancelled, Result{Infeasible: true}, false, StopInfeasible},
		{"an unproved level under a cancelled context is an interrupt", cancelled, Result{Levels: levels(Optimal, Optimal, Optimal, Bounded)}, false, StopInterrupted},
		{"an unproved level past the context's deadline is the deadline", expired, Result{Levels: levels(Bounded)}, false, StopDeadline},
		{"an unproved level with the context alive is the time limit", context.Background(), Result{Levels: levels(Optimal, Heuristic)}, false, StopDeadline},
		{"the greedy solver's unproved plan is heuristic", context.Background(), Result{Levels: levels(Heuristic)}, true, StopHeuristic},
		{"an interrupted greedy solver says so", cancelled, Result{Levels: levels(Heuristic)}, true, StopInterrupted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := stopReason(tc.ctx, &tc.res, tc.greedy); got != tc.want {
				t.Errorf("stopReason = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStaticExplanationsGiveTheirGraceToTheSearch(t *testing.T) {
	soon := time.Now().Add(2 * time.Second)
	early, cancel := context.WithDeadline(context.Background(), soon)
	defer cancel()
	for _, tc := range []struct {
		name  string
		ctx   context.Context
		limit time.Duration
		// want is the deadline after staticExplanations, from the start
		// (zero: the context's).
		want time.Duration
	}{
		{"a 10 s limit keeps 100 ms for the merge, not 500 for explanations", context.Background(), 10 * time.Second, 9900 * time.Millisecond},
		{"a 1 s limit keeps a fiftieth of it", context.Background(), time.Second, 980 * time.Millisecond},
		{"an earlier context deadline still stops the search", early, time.Minute, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := newRun(tc.ctx, pooltest.Random(1, 3, 6), Options{TimeLimit: tc.limit})
			if err != nil {
				t.Fatal(err)
			}
			before := r.deadline
			r.staticExplanations()
			want := r.start.Add(tc.want)
			if tc.want == 0 {
				want = soon
			}
			if !r.deadline.Equal(want) || !r.tooBig {
				t.Errorf("deadline %v after the start (tooBig %v), want %v", r.deadline.Sub(r.start), r.tooBig, want.Sub(r.start))
			}
			if r.deadline.Before(before) {
				t.Errorf("the deadline moved earlier: %v -> %v", before.Sub(r.start), r.deadline.Sub(r.start))
			}
		})
	}
}
