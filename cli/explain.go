package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/answer"
	"github.com/poolsolve/poolsolve/solver"
)

const explainHelp = `Plans the pool, then answers why:
   explain ALIAS                 why the alias (or model:<id>) routes where it does,
                                 and why not each better candidate
   explain RUNTIME --node NODE   why the runtime's lane is, or is not, on the node

Every option is weighed with all its reasons, in operator terms: the
eligibility rules it breaks (arch, platform, accelerators, links, a cordoned
or unreachable node, memory alone), minimal sets of pins and cordons that rule
it out of every plan, minimal sets of the plan's own lanes it does not fit
next to (per residency, with the domain's figures), and where it fits, the SLO
it would break or the latency it would add; then what the best plan that
takes it would score against the plan. For a lane the plan runs on the node,
the answer also says why it is there: the plan weighed against the lane held
off the node, each other residency, and the first four of its other
placements, each with the levels and cost its best plan would change. A dry
run: nothing is started, stopped or rerouted.

Exit codes:
   0  answered
   2  bad flags or input files, or an alias, runtime or node the pool lacks
   3  the hard constraints (pins, cordons, budgets) admit no plan to explain
   4  any other failure

Examples:
   poolsolve explain q38fn --fleet examples/spark-fleet.json
   poolsolve explain chat --fleet examples/rule-arch-mismatch.json
   poolsolve explain qwen38-27b-nvfp4 --node spark-node-01 --fleet examples/spark-fleet.json
   poolsolve explain qwen3-embedding-4b --node spark-node-03 --fleet examples/spark-fleet.json
   poolsolve explain embeddings --fleet examples/spark-fleet.json --cordon spark-node-03 --format json

--format json writes poolsolve.explain/v1 (docs/explain-json.md).`

func explainCommand() *cli.Command {
	return &cli.Command{
		Name:        "explain",
		Usage:       "why an alias routes where it does, or why a runtime is not on a node, with every reason",
		ArgsUsage:   "ALIAS | RUNTIME --node NODE",
		Description: explainHelp,
		Flags: append(append(inputFlags(), poolFlags()...),
			&cli.StringFlag{Name: "node", Usage: "explain why the runtime named is or is not on `NODE`"},
			formatFlag(),
			&cli.DurationFlag{Name: "time-limit", EnvVars: envVars("time-limit"), Usage: "bound the plan's solve by `DURATION`", DefaultText: "pool.toml solver.timeLimit, else 5s", Category: "Solver"},
			workLimitFlag("the plan's solve"),
			&cli.DurationFlag{Name: "explain-limit", Value: answer.DefaultExplainLimit, EnvVars: envVars("explain-limit"), Usage: "bound the weighing of every option by `DURATION`", Category: "Solver"},
			&cli.Uint64Flag{Name: "seed", EnvVars: envVars("seed"), Usage: "`SEED` for the solver's random choices", DefaultText: "pool.toml solver.seed, else 1", Category: "Solver"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the answer to `FILE` (atomically) instead of stdout", TakesFile: true},
		),
		OnUsageError: usageError,
		// The question is an argument: not the other commands' refusal.
		Before: func(*cli.Context) error { return nil },
		Action: runExplain,
	}
}

func runExplain(c *cli.Context) error {
	if err := checkFormat(c.String("format")); err != nil {
		return err
	}
	switch {
	case c.NArg() == 0:
		return badInput("explain takes one ALIAS, or one RUNTIME with --node NODE; got none")
	case c.NArg() > 1:
		return badInput("unexpected argument %q: explain takes one ALIAS, or one RUNTIME with --node NODE (poolsolve explain --help)", c.Args().Get(1))
	}
	for _, f := range []string{"time-limit", "explain-limit"} {
		if c.IsSet(f) && c.Duration(f) <= 0 {
			return badInput("--%s %s: expected a positive duration", f, c.Duration(f))
		}
	}
	if err := checkWorkLimit(c); err != nil {
		return err
	}
	subject := c.Args().First()
	in, cat, err := buildCatalog(c, nil)
	if err != nil {
		return err
	}
	base, err := basePlan(c, in, cat.Pool)
	if err != nil {
		return err
	}
	limit := c.Duration("explain-limit")
	sopts := solverOptions(c, in, solver.Exact)
	w, err := solver.NewWhatIf(cat.Pool, base, sopts.Seed, time.Now().Add(limit))
	if err != nil {
		return errorf("explain: %w", err)
	}
	w.Trace = sopts.Trace
	opts := answer.ExplainOptions{Fleet: fleetName(c), Limit: limit}
	var ex *answer.Explain
	if node := c.String("node"); node != "" {
		ex, err = answer.ExplainLane(context.Background(), w, cat.Pool, subject, node, opts)
	} else {
		ex, err = answer.ExplainRoute(context.Background(), w, cat.Pool, subject, opts)
	}
	if errors.Is(err, solver.ErrUnknown) {
		what := "aliases"
		if c.String("node") != "" {
			what = "runtimes and nodes"
		}
		return badInput("explain: %w (see poolsolve catalog for the pool's %s)", err, what)
	}
	if err != nil {
		return errorf("explain: %w", err)
	}
	var buf bytes.Buffer
	if c.String("format") == "json" {
		err = answer.WriteExplainJSON(&buf, ex)
	} else {
		err = answer.WriteExplainText(&buf, ex)
	}
	if err != nil {
		return errorf("render the answer: %w", err)
	}
	return writeOut(c, buf.Bytes(), "explain answer, "+c.String("format"))
}

// flagsFirst moves the arguments of `explain` after its flags: urfave/cli
// stops reading flags at the first argument, and `explain ALIAS --fleet
// F` is how the question reads. A flag's value (the next word, unless
// the flag is boolean or written --flag=value) stays with it; `--` ends
// the flags as usual.
func flagsFirst(app *cli.App, args []string) []string {
	if len(args) < 3 || args[1] != "explain" {
		return args
	}
	boolean := map[string]bool{"help": true, "h": true}
	for _, cmd := range app.Commands {
		if cmd.Name != "explain" {
			continue
		}
		for _, f := range cmd.Flags {
			if _, ok := f.(*cli.BoolFlag); ok {
				for _, n := range f.Names() {
					boolean[n] = true
				}
			}
		}
	}
	var flags, rest []string
	for i := 2; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			rest = append(rest, args[i:]...)
			i = len(args)
		case len(a) > 1 && a[0] == '-':
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if !strings.Contains(name, "=") && !boolean[name] && i+1 < len(args) {
				i++
				flags = append(flags, args[i])
			}
		default:
			rest = append(rest, a)
		}
	}
	out := append([]string{args[0], args[1]}, flags...)
	return append(out, rest...)
}
