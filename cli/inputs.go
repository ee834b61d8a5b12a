package cli

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/gateway"
	"github.com/poolsolve/poolsolve/lloom"
)

// inputFlags are the two ways to give a fleet: one bundle, or the files.
func inputFlags() []cli.Flag {
	const cat = "Inputs"
	return []cli.Flag{
		&cli.StringFlag{Name: "fleet", EnvVars: envVars("fleet"), Usage: "a fleet bundle (`FILE`, schema poolsolve.fleet/v1) holding every input below", TakesFile: true, Category: cat},
		&cli.StringFlag{Name: "config", EnvVars: envVars("config"), Usage: "LLooM config.json (`FILE`)", TakesFile: true, Category: cat},
		&cli.StringFlag{Name: "profiles", EnvVars: envVars("profiles"), Usage: "folder of fleet profiles, profiles/<name>.json (`DIR`)", TakesFile: true, Category: cat},
		&cli.StringFlag{Name: "policy", EnvVars: envVars("policy"), Usage: "poolsolve's pool.toml (`FILE`)", TakesFile: true, Category: cat},
		&cli.StringFlag{Name: "metrics", EnvVars: envVars("metrics"), Usage: "a saved GET /gateway/metrics answer or LLooM's metrics history file (`FILE`)", TakesFile: true, Category: cat},
		&cli.StringSliceFlag{Name: "status", Usage: "a saved GET /gateway/node answer, as `[NODE=]FILE` (repeatable; FILE may be a glob such as 'nodes/*.json')", TakesFile: true, Category: cat},
		&cli.StringFlag{Name: "cluster", Usage: "a saved GET /gateway/cluster answer (`FILE`): status for every node", TakesFile: true, Category: cat},
		&cli.StringSliceFlag{Name: "machine-profile", Usage: "a machine profile v1, as `NODE=FILE` (repeatable; FILE may be a glob matching one file)", TakesFile: true, Category: cat},
		&cli.StringSliceFlag{Name: "inventory", Usage: "a poolsolve inventory v1, as `[NODE=]FILE` (repeatable; FILE may be a glob)", TakesFile: true, Category: cat},
		&cli.StringSliceFlag{Name: "benchmarks", Usage: "a benchmark-suite v1 `FILE` (repeatable; a glob reads every match)", TakesFile: true, Category: cat},
		&cli.StringSliceFlag{Name: "recipes", Usage: "a recipe v1 `FILE` (repeatable; a glob reads every match)", TakesFile: true, Category: cat},
		&cli.StringFlag{Name: "gateway", EnvVars: envVars("gateway"), Usage: "read the live fleet from the LLooM gateway (or poolsolve agent) at `URL`: node status with inventory, and metrics; needs --config", Category: cat},
		&cli.StringFlag{Name: "api-key-env", EnvVars: envVars("api-key-env"), Usage: "environment variable `NAME` holding the gateway's admin key (default: the config's cluster.apiKeyEnv)", Category: cat},
		&cli.DurationFlag{Name: "gateway-timeout", Value: gateway.DefaultTimeout, Usage: "with --gateway: read the whole live fleet within `DURATION`; each node is also asked directly within half of it, so one that hangs costs half", DefaultText: "5s, at most 4/5 of --time-limit where the command searches", Category: cat},
		&cli.StringFlag{Name: "lloom-version", Usage: "the LLooM release that reads the config (`VERSION`, e.g. 0.2.3; default: what a --gateway reports or its answers show): route aliases as it does, warn about what it refuses or does not read", Category: cat},
		maxInputSizeFlag(),
		&cli.StringFlag{Name: "demand-history", Usage: "poolsolve's demand history `FILE`: how each gateway's requests split over aliases, reading by reading; a live run adds its reading (read more often than every 50 requests per gateway and the split is exact)", TakesFile: true, Category: cat},
	}
}

// poolFlags shape the pool beyond the files.
func poolFlags() []cli.Flag {
	const cat = "Pool"
	return []cli.Flag{
		&cli.StringSliceFlag{Name: "cordon", Usage: "take `NODE` out of the pool: it carries no lanes (repeatable)", Category: cat},
		&cli.StringSliceFlag{Name: "pin", Usage: "pin a runtime's lane to nodes, as `RUNTIME=NODE[,NODE]` (repeatable)", Category: cat},
		&cli.StringFlag{Name: "profile", Usage: "make fleet profile `NAME`'s routes and residency pins", Category: cat},
		&cli.BoolFlag{Name: "consider-installs", Usage: "also consider bundled recipes, free to place on any node or linked clique that meets them", Category: cat},
	}
}

// loadInputs reads the fleet from --fleet, the separate flags or
// --gateway, validates it (every command that reads inputs refuses what
// validate refuses, with the same messages) and hands out its redacted
// copy: nothing a command prints or writes is made from a secret.
func loadInputs(c *cli.Context) (*fleet.Inputs, error) {
	in, err := readInputs(c)
	if err != nil {
		return nil, err
	}
	if in.Config != nil && len(in.Config.Typos) > 0 {
		// Warnings: LLooM starts with such a key, ignoring it.
		fleet.Locate(in.Config.Typos)
		for _, p := range in.Config.Typos {
			fmt.Fprintf(c.App.ErrWriter, "poolsolve: warning: %s\n", p.Error())
		}
	}
	if err := reportProblems(c, in.Validate()); err != nil {
		return nil, err
	}
	// in is not used again: its metrics are redacted where they are.
	red, err := in.RedactedInPlace()
	if err != nil {
		return nil, errorf("redact the inputs: %w", err)
	}
	return red, nil
}

// reportProblems prints each problem on its own line, as validate always
// has, with its line and column where the file has its path, and turns
// them into exit 2.
func reportProblems(c *cli.Context, problems lloom.Problems) error {
	if len(problems) == 0 {
		return nil
	}
	fleet.Locate(problems)
	for _, p := range problems {
		fmt.Fprintf(c.App.ErrWriter, "%s\n", p.Error())
	}
	return &exitError{ExitBadInput, fmt.Errorf("%d problem(s) in the inputs", len(problems))}
}

// separateFlags are the inputs given file by file, instead of --fleet.
var separateFlags = []string{"config", "profiles", "policy", "metrics", "status", "cluster", "machine-profile", "inventory", "benchmarks", "recipes", "demand-history"}

// ignoredKey holds, in the app's Metadata, the input flags whose values
// came from the environment alone and yield to the command line.
const ignoredKey = "poolsolve.ignoredEnv"

// yieldEnvInputs decides which environment defaults (POOLSOLVE_FLEET,
// POOLSOLVE_CONFIG, POOLSOLVE_GATEWAY, ...) give way: a command line that
// gives the fleet one way (--fleet, --gateway, or the separate files)
// drops the environment's defaults for the other ways, so an exported
// POOLSOLVE_FLEET never clashes with --config typed on the command line.
func yieldEnvInputs(c *cli.Context) {
	ignored := map[string]bool{}
	envOnly := func(name string) bool { return c.IsSet(name) && !onCommandLine(c, name) }
	cmdFiles := false
	for _, f := range separateFlags {
		if f != "policy" && onCommandLine(c, f) {
			cmdFiles = true
		}
	}
	switch {
	case onCommandLine(c, "fleet"):
		for _, f := range []string{"config", "profiles", "metrics", "gateway"} {
			ignored[f] = envOnly(f)
		}
	case onCommandLine(c, "gateway"):
		for _, f := range []string{"fleet", "metrics"} {
			ignored[f] = envOnly(f)
		}
	case cmdFiles:
		for _, f := range []string{"fleet", "gateway"} {
			ignored[f] = envOnly(f)
		}
	}
	c.App.Metadata[ignoredKey] = ignored
}

// given reports whether an input flag has a value that counts.
func given(c *cli.Context, name string) bool {
	ignored, _ := c.App.Metadata[ignoredKey].(map[string]bool)
	return c.IsSet(name) && !ignored[name]
}

// inputString is an input flag's value, empty when it yields.
func inputString(c *cli.Context, name string) string {
	if !given(c, name) {
		return ""
	}
	return c.String(name)
}

// maxInputSizeFlag bounds every input file; "-" as a FILE reads standard
// input.
func maxInputSizeFlag() cli.Flag {
	return &cli.StringFlag{Name: "max-input-size", EnvVars: envVars("max-input-size"), Value: lloom.FormatBytes(lloom.DefaultMaxInputBytes),
		Usage: "refuse an input file larger than `SIZE` (bytes, or with KiB, MiB, GiB); a FILE of - reads standard input", Category: "Inputs"}
}

// applyInputLimit sets the size limit of every input file from
// --max-input-size.
func applyInputLimit(c *cli.Context) error {
	if !c.IsSet("max-input-size") {
		return nil
	}
	n, err := lloom.ParseBytes(c.String("max-input-size"))
	if err != nil {
		return badInput("%s %q: %v", flagLabel(c, "max-input-size"), c.String("max-input-size"), err)
	}
	lloom.SetInputs(c.App.Reader, n)
	return nil
}

// readInputs reads the fleet without validating it.
func readInputs(c *cli.Context) (*fleet.Inputs, error) {
	if err := applyInputLimit(c); err != nil {
		return nil, err
	}
	yieldEnvInputs(c)
	if inputString(c, "gateway") != "" {
		return loadLive(c)
	}
	if given(c, "api-key-env") && onCommandLine(c, "api-key-env") {
		return nil, badInput("--api-key-env names the key for --gateway; give --gateway URL too")
	}
	if c.IsSet("gateway-timeout") {
		return nil, badInput("--gateway-timeout bounds reading a live fleet; give --gateway URL too")
	}
	bundle := inputString(c, "fleet")
	if bundle != "" {
		for _, f := range separateFlags {
			// A policy may be layered on a bundle; other inputs may not.
			if f != "policy" && given(c, f) {
				return nil, badInput("%s holds every input; do not also give %s", flagLabel(c, "fleet"), flagLabel(c, f))
			}
		}
		in, err := fleet.LoadBundle(bundle)
		if err != nil {
			return nil, inputErr(err)
		}
		if p := inputString(c, "policy"); p != "" {
			pol, err := fleet.LoadPolicy(p)
			if err != nil {
				return nil, inputErr(err)
			}
			in.Policy = pol
			in.Sources["policy"] = fleet.Source{File: p}
		}
		return in, nil
	}
	if !given(c, "config") {
		return nil, badInput("no inputs: give --fleet FILE, or --config FILE and the other input flags")
	}
	src := fleet.Sources{
		Config:        inputString(c, "config"),
		ProfilesDir:   inputString(c, "profiles"),
		Policy:        inputString(c, "policy"),
		Metrics:       inputString(c, "metrics"),
		DemandHistory: c.String("demand-history"),
		Cluster:       c.String("cluster"),
	}
	var err error
	if src.Benchmarks, err = expandGlobs("benchmarks", c.StringSlice("benchmarks"), false); err != nil {
		return nil, err
	}
	if src.Recipes, err = expandGlobs("recipes", c.StringSlice("recipes"), false); err != nil {
		return nil, err
	}
	if src.Status, src.StatusFiles, err = nodeFiles("status", c.StringSlice("status"), true); err != nil {
		return nil, err
	}
	if src.MachineProfile, _, err = nodeFiles("machine-profile", c.StringSlice("machine-profile"), false); err != nil {
		return nil, err
	}
	if src.Inventory, src.InventoryFiles, err = nodeFiles("inventory", c.StringSlice("inventory"), true); err != nil {
		return nil, err
	}
	in, err := fleet.Load(src)
	if err != nil {
		return nil, inputErr(err)
	}
	return in, nil
}

// nodeFiles splits NODE=FILE values; bare FILE values are allowed when the
// document names its node.
func nodeFiles(flag string, vals []string, bareOK bool) (map[string]string, []string, error) {
	vals, err := expandGlobs(flag, vals, true)
	if err != nil {
		return nil, nil, err
	}
	byNode := map[string]string{}
	var bare []string
	for _, v := range vals {
		node, file, ok := strings.Cut(v, "=")
		switch {
		case ok && node != "" && file != "":
			byNode[node] = file
		case !ok && bareOK && v != "":
			bare = append(bare, v)
		default:
			want := "NODE=FILE"
			if bareOK {
				want = "[NODE=]FILE"
			}
			return nil, nil, badInput("--%s %q: expected %s", flag, v, want)
		}
	}
	return byNode, bare, nil
}

// inputErr marks any error from reading inputs as bad input (exit 2):
// fleet and lloom errors name the file and path already, and get the
// line and column of the path where they lack them.
func inputErr(err error) error {
	var ps lloom.Problems
	var ie *lloom.InputError
	switch {
	case errors.As(err, &ps):
		fleet.Locate(ps)
	case errors.As(err, &ie):
		fleet.Locate(lloom.Problems{ie})
	}
	return &exitError{ExitBadInput, err}
}

// buildCatalog loads the inputs and builds the pool.
func buildCatalog(c *cli.Context, extra map[string]string) (*fleet.Inputs, *catalog.Catalog, error) {
	in, err := loadInputs(c)
	if err != nil {
		return nil, nil, err
	}
	rt, err := lloomRouting(c, in)
	if err != nil {
		return nil, nil, err
	}
	opts := catalog.Options{
		Routing:          rt,
		ConsiderInstalls: c.Bool("consider-installs"),
		Cordons:          c.StringSlice("cordon"),
		Pins:             c.StringSlice("pin"),
		Profile:          c.String("profile"),
		Unreachable:      extra,
	}
	// The release's own refusals are said even when poolsolve has more
	// to say about the config.
	refused := warnLLooMVersion(c, in, rt)
	cat, err := catalog.Build(in, opts)
	if err != nil {
		var ps lloom.Problems
		if asProblems(err, &ps) {
			return nil, nil, reportProblems(c, ps)
		}
		return nil, nil, inputErr(err)
	}
	cat.Notes = append(cat.Notes, liveNotes(c)...)
	if refused != nil {
		return nil, nil, refused
	}
	return in, cat, nil
}

// lloomRouting is how the LLooM release that runs the fleet routes an
// alias: the --lloom-version flag, else what the gateway reports or its
// answers show, else what saved node statuses show, else the config's own
// (lloom.ConfigRouting).
func lloomRouting(c *cli.Context, in *fleet.Inputs) (lloom.Routing, error) {
	if v := c.String("lloom-version"); v != "" {
		r, err := lloom.ParseRelease(v)
		if err != nil {
			return lloom.Routing{}, badInput("--lloom-version: %w", err)
		}
		return lloom.RoutingFor(r, "--lloom-version "+r.String()), nil
	}
	if fl := liveFleet(c); fl != nil {
		if r, ok := fl.Routing(); ok {
			return r, nil
		}
	}
	if in.LLooMRelease != "" {
		if r, err := lloom.ParseRelease(in.LLooMRelease); err == nil {
			return lloom.RoutingFor(r, "the fleet bundle records LLooM "+r.String()), nil
		}
	}
	var nodes []lloom.NodeStatus
	for _, id := range slices.Sorted(maps.Keys(in.Nodes)) {
		if st := in.Nodes[id].Status; st != nil {
			nodes = append(nodes, *st)
		}
	}
	if r, ok := lloom.DetectRouting(nodes, false); ok {
		return r, nil
	}
	return lloom.ConfigRouting(in.Config), nil
}

// warnLLooMVersion prints, for validate and plan, what the config holds
// that the LLooM release reading it refuses or ignores: poolsolve reads
// both alias forms, LLooM 0.2.3 only the legacy one. validate fails when
// a known release refuses the config.
func warnLLooMVersion(c *cli.Context, in *fleet.Inputs, rt lloom.Routing) error {
	name := c.Command.Name
	if name != "plan" && name != "validate" || !rt.Known {
		return nil
	}
	r, err := lloom.ParseRelease(rt.Release)
	if err != nil {
		return nil // a line, not a release: nothing to check against
	}
	local := ""
	if fl := liveFleet(c); fl != nil {
		local = fl.LocalNode()
	}
	ws, err := lloom.VersionWarnings(in.ConfigRaw, r, local)
	if err != nil {
		return errorf("check the config against LLooM %s: %w", r, err)
	}
	file := in.Sources["config"].String()
	refused := 0
	for _, w := range ws {
		fmt.Fprintf(c.App.ErrWriter, "poolsolve: warning: %s: %s\n", file, w.Text)
		if w.Refused {
			refused++
		}
	}
	if refused > 0 && name == "validate" {
		return &exitError{ExitBadInput, fmt.Errorf("%s: LLooM %s (%s) refuses this config at load (%d reason(s) above)", file, r, rt.Basis, refused)}
	}
	return nil
}

func checkFormat(f string) error {
	if f != "text" && f != "json" {
		return badInput("--format %q: expected text or json", f)
	}
	return nil
}

func formatFlag() cli.Flag {
	return &cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text or json"}
}

func errorf(format string, args ...any) error {
	return &exitError{ExitFailure, fmt.Errorf(format, args...)}
}
