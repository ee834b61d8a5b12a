package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/lloom"
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

A plan not proved optimal on every level says so in its first lines, also
with --changes-only: NOT PROVED, why the search ended (the time limit it had),
which levels are proved, the first open level's value and bound, and what a
longer --time-limit may gain by that bound; uncovered sources are marked as
proved unavoidable or not.

The text reads like 'terraform plan': a source that loses all coverage is
the headline, then nodes, routes (with demand and expected first-token
latency), each level in plain words ("proved optimal", "best found, at most
4.5% above optimal", "heuristic, not proved"; --verbose adds the solver's
bound), explanations, notes, and the changes with a summary. Colour is on
when stdout is a terminal and NO_COLOR is unset (--color says otherwise);
lines wrap to $COLUMNS or the terminal's width. --format json writes the
same plan as data (docs/plan-json.md), --format svg draws it (docs/plan-svg.md):
a bar per node and memory domain, lanes coloured by residency, budgets, free
memory and the changes.

Exit codes, and what each means for a CI job that runs plan against the
fleet's repository:
   0  a plan was found and it changes nothing: the fleet already runs the plan
   1  a plan was found and it changes what runs, or a source loses coverage:
      fail the job to have someone apply or refuse the changes, or treat 1 as
      success when the job only records the plan; --detailed-exitcode tells
      lost coverage (5) and an unproved plan (6) apart from changes, in that
      order of precedence, as terraform's flag of that name tells changes
      from no changes
   2  bad flags or input files; nothing was written: the change under review
      broke the inputs, fail the job
   3  the hard constraints (pins, cordons, budgets) admit no plan; the reasons
      are printed: fail the job
   4  any other failure (I/O, an internal error): fail the job, and retry once
   5  with --detailed-exitcode: a source served now loses all coverage (the
      headline says whether that is proved unavoidable): fail the job
   6  with --detailed-exitcode: a plan was found, with or without changes, but
      some level is not proved optimal (the first lines say which, and what a
      longer --time-limit may gain): re-run with a longer limit, or review
 130  interrupted by SIGINT or SIGTERM: the first signal during the search stops
      it and writes the best plan found so far (INTERRUPTED in its header, each
      level as proved); a second signal, or one while the inputs are read, exits
      at once and leaves no partial -o file: fail the job

Examples:
   poolsolve plan --fleet examples/spark-fleet.json
   poolsolve plan --fleet examples/spark-fleet.json --cordon spark-node-01 --cordon spark-node-02
   poolsolve plan --config examples/spark-fleet/config.json --profiles examples/spark-fleet/profiles/ --policy examples/spark-fleet/pool.toml --metrics examples/spark-fleet/metrics.json --status 'examples/spark-fleet/nodes/*.status.json'
   poolsolve plan --fleet examples/spark-fleet.json --pin qwen38-27b-nvfp4=spark-node-03 --format json -o plan.json
   poolsolve plan --fleet examples/spark-fleet.json --solver greedy --time-limit 2s
   poolsolve plan --fleet examples/spark-fleet.json --work-limit 500 --format json -o plan.json
   poolsolve plan --fleet examples/spark-fleet.json --cordon spark-node-03 --changes-only
   poolsolve plan --fleet examples/spark-fleet.json --cordon spark-node-02 --format svg -o plan.svg
   POOLSOLVE_FLEET=examples/spark-fleet.json poolsolve plan --verbose --color always
   LLOOM_CLUSTER_KEY=... poolsolve plan --gateway http://127.0.0.1:8100 --config examples/spark-fleet/config.json --emit-profile planned -o profiles/planned.json

--emit-profile NAME writes the plan as a LLooM fleet profile instead: its
routes and residency in the shape of profiles/NAME.json, which a LLooM
release with fleet profiles applies with its own profile switch
(docs/gateway.md, "Applying a plan"). LLooM 0.2.3 has none and will not read
the file: carry the plan out by the rollout steps the plan lists, with
'poolsolve apply' on a plan saved with --format json -o. Stops,
moves, installs and manual actions a profile cannot carry are listed on
stderr; the exit code is the plan's.`

func planCommand() *cli.Command {
	return &cli.Command{
		Name:        "plan",
		Usage:       "propose where lanes run, their residency and routes, and the diff from now (dry run)",
		Description: planHelp,
		Flags: append(append(inputFlags(), poolFlags()...),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text, json or svg (a picture)"},
			&cli.BoolFlag{Name: "detailed-exitcode", Usage: "exit 5 when a source served now loses all coverage, 6 when a level is not proved optimal, before 1 for changes (see Exit codes)"},
			&cli.BoolFlag{Name: "changes-only", Usage: "text: print only lost coverage, the changes and their summary"},
			&cli.StringFlag{Name: "color", Value: "auto", EnvVars: envVars("color"), Usage: "colour the text `WHEN`: auto (on a terminal, unless NO_COLOR is set), always or never"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "text: also each domain's admission rule and each level's lower bound and its source"},
			&cli.DurationFlag{Name: "time-limit", EnvVars: envVars("time-limit"), Usage: "return the best plan found within `DURATION` of the process start, reading the inputs included; a limit spent before the search starts gives the greedy start, and says so", DefaultText: "pool.toml solver.timeLimit, else 5s", Category: "Solver"},
			workLimitFlag("the search"),
			&cli.StringFlag{Name: "solver", Value: "exact", EnvVars: envVars("solver"), Usage: "`SOLVER`: exact (SAT, level by level, with proofs) or greedy (the original heuristic, for comparison)", Category: "Solver"},
			&cli.Uint64Flag{Name: "seed", EnvVars: envVars("seed"), Usage: "`SEED` for the solver's random choices", DefaultText: "pool.toml solver.seed, else 1", Category: "Solver"},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, EnvVars: envVars("quiet"), Usage: "no progress lines on stderr"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the plan to `FILE` (atomically) instead of stdout", TakesFile: true},
			&cli.StringFlag{Name: "emit-profile", Usage: "write the plan's routes and residency as LLooM fleet profile `NAME` (profiles/NAME.json, LLooM's own shape) instead of the plan; what a profile cannot say goes to stderr"},
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
	kind := solver.Algorithm(c.String("solver"))
	if kind != solver.Exact && kind != solver.Greedy {
		return badInput("--solver %q: expected exact or greedy", kind)
	}
	if c.IsSet("time-limit") && c.Duration("time-limit") <= 0 {
		return badInput("--time-limit %s: expected a positive duration", c.Duration("time-limit"))
	}
	if err := checkWorkLimit(c); err != nil {
		return err
	}
	textOpts, err := textOptions(c)
	if err != nil {
		return err
	}
	emit := c.String("emit-profile")
	if c.IsSet("emit-profile") && !lloom.ValidProfileName(emit) {
		return badInput("--emit-profile %q: expected a LLooM profile name (letters, digits, '.', '_', '-'; at most 64, starting with a letter or digit)", emit)
	}
	if emit != "" && c.IsSet("format") {
		return badInput("--emit-profile writes a fleet profile, not the plan; drop --format")
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
	left := opts.TimeLimit - built.Sub(started(c)) - renderReserve(opts.TimeLimit, cat.Pool)
	opts.TimeLimit = max(left, time.Millisecond)
	if opts.WorkLimit > 0 {
		left = opts.TimeLimit // the clock is not read
	}
	var fallbacks []string
	notSearched := left <= 0
	if notSearched {
		// Nothing is left to search with: the plan is the greedy start,
		// and says so. The time it took goes to stderr only, so that the
		// plan stays the same bytes for the same inputs.
		fmt.Fprintf(c.App.ErrWriter, "poolsolve: the time limit %s from process start is too short for this pool: reading the inputs and building the pool took %s; the plan is the greedy start, not searched\n",
			limitOf(c, in), built.Sub(started(c)).Round(time.Millisecond))
		fallbacks = append(fallbacks, "the time limit ran out while the inputs were read and the pool built: this is the greedy start, not searched")
	} else if read := built.Sub(started(c)); opts.WorkLimit == 0 && read > limitOf(c, in)/2 {
		// Rounded, so that the line moves only when the split does.
		fallbacks = append(fallbacks, fmt.Sprintf("reading the inputs and building the pool took %s of the %s time limit, more than half: the search had %s",
			read.Round(100*time.Millisecond), limitOf(c, in), opts.TimeLimit.Round(100*time.Millisecond)))
	}
	progress, done := progressWriter(c)
	opts.Progress = progress
	res, err := solve(intr.searchStarts(), cat.Pool, opts)
	done()
	interrupted := intr.searchEnds()
	if errors.Is(err, solver.ErrNoPlan) && interrupted {
		return &exitError{ExitInterrupted, fmt.Errorf("interrupted before the search found a plan")}
	}
	if errors.Is(err, solver.ErrNoPlan) && opts.WorkLimit > 0 {
		return errorf("solve: %w within the work limit of %d units", err, opts.WorkLimit)
	}
	if errors.Is(err, solver.ErrNoPlan) {
		return errorf("solve: %w: the limit is %s from process start, and reading the inputs and building the pool took %s of it",
			err, limitOf(c, in), built.Sub(started(c)).Round(time.Millisecond))
	}
	if err != nil {
		return errorf("solve: %w", err)
	}
	p := plan.Build(cat.Pool, res, plan.Meta{Fleet: fleetName(c), Solver: string(kind), Notes: cat.Notes, Fallbacks: fallbacks, Interrupted: interrupted, NotSearched: notSearched, TimeLimit: limitOf(c, in), WorkLimit: opts.WorkLimit})
	var buf bytes.Buffer
	if emit != "" {
		format = "profile"
		if err := emitProfile(c, &buf, p, cat.Pool, emit); err != nil {
			return err
		}
	}
	switch format {
	case "profile":
	case "json":
		err = plan.WriteJSON(&buf, p)
	case "svg":
		err = plan.WriteSVG(&buf, p)
	default:
		err = plan.WriteText(&buf, p, textOpts)
	}
	if err != nil {
		return errorf("render plan: %w", err)
	}
	if out := c.String("output"); out != "" {
		if err := intr.write(func() error { return fleet.WriteFileAtomic(out, buf.Bytes()) }); err != nil {
			return errorf("write %s: %w", out, err)
		}
		what := "plan, " + format
		if emit != "" {
			what = "fleet profile " + emit
		}
		announceWrote(c, out, what, buf.Len())
	} else if _, err := c.App.Writer.Write(buf.Bytes()); err != nil {
		return errorf("write plan: %w", err)
	}
	switch {
	case intr.signalled():
		return &exitError{ExitInterrupted, errSilent}
	case res.Infeasible:
		return &exitError{ExitInfeasible, fmt.Errorf("no plan satisfies the hard constraints (see the reasons above)")}
	case c.Bool("detailed-exitcode") && p.LosesCoverage():
		return &exitError{ExitLosesCoverage, errSilent}
	case c.Bool("detailed-exitcode") && !p.Search.AllProved():
		return &exitError{ExitNotProved, errSilent}
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

// solve is solver.Solve; tests replace it to see what the commands make
// of its errors.
var solve = solver.Solve

func solverOptions(c *cli.Context, in *fleet.Inputs, kind solver.Algorithm) solver.Options {
	opts := solver.Options{Solver: kind, TimeLimit: limitOf(c, in), Seed: fleet.DefaultPolicy().Solver.Seed}
	if in.Policy != nil {
		opts.Seed = in.Policy.Solver.Seed
	}
	if c.IsSet("seed") {
		opts.Seed = c.Uint64("seed")
	}
	if c.IsSet("work-limit") {
		opts.WorkLimit = c.Int64("work-limit")
	}
	solverDiagnostics(c, &opts)
	return opts
}

// workLimitFlag is --work-limit, bounding what by work instead of time.
func workLimitFlag(what string) cli.Flag {
	return &cli.Int64Flag{Name: "work-limit", EnvVars: envVars("work-limit"), Category: "Solver",
		Usage: "bound " + what + " by `UNITS` of work instead of time (each about a millisecond of one core: SAT propagations, LP iterations and local-search moves, counted the same on every machine), so that the same inputs give the same plan on any machine and under any load, for CI that gates on the exit code; no worker processes run, and reading the inputs is not counted"}
}

// checkWorkLimit refuses a work limit that is not positive, or given
// with a time limit, which it would not read.
func checkWorkLimit(c *cli.Context) error {
	if !c.IsSet("work-limit") {
		return nil
	}
	if n := c.Int64("work-limit"); n <= 0 || n > solver.MaxWorkLimit {
		return badInput("--work-limit %d: expected a positive number of work units, at most %d", n, solver.MaxWorkLimit)
	}
	if c.IsSet("time-limit") {
		return badInput("--work-limit and --time-limit: give one; a work limit does not read the clock")
	}
	return nil
}

// solverDiagnostics sets the solver's debugging aids from the
// environment, which the solver itself does not read: POOLSOLVE_TRACE=1
// (the search's timeline on stderr), POOLSOLVE_DUMP_RELAX=PREFIX and
// POOLSOLVE_DUMP_PB=PREFIX (each LP model or PB job to files), and
// POOLSOLVE_PB_CORES=N (plan the PB workers as if N cores were free).
func solverDiagnostics(c *cli.Context, opts *solver.Options) {
	if os.Getenv("POOLSOLVE_TRACE") == "1" {
		opts.Trace = c.App.ErrWriter
	}
	opts.DumpRelax = os.Getenv("POOLSOLVE_DUMP_RELAX")
	opts.DumpPB = os.Getenv("POOLSOLVE_DUMP_PB")
	if n, err := strconv.Atoi(os.Getenv("POOLSOLVE_PB_CORES")); err == nil && n > 0 {
		opts.Cores = n
	}
}

// renderReserve is the part of a time limit kept for building, rendering
// and writing the plan after the solve, and for the solver's own last
// checks. It grows with the pool: 256x1000 at 1 s needs about 100 ms of
// it, and 1024x4000 (585,000 placements) 2.1 s, from the explanations to
// the plan written; a quarter of the limit at most.
func renderReserve(limit time.Duration, p *model.Pool) time.Duration {
	n := placements(p)
	return min(max(min(limit/10, 150*time.Millisecond), time.Duration(n)*renderPerPlacement), limit/4)
}

// renderPerPlacement is the reserve's share per placement.
const renderPerPlacement = 4 * time.Microsecond

// emitProfile renders the plan as fleet profile name into buf, and says on
// stderr what the profile cannot carry and whether the LLooM release can
// apply it at all.
func emitProfile(c *cli.Context, buf *bytes.Buffer, p *plan.Plan, pool *model.Pool, name string) error {
	prof, notes, err := plan.Profile(p, pool, name)
	if err != nil {
		return &exitError{ExitInfeasible, err}
	}
	data, err := prof.Marshal()
	if err != nil {
		return errorf("render the profile: %w", err)
	}
	buf.Write(data)
	if out := c.String("output"); out != "" && filepath.Base(out) != name+".json" {
		fmt.Fprintf(c.App.ErrWriter, "poolsolve: warning: LLooM finds a fleet profile by its file name: save it as profiles/%s.json next to its config.json\n", name)
	}
	if pool.TargetOnly() {
		// Said plainly: the file is written, and the operator must not
		// expect the release to pick it up.
		fmt.Fprintf(c.App.ErrWriter, "poolsolve: warning: LLooM %s has no fleet profiles: it will not read this file, and nothing changes by saving it; "+
			"carry the plan out by its rollout instead: `poolsolve plan` without --emit-profile lists the steps in order under Rollout (--format json: rollout.steps), and `poolsolve apply PLAN.json` carries them out\n", pool.Routing.Release)
	}
	for _, n := range notes {
		fmt.Fprintf(c.App.ErrWriter, "poolsolve: profile %s: %s\n", name, n)
	}
	return nil
}

func fleetName(c *cli.Context) string {
	if f := inputString(c, "fleet"); f != "" {
		return f
	}
	return inputString(c, "config")
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
	return ok && term.IsTerminal(int(f.Fd()))
}

// textOptions reads how the text plan is laid out: colour by --color
// (auto: on a terminal unless NO_COLOR is set, https://no-color.org),
// lines wrapped to $COLUMNS or the terminal's width when the plan goes to
// a terminal, and --changes-only and --verbose.
func textOptions(c *cli.Context) (plan.TextOptions, error) {
	opts := plan.TextOptions{ChangesOnly: c.Bool("changes-only"), Verbose: c.Bool("verbose")}
	toTerminal := c.String("output") == "" && isTerminal(c.App.Writer)
	switch when := c.String("color"); when {
	case "always":
		opts.Color = true
	case "never":
	case "auto":
		opts.Color = toTerminal && os.Getenv("NO_COLOR") == ""
	default:
		return opts, badInput("%s %q: expected auto, always or never", flagLabel(c, "color"), when)
	}
	if c.String("output") != "" {
		return opts, nil
	}
	if cols := os.Getenv("COLUMNS"); cols != "" {
		if n, err := strconv.Atoi(cols); err == nil && n > 0 {
			opts.Width = n
			return opts, nil
		}
	}
	if toTerminal {
		if f, ok := c.App.Writer.(*os.File); ok {
			if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
				opts.Width = w
			}
		}
	}
	return opts, nil
}
