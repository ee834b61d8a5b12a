package pb

import (
	"context"
	"io"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// knapsackJob is: maximise 6a + 5b + 4c + 3d (as minimise the negation)
// with 5a + 4b + 3c + 2d <= 9 and a + b <= 1: the optimum takes b, c, d
// (value −12).
func knapsackJob() *Job {
	return &Job{
		NCols: 4,
		Rows: []Row{
			{Cols: []int32{0, 1, 2, 3}, W: []int64{5, 4, 3, 2}, Op: LE, RHS: 9},
			{Cols: []int32{0, 1}, W: []int64{1, 1}, Op: LE, RHS: 1},
		},
		Obj: []int64{-6, -5, -4, -3},
	}
}

func TestTheWorkerStreamsBetterModelsAndEndsOnTheOptimum(t *testing.T) {
	for _, cp := range []bool{false, true} {
		job := knapsackJob()
		job.CuttingPlanes = cp
		out := make(chan Msg, 64)
		run, err := Start(context.Background(), nil, time.Now().Add(time.Minute), job, 7, out)
		if err != nil {
			t.Fatalf("startPB: %v", err)
		}
		<-run.Done
		close(out)
		var last Answer
		n := 0
		prev := int64(1 << 62)
		for m := range out {
			if m.ID != 7 {
				t.Errorf("answer tagged %d, want 7", m.ID)
			}
			if m.Answer.Done {
				break
			}
			n++
			if m.Answer.Value >= prev {
				t.Errorf("cutting planes %v: model %d is not better than %d", cp, m.Answer.Value, prev)
			}
			prev, last = m.Answer.Value, m.Answer
		}
		if n == 0 || last.Value != -12 {
			t.Fatalf("cutting planes %v: %d models, last value %d; want the optimum -12", cp, n, last.Value)
		}
		if got := last.Model; got[0] || !got[1] || !got[2] || !got[3] {
			t.Errorf("cutting planes %v: optimum model %v, want b, c and d", cp, got)
		}
	}
}

func TestTheWorkerSaysDoneWithNoModelBelowAnImpossibleCutoff(t *testing.T) {
	job := knapsackJob()
	job.Rows = append(job.Rows, Row{Cols: []int32{0, 1, 2, 3}, W: []int64{-6, -5, -4, -3}, Op: LE, RHS: -13})
	pr, pw := io.Pipe()
	var sb strings.Builder
	done := make(chan error, 1)
	go func() { done <- Serve(pr, &sb, false) }()
	enc := NewJobWriter(pw)
	if err := enc(job); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("pbServe: %v", err)
	}
	answers, err := ReadAnswers(strings.NewReader(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(answers) != 1 || !answers[0].Done {
		t.Errorf("answers %+v, want only Done: no model is below -12", answers)
	}
}

// pigeonholeJob puts n+1 pigeons in n holes, which CDCL refutes only in
// exponential time: a worker that must be stopped.
func pigeonholeJob(n int) *Job {
	col := func(p, h int) int32 { return int32(p*n + h) }
	job := &Job{NCols: (n + 1) * n, Obj: make([]int64, (n+1)*n)}
	for p := 0; p <= n; p++ {
		r := Row{Op: GE, RHS: 1}
		for h := 0; h < n; h++ {
			r.Cols, r.W = append(r.Cols, col(p, h)), append(r.W, 1)
		}
		job.Rows = append(job.Rows, r)
	}
	for h := 0; h < n; h++ {
		r := Row{Op: LE, RHS: 1}
		for p := 0; p <= n; p++ {
			r.Cols, r.W = append(r.Cols, col(p, h)), append(r.W, 1)
		}
		job.Rows = append(job.Rows, r)
	}
	return job
}

func TestAWorkerPastItsDeadlineIsKilled(t *testing.T) {
	out := make(chan Msg, 4)
	run, err := Start(context.Background(), nil, time.Now().Add(100*time.Millisecond), pigeonholeJob(14), 0, out)
	if err != nil {
		t.Fatalf("startPB: %v", err)
	}
	// A liveness check, not a speed goal: a worker left running would
	// never close done.
	select {
	case <-run.Done:
	case <-time.After(time.Minute):
		t.Fatal("the worker outlived its deadline by a minute")
	}
	select {
	case m := <-out:
		t.Errorf("a killed worker answered %+v", m)
	default:
	}
}

func TestASpareWorkerSolvesTheNextJobAndCloseKillsTheOneLeft(t *testing.T) {
	spares := NewSpares()
	spares.Refill()
	waitFor(t, "a spare started", func() bool { return len(spares.ready) == 1 })
	out := make(chan Msg, 64)
	run, err := Start(context.Background(), spares, time.Now().Add(time.Minute), knapsackJob(), 3, out)
	if err != nil {
		t.Fatalf("startPB: %v", err)
	}
	if len(spares.ready) != 0 {
		t.Error("the job did not take the spare")
	}
	<-run.Done
	close(out)
	var last Answer
	for m := range out {
		if m.Answer.Done {
			break
		}
		last = m.Answer
	}
	if last.Value != -12 {
		t.Errorf("the spare's last model is worth %d, want the optimum -12", last.Value)
	}

	spares.Refill()
	waitFor(t, "a second spare started", func() bool { return len(spares.ready) == 1 })
	p := <-spares.ready
	spares.ready <- p
	spares.Close()
	waitFor(t, "the spare killed", func() bool { return p.cmd.Process.Signal(syscall.Signal(0)) != nil })
	// A closed set still serves jobs, from a new process.
	out2 := make(chan Msg, 64)
	run2, err := Start(context.Background(), spares, time.Now().Add(time.Minute), knapsackJob(), 4, out2)
	if err != nil {
		t.Fatalf("startPB after close: %v", err)
	}
	<-run2.Done
	if len(out2) == 0 {
		t.Error("the worker started after close answered nothing")
	}
}

func TestAWaitingWorkerWarmsItsHeapAndStopsWhenItsJobComes(t *testing.T) {
	// GOGC off for the test: the background scavenger returns pages past
	// the heap goal, and a test binary's goal is a few MB, so under load
	// it raced the check below (6.3 MB kept of 16).
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var stop atomic.Bool
	if got := warmHeap(pbWarmHeap, &stop); got != pbWarmHeap {
		t.Errorf("warmHeap touched %d bytes, want %d", got, pbWarmHeap)
	}
	// Freed, the pieces stay with the runtime for the job's allocations.
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if kept := ms.HeapIdle - ms.HeapReleased; kept < pbWarmHeap/2 {
		t.Errorf("after warming, %d bytes of idle heap kept, want at least %d", kept, pbWarmHeap/2)
	}
	stop.Store(true)
	if got := warmHeap(pbWarmHeap, &stop); got != 0 {
		t.Errorf("warmHeap told to stop touched %d bytes, want 0", got)
	}
}

func TestAFirstModelsValueCountsNegativeWeightsOnce(t *testing.T) {
	// x0 + x1 >= 1, minimise -3 x0 + 5 x1 + 2 x2.
	job := &Job{NCols: 3, Obj: []int64{-3, 5, 2},
		Rows:  []Row{{Cols: []int32{0, 1}, W: []int64{1, 1}, Op: GE, RHS: 1}, {Cols: []int32{0, 1, 2}, W: []int64{-3, 5, 2}, Op: LE, RHS: 10}},
		First: true}
	var sent Answer
	v, got, err := Search(job, func(a Answer) error { sent = a; return nil })
	if err != nil || !got {
		t.Fatalf("no first model (%v)", err)
	}
	var want int64
	for c, on := range sent.Model {
		if on {
			want += job.Obj[c]
		}
	}
	if v != want || sent.Value != want {
		t.Errorf("first model %v: value %d (sent %d), want %d", sent.Model, v, sent.Value, want)
	}
}

func TestAWorkersFirstModelFollowsItsPhases(t *testing.T) {
	// x0 + x1 + x2 >= 1 and x1 + x3 <= 1, nothing to minimise. Phases
	// that are a model (an incumbent's) lead every decision to it, and
	// no propagation can leave it: the first model is the phases', in
	// the job's own columns, whichever of the three it is.
	for _, phase := range [][]bool{
		{true, false, false, false},
		{false, true, false, false},
		{false, false, true, true},
	} {
		job := &Job{NCols: 4, Obj: make([]int64, 4), First: true, Phase: phase,
			Rows: []Row{
				{Cols: []int32{0, 1, 2}, W: []int64{1, 1, 1}, Op: GE, RHS: 1},
				{Cols: []int32{1, 3}, W: []int64{1, 1}, Op: LE, RHS: 1},
			}}
		var sent Answer
		if _, got, err := Search(job, func(a Answer) error { sent = a; return nil }); err != nil || !got {
			t.Fatalf("phases %v: no first model (%v)", phase, err)
		}
		if !slices.Equal(sent.Model, phase) {
			t.Errorf("phases %v: first model %v", phase, sent.Model)
		}
	}
}

// gophersat keeps a row's degree in 30 bits: a memory row in 10^-7 GiB on
// a ~100 GiB domain (seven lanes of ~37 GiB, at most two fit) passes
// that, and gophersat would answer models that break it. No model the
// PB search gives may break a row of its job; rows within the bound are
// still searched.
func TestThePBSearchNeverAnswersAModelThatBreaksAWideRow(t *testing.T) {
	row := func(w, rhs int64) Row {
		r := Row{Op: LE, RHS: rhs}
		for c := range 7 {
			r.Cols, r.W = append(r.Cols, int32(c)), append(r.W, w+int64(c)*10001)
		}
		return r
	}
	tests := []struct {
		name      string
		row       Row
		wantModel bool
	}{
		{"seven lanes of 37.1234567 GiB on 100.1234567 GiB, in 10^-7 GiB", row(371234567, 1001234567), false},
		{"the same lanes in 10^-5 GiB", row(3712346, 10012346), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Every lane on is worth -1: the search wants as many as fit.
			job := &Job{NCols: 7, Rows: []Row{tc.row}, Obj: []int64{-1, -1, -1, -1, -1, -1, -1}}
			var models [][]bool
			_, _, err := Search(job, func(a Answer) error { models = append(models, a.Model); return nil })
			for _, m := range models {
				var sum int64
				for k, c := range tc.row.Cols {
					if m[c] {
						sum += tc.row.W[k]
					}
				}
				if sum > tc.row.RHS {
					t.Fatalf("a model puts %d on a row of at most %d", sum, tc.row.RHS)
				}
			}
			if got := len(models) > 0; got != tc.wantModel {
				t.Fatalf("models %v (error %v); want some: %v", models, err, tc.wantModel)
			}
			if !tc.wantModel && err == nil {
				t.Fatal("a job gophersat cannot hold was searched without a word")
			}
		})
	}
}

// waitFor polls cond for up to a minute: a liveness check, not a speed
// goal.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(time.Minute); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("%s: not within a minute", what)
		}
	}
}
