package cli

import (
	"errors"
	"fmt"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/lloom"
)

// inputFlags are the two ways to give a fleet: one bundle, or the files.
func inputFlags() []cli.Flag {
	const cat = "Inputs"
	return []cli.Flag{
		&cli.StringFlag{Name: "fleet", Usage: "a fleet bundle (`FILE`, schema poolsolve.fleet/v1) holding every input below", TakesFile: true, Category: cat},
		&cli.StringFlag{Name: "config", Usage: "LLooM config.json (`FILE`)", TakesFile: true, Category: cat},
		&cli.StringFlag{Name: "profiles", Usage: "folder of fleet profiles, profiles/<name>.json (`DIR`)", TakesFile: true, Category: cat},
		&cli.StringFlag{Name: "policy", Usage: "poolsolve's pool.toml (`FILE`)", TakesFile: true, Category: cat},
		&cli.StringFlag{Name: "metrics", Usage: "a saved GET /gateway/metrics answer or LLooM's metrics history file (`FILE`)", TakesFile: true, Category: cat},
		&cli.StringSliceFlag{Name: "status", Usage: "a saved GET /gateway/node answer, as `[NODE=]FILE` (repeatable)", TakesFile: true, Category: cat},
		&cli.StringFlag{Name: "cluster", Usage: "a saved GET /gateway/cluster answer (`FILE`): status for every node", TakesFile: true, Category: cat},
		&cli.StringSliceFlag{Name: "machine-profile", Usage: "a machine profile v1, as `NODE=FILE` (repeatable)", TakesFile: true, Category: cat},
		&cli.StringSliceFlag{Name: "inventory", Usage: "a poolsolve inventory v1, as `[NODE=]FILE` (repeatable)", TakesFile: true, Category: cat},
		&cli.StringSliceFlag{Name: "benchmarks", Usage: "a benchmark-suite v1 `FILE` (repeatable)", TakesFile: true, Category: cat},
		&cli.StringSliceFlag{Name: "recipes", Usage: "a recipe v1 `FILE` (repeatable)", TakesFile: true, Category: cat},
		&cli.StringFlag{Name: "gateway", Usage: "read the live fleet from the LLooM gateway (or poolsolve agent) at `URL`: node status with inventory, and metrics; needs --config", Category: cat},
		&cli.StringFlag{Name: "api-key-env", Usage: "environment variable `NAME` holding the gateway's admin key (default: the config's cluster.apiKeyEnv)", Category: cat},
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
	if err := reportProblems(c, in.Validate()); err != nil {
		return nil, err
	}
	red, err := in.Redacted()
	if err != nil {
		return nil, errorf("redact the inputs: %v", err)
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

// readInputs reads the fleet without validating it.
func readInputs(c *cli.Context) (*fleet.Inputs, error) {
	if c.String("gateway") != "" {
		return loadLive(c)
	}
	if c.IsSet("api-key-env") {
		return nil, badInput("--api-key-env names the key for --gateway; give --gateway URL too")
	}
	bundle := c.String("fleet")
	separate := []string{"config", "profiles", "policy", "metrics", "status", "cluster", "machine-profile", "inventory", "benchmarks", "recipes"}
	if bundle != "" {
		for _, f := range separate {
			// A policy may be layered on a bundle; other inputs may not.
			if f != "policy" && c.IsSet(f) {
				return nil, badInput("--fleet holds every input; do not also give --%s", f)
			}
		}
		in, err := fleet.LoadBundle(bundle)
		if err != nil {
			return nil, inputErr(err)
		}
		if p := c.String("policy"); p != "" {
			pol, err := fleet.LoadPolicy(p)
			if err != nil {
				return nil, inputErr(err)
			}
			in.Policy = pol
			in.Sources["policy"] = fleet.Source{File: p}
		}
		return in, nil
	}
	if !c.IsSet("config") {
		return nil, badInput("no inputs: give --fleet FILE, or --config FILE and the other input flags")
	}
	src := fleet.Sources{
		Config:      c.String("config"),
		ProfilesDir: c.String("profiles"),
		Policy:      c.String("policy"),
		Metrics:     c.String("metrics"),
		Cluster:     c.String("cluster"),
		Benchmarks:  c.StringSlice("benchmarks"),
		Recipes:     c.StringSlice("recipes"),
	}
	var err error
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
	opts := catalog.Options{
		ConsiderInstalls: c.Bool("consider-installs"),
		Cordons:          c.StringSlice("cordon"),
		Pins:             c.StringSlice("pin"),
		Profile:          c.String("profile"),
		Unreachable:      extra,
	}
	cat, err := catalog.Build(in, opts)
	if err != nil {
		var ps lloom.Problems
		if asProblems(err, &ps) {
			return nil, nil, reportProblems(c, ps)
		}
		return nil, nil, inputErr(err)
	}
	cat.Notes = append(cat.Notes, liveNotes(c)...)
	return in, cat, nil
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
