package solver

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/clock"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/localsearch"
)

// twoHalves is a pool of two independent parts.
func twoHalves() *model.Pool {
	return pooltest.New(
		pooltest.Node("mac-01", 64, pooltest.Mac()),
		pooltest.Node("mac-02", 64, pooltest.Mac()),
		pooltest.Variant("a", 20, pooltest.Serves("a"), pooltest.On("mac-01")),
		pooltest.Variant("a-small", 10, pooltest.Serves("a"), pooltest.On("mac-01")),
		pooltest.Variant("b", 20, pooltest.Serves("b"), pooltest.On("mac-02")),
		pooltest.Alias("qa", 1, "a"),
		pooltest.Alias("qb", 1, "b"),
	)
}

func TestThePartsEncodedAheadAreTheOnesEncodedInTurn(t *testing.T) {
	p := twoHalves()
	r, err := newRun(context.Background(), p, Options{TimeLimit: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	a := r.encodeAhead()
	defer a.abandon()
	if len(a.parts) != 2 {
		t.Fatalf("%d parts, want 2", len(a.parts))
	}
	for pi, c := range a.parts {
		got, err := a.part(pi)
		if err != nil {
			t.Fatalf("part %d: %v", pi, err)
		}
		want, err := newExact(r, c.pool, r.deadline, r.deadline, r.opts.Seed+uint64(pi), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got.e.MaxVar() != want.e.MaxVar() || len(got.e.Linear.Rows) != len(want.e.Linear.Rows) {
			t.Errorf("part %d: %d variables and %d rows ahead, %d and %d in turn", pi,
				got.e.MaxVar(), len(got.e.Linear.Rows), want.e.MaxVar(), len(want.e.Linear.Rows))
		}
	}
}

func TestAnAbandonedEncodingEndsAndAPartPastItsLimitGivesUp(t *testing.T) {
	p := pooltest.Random(1, 64, 250)
	r, err := newRun(context.Background(), p, Options{TimeLimit: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	a := r.encodeAhead()
	a.skip(0)
	if _, err := a.part(0); err != nil && !errors.Is(err, encode.ErrDeadline) {
		t.Fatalf("a skipped part: %v, want done or ErrDeadline", err)
	}
	b := r.encodeAhead()
	b.abandon() // returns once the goroutine ended: a leak would hang here
	for pi := range b.parts {
		select {
		case <-b.done[pi]:
		default:
			t.Errorf("part %d still encoding after abandon", pi)
		}
	}
}

// A part encoded ahead before the solving goroutine moved the run's
// deadline (staticExplanations, as a part past the memory diagrams' size
// does) starts with the deadline as moved: the encoding goroutine owns a
// copy, and the solving goroutine hands each part the run's own. Under
// -race (as CI runs it), a goroutine sharing r.deadline is reported.
func TestAPartStartsWithTheRunsDeadlineThoughItWasEncodedBeforeItMoved(t *testing.T) {
	p := twoHalves()
	r, err := newRun(context.Background(), p, Options{TimeLimit: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	a := r.encodeAhead()
	defer a.abandon()
	if _, err := a.part(0); err != nil {
		t.Fatal(err)
	}
	before := r.deadline
	r.staticExplanations()
	if !r.deadline.After(before) {
		t.Fatal("staticExplanations did not move the deadline: the test does not reach its case")
	}
	s := r.newPartSearch(localsearch.Greedy(p, 1), a)
	for pi := range s.parts {
		if err := s.startPart(pi); err != nil {
			t.Fatalf("part %d: %v", pi, err)
		}
		if x := s.xs[pi]; x == nil || !x.deadline.Equal(r.deadline) || !x.e.Deadline.Equal(r.deadline) {
			t.Errorf("part %d starts with another deadline than the run's, %v after the start", pi, r.deadline.Sub(r.start))
		}
	}
}

// Parts are searched smallest first: a small part proves in milliseconds
// and leaves the rest to the large one, where after it, it got what the
// large one's overrun left (on 256x1000 seed 90533 nothing: a part of 64
// variables kept 3 uncovered sources beside a proved part).
func TestPartsAreSearchedSmallestFirst(t *testing.T) {
	s := &partSearch{parts: []component{{size: 100000}, {size: 64}, {size: 500}, {size: 64}}}
	if got, want := s.order(), []int{1, 3, 2, 0}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// While the parts are encoded the warm plan gets more local search, never
// worse, and it ends when they are: the search waits for the encoding,
// not for the end given.
func TestTheWarmPlanImprovesUntilThePartsAreEncoded(t *testing.T) {
	p := pooltest.Random(3, 24, 60)
	r, err := newRun(context.Background(), p, Options{TimeLimit: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r.ls = localsearch.NewSearcher(p)
	warm := localsearch.Greedy(p, 1)
	rep := eval.Check(p, warm)
	if !rep.Valid {
		t.Fatalf("the greedy plan is invalid: %v", rep.Err())
	}
	closed := make(chan struct{})
	close(closed)
	if got, _ := r.warmWhileEncoding(warm, rep, closed, time.Now().Add(time.Minute)); !reflect.DeepEqual(got, warm) {
		t.Error("with the parts encoded already, the warm plan changed")
	}
	encoded := make(chan struct{})
	time.AfterFunc(300*time.Millisecond, func() { close(encoded) })
	start := time.Now()
	got, gotRep := r.warmWhileEncoding(warm, rep, encoded, start.Add(time.Minute))
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("ran %v, past the encoding's end (0.3 s)", took)
	}
	if check := eval.Check(p, got); !check.Valid || check.Objective != gotRep.Objective || rep.Objective.Less(check.Objective) {
		t.Errorf("plan %v (valid %v), reported %v, from %v", check.Objective, check.Valid, gotRep.Objective, rep.Objective)
	}
}

// A round of local search that cannot set its state, and build the
// part's searcher first, before its end is not started: on 1024x4000 one
// started 0.7 s before the deadline ended 0.95 s past it. A counted
// search reads no wall time and always has room.
func TestAPolishRoundThatCannotEndInTimeIsNotStarted(t *testing.T) {
	p := pooltest.Random(3, 24, 60)
	part := pooltest.Random(4, 24, 60)
	r, err := newRun(context.Background(), p, Options{TimeLimit: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	r.ls, r.lsBuilt = localsearch.NewSearcher(p), time.Second
	tests := []struct {
		name  string
		pool  *model.Pool
		left  time.Duration
		clock *clock.Clock
		want  bool
	}{
		{"the whole pool's searcher with more than its build time left", p, 1500 * time.Millisecond, nil, true},
		{"the whole pool's searcher with less than its build time left", p, 500 * time.Millisecond, nil, false},
		{"a part's first round with time to set its state but not to build", part, 1500 * time.Millisecond, nil, false},
		{"a part's first round with time for both", part, 2500 * time.Millisecond, nil, true},
		{"a counted search with no wall time left", part, 0, clock.Counted(time.Now()), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r.clock = tt.clock
			x := &exact{run: r, p: tt.pool}
			if got := x.polishRoom(time.Now().Add(tt.left)); got != tt.want {
				t.Errorf("polishRoom with %v left = %v, want %v", tt.left, got, tt.want)
			}
		})
	}
}
