package cli

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/gateway"
	"github.com/poolsolve/poolsolve/lloom"
)

// liveFleetKey is where loadLive leaves the fetched fleet in the app's
// metadata, for the notes and the snapshot's description.
const liveFleetKey = "poolsolve.liveFleet"

// liveReplaces are the input flags whose documents the gateway serves.
var liveReplaces = []string{"fleet", "status", "cluster", "metrics", "machine-profile"}

// loadLive reads the live fleet behind --gateway on top of --config and the
// other local files (policy, profiles, benchmarks, recipes, inventories).
func loadLive(c *cli.Context) (*fleet.Inputs, error) {
	for _, f := range liveReplaces {
		if given(c, f) {
			return nil, badInput("%s reads node status and metrics from the gateway; do not also give %s", flagLabel(c, "gateway"), flagLabel(c, f))
		}
	}
	if !given(c, "config") {
		return nil, badInput("--gateway needs --config FILE: a gateway does not serve its config")
	}
	if c.Duration("gateway-timeout") <= 0 {
		return nil, badInput("--gateway-timeout %s: expected a positive duration", c.Duration("gateway-timeout"))
	}
	src := fleet.Sources{
		DemandHistory: c.String("demand-history"),
		Config:        inputString(c, "config"),
		ProfilesDir:   inputString(c, "profiles"),
		Policy:        inputString(c, "policy"),
	}
	var err error
	if src.Benchmarks, err = expandGlobs("benchmarks", c.StringSlice("benchmarks"), false); err != nil {
		return nil, err
	}
	if src.Recipes, err = expandGlobs("recipes", c.StringSlice("recipes"), false); err != nil {
		return nil, err
	}
	if src.Inventory, src.InventoryFiles, err = nodeFiles("inventory", c.StringSlice("inventory"), true); err != nil {
		return nil, err
	}
	base, err := fleet.Load(src)
	if err != nil {
		return nil, inputErr(err)
	}
	// Messages name the gateway by the URL the operator gave, unless it
	// carries what the fetch refuses: credentials or a query.
	gw := inputString(c, "gateway")
	if u, err := url.Parse(gw); err == nil && u.User == nil && u.RawQuery == "" && u.Fragment == "" {
		keepInMessages(c, gw)
	}
	key, err := apiKey(c.String("api-key-env"), base.Config)
	if err != nil {
		return nil, err
	}
	opts := gateway.Options{URL: gw, APIKey: key, Config: base.Config}
	if base.Policy != nil {
		opts.MetricsPeriod = base.Policy.Demand.Period
	}
	opts.Timeout = c.Duration("gateway-timeout")
	if !c.IsSet("gateway-timeout") && lookupFlag(c, "time-limit") != nil {
		// A node that hangs costs half the budget (gateway.Options): at
		// four fifths of the time limit, the search keeps more than half.
		opts.Timeout = min(opts.Timeout, limitOf(c, base)*4/5)
	}
	fl, err := gateway.Fetch(c.Context, opts)
	if err != nil {
		code := ExitFailure
		if errors.Is(err, gateway.ErrBadURL) || errors.Is(err, gateway.ErrUnauthorized) {
			code = ExitBadInput
		}
		return nil, &exitError{code, err}
	}
	for _, p := range fl.Problems {
		fmt.Fprintf(c.App.ErrWriter, "poolsolve: warning: %s: %s\n", fl.Source, p)
	}
	if err := recordHistory(c, fl, base); err != nil {
		return nil, err
	}
	in, err := fl.Inputs(base)
	if err != nil {
		return nil, inputErr(err)
	}
	c.App.Metadata[liveFleetKey] = fl
	return in, nil
}

// recordHistory adds this reading of each node's metrics to the demand
// history file --demand-history names: LLooM shows who asked only for its
// last 50 requests, so the split is kept reading by reading. The inputs
// keep the history as it was before this reading, which the catalog adds
// itself: it then tells this reading's entries from earlier ones, and a
// gateway whose counts started over, and a snapshot replays the same.
func recordHistory(c *cli.Context, fl *gateway.Fleet, base *fleet.Inputs) error {
	path := c.String("demand-history")
	if path == "" {
		return nil
	}
	if base.DemandHistory == nil {
		base.DemandHistory = &fleet.DemandHistory{Schema: fleet.HistorySchema}
	}
	h := base.DemandHistory.Clone()
	for _, id := range fl.MetricsFrom() {
		m, err := fl.Nodes[id].ParsedMetrics(id + " /gateway/metrics")
		if err != nil {
			continue // Fetch parsed it already; not expected
		}
		h.Record(id, m)
	}
	// Written even when nothing was added, so the file exists from the
	// first run on; the same history gives the same bytes.
	data, err := h.Marshal()
	if err == nil {
		err = fleet.WriteFileAtomic(path, data)
	}
	if err != nil {
		return errorf("write the demand history %s: %w", path, err)
	}
	announceWrote(c, path, "demand history", len(data))
	return nil
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// checkKeyEnv refuses a --api-key-env value that names no set variable.
// The messages never repeat the value: an operator who gave the key itself
// instead of its variable's name would see it printed, and a key can look
// like a name ("abc").
func checkKeyEnv(name string) error {
	if !envName.MatchString(name) {
		return badInput("--api-key-env expects the name of an environment variable (such as LLOOM_CLUSTER_KEY), not the key itself; the value given is not repeated here")
	}
	if os.Getenv(name) == "" {
		return badInput("--api-key-env names an environment variable that is unset or empty (the name is not repeated here, in case it is the key itself)")
	}
	return nil
}

// apiKey reads the admin key from the environment variable named by
// --api-key-env, else by the config's cluster.apiKeyEnv. A variable named
// on the command line must be set; the config's may be unset, for
// gateways that take no key. Neither the key nor the flag's value is
// printed.
func apiKey(flag string, cfg *lloom.Config) (string, error) {
	if flag != "" {
		if err := checkKeyEnv(flag); err != nil {
			return "", err
		}
		return os.Getenv(flag), nil
	}
	if cfg != nil && envName.MatchString(cfg.Cluster.APIKeyEnv) {
		return os.Getenv(cfg.Cluster.APIKeyEnv), nil
	}
	return "", nil
}

// liveFleet is the fleet loadLive fetched in this run, or nil.
func liveFleet(c *cli.Context) *gateway.Fleet {
	fl, _ := c.App.Metadata[liveFleetKey].(*gateway.Fleet)
	return fl
}

// liveNotes are the lines a plan or catalog of a live fleet adds: the
// nodes planned from a fallback rather than their inventory.
func liveNotes(c *cli.Context) []string {
	if fl := liveFleet(c); fl != nil {
		return fl.Fallbacks()
	}
	return nil
}
