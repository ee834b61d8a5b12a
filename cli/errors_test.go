package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

// A solver error keeps its identity through the commands' wrapping:
// export used to flatten it with %v, so errors.Is lost ErrMismatch.
func TestSolverErrorsStayVisibleToErrorsIs(t *testing.T) {
	mismatch := fmt.Errorf("%w: parts add up to [0 0 0 1], eval says [0 0 0 2]", solver.ErrMismatch)
	defer func(f func(context.Context, *model.Pool, solver.Options) (*solver.Result, error)) { solve = f }(solve)
	solve = func(context.Context, *model.Pool, solver.Options) (*solver.Result, error) { return nil, mismatch }
	for _, args := range [][]string{
		{"export", "--fleet", spark, "--format", "lp", "--level", "2"},
		{"plan", "--fleet", spark},
		{"resilience", "--fleet", spark},
	} {
		t.Run(args[0], func(t *testing.T) {
			var out, errOut bytes.Buffer
			app := newApp(strings.NewReader(""), &out, &errOut)
			app.Metadata = map[string]any{rawStderrKey: &errOut, startKey: time.Now(), rawArgsKey: args}
			err := app.Run(flagsFirst(app, append([]string{"poolsolve"}, args...)))
			if !errors.Is(err, solver.ErrMismatch) {
				t.Fatalf("%s: error %v does not wrap solver.ErrMismatch", args[0], err)
			}
			if code := exitCode(err); code != ExitFailure {
				t.Errorf("%s: exit %d, want %d", args[0], code, ExitFailure)
			}
			if want := "solve: " + mismatch.Error(); !strings.Contains(err.Error(), want) {
				t.Errorf("%s: message %q, want it to contain %q", args[0], err, want)
			}
		})
	}
}

// A search that found no plan names the limit it had: the work limit, in
// units, when one was given, not a time limit it did not read.
func TestNoPlanNamesTheLimitTheSearchHad(t *testing.T) {
	defer func(f func(context.Context, *model.Pool, solver.Options) (*solver.Result, error)) { solve = f }(solve)
	solve = func(context.Context, *model.Pool, solver.Options) (*solver.Result, error) {
		return nil, solver.ErrNoPlan
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"plan under a work limit", []string{"plan", "--fleet", spark, "--work-limit", "50"}, "within the work limit of 50 units"},
		{"plan under a time limit", []string{"plan", "--fleet", spark, "--time-limit", "2s"}, "the limit is 2s from process start"},
		{"resilience's base plan under a work limit", []string{"resilience", "--fleet", spark, "--work-limit", "50"}, "within 50 work units"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			app := newApp(strings.NewReader(""), &out, &errOut)
			app.Metadata = map[string]any{rawStderrKey: &errOut, startKey: time.Now(), rawArgsKey: tt.args}
			err := app.Run(flagsFirst(app, append([]string{"poolsolve"}, tt.args...)))
			if !errors.Is(err, solver.ErrNoPlan) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want ErrNoPlan and %q", err, tt.want)
			}
		})
	}
}
