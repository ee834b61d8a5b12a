package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/answer"
	"github.com/poolsolve/poolsolve/fleet"
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
			&cli.DurationFlag{Name: "replan-limit", Value: answer.DefaultReplanLimit, EnvVars: envVars("replan-limit"), Usage: "bound all re-plans together by `DURATION`; each scenario gets an equal share of what is left (at least 100ms), levels 1-3 first", Category: "Solver"},
			&cli.Uint64Flag{Name: "seed", EnvVars: envVars("seed"), Usage: "`SEED` for the solver's random choices", DefaultText: "pool.toml solver.seed, else 1", Category: "Solver"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the report to `FILE` (atomically) instead of stdout", TakesFile: true},
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
	sopts := solverOptions(c, in, solver.Exact)
	r, err := answer.Resilience(context.Background(), cat.Pool, base, answer.ResilienceOptions{
		Scenarios: scs, Limit: c.Duration("replan-limit"), Seed: sopts.Seed,
		Fleet: fleetName(c), Notes: cat.Notes, Trace: sopts.Trace,
	})
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
	if err := writeOut(c, buf.Bytes()); err != nil {
		return err
	}
	if !r.Summary.KeepsCoverage {
		return &exitError{ExitChanges, errSilent}
	}
	return nil
}

// basePlan solves the pool for a what-if command: exact, within
// --time-limit; an infeasible pool is exit 3 with the reasons.
func basePlan(c *cli.Context, in *fleet.Inputs, p *model.Pool) (*solver.Result, error) {
	opts := solverOptions(c, in, solver.Exact)
	res, err := solve(context.Background(), p, opts)
	if errors.Is(err, solver.ErrNoPlan) {
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

// writeOut writes a command's output to --output (atomically) or stdout.
func writeOut(c *cli.Context, data []byte) error {
	if out := c.String("output"); out != "" {
		if err := fleet.WriteFileAtomic(out, data); err != nil {
			return errorf("write %s: %w", out, err)
		}
		return nil
	}
	if _, err := c.App.Writer.Write(data); err != nil {
		return errorf("write: %w", err)
	}
	return nil
}
