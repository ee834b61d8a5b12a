package solver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/solver/pb"
)

// Level 4 of mid-sized random pools is proved by the PB portfolio (or
// by the LP it starts from), and every proof agrees with a second solve
// with a longer limit.
func TestThePortfolioProvesLevelFourOfMidSizedPools(t *testing.T) {
	if testing.Short() {
		t.Skip("solves 8x20 pools")
	}
	defer func(v int) { smallVars = v }(smallVars)
	smallVars = 400 // 8x20's parts then start their workers first
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
	serve := func(job *pb.Job) []pb.Answer {
		var in, out bytes.Buffer
		if err := pb.WriteJob(&in, job); err != nil {
			t.Fatal(err)
		}
		// As a worker process serves it: its rows are let go once read,
		// and the canonical job's bound comes from the cutoff kept.
		if err := pb.Serve(&in, &out, true); err != nil {
			t.Fatal(err)
		}
		as, err := pb.ReadAnswers(&out)
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
		job := pb.JobFor(r, res.Objective[3], offset, nil)
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
		job = pb.JobFor(r, res.Objective[3]-1, offset, nil)
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

func TestTheDumpOptionWritesEachWorkersJobWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("solves 8x20 pools")
	}
	defer func(v int) { smallVars = v }(smallVars)
	smallVars = 400 // 8x20's parts then start their workers first
	dir := t.TempDir()
	prefix := filepath.Join(dir, "job")
	var files []string
	for seed := uint64(1); seed <= 6 && len(files) == 0; seed++ {
		if _, err := Solve(context.Background(), pooltest.Random(seed, 8, 20), Options{Seed: 1, TimeLimit: 10 * time.Second, DumpPB: prefix}); err != nil {
			t.Fatalf("pool %d: %v", seed, err)
		}
		files, _ = filepath.Glob(prefix + "-l*-*.pbjob")
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
		if _, _, err := pb.Search(job, func(pb.Answer) error { return nil }); err != nil {
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
		if _, _, err := pb.Search(job, func(pb.Answer) error { models++; return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(models), "models")
}

// readJobFile reads a job that POOLSOLVE_DUMP_PB wrote.
func readJobFile(name string) (*pb.Job, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return pb.ReadJob(f)
}

// A worker's end proves the level only when its search learns clauses:
// gophersat's cutting-planes search has ended with no model where one
// existed, so its end leaves the bound where it was.
func TestOnlyAClauseLearningWorkersEndProvesTheLevel(t *testing.T) {
	for _, tc := range []struct {
		name          string
		cuttingPlanes bool
		wantLB        int64
	}{
		{"a clause-learning worker's end proves its cutoff plus one", false, 5},
		{"a cutting-planes worker's end proves nothing", true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, x, _ := greedyAtLevelOne(t)
			if x.obj[0] < 5 {
				t.Fatalf("greedy's plan leaves %d uncovered; the test needs 5 or more", x.obj[0])
			}
			l := &levelRun{x: x, lb: 0, ub: x.obj[0], src: BoundTrivial}
			w := &pbLevel{x: x, level: 0, sr: &strongResult{}, runs: map[int]*pb.Run{}, out: make(chan pb.Msg, 1),
				jobs: map[int]*pbJobState{3: {cutoff: 4, cuttingPlanes: tc.cuttingPlanes}}}
			l.pw = w
			w.runs[3] = nil // alive until its answer
			// A clause-learning worker searches beside it, so a
			// cutting-planes end starts none (where none runs, one
			// starts: the Lagrangian case of
			// TestStrongBoundAndReducedCostFixingsKeepTheOptimum needs it).
			w.cdcl, w.runs[4] = 4, &pb.Run{}
			w.out <- pb.Msg{ID: 3, Answer: pb.Answer{Done: true}}
			if err := l.poll(time.Now().Add(time.Second), false); err != nil {
				t.Fatal(err)
			}
			if l.lb != tc.wantLB {
				t.Errorf("bound %d (%s), want %d", l.lb, l.src, tc.wantLB)
			}
		})
	}
}
