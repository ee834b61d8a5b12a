package solver

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/pb"
)

// noEntryEnv, set in a re-run of this test binary, makes TestMain skip
// ServeIfWorker: the binary is then a program that imports the solver and
// does not call its entry point.
const noEntryEnv = "POOLSOLVE_TEST_NO_WORKER_ENTRY"

func TestMain(m *testing.M) {
	if os.Getenv(noEntryEnv) != "1" {
		pb.ServeIfWorker()
	}
	os.Exit(m.Run())
}

// entryPool is the pool both sides of the entry-point test solve: small
// enough to be proved in seconds with or without PB workers.
func entryPool() *model.Pool { return pooltest.Random(1, 8, 20) }

// TestAProgramThatDoesNotCallTheWorkerEntryPointStillPlans re-runs this
// test binary without ServeIfWorker: it solves in its own process, with
// the worker variable in its environment or not, says it had no PB
// workers, and finds the plan this binary, which serves them, finds.
func TestAProgramThatDoesNotCallTheWorkerEntryPointStillPlans(t *testing.T) {
	if os.Getenv(noEntryEnv) == "1" {
		res, err := Solve(context.Background(), entryPool(), Options{Seed: 1, TimeLimit: 20 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("workers=%s objective=%v stop=%s\n", res.Stats.Workers, res.Objective, res.Stop)
		return
	}
	if testing.Short() {
		t.Skip("solves a pool three times")
	}
	here, err := Solve(context.Background(), entryPool(), Options{Seed: 1, TimeLimit: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if here.Stats.Workers != WorkersProcesses {
		t.Fatalf("a binary that calls ServeIfWorker says workers %q, want %q", here.Stats.Workers, WorkersProcesses)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	line := regexp.MustCompile(`(?m)^workers=(\S*) objective=(.*) stop=(\S+)$`)
	for _, tc := range []struct {
		name string
		env  []string
	}{
		{"a program without the worker variable plans in its own process", nil},
		{"the worker variable in its environment does not make the program a worker", []string{pb.WorkerEnv + "=1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(exe, "-test.run=^TestAProgramThatDoesNotCallTheWorkerEntryPointStillPlans$", "-test.count=1")
			cmd.Env = append(append(cmd.Environ(), noEntryEnv+"=1"), tc.env...)
			cmd.Stdin = strings.NewReader("")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("the program ended with %v:\n%s", err, out)
			}
			m := line.FindSubmatch(out)
			if m == nil {
				t.Fatalf("the program printed no result:\n%s", out)
			}
			if got := Workers(m[1]); got != WorkersNone {
				t.Errorf("it says workers %q, want %q", got, WorkersNone)
			}
			if got, want := string(m[2]), fmt.Sprint(here.Objective); got != want {
				t.Errorf("it found objective %s, this binary %s", got, want)
			}
			if string(m[3]) != string(StopProved) || here.Stop != StopProved {
				t.Errorf("stop %s without workers, %s with them: want both proved", m[3], here.Stop)
			}
		})
	}
}
