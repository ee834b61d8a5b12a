package solver

import (
	"bytes"
	"context"
	"encoding/gob"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
)

// knapsackJob is: maximise 6a + 5b + 4c + 3d (as minimise the negation)
// with 5a + 4b + 3c + 2d <= 9 and a + b <= 1: the optimum takes b, c, d
// (value −12).
func knapsackJob() *pbJob {
	return &pbJob{
		NCols: 4,
		Rows: []pbRow{
			{Cols: []int32{0, 1, 2, 3}, W: []int64{5, 4, 3, 2}, Op: pbLE, RHS: 9},
			{Cols: []int32{0, 1}, W: []int64{1, 1}, Op: pbLE, RHS: 1},
		},
		Obj: []int64{-6, -5, -4, -3},
	}
}

func TestTheWorkerStreamsBetterModelsAndEndsOnTheOptimum(t *testing.T) {
	for _, cp := range []bool{false, true} {
		job := knapsackJob()
		job.CuttingPlanes = cp
		out := make(chan pbMsg, 64)
		run, err := startPB(context.Background(), nil, time.Now().Add(time.Minute), job, 7, out)
		if err != nil {
			t.Fatalf("startPB: %v", err)
		}
		<-run.done
		close(out)
		var last pbAnswer
		n := 0
		prev := int64(1 << 62)
		for m := range out {
			if m.id != 7 {
				t.Errorf("answer tagged %d, want 7", m.id)
			}
			if m.a.Done {
				break
			}
			n++
			if m.a.Value >= prev {
				t.Errorf("cutting planes %v: model %d is not better than %d", cp, m.a.Value, prev)
			}
			prev, last = m.a.Value, m.a
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
	job.Rows = append(job.Rows, pbRow{Cols: []int32{0, 1, 2, 3}, W: []int64{-6, -5, -4, -3}, Op: pbLE, RHS: -13})
	pr, pw := io.Pipe()
	var sb strings.Builder
	done := make(chan error, 1)
	go func() { done <- pbServe(pr, &sb, false) }()
	enc := newJobWriter(pw)
	if err := enc(job); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("pbServe: %v", err)
	}
	answers, err := readAnswers(strings.NewReader(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	if len(answers) != 1 || !answers[0].Done {
		t.Errorf("answers %+v, want only Done: no model is below -12", answers)
	}
}

// pigeonholeJob puts n+1 pigeons in n holes, which CDCL refutes only in
// exponential time: a worker that must be stopped.
func pigeonholeJob(n int) *pbJob {
	col := func(p, h int) int32 { return int32(p*n + h) }
	job := &pbJob{NCols: (n + 1) * n, Obj: make([]int64, (n+1)*n)}
	for p := 0; p <= n; p++ {
		r := pbRow{Op: pbGE, RHS: 1}
		for h := 0; h < n; h++ {
			r.Cols, r.W = append(r.Cols, col(p, h)), append(r.W, 1)
		}
		job.Rows = append(job.Rows, r)
	}
	for h := 0; h < n; h++ {
		r := pbRow{Op: pbLE, RHS: 1}
		for p := 0; p <= n; p++ {
			r.Cols, r.W = append(r.Cols, col(p, h)), append(r.W, 1)
		}
		job.Rows = append(job.Rows, r)
	}
	return job
}

func TestAWorkerPastItsDeadlineIsKilled(t *testing.T) {
	out := make(chan pbMsg, 4)
	run, err := startPB(context.Background(), nil, time.Now().Add(100*time.Millisecond), pigeonholeJob(14), 0, out)
	if err != nil {
		t.Fatalf("startPB: %v", err)
	}
	// A liveness check, not a speed goal: a worker left running would
	// never close done.
	select {
	case <-run.done:
	case <-time.After(time.Minute):
		t.Fatal("the worker outlived its deadline by a minute")
	}
	select {
	case m := <-out:
		t.Errorf("a killed worker answered %+v", m)
	default:
	}
}

// Level 4 of mid-sized random pools is proved by the PB portfolio (or
// by the LP it starts from), and every proof agrees with a second solve
// with a longer limit.
func TestThePortfolioProvesLevelFourOfMidSizedPools(t *testing.T) {
	if testing.Short() {
		t.Skip("solves 8x20 pools")
	}
	byPB := 0
	for seed := uint64(1); seed <= 6; seed++ {
		p := pooltest.Random(seed, 8, 20)
		res, err := Solve(context.Background(), p, Options{Seed: 1, TimeLimit: 10 * time.Second})
		if err != nil {
			t.Fatalf("pool %d: %v", seed, err)
		}
		if res.Infeasible {
			continue
		}
		l4 := res.Levels[3]
		if l4.Status != Optimal {
			t.Errorf("pool %d: level 4 %s (%d, bound %d from %s)", seed, l4.Status, l4.Value, l4.LowerBound, l4.BoundSource)
			continue
		}
		if slices.Contains(l4.BoundSource.Sources(), BoundPB) {
			byPB++
		}
	}
	if byPB == 0 {
		t.Errorf("no level 4 was proved by the PB worker: the test does not reach it")
	}
}

// TestTheCanonicalPlanIsTheSameWhoeverSolvesIt: the model a level-4
// worker sends for its canonical job after its own search (with models,
// or with none below its cutoff) must be the one a fresh worker gives
// for canonicalize's job, or a plan would depend on which of them the
// clock picked.
func TestTheCanonicalPlanIsTheSameWhoeverSolvesIt(t *testing.T) {
	serve := func(job *pbJob) []pbAnswer {
		var in, out bytes.Buffer
		if err := gob.NewEncoder(&in).Encode(job.wire()); err != nil {
			t.Fatal(err)
		}
		if err := pbServe(&in, &out, false); err != nil {
			t.Fatal(err)
		}
		as, err := readAnswers(&out)
		if err != nil {
			t.Fatal(err)
		}
		return as
	}
	compared := 0
	for seed := uint64(1); seed <= shortOr(8, 2); seed++ {
		// 12x40: smaller pools have one optimal plan, which any job finds.
		x, res := lpFixture(t, seed, 12, 40, 10*time.Second)
		if res.Infeasible || !allOptimal(res) {
			continue
		}
		x.run = &run{ctx: context.Background(), start: time.Now(), deadline: time.Now().Add(time.Minute)}
		fresh, r, offset, ok := x.canonicalJob()
		if !ok {
			t.Fatalf("pool %d: no canonical job", seed)
		}
		want := serve(fresh)
		canon, _, _, _ := x.canonicalJob()
		job := pbJobFor(r, res.Objective[3], offset, nil)
		job.Canon = canon
		got := serve(job)
		if len(want) != 1 || len(got) < 3 || !got[len(got)-2].Done || !got[len(got)-1].Canonical {
			t.Fatalf("pool %d: %d answers for the canonical job, %d for the worker's (want one; models, Done, canonical)", seed, len(want), len(got))
		}
		compared++
		if !slices.Equal(want[0].Model, got[len(got)-1].Model) {
			t.Errorf("pool %d: the worker's canonical model differs from a fresh worker's", seed)
		}
		// Solved in this process, from canonicalize's job or from the
		// job handed ahead to the workers (its bound row still at the
		// incumbent of the level's start): the same model again.
		if m, ok := x.firstModel(fresh, x.run.deadline); !ok || !slices.Equal(want[0].Model, m) {
			t.Errorf("pool %d: the canonical model solved in this process differs from a worker's", seed)
		}
		ahead, _, _, _ := x.canonicalJob()
		ahead.Rows[len(ahead.Rows)-1].RHS += 1000
		x.canon = &canonAhead{job: ahead, rel: r, offset: offset}
		x.chk, x.sym = eval.NewChecker(x.p), findSymmetry(x.e)
		wantPlan, _ := x.canonicalPlan(r, want[0].Model)
		if a, ok := x.canonicalPB(x.run.deadline); !ok || !reflect.DeepEqual(a, wantPlan) {
			t.Errorf("pool %d: canonicalPB from the job handed ahead gives another plan (ok %v)", seed, ok)
		}
		x.canon = nil
		// A worker below the optimum finds nothing, and its Done proves
		// cutoff + 1: its canonical job must be the same too.
		canon, _, _, _ = x.canonicalJob()
		job = pbJobFor(r, res.Objective[3]-1, offset, nil)
		job.Canon = canon
		got = serve(job)
		if len(got) != 2 || !got[0].Done || !got[1].Canonical || !slices.Equal(want[0].Model, got[1].Model) {
			t.Errorf("pool %d: below the optimum the worker answers %d messages (want Done, then the canonical model)", seed, len(got))
		}
	}
	if compared < int(shortOr(3, 1)) {
		t.Errorf("only %d pools compared", compared)
	}
}

// allOptimal reports whether every level of res is proved.
func allOptimal(res *Result) bool {
	for _, l := range res.Levels {
		if l.Status != Optimal {
			return false
		}
	}
	return true
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

func TestASpareWorkerSolvesTheNextJobAndCloseKillsTheOneLeft(t *testing.T) {
	spares := newPBSpares()
	spares.refill()
	waitFor(t, "a spare started", func() bool { return len(spares.ready) == 1 })
	out := make(chan pbMsg, 64)
	run, err := startPB(context.Background(), spares, time.Now().Add(time.Minute), knapsackJob(), 3, out)
	if err != nil {
		t.Fatalf("startPB: %v", err)
	}
	if len(spares.ready) != 0 {
		t.Error("the job did not take the spare")
	}
	<-run.done
	close(out)
	var last pbAnswer
	for m := range out {
		if m.a.Done {
			break
		}
		last = m.a
	}
	if last.Value != -12 {
		t.Errorf("the spare's last model is worth %d, want the optimum -12", last.Value)
	}

	spares.refill()
	waitFor(t, "a second spare started", func() bool { return len(spares.ready) == 1 })
	p := <-spares.ready
	spares.ready <- p
	spares.close()
	waitFor(t, "the spare killed", func() bool { return p.cmd.Process.Signal(syscall.Signal(0)) != nil })
	// A closed set still serves jobs, from a new process.
	out2 := make(chan pbMsg, 64)
	run2, err := startPB(context.Background(), spares, time.Now().Add(time.Minute), knapsackJob(), 4, out2)
	if err != nil {
		t.Fatalf("startPB after close: %v", err)
	}
	<-run2.done
	if len(out2) == 0 {
		t.Error("the worker started after close answered nothing")
	}
}

func TestAWaitingWorkerWarmsItsHeapAndStopsWhenItsJobComes(t *testing.T) {
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

func TestTheDumpOptionWritesEachWorkersJobWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("solves 8x20 pools")
	}
	dir := t.TempDir()
	prefix := filepath.Join(dir, "job")
	var files []string
	for seed := uint64(1); seed <= 6 && len(files) == 0; seed++ {
		if _, err := Solve(context.Background(), pooltest.Random(seed, 8, 20), Options{Seed: 1, TimeLimit: 10 * time.Second, DumpPB: prefix}); err != nil {
			t.Fatalf("pool %d: %v", seed, err)
		}
		files, _ = filepath.Glob(prefix + "-l*-*.gob")
	}
	if len(files) == 0 {
		t.Fatal("no worker job was dumped in six solves")
	}
	for _, name := range files {
		job, err := readJobFile(name)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(name), err)
		}
		if len(job.Rows) == 0 || len(job.Obj) != job.NCols {
			t.Errorf("%s: %d rows, %d objective terms over %d columns", filepath.Base(name), len(job.Rows), len(job.Obj), job.NCols)
		}
		if _, _, err := pbSolve(job, func(pbAnswer) error { return nil }); err != nil {
			t.Errorf("%s: the dumped job does not solve: %v", filepath.Base(name), err)
		}
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "*.tmp*")); len(tmp) > 0 {
		t.Errorf("half-written dumps left: %v", tmp)
	}
}

// BenchmarkDumpedPBJob times a worker's search alone on the job in
// POOLSOLVE_PB_JOB (a file POOLSOLVE_DUMP_PB wrote), in this process;
// models is how many improving models it sent.
func BenchmarkDumpedPBJob(b *testing.B) {
	name := os.Getenv("POOLSOLVE_PB_JOB")
	if name == "" {
		b.Skip("set POOLSOLVE_PB_JOB to a job that POOLSOLVE_DUMP_PB wrote")
	}
	job, err := readJobFile(name)
	if err != nil {
		b.Fatal(err)
	}
	models := 0
	for b.Loop() {
		models = 0
		if _, _, err := pbSolve(job, func(pbAnswer) error { models++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(models), "models")
}

// readJobFile reads a job that POOLSOLVE_DUMP_PB wrote.
func readJobFile(name string) (*pbJob, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readJob(f)
}

func TestAFirstModelsValueCountsNegativeWeightsOnce(t *testing.T) {
	// x0 + x1 >= 1, minimise -3 x0 + 5 x1 + 2 x2.
	job := &pbJob{NCols: 3, Obj: []int64{-3, 5, 2},
		Rows:  []pbRow{{Cols: []int32{0, 1}, W: []int64{1, 1}, Op: pbGE, RHS: 1}, {Cols: []int32{0, 1, 2}, W: []int64{-3, 5, 2}, Op: pbLE, RHS: 10}},
		First: true}
	var sent pbAnswer
	v, got, err := pbSolve(job, func(a pbAnswer) error { sent = a; return nil })
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
		job := &pbJob{NCols: 4, Obj: make([]int64, 4), First: true, Phase: phase,
			Rows: []pbRow{
				{Cols: []int32{0, 1, 2}, W: []int64{1, 1, 1}, Op: pbGE, RHS: 1},
				{Cols: []int32{1, 3}, W: []int64{1, 1}, Op: pbLE, RHS: 1},
			}}
		var sent pbAnswer
		if _, got, err := pbSolve(job, func(a pbAnswer) error { sent = a; return nil }); err != nil || !got {
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
	row := func(w, rhs int64) pbRow {
		r := pbRow{Op: pbLE, RHS: rhs}
		for c := range 7 {
			r.Cols, r.W = append(r.Cols, int32(c)), append(r.W, w+int64(c)*10001)
		}
		return r
	}
	tests := []struct {
		name      string
		row       pbRow
		wantModel bool
	}{
		{"seven lanes of 37.1234567 GiB on 100.1234567 GiB, in 10^-7 GiB", row(371234567, 1001234567), false},
		{"the same lanes in 10^-5 GiB", row(3712346, 10012346), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// Every lane on is worth -1: the search wants as many as fit.
			job := &pbJob{NCols: 7, Rows: []pbRow{tc.row}, Obj: []int64{-1, -1, -1, -1, -1, -1, -1}}
			var models [][]bool
			_, _, err := pbSolve(job, func(a pbAnswer) error { models = append(models, a.Model); return nil })
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
