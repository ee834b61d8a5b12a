package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/answer"
	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/internal/printable"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

const resilienceHelp = `Plans the pool, then takes away every node alone and every link alone (N-1),
or the node and link sets given with --scenario (N-k), and re-plans each from
the plan, on one encoding of the pool. For each it reports the aliases that
lose coverage, those that go to the cloud, the SLOs that break, the change in
level 4 (latency and churn), what the re-plan changes against the plan, the
pins that give way, and whether every level is proved. Worst first. A dry run:
nothing is started, stopped or rerouted.

Each scenario is re-planned with the base plan as what runs, so its churn
counts from the base plan: of equally good re-plans the one closest to the
base plan is taken, and a scenario lists only what it changes. --replan-limit
bounds the re-plans together, encoding the pool included: a scenario that
takes nothing the plan uses keeps the plan, decided without a search; the
others are taken in a fixed order (nodes, then links). 70% of the limit is
turned into a work budget (SAT propagations, local-search moves, LP
iterations, counted the same on every machine): each scenario gets an equal
share of the work left, and those it leaves no work for are reported as
skipped (they count as losing coverage). So the report is the same on every
run. The clock only caps the run: where this machine is too slow or busy for
the budget, it ends a search, and the scenarios it touched are marked
(clockCut; * in the text) as ones whose answers may differ on another run.
A fleet of hundreds of nodes needs a limit of minutes for every scenario. On
a terminal, progress goes to stderr (--quiet turns it off).

Exit codes (for the CI of a fleet repository):
   0  every scenario keeps every source the plan covers covered
   1  some scenario loses coverage (or admits no plan); the table says which
   2  bad flags or input files (nothing was written)
   3  the hard constraints (pins, cordons, budgets) admit no base plan
   4  any other failure

Examples:
   poolsolve resilience --fleet examples/spark-fleet.json
   poolsolve resilience --fleet examples/spark-fleet.json --scenario spark-node-01,spark-node-02 --scenario 'spark-node-01<->spark-node-03'
   poolsolve resilience --fleet examples/spark-fleet.json --format json -o resilience.json
   poolsolve resilience --fleet examples/spark-fleet.json --format svg -o worst.svg

--format json writes poolsolve.resilience/v1 (docs/resilience-json.md);
--format svg draws the worst scenario's re-plan (docs/plan-svg.md), the lost
nodes greyed and the changes marked against the plan.`

func resilienceCommand() *cli.Command {
	return &cli.Command{
		Name:        "resilience",
		Usage:       "what the plan becomes when a node or a link is lost (N-1, or the sets given), worst first",
		Description: resilienceHelp,
		Flags: append(append(inputFlags(), poolFlags()...),
			&cli.StringSliceFlag{Name: "scenario", Usage: "re-plan with these taken away together, as `NODE[,NODE...]`, a link as A<->B (repeatable; default: every node and every link alone)"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text, json or svg (the worst scenario)"},
			&cli.DurationFlag{Name: "time-limit", EnvVars: envVars("time-limit"), Usage: "bound the base plan's solve by `DURATION`", DefaultText: "pool.toml solver.timeLimit, else 5s", Category: "Solver"},
			workLimitFlag("the base plan's solve"),
			&cli.DurationFlag{Name: "replan-limit", Value: answer.DefaultReplanLimit, EnvVars: envVars("replan-limit"), Usage: "bound all re-plans together by `DURATION`, encoding the pool included, as a work budget the same on every run; each scenario gets an equal share of the work left, and those it leaves none for are reported as skipped", Category: "Solver"},
			&cli.Uint64Flag{Name: "seed", EnvVars: envVars("seed"), Usage: "`SEED` for the solver's random choices", DefaultText: "pool.toml solver.seed, else 1", Category: "Solver"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the report to `FILE` (atomically) instead of stdout", TakesFile: true},
			&cli.BoolFlag{Name: "quiet", Aliases: []string{"q"}, EnvVars: envVars("quiet"), Usage: "no progress lines on stderr"},
		),
		OnUsageError: usageError,
		Action:       runResilience,
	}
}

func runResilience(c *cli.Context) error {
	format := c.String("format")
	if format != "text" && format != "json" && format != "svg" {
		return badInput("--format %q: expected text, json or svg", format)
	}
	for _, f := range []string{"time-limit", "replan-limit"} {
		if c.IsSet(f) && c.Duration(f) <= 0 {
			return badInput("--%s %s: expected a positive duration", f, c.Duration(f))
		}
	}
	if err := checkWorkLimit(c); err != nil {
		return err
	}
	in, cat, err := buildCatalog(c, nil)
	if err != nil {
		return err
	}
	var scs []solver.Scenario
	for _, s := range c.StringSlice("scenario") {
		sc, err := answer.ParseScenario(s, cat.Pool)
		if err != nil {
			return badInput("%w", err)
		}
		scs = append(scs, sc)
	}
	base, err := basePlan(c, in, cat.Pool)
	if err != nil {
		return err
	}
	progress, done := scenarioProgress(c)
	sopts := solverOptions(c, in, solver.Exact)
	r, err := answer.Resilience(context.Background(), cat.Pool, base, answer.ResilienceOptions{
		Scenarios: scs, Limit: c.Duration("replan-limit"), Seed: sopts.Seed,
		Fleet: fleetName(c), Notes: cat.Notes, Progress: progress, Trace: sopts.Trace,
	})
	done()
	if err != nil {
		return errorf("resilience: %w", err)
	}
	var buf bytes.Buffer
	switch format {
	case "json":
		err = answer.WriteResilienceJSON(&buf, r)
	case "svg":
		err = answer.WriteResilienceSVG(&buf, r)
	default:
		err = answer.WriteResilienceText(&buf, r)
	}
	if err != nil {
		return errorf("render the report: %w", err)
	}
	if err := writeOut(c, buf.Bytes(), "resilience report, "+format); err != nil {
		return err
	}
	if !r.Summary.KeepsCoverage {
		return &exitError{ExitChanges, errSilent}
	}
	return nil
}

// scenarioProgress reports the re-plans on stderr, as plan reports its
// search: when stderr is a terminal and --quiet is not set, at most four
// times a second, once they have run a second.
func scenarioProgress(c *cli.Context) (report func(done, of int, elapsed time.Duration), done func()) {
	w := rawStderr(c) // numbers only; it redraws itself
	if c.Bool("quiet") || !isTerminal(w) {
		return nil, func() {}
	}
	var last time.Time
	printed := false
	return func(n, of int, elapsed time.Duration) {
			if elapsed < time.Second || time.Since(last) < 250*time.Millisecond {
				return
			}
			last, printed = time.Now(), true
			fmt.Fprintf(w, "\r  %5.1fs  re-planned %d of %d scenarios   ", elapsed.Seconds(), n, of)
		}, func() {
			if printed {
				fmt.Fprint(w, "\r\033[K")
			}
		}
}

// basePlan solves the pool for a what-if command: exact, within
// --time-limit or --work-limit; an infeasible pool is exit 3 with the
// reasons.
func basePlan(c *cli.Context, in *fleet.Inputs, p *model.Pool) (*solver.Result, error) {
	opts := solverOptions(c, in, solver.Exact)
	res, err := solve(context.Background(), p, opts)
	if errors.Is(err, solver.ErrNoPlan) {
		if opts.WorkLimit > 0 {
			return nil, errorf("solve: %w within %d work units", err, opts.WorkLimit)
		}
		return nil, errorf("solve: %w within %s", err, opts.TimeLimit)
	}
	if err != nil {
		return nil, errorf("solve: %w", err)
	}
	if res.Infeasible {
		for _, e := range res.Explanations {
			fmt.Fprintf(c.App.ErrWriter, "%s: %s\n", e.Subject, e.Reason)
		}
		return nil, &exitError{ExitInfeasible, fmt.Errorf("no plan satisfies the hard constraints (see the reasons above), so there is nothing to ask what-if of")}
	}
	return res, nil
}

// writeOut writes a command's output to --output (atomically), saying
// so on stderr, or to stdout.
func writeOut(c *cli.Context, data []byte, what string) error {
	if out := c.String("output"); out != "" {
		if err := fleet.WriteFileAtomic(out, data); err != nil {
			return errorf("write %s: %w", out, err)
		}
		announceWrote(c, out, what, len(data))
		return nil
	}
	if _, err := c.App.Writer.Write(data); err != nil {
		return errorf("write: %w", err)
	}
	return nil
}

// announceWrote says on stderr which file a command wrote, with what and
// its size: a file written says so, like a report on stdout would.
func announceWrote(c *cli.Context, path, what string, size int) {
	fmt.Fprintf(c.App.ErrWriter, "wrote %s (%s, %d bytes)\n", printable.String(path), what, size)
}
