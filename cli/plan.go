package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
	"github.com/poolsolve/poolsolve/solver"
)

const planHelp = `Plans which model lanes run on which node, with which residency, how each
alias routes, and what that changes from what runs now. A dry run: nothing is
started, stopped or rerouted.

The plan optimises four levels in order: (1) coverage, (2) external models
only as fallback, (3) latency SLO violations, (4) demand-weighted latency plus
churn. Each level reports its value and whether it is proved optimal.

Exit codes:
   0  a plan was found and it changes nothing
   1  a plan was found and it changes what runs
   2  bad flags or input files (nothing was written)
   3  the hard constraints (pins, cordons, budgets) admit no plan; the reasons are printed
   4  any other failure
 130  interrupted by SIGINT or SIGTERM: during the search the first signal stops it
      and the best plan found so far is printed, its header saying INTERRUPTED and
      each level what was proved; a second signal, or one while the inputs are
      read, exits at once (-o never leaves a partial file)

Examples:
   poolsolve plan --fleet examples/spark-fleet.json
   poolsolve plan --fleet examples/spark-fleet.json --cordon spark-node-01 --cordon spark-node-02
   poolsolve plan --config config.json --profiles profiles/ --policy pool.toml --metrics metrics.json
   poolsolve plan --fleet fleet.json --pin qwen38-27b-nvfp4=spark-node-02 --format json -o plan.json
   poolsolve plan --fleet fleet.json --solver greedy --time-limit 2s
   poolsolve plan --fleet examples/spark-fleet.json --cordon spark-node-02 --format svg -o plan.svg

--format svg draws the plan (docs/plan-svg.md): a bar per node and memory
domain, lanes coloured by residency, budgets, free memory and the changes.`

func planCommand() *cli.Command {
	return &cli.Command{
		Name:        "plan",
		Usage:       "propose where lanes run, their residency and routes, and the diff from now (dry run)",
		Description: planHelp,
		Flags: append(append(inputFlags(), poolFlags()...),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text, json or svg (a picture)"},
			&cli.DurationFlag{Name: "time-limit", Usage: "return the best plan found within `DURATION` of the process start, reading the inputs included; a limit spent before the search starts gives the greedy start, and says so (default: pool.toml solver.timeLimit, else 5s)", Category: "Solver"},
			&cli.StringFlag{Name: "solver", Value: "exact", Usage: "`SOLVER`: exact (SAT, level by level, with proofs) or greedy (the original heuristic, for comparison)", Category: "Solver"},
			&cli.Uint64Flag{Name: "seed", Usage: "seed for the solver's random choices (default: pool.toml solver.seed)", Category: "Solver"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, Usage: "no progress lines on stderr"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the plan to `FILE` (atomically) instead of stdout", TakesFile: true},
		),
		OnUsageError: usageError,
		Action:       runPlan,
	}
}

func runPlan(c *cli.Context) error {
	format := c.String("format")
	if format != "text" && format != "json" && format != "svg" {
		return badInput("--format %q: expected text, json or svg", format)
	}
	kind := c.String("solver")
	if kind != "exact" && kind != "greedy" {
		return badInput("--solver %q: expected exact or greedy", kind)
	}
	if c.IsSet("time-limit") && c.Duration("time-limit") <= 0 {
		return badInput("--time-limit %s: expected a positive duration", c.Duration("time-limit"))
	}
	intr := watchInterrupts(c.App.ErrWriter)
	defer intr.close()
	in, cat, err := buildCatalog(c, nil)
	if err != nil {
		return err
	}
	built := time.Now()
	opts := solverOptions(c, in, kind)
	// plan's limit runs from process start: reading the inputs and
	// building the pool have used part of it, and rendering the plan needs
	// a little of what is left.
	left := opts.TimeLimit - built.Sub(started(c)) - renderReserve(opts.TimeLimit)
	opts.TimeLimit = max(left, time.Millisecond)
	var fallbacks []string
	if left <= 0 {
		// Nothing is left to search with: the plan is the greedy start,
		// and says so. The time it took goes to stderr only, so that the
		// plan stays the same bytes for the same inputs.
		fmt.Fprintf(c.App.ErrWriter, "poolsolve: the time limit %s from process start is too short for this pool: reading the inputs and building the pool took %s; the plan is the greedy start, not searched\n",
			limitOf(c, in), built.Sub(started(c)).Round(time.Millisecond))
		fallbacks = append(fallbacks, "the time limit ran out while the inputs were read and the pool built: this is the greedy start, not searched")
	}
	progress, done := progressWriter(c)
	opts.Progress = progress
	res, err := solver.Solve(intr.searchStarts(), cat.Pool, opts)
	done()
	interrupted := intr.searchEnds()
	if errors.Is(err, solver.ErrNoPlan) && interrupted {
		return &exitError{ExitInterrupted, fmt.Errorf("interrupted before the search found a plan")}
	}
	if errors.Is(err, solver.ErrNoPlan) {
		return errorf("solve: %v: the limit is %s from process start, and reading the inputs and building the pool took %s of it",
			err, limitOf(c, in), built.Sub(started(c)).Round(time.Millisecond))
	}
	if err != nil {
		return errorf("solve: %v", err)
	}
	p := plan.Build(cat.Pool, res, plan.Meta{Fleet: fleetName(c), Solver: kind, Notes: cat.Notes, Fallbacks: fallbacks, Interrupted: interrupted})
	var buf bytes.Buffer
	switch format {
	case "json":
		err = plan.WriteJSON(&buf, p)
	case "svg":
		err = plan.WriteSVG(&buf, p)
	default:
		err = plan.WriteText(&buf, p, plan.TextOptions{})
	}
	if err != nil {
		return errorf("render plan: %v", err)
	}
	if out := c.String("output"); out != "" {
		if err := intr.write(func() error { return fleet.WriteFileAtomic(out, buf.Bytes()) }); err != nil {
			return errorf("write %s: %v", out, err)
		}
	} else if _, err := c.App.Writer.Write(buf.Bytes()); err != nil {
		return errorf("write plan: %v", err)
	}
	switch {
	case intr.signalled():
		return &exitError{ExitInterrupted, errSilent}
	case res.Infeasible:
		return &exitError{ExitInfeasible, fmt.Errorf("no plan satisfies the hard constraints (see the reasons above)")}
	case p.HasChanges():
		return &exitError{ExitChanges, errSilent}
	}
	return nil
}

// errSilent ends a command with a non-zero code and no message.
var errSilent = silent{}

type silent struct{}

func (silent) Error() string { return "" }

// limitOf is the time limit asked for: --time-limit, else pool.toml's
// solver.timeLimit, else 5 s.
func limitOf(c *cli.Context, in *fleet.Inputs) time.Duration {
	if c.IsSet("time-limit") {
		return c.Duration("time-limit")
	}
	if in.Policy != nil {
		if d := time.Duration(in.Policy.Solver.TimeLimit); d > 0 {
			return d
		}
	}
	return solver.DefaultTimeLimit
}

func solverOptions(c *cli.Context, in *fleet.Inputs, kind string) solver.Options {
	opts := solver.Options{Solver: kind, TimeLimit: limitOf(c, in)}
	if in.Policy != nil {
		opts.Seed = in.Policy.Solver.Seed
	}
	if c.IsSet("seed") {
		opts.Seed = c.Uint64("seed")
	}
	return opts
}

// renderReserve is the part of a time limit kept for building, rendering
// and writing the plan after the solve.
func renderReserve(limit time.Duration) time.Duration { return min(limit/50, 100*time.Millisecond) }

func fleetName(c *cli.Context) string {
	if f := c.String("fleet"); f != "" {
		return f
	}
	return c.String("config")
}

// progressWriter reports long solves on stderr, when stderr is a terminal
// and --quiet is not set. The solver calls it at most a few times a second.
func progressWriter(c *cli.Context) (report func(solver.Progress), done func()) {
	w := rawStderr(c) // numbers and level names only; it redraws itself
	if c.Bool("quiet") || !isTerminal(w) {
		return nil, func() {}
	}
	var last time.Time
	printed := false
	done = func() {
		if printed {
			fmt.Fprint(w, "\r\033[K") // clear the progress line
		}
	}
	return func(p solver.Progress) {
		if p.Elapsed < time.Second || time.Since(last) < 250*time.Millisecond {
			return
		}
		last, printed = time.Now(), true
		name := ""
		if p.Level >= 1 && p.Level <= 4 {
			name = model.LevelNames[p.Level-1]
		}
		fmt.Fprintf(w, "\r  %5.1fs  level %d %-14s incumbent %v  bound %d   ", p.Elapsed.Seconds(), p.Level, name, p.Incumbent, p.Bound)
	}, done
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
