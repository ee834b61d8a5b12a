package benchmarks

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/export"
	"github.com/poolsolve/poolsolve/internal/pooltest"
)

// needClasp skips the calling test when clasp is not on PATH, and fails it
// under CI=true, where .ci/run installs clasp.
func needClasp(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("clasp"); err == nil {
		return
	}
	const msg = "clasp not installed (apt-get install clasp)"
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; .ci/run installs it, so CI must have it", msg)
	}
	t.Skip(msg)
}

func TestParseCompetitionReadsEveryWayClaspEnds(t *testing.T) {
	tests := []struct {
		name string
		text string
		want PBAnswer
	}{
		{"an optimum keeps the last model and cost",
			"c Solving...\no 9\nc Answer: 1\nv x1 -x2\no 4\nc Answer: 2\nv -x1 x2 x3\ns OPTIMUM FOUND\nc Optimization   : 4\n",
			PBAnswer{Status: "optimal", Cost: 4, HasCost: true, Ones: map[int]bool{2: true, 3: true}}},
		{"a time limit after a model is satisfiable and interrupted",
			"o 411294\no 411049\nc Answer: 36\nv x4 -x5\ns SATISFIABLE\nc \nc TIME LIMIT     : 1\nc Models         : 36+\nc Optimization   : 411049\n",
			PBAnswer{Status: "satisfiable", Cost: 411049, HasCost: true, Ones: map[int]bool{4: true}, Interrupted: true}},
		{"an interrupt before any model is unknown",
			"c Solving...\ns UNKNOWN\nc INTERRUPTED    : 1\n",
			PBAnswer{Status: "unknown", Ones: map[int]bool{}, Interrupted: true}},
		{"an infeasible file", "s UNSATISFIABLE\n", PBAnswer{Status: "infeasible", Ones: map[int]bool{}}},
		{"a file without an objective has a model and no cost",
			"c Answer: 1\nv x1 x2\ns SATISFIABLE\n",
			PBAnswer{Status: "satisfiable", Ones: map[int]bool{1: true, 2: true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseCompetition(tc.text)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
	for _, bad := range []string{"s OPTIMUM FOUND\nv x1 xq\n", "o many\n", "v x0\n"} {
		if _, err := ParseCompetition(bad); err == nil {
			t.Errorf("ParseCompetition(%q) accepted output it cannot read", bad)
		}
	}
}

func TestClaspAnswersBecomeTheHarnessAnswers(t *testing.T) {
	tests := []struct {
		name   string
		in     PBAnswer
		status AnswerStatus
		hasSol bool
		ones   []string
	}{
		{"an optimum is optimal with its model", PBAnswer{Status: "optimal", Cost: 4, HasCost: true, Ones: map[int]bool{12: true, 3: true}}, AnswerOptimal, true, []string{"x3", "x12"}},
		{"a model stopped by the time limit is not a proof", PBAnswer{Status: "satisfiable", Cost: 4, HasCost: true, Interrupted: true, Ones: map[int]bool{1: true}}, AnswerStopped, true, []string{"x1"}},
		{"a model of a file without an objective is optimal", PBAnswer{Status: "satisfiable", Ones: map[int]bool{1: true}}, AnswerOptimal, true, []string{"x1"}},
		{"an interrupted model without a cost is not a proof", PBAnswer{Status: "satisfiable", Interrupted: true, Ones: map[int]bool{1: true}}, AnswerStopped, true, []string{"x1"}},
		{"no model is no solution", PBAnswer{Status: "unknown", Interrupted: true, Ones: map[int]bool{}}, AnswerStopped, false, nil},
		{"unsatisfiable is infeasible", PBAnswer{Status: "infeasible", Ones: map[int]bool{}}, AnswerInfeasible, false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := claspAnswer(tc.in)
			if got.Status != tc.status || got.HasSol != tc.hasSol || !reflect.DeepEqual(got.Ones, tc.ones) {
				t.Fatalf("got %+v, want status %s, solution %v, ones %v", got, tc.status, tc.hasSol, tc.ones)
			}
		})
	}
}

// fakeClasp writes a shell script that stands for clasp: it prints a
// model at once, then waits for an interrupt (or its own end) as clasp
// does at a time limit.
func fakeClasp(t *testing.T, body string) string {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh to run a stand-in for clasp")
	}
	file := filepath.Join(t.TempDir(), "clasp")
	if err := os.WriteFile(file, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestRunClaspInterruptsAtTheLimitAndKeepsTheModel(t *testing.T) {
	// clasp's --time-limit takes whole seconds; the interrupt at the limit
	// is what keeps a 300 ms limit.
	bin := fakeClasp(t, `trap 'echo "c Answer: 1"; echo "v x1 -x2 x3"; echo "s SATISFIABLE"; echo "c INTERRUPTED : 1"; exit 11' INT
case "$1" in --time-limit=1) ;; *) echo "want --time-limit=1, got $1" >&2; exit 65;; esac
echo "c Solving..."
echo "o 7"
i=0; while [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
echo "s UNKNOWN"
`)
	start := time.Now()
	a, err := RunClasp(context.Background(), bin, "f.opb", 300*time.Millisecond)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if took > 5*time.Second {
		t.Errorf("the stand-in ran %s: the interrupt at 300 ms did not stop it", took)
	}
	want := PBAnswer{Status: "satisfiable", Cost: 7, HasCost: true, Ones: map[int]bool{1: true, 3: true}, Interrupted: true}
	if a.Status != want.Status || a.Cost != want.Cost || !a.Interrupted || !reflect.DeepEqual(a.Ones, want.Ones) {
		t.Errorf("answer %+v, want %+v", a, want)
	}
	if a.FirstModel <= 0 || a.FirstModel > a.Took || a.Took < 300*time.Millisecond {
		t.Errorf("first model at %s, took %s: want the first model within the run and the run at least the limit", a.FirstModel, a.Took)
	}
}

func TestRunClaspNamesWhatWentWrong(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"a parse error exits 65 with clasp's message", `echo "s UNKNOWN"; echo "*** ERROR: (clasp): parse error in line 5164: coefficient expected" >&2; exit 65`, "parse error in line 5164"},
		{"a literal it cannot read", `echo "s OPTIMUM FOUND"; echo "v x1 xq"; exit 30`, `literal "xq"`},
		{"a program that is not there", "", "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "missing-clasp")
			if tc.body != "" {
				bin = fakeClasp(t, tc.body)
			}
			_, err := RunClasp(context.Background(), bin, "f.opb", time.Second)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// fakeExternal answers every level with a fixed answer, to test the checks
// the harness makes of external answers.
type fakeExternal struct {
	format string
	answer func(file string) Answer
}

func (f fakeExternal) Name() string          { return "fake" }
func (f fakeExternal) Ready() error          { return nil }
func (f fakeExternal) Version() string       { return "fake" }
func (f fakeExternal) Format() export.Format { return export.Format(f.format) }
func (f fakeExternal) Solve(_ context.Context, file string, _ time.Duration) (Answer, error) {
	if _, err := os.Stat(file); err != nil {
		return Answer{}, fmt.Errorf("no file to solve: %v", err)
	}
	return f.answer(file), nil
}

func TestExternalAnswersThatAreNoSolutionAreRefused(t *testing.T) {
	insts, err := SizeInstances([]Size{{Nodes: 3, Variants: 6}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := insts[0].Pool()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		format string
		ans    Answer
		want   string
	}{
		{"an all-zero answer breaks a row", "opb", Answer{Status: AnswerOptimal, HasSol: true, Ones: []string{}}, "breaks row"},
		{"an objective that is not the solution's", "opb", Answer{Status: AnswerOptimal, HasSol: true, Ones: []string{}, Objective: -3}, "objective -3, but its solution is worth"},
		{"fractional columns are a relaxation", "lp", Answer{Status: AnswerOptimal, HasSol: true, Fractional: 2}, "2 columns of its answer are fractional"},
		{"infeasible is reported", "opb", Answer{Status: AnswerInfeasible}, "says the program is infeasible"},
		{"a stop without a solution", "opb", Answer{Status: AnswerStopped}, "time-limit without a solution"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ext := fakeExternal{format: tc.format, answer: func(string) Answer { return tc.ans }}
			run := solveLex(context.Background(), ext, p, "3x6", t.TempDir(), time.Second)
			if !strings.HasPrefix(run.Error, "level 1: ") || !strings.Contains(run.Error, tc.want) || run.Verified || run.Proved {
				t.Fatalf("run %+v; want an error at level 1 with %q", run, tc.want)
			}
		})
	}
}

func TestClaspSolvesLevelByLevelLikeTheExactSolver(t *testing.T) {
	needClasp(t)
	all, err := DefaultSuite()
	if err != nil {
		t.Fatal(err)
	}
	res, err := Measure(context.Background(), all[:3], Options{TimeLimit: 10 * time.Second, Seed: 1,
		Solvers: []string{SolverExact, SolverClasp}, Externals: map[string]External{SolverClasp: Clasp{}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		exact, clasp := r.Run(SolverExact), r.Run(SolverClasp)
		if !clasp.OK() || !clasp.Verified || !clasp.Proved {
			t.Errorf("%s: clasp %+v; want every level proved and the plan verified", r.Instance.Name, clasp)
			continue
		}
		if exact.Proved && clasp.Objective != exact.Objective {
			t.Errorf("%s: clasp proves %v, exact proves %v", r.Instance.Name, clasp.Objective, exact.Objective)
		}
		for i, l := range clasp.Levels {
			if l.Status != "optimal" || l.Value != clasp.Objective[i] || l.Bound != "clasp" {
				t.Errorf("%s: clasp level %d = %+v, its plan scores %d", r.Instance.Name, i+1, l, clasp.Objective[i])
			}
		}
		if clasp.TimeToFirst <= 0 || clasp.TimeToFirst > clasp.TimeToProof || !strings.HasPrefix(clasp.Version, "clasp ") {
			t.Errorf("%s: clasp first plan %s, proof %s, version %q", r.Instance.Name, clasp.TimeToFirst, clasp.TimeToProof, clasp.Version)
		}
	}
}

// clasp reads 32-bit weights, and past them errs or answers wrongly: a
// level whose OPB passes that limit is not handed to it. Seven lanes of
// ~37 GiB on a ~100 GiB node, to seven decimals, count in 10^-7 GiB, and
// their memory rows sum past 2^31.
func TestClaspIsNotHandedAFilePastItsLimit(t *testing.T) {
	parts := []pooltest.Part{pooltest.Node("gb-a", 128, pooltest.BudgetGb(100.1234567))}
	for i := range 7 {
		id := fmt.Sprintf("m%d", i)
		parts = append(parts, pooltest.Variant(id, 37.1234567+float64(i)*0.001, pooltest.On("gb-a")), pooltest.Alias("a"+id, 10, id))
	}
	dir := t.TempDir()
	called := filepath.Join(dir, "called")
	bin := filepath.Join(dir, "clasp")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\ntouch "+called+"\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	run := solveLex(context.Background(), Clasp{Path: bin}, pooltest.New(parts...), "seven-on-one", dir, time.Second)
	if _, err := os.Stat(called); err == nil {
		t.Fatalf("clasp was handed the file (run %+v)", run)
	}
	if !strings.HasPrefix(run.Skipped, "not run: clasp 3.3.5 cannot read this file: ") || run.OK() || run.Proved {
		t.Fatalf("run %+v; want clasp not run, with the reason", run)
	}
}
