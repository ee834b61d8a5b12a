package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/export"
	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/inventory"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

const exportHelp = `Writes the problem poolsolve encodes for the pool, so that another solver can
solve the same instance and the answers can be compared. docs/export-formats.md
describes each format with an example.

Formats:
   opb    pseudo-boolean (PB competition format, >= and = only): minisat+, clasp, sat4j, z3
   lp     CPLEX LP, a 0/1 MILP: cbc, glpsol, HiGHS
   wcnf   classic weighted MaxSAT ("p wcnf vars clauses top"): clasp, sat4j, z3, MaxSAT solvers
   cnf    DIMACS CNF of the hard constraints alone (no objective)
   json   the linear model: every variable's meaning, every row's name, each level's terms

The objective (opb, lp, wcnf; recorded in json):
   --level N   minimise level N alone (1 coverage, 2 external-fallback, 3 slo,
               4 latency+churn). The earlier levels are bounded at the values given
               with --fix; those not given are taken from poolsolve's own solve
               (stderr says which, and whether poolsolve proved them optimal).
   --flatten   minimise all four levels at once, weighted so that one unit of a
               level outweighs everything below it (the default for opb, lp, wcnf).
   --fix L1=0,L2=3   bound levels: level <= value (with the optimum, this fixes it).

Pins and cordons are fixed true in every format. Variables keep one number in
every format (x17 in the OPB is 17 in the CNF and in the JSON), and comment lines
say what each stands for. The same inputs give the same bytes.

Exit codes:
   0  the file was written and the instance is feasible
      (or the feasibility check ran out of time; stderr says so)
   2  bad flags or input files; nothing was written
   3  the file was written, but the instance is infeasible: the pins, cordons
      or --fix bounds admit no plan, or memory figures too fine to count
      exactly were rounded (stderr says which)

Memory is counted in the fleet's own decimals (10^k units per GiB), so the
file is exact. Where that makes numbers too large for a reader (clasp reads
32-bit weights; CBC and HiGHS tell units apart only up to about 10^6), the
file's header and stderr name the reader and the row.
   4  any other failure (the file could not be written)

Examples:
   poolsolve export --fleet examples/spark-fleet.json --format opb -o spark.opb
   poolsolve export --fleet examples/spark-fleet.json --format lp --level 4 -o spark-l4.lp
   poolsolve export --fleet examples/spark-fleet.json --format lp --level 3 --fix L1=0,L2=0 -o l3.lp
   poolsolve export --fleet examples/spark-fleet.json --format cnf --cordon spark-node-02 -o hard.cnf
   cbc spark-l4.lp sec 60 ratio 0 solve solu spark-l4.sol`

func exportCommand() *cli.Command {
	return &cli.Command{
		Name:        "export",
		Usage:       "write the instance poolsolve solves as OPB, LP, WCNF, CNF or JSON, for other solvers",
		Description: exportHelp,
		Flags: append(append(inputFlags(), poolFlags()...),
			&cli.StringFlag{Name: "format", Usage: "`FORMAT`: opb, lp, wcnf, cnf or json (required)"},
			&cli.IntFlag{Name: "level", Usage: "minimise objective level `N` (1-4) alone", Category: "Objective"},
			&cli.BoolFlag{Name: "flatten", Usage: "minimise the four levels at once, weighted (default for opb, lp, wcnf)", Category: "Objective"},
			&cli.StringSliceFlag{Name: "fix", Usage: "bound levels, as `L1=0,L2=3` (level <= value; repeatable)", Category: "Objective"},
			&cli.DurationFlag{Name: "time-limit", EnvVars: envVars("time-limit"), Usage: "time for poolsolve's solve (levels not given with --fix) and for the feasibility check", DefaultText: "pool.toml solver.timeLimit, else 5s", Category: "Solver"},
			&cli.Uint64Flag{Name: "seed", EnvVars: envVars("seed"), Usage: "`SEED` for poolsolve's solve", DefaultText: "pool.toml solver.seed, else 1", Category: "Solver"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (atomically) instead of stdout", TakesFile: true},
			&cli.IntFlag{Name: "memory-limit", Usage: "give up with an error, writing nothing, once the encoding holds `MIB` mebibytes: an instance too large for the machine ends so, not killed by the kernel", DefaultText: "80% of the memory available when export starts, where the system says"},
		),
		OnUsageError: usageError,
		Action:       runExport,
	}
}

// parseFixes reads "L1=0,L2=3" (the L is optional) into fixes.
func parseFixes(vals []string) ([]export.Fix, error) {
	var out []export.Fix
	seen := map[int]bool{}
	for _, v := range vals {
		for _, part := range strings.Split(v, ",") {
			part = strings.TrimSpace(part)
			if part == "" {
				continue
			}
			l, val, ok := strings.Cut(part, "=")
			l = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(l), "L"), "l")
			level, err1 := strconv.Atoi(l)
			atMost, err2 := strconv.ParseInt(strings.TrimSpace(val), 10, 64)
			if !ok || err1 != nil || err2 != nil {
				return nil, badInput("--fix %q: expected L<level>=<value>, e.g. L1=0", part)
			}
			if level < 1 || level > 4 {
				return nil, badInput("--fix %q: levels are 1 to 4", part)
			}
			if seen[level] {
				return nil, badInput("--fix: level %d given twice", level)
			}
			seen[level] = true
			out = append(out, export.Fix{Level: level, AtMost: atMost})
		}
	}
	return out, nil
}

func runExport(c *cli.Context) error {
	req, err := exportFlags(c)
	if err != nil {
		return err
	}
	in, cat, err := buildCatalog(c, nil)
	if err != nil {
		return err
	}
	sopts := solverOptions(c, in, solver.Exact)
	given := len(req.fixes)
	res, err := fixEarlierLevels(c, cat.Pool, sopts, &req)
	if err != nil {
		return err
	}
	inst, err := writeExport(c, cat.Pool, req)
	if err != nil {
		return err
	}
	if res != nil && res.Infeasible {
		for _, e := range res.Explanations {
			fmt.Fprintf(c.App.ErrWriter, "  %s: %s\n", e.Subject, e.Reason)
		}
		return &exitError{ExitInfeasible, fmt.Errorf("the instance is infeasible: the pins and cordons admit no plan (the file is still a valid instance)")}
	}
	return exportFeasibility(c, cat.Pool, inst, sopts.TimeLimit, given > 0, len(req.fixes) > given)
}

// exportRequest is what export's flags ask for.
type exportRequest struct {
	format  export.Format
	level   int
	flatten bool
	fixes   []export.Fix
	memory  *memoryGuard
}

// memoryGuard stops an encoding whose heap passes limit bytes (0: no
// limit). The encoding asks it every few thousand variables: a
// 1024x4000 export held 24 GB before the kernel killed it, silently.
type memoryGuard struct {
	limit   uint64
	tripped bool
	sample  []metrics.Sample
}

func newMemoryGuard(limit uint64) *memoryGuard {
	return &memoryGuard{limit: limit, sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
}

// passed reports whether the heap's objects have passed the limit.
func (g *memoryGuard) passed() bool {
	if g == nil || g.limit == 0 {
		return false
	}
	metrics.Read(g.sample)
	if v := g.sample[0].Value; v.Kind() == metrics.KindUint64 && v.Uint64() > g.limit {
		g.tripped = true
	}
	return g.tripped
}

// memoryLimit is --memory-limit in bytes, else 80% of the memory the
// system has available now, or 0 where it does not say.
func memoryLimit(c *cli.Context) (uint64, error) {
	if c.IsSet("memory-limit") {
		mib := c.Int("memory-limit")
		if mib <= 0 {
			return 0, badInput("--memory-limit %d: expected a positive number of MiB", mib)
		}
		return uint64(mib) << 20, nil
	}
	m, err := inventory.SampleHostMemory(c.Context, inventory.OS{}, time.Second)
	if err != nil || m.AvailableBytes == 0 {
		return 0, nil
	}
	return m.AvailableBytes / 10 * 8, nil
}

// placements counts the pool's candidate placements.
func placements(p *model.Pool) int {
	n := 0
	for _, v := range p.Variants {
		n += len(v.Placements)
	}
	return n
}

// exportFlags checks export's flags against each other; flatten is the
// default for the formats with an objective.
func exportFlags(c *cli.Context) (exportRequest, error) {
	if !c.IsSet("format") {
		return exportRequest{}, badInput("--format is required: opb, lp, wcnf, cnf or json")
	}
	format, err := export.ParseFormat(c.String("format"))
	if err != nil {
		return exportRequest{}, badInput("--format %q: expected opb, lp, wcnf, cnf or json", c.String("format"))
	}
	level, flatten := c.Int("level"), c.Bool("flatten")
	switch {
	case c.IsSet("level") && (level < 1 || level > 4):
		return exportRequest{}, badInput("--level %d: levels are 1 to 4", level)
	case c.IsSet("level") && flatten:
		return exportRequest{}, badInput("--level and --flatten exclude each other")
	case format == export.CNF && (c.IsSet("level") || flatten):
		return exportRequest{}, badInput("--format cnf has no objective; bound levels with --fix instead")
	case c.IsSet("time-limit") && c.Duration("time-limit") <= 0:
		return exportRequest{}, badInput("--time-limit %s: expected a positive duration", c.Duration("time-limit"))
	}
	if !c.IsSet("level") && !flatten && (format == export.OPB || format == export.LP || format == export.WCNF) {
		flatten = true
	}
	fixes, err := parseFixes(c.StringSlice("fix"))
	if err != nil {
		return exportRequest{}, err
	}
	limit, err := memoryLimit(c)
	if err != nil {
		return exportRequest{}, err
	}
	return exportRequest{format: format, level: level, flatten: flatten, fixes: fixes, memory: newMemoryGuard(limit)}, nil
}

// fixEarlierLevels bounds the levels before req.level that --fix leaves
// open at poolsolve's own values, solving once if any is open, and says
// on stderr whether each was proved. The result is nil when nothing was
// solved.
func fixEarlierLevels(c *cli.Context, p *model.Pool, sopts solver.Options, req *exportRequest) (*solver.Result, error) {
	var res *solver.Result
	var err error
	given := map[int]bool{}
	for _, f := range req.fixes {
		given[f.Level] = true
	}
	for l := 1; l < req.level; l++ {
		if given[l] {
			continue
		}
		if res == nil {
			if res, err = solve(context.Background(), p, sopts); err != nil {
				return nil, errorf("solve: %w", err)
			}
		}
		if res.Infeasible {
			break
		}
		lv := res.Levels[l-1]
		req.fixes = append(req.fixes, export.Fix{Level: l, AtMost: lv.Value})
		proved := "proved optimal"
		if lv.Status != solver.Optimal {
			proved = fmt.Sprintf("%s, not proved optimal (lower bound %d): the file's optimum may beat poolsolve's", lv.Status, lv.LowerBound)
		}
		fmt.Fprintf(c.App.ErrWriter, "level %d (%s) bounded at %d, poolsolve's value, %s\n", l, model.LevelNames[l-1], lv.Value, proved)
	}
	return res, nil
}

// writeExport writes the instance to --output (atomically) or stdout,
// and its size to stderr.
func writeExport(c *cli.Context, p *model.Pool, req exportRequest) (*export.Instance, error) {
	opts := export.Options{Level: req.level, Flatten: req.flatten, Fixes: req.fixes, Source: fleetName(c)}
	guard := req.memory
	opts.Encode.Stop = guard.passed
	inst, err := export.New(p, opts)
	if errors.Is(err, encode.ErrDeadline) && guard.tripped {
		return nil, errorf("export: the encoding of this pool (%d placements) passed the memory limit of %d MiB; nothing was written (--memory-limit sets the limit)",
			placements(p), guard.limit>>20)
	}
	if err != nil {
		return nil, badInput("%w", err)
	}
	var buf bytes.Buffer
	if err := inst.Write(&buf, req.format); err != nil {
		return nil, badInput("%w", err)
	}
	out := c.String("output")
	if out != "" && out != "-" {
		if err := fleet.WriteFileAtomic(out, buf.Bytes()); err != nil {
			return nil, errorf("write %s: %w", out, err)
		}
	} else if _, err := c.App.Writer.Write(buf.Bytes()); err != nil {
		return nil, errorf("write: %w", err)
	}
	name := out
	if name == "" || name == "-" {
		name = "stdout"
	}
	if !inst.Enc.Exact {
		fmt.Fprintf(c.App.ErrWriter, "poolsolve: warning: memory is counted in units of 1/%d GiB, draws rounded up and budgets down: the figures are too fine to count exactly, and a plan that fits only to the last decimal is refused\n", inst.Enc.Scale)
	}
	for _, l := range inst.Limits(req.format) {
		fmt.Fprintf(c.App.ErrWriter, "poolsolve: warning: %s\n", l)
	}
	sz := inst.Size()
	fmt.Fprintf(c.App.ErrWriter, "wrote %s (%s): %d variables and %d rows in the linear model, %d variables and %d clauses on the CNF side; objective: %s\n",
		name, req.format, sz.LinearVars, sz.Rows, sz.CNFVars, sz.Clauses, inst.ObjectiveText())
	return inst, nil
}

// exportFeasibility checks the written instance within limit: infeasible
// is exit 3, saying what is to blame: the --fix bounds (userFixed) only
// when the pool has a plan without them and memory is counted exactly;
// poolsolve's own values (ownFixed) come from a plan that holds, so with
// exact memory they cannot be, and with rounded memory the rounding is.
// Undecided is only a note on stderr.
func exportFeasibility(c *cli.Context, p *model.Pool, inst *export.Instance, limit time.Duration, userFixed, ownFixed bool) error {
	switch inst.Feasibility(limit) {
	case export.Infeasible:
		why := "the pins and cordons admit no plan"
		if userFixed || ownFixed {
			hard, err := export.New(p, export.Options{})
			if err == nil && hard.Feasibility(limit) == export.Feasible {
				why = "the --fix bounds admit no plan (without them the pool has one)"
				if !userFixed {
					why = "the level bounds at poolsolve's own values admit no plan (without them the pool has one)"
				}
				if !inst.Enc.Exact {
					why = fmt.Sprintf("no plan meets the level bounds with memory rounded to 1/%d GiB, the figures being too fine to count exactly: the rounding may be to blame, not the bounds (without them the pool has one)", inst.Enc.Scale)
				}
			}
		}
		return &exitError{ExitInfeasible, fmt.Errorf("the instance is infeasible: %s (the file is still a valid instance)", why)}
	case export.Unknown:
		fmt.Fprintf(c.App.ErrWriter, "feasibility not decided within %s\n", limit)
	}
	return nil
}
