package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/poolsolve/poolsolve/apply"
	"github.com/poolsolve/poolsolve/gateway"
	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/plan"
)

const applyHelp = `Carries out a saved plan (plan --format json -o PLAN.json) on the live fleet,
step by step in its rollout's order, through each node's own LLooM gateway
(admin key from --api-key-env, never printed).

First it re-reads the fleet (--gateway, --config) and compares what runs with
what the plan saw: a fleet that differs is a stale plan, refused with the
differences (exit 2). A fleet that shows some of the rollout's steps already
done (an apply that stopped part way) resumes after them. Without --yes the
steps left are printed and, on a terminal, asked for; a run that is not on a
terminal does nothing.

Each start first asks LLooM's admission plan (GET /gateway/runtimes/plan): a
start goes ahead only when LLooM would start that runtime alone, evicting
nothing the rollout did not stop. Each step is then verified by polling GET
/gateway/node (progress on stderr): a start until the lane is healthy, within
twice its load time plus 30 s (at least 60 s); a stop until LLooM no longer
counts it as loaded (60 s). A start that fails is stopped again, so the fleet
stays in the state before it, which the rollout proved valid. Re-routes and
residency (keepWarm) are written to the --config file, atomically, the
previous version kept as FILE.bak-<UTC time>, in the form LLooM 0.2.3 reads
(aliases.<id>.target, runtimes.<id>.keepWarm); each gateway is then asked
until it shows the change (GET /gateway/routing, /gateway/node; LLooM reloads
its config within a second). A gateway that does not, reading a config of its
own, stops the apply with the exact change to make there. Manual lanes
(unmanaged, federated) are listed for the operator: on a terminal apply waits
for them and checks, otherwise it stops there.

One apply at a time per fleet: a lock file next to the config
(.poolsolve-apply.lock, with the holder's pid, host and start time); a lock
left by a process of this host that no longer runs is taken over, and said.
Every step, request and answer is appended to a JSON-lines log (--log,
default poolsolve-apply.log next to the config), redacted like every output.

Exit codes:
   0  every step is done: the fleet runs the plan
   1  nothing was done: not confirmed (no --yes and not on a terminal, or the
      answer was no)
   2  bad flags or input files, or a stale plan (the differences are listed):
      nothing was done
   3  a step failed or waits for the operator: the steps before it are done,
      the fleet is in the state after them; run apply again with the same
      plan to resume (it re-reads the fleet and skips what is done)
   4  any other failure (the lock is held, I/O, a gateway that cannot be read)
 130  interrupted: the step in progress was abandoned (a stop is seen
      through); run apply again to resume

Examples:
   LLOOM_CLUSTER_KEY=... poolsolve apply --gateway http://127.0.0.1:8101 --config examples/spark-fleet/config.json plan.json
   LLOOM_CLUSTER_KEY=... poolsolve apply --gateway http://127.0.0.1:8101 --config examples/spark-fleet/config.json --yes --log apply.log plan.json`

func applyCommand() *cli.Command {
	return &cli.Command{
		Name:        "apply",
		Usage:       "carry out a saved plan's rollout on the live fleet, step by step, verified",
		ArgsUsage:   "PLAN.json",
		Description: applyHelp,
		Flags: append(inputFlags(),
			&cli.BoolFlag{Name: "yes", Aliases: []string{"y"}, Usage: "apply without asking"},
			&cli.StringFlag{Name: "log", Usage: "append every step, request and answer to `FILE` (JSON lines)", DefaultText: "poolsolve-apply.log next to --config", TakesFile: true},
			&cli.DurationFlag{Name: "poll", Value: apply.DefaultPoll, Usage: "read each node's status every `DURATION` while a step is verified"},
		),
		Before:       oneArgument,
		OnUsageError: usageError,
		Action:       runApply,
	}
}

func oneArgument(c *cli.Context) error {
	// A key given in place of its variable's name is refused first, so
	// no other message can be the one that carries it.
	if f := c.String("api-key-env"); f != "" {
		if err := checkKeyEnv(f); err != nil {
			return err
		}
	}
	switch {
	case c.NArg() > 1 && strings.HasPrefix(c.Args().Get(1), "-"):
		return badInput("%s: flags go before the plan: %s [flags] PLAN.json", c.Command.Name, c.Command.Name)
	case c.NArg() > 1:
		return badInput("unexpected argument %q: %s takes one argument, the saved plan (PLAN.json)", c.Args().Get(1), c.Command.Name)
	case c.NArg() == 0:
		return badInput("%s needs one argument, the saved plan (PLAN.json, saved with plan --format json -o)", c.Command.Name)
	}
	return nil
}

// readPlan reads a saved plan document.
func readPlan(path string) (*plan.Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, badInput("%s: %v", path, errors.Unwrap(err))
	}
	var p plan.Plan
	if err := json.Unmarshal(data, &p); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, badInput("%s: not JSON at byte %d: %v", path, se.Offset, se)
		case errors.As(err, &te):
			return nil, badInput("%s: %s: expected %s, found a JSON %s", path, orRoot(te.Field), te.Type, te.Value)
		}
		return nil, badInput("%s: %v", path, err)
	}
	switch {
	case p.Schema != plan.Schema:
		return nil, badInput("%s: schema: expected %q (a plan saved with plan --format json -o), found %q", path, plan.Schema, p.Schema)
	case p.Infeasible:
		return nil, badInput("%s: infeasible: the plan found no placement; there is nothing to apply", path)
	case p.Interrupted:
		return nil, badInput("%s: interrupted: the plan is the best found when its search was stopped; plan again and apply the finished plan", path)
	}
	if p.Rollout != nil {
		for i, st := range p.Rollout.Steps {
			if st.Step != i+1 {
				return nil, badInput("%s: rollout.steps[%d].step: expected %d, found %d", path, i, i+1, st.Step)
			}
		}
	}
	return &p, nil
}

func orRoot(field string) string {
	if field == "" {
		return "the document"
	}
	return field
}

func runApply(c *cli.Context) error {
	path := c.Args().First()
	p, err := readPlan(path)
	if err != nil {
		return err
	}
	if !given(c, "gateway") || !given(c, "config") {
		return badInput("apply reads what runs now from the live fleet: give --gateway URL and --config FILE")
	}
	if c.Duration("poll") <= 0 {
		return badInput("--poll %s: expected a positive duration", c.Duration("poll"))
	}
	cfgPath := c.String("config")
	dir := filepath.Dir(cfgPath)
	lock, stale, err := apply.Acquire(filepath.Join(dir, ".poolsolve-apply.lock"), time.Now())
	if err != nil {
		return errorf("%v", err)
	}
	defer lock.Release()
	if stale != "" {
		fmt.Fprintf(c.App.ErrWriter, "poolsolve: apply: %s\n", stale)
	}
	logPath := c.String("log")
	if logPath == "" {
		logPath = filepath.Join(dir, "poolsolve-apply.log")
	}
	log, err := apply.OpenLog(logPath)
	if err != nil {
		return errorf("open the log: %v", err)
	}
	defer log.Close()

	inputs, cat, err := buildCatalog(c, nil)
	if err != nil {
		return err
	}
	fl := liveFleet(c)
	expected := apply.Expected(p)
	done, diffs := apply.Match(expected, apply.Live(p, cat.Pool.Current))
	if done < 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "%s is stale: what runs now differs from what the plan saw, and from every state its rollout passes through:\n", path)
		for _, d := range diffs {
			fmt.Fprintf(&b, "  %s\n", d)
		}
		b.WriteString("nothing was done; plan again from the live fleet")
		return &exitError{ExitBadInput, errors.New(b.String())}
	}
	var steps []plan.Step
	if p.Rollout != nil {
		steps = p.Rollout.Steps
	}
	out := c.App.Writer
	if done == len(steps) {
		fmt.Fprintf(out, "Nothing to apply: the fleet already runs %s (%d of %d steps done).\n", path, done, len(steps))
		return nil
	}
	if done > 0 {
		fmt.Fprintf(out, "Steps 1-%d of %s are done already (the fleet shows them); resuming at step %d.\n", done, path, done+1)
	}
	fmt.Fprintf(out, "Steps to apply (%d of %d):\n", len(steps)-done, len(steps))
	for _, st := range steps[done:] {
		fmt.Fprintf(out, "  %2d. %s\n", st.Step, lloom.RedactText(apply.Describe(st)))
	}
	interactive := readerIsTerminal(c.App.Reader) && isTerminal(rawStderr(c))
	in := bufio.NewReader(c.App.Reader)
	ask := func(prompt string) bool {
		fmt.Fprint(c.App.ErrWriter, prompt)
		line, _ := in.ReadString('\n')
		return slices.Contains([]string{"y", "yes"}, strings.ToLower(strings.TrimSpace(line)))
	}
	if !c.Bool("yes") {
		if !interactive {
			fmt.Fprintln(out, "Not applied: not on a terminal, and no --yes.")
			return &exitError{ExitChanges, errSilent}
		}
		if !ask(fmt.Sprintf("Apply these %d steps? [y/N] ", len(steps)-done)) {
			fmt.Fprintln(out, "Not applied.")
			return &exitError{ExitChanges, errSilent}
		}
	}
	key, err := apiKey(c.String("api-key-env"), inputs.Config)
	if err != nil {
		return err
	}
	// The inputs hold the config redacted; the endpoints are read again.
	data, err := os.ReadFile(cfgPath)
	if err != nil {
		return errorf("read %s: %v", cfgPath, err)
	}
	cfg, err := lloom.ParseConfig(data, cfgPath)
	if err != nil {
		return inputErr(err)
	}
	nodes, err := nodeBases(c, fl, cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	sig, stop := interrupts()
	defer stop()
	go func() {
		select {
		case <-sig:
			cancel()
		case <-ctx.Done():
		}
	}()
	opts := apply.Options{Plan: p, Done: done, Nodes: nodes, APIKey: key, ConfigPath: cfgPath, Log: log,
		Progress: c.App.ErrWriter, Poll: c.Duration("poll"), RequestTimeout: c.Duration("gateway-timeout")}
	if interactive {
		opts.Confirm = ask
	}
	log.Note("begin", fmt.Sprintf("apply %s: %d of %d steps done before, pid %d", path, done, len(steps), os.Getpid()))
	res := apply.Run(ctx, opts)
	if res.Failed == 0 {
		log.Note("end", fmt.Sprintf("every step of %s done", path))
	} else {
		log.Note("end", fmt.Sprintf("stopped at step %d of %s", res.Failed, path))
	}
	fmt.Fprintf(out, "Done: %d step(s) in this run", len(res.Done))
	if done > 0 {
		fmt.Fprintf(out, ", %d before", done)
	}
	fmt.Fprintln(out, ".")
	for _, b := range res.Backups {
		fmt.Fprintf(out, "Previous config kept as %s.\n", b)
	}
	if res.Failed == 0 {
		fmt.Fprintf(out, "The fleet runs %s. Log: %s\n", path, logPath)
		return nil
	}
	fmt.Fprintf(out, "Stopped at step %d: %s\n", res.Failed, lloom.RedactText(res.Err.Error()))
	fmt.Fprintf(out, "Left (%d):\n", len(res.Left))
	for _, st := range res.Left {
		fmt.Fprintf(out, "  %2d. %s\n", st.Step, lloom.RedactText(apply.Describe(st)))
	}
	fmt.Fprintf(out, "The fleet is in the state after step %d. Run apply %s again to resume from what runs then. Log: %s\n", res.Failed-1, path, logPath)
	if errors.Is(res.Err, context.Canceled) {
		return &exitError{ExitInterrupted, errSilent}
	}
	return &exitError{ExitInfeasible, errSilent}
}

// nodeBases are each node's gateway: its endpoint in the config's
// cluster.nodes, else the --gateway URL (a gateway that is its own
// cluster).
func nodeBases(c *cli.Context, fl *gateway.Fleet, cfg *lloom.Config) (map[string]*url.URL, error) {
	gw, err := url.Parse(c.String("gateway"))
	if err != nil {
		return nil, badInput("--gateway: expected an http or https URL")
	}
	out := map[string]*url.URL{}
	var ids []string
	if fl != nil {
		for id := range fl.Nodes {
			ids = append(ids, id)
		}
	}
	if cfg != nil {
		for id := range cfg.Cluster.Nodes {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		out[id] = gw
		if cfg != nil {
			if n, ok := cfg.Cluster.Nodes[id]; ok && n.Endpoint != "" {
				u, err := url.Parse(n.Endpoint)
				if err != nil || u.Host == "" {
					return nil, badInput("%s: cluster.nodes.%s.endpoint: expected an http or https URL", c.String("config"), id)
				}
				out[id] = u
			}
		}
	}
	return out, nil
}

func readerIsTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
