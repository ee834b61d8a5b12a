package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/internal/printable"
	"github.com/poolsolve/poolsolve/inventory"
	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

const inventoryHelp = `Prints this machine's inventory: compute archs, memory domains with capacity
and what is available now, model roots with free disk, cached weights,
installed commands and Docker images, and fabric links to the other nodes.
The JSON form is the poolsolve.inventory/v1 document (docs/inventory-json.md)
that --inventory NODE=FILE reads, so a machine without a gateway can still be
planned: save it on each node and pass the files with --config.

Probes run without a shell, each with its own timeout; a tool that is missing
or hangs leaves its field empty and says so in the notes. Nothing here needs
root.

Exit codes:
   0  the inventory was printed (possibly with notes about missing tools)
   2  bad flags or input files
   4  any other failure

Examples:
   poolsolve inventory
   poolsolve inventory --format json --node-id spark-node-03 -o spark-node-03.json
   poolsolve inventory --config examples/spark-fleet/config.json --model-root /srv/models --model-root weights
   poolsolve plan --config examples/spark-fleet/config.json --inventory spark-node-03=spark-node-03.json`

func inventoryCommand() *cli.Command {
	return &cli.Command{
		Name:        "inventory",
		Usage:       "print this machine's inventory (what a node reports to the planner)",
		Description: inventoryHelp,
		Flags: []cli.Flag{
			formatFlag(),
			&cli.StringSliceFlag{Name: "model-root", Usage: "also scan `DIR` for weights, on top of the Hugging Face cache (repeatable)", TakesFile: true},
			&cli.StringFlag{Name: "node-id", Usage: "this node's `ID` (default, as LLooM picks it: $LLOOM_NODE_ID, else the config's cluster.nodeId, else the host name)"},
			&cli.StringFlag{Name: "config", EnvVars: envVars("config"), Usage: "LLooM config.json (`FILE`): this node's id and its fabric links to the other nodes", TakesFile: true},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` (atomically) instead of stdout", TakesFile: true},
		},
		OnUsageError: usageError,
		Action:       runInventory,
	}
}

func runInventory(c *cli.Context) error {
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	opts, _, err := inventoryOptions(c)
	if err != nil {
		return err
	}
	// Each probe has its own timeout; this only bounds the whole.
	ctx, cancel := context.WithTimeout(c.Context, 2*time.Minute)
	defer cancel()
	inv, err := inventory.NewCollector(opts).Inventory(ctx)
	if err != nil {
		return errorf("inventory: %w", err)
	}
	// Image names and paths are the machine's own words; they leave
	// through the same redaction as every input.
	inv = lloom.Redact(inv)
	var buf bytes.Buffer
	if format == "json" {
		err = writeInventoryJSON(&buf, inv)
	} else {
		writeInventoryText(&buf, inv)
	}
	if err != nil {
		return errorf("render the inventory: %w", err)
	}
	if out := c.String("output"); out != "" {
		if err := fleet.WriteFileAtomic(out, buf.Bytes()); err != nil {
			return errorf("write %s: %w", out, err)
		}
		announceWrote(c, out, "inventory, "+format, buf.Len())
		return nil
	}
	if _, err := c.App.Writer.Write(buf.Bytes()); err != nil {
		return errorf("write the inventory: %w", err)
	}
	return nil
}

// inventoryOptions turns the flags shared by inventory and serve into
// collector options: node id, model roots, and fabric links from the
// config, which it returns too (nil without --config).
func inventoryOptions(c *cli.Context) (inventory.Options, *lloom.Config, error) {
	opts := inventory.Options{NodeID: c.String("node-id"), ModelRoots: c.StringSlice("model-root")}
	var cfg *lloom.Config
	if f := c.String("config"); f != "" {
		// Read and validated as validate --config reads it.
		in, err := fleet.Load(fleet.Sources{Config: f})
		if err != nil {
			return opts, nil, inputErr(err)
		}
		if err := reportProblems(c, in.Validate()); err != nil {
			return opts, nil, err
		}
		cfg = in.Config
	}
	if opts.NodeID == "" {
		opts.NodeID = cfg.LocalNodeID(os.Getenv)
	}
	if cfg != nil && opts.NodeID != "" {
		opts.Links, opts.FabricPeers = inventory.FabricFromCluster(&cfg.Cluster, opts.NodeID)
	}
	return opts, cfg, nil
}

func writeInventoryJSON(w io.Writer, inv *inventory.Inventory) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(inv)
}

func writeInventoryText(w io.Writer, inv *inventory.Inventory) {
	inv = printable.Copy(inv)
	fmt.Fprintf(w, "Node %s  (%s)\n", inv.NodeID, orDash(inv.PlatformID))
	if !inv.CollectedAt.IsZero() {
		fmt.Fprintf(w, "  collected     %s\n", inv.CollectedAt.UTC().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "  archs         %s\n", list(inv.ComputeArchs))
	fmt.Fprintf(w, "  accelerators  %s\n", list(inv.Accelerators))
	fmt.Fprintf(w, "  commands      %s\n", list(inv.Commands))
	fmt.Fprintf(w, "  images        %s\n", list(inv.DockerImages))

	section := func(name string, n int) bool {
		if n == 0 {
			fmt.Fprintf(w, "\n%s: none\n", name)
			return false
		}
		fmt.Fprintf(w, "\n%s (%d)\n", name, n)
		return true
	}
	if section("Memory domains", len(inv.MemoryDomains)) {
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		for _, d := range inv.MemoryDomains {
			avail := "available unknown"
			if d.AvailableGb != nil {
				avail = model.Gb(*d.AvailableGb) + " available"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\n", d.ID, d.Kind, model.Gb(d.CapacityGb), avail, list(d.DeviceIDs))
		}
		tw.Flush()
	}
	if section("Model roots", len(inv.ModelRoots)) {
		for _, r := range inv.ModelRoots {
			fmt.Fprintf(w, "  %s  %s free\n", r.Path, model.Gb(r.FreeGb))
		}
	}
	if section("Cached weights", len(inv.CachedWeights)) {
		for _, cw := range inv.CachedWeights {
			fmt.Fprintf(w, "  %s  %s", cw.Repo, model.Gb(cw.SizeGb))
			if cw.Root != "" {
				fmt.Fprintf(w, "  in %s", cw.Root)
			}
			fmt.Fprintln(w)
		}
	}
	if section("Fabric links", len(inv.Links)) {
		for _, l := range inv.Links {
			via := strings.TrimSpace(strings.Join([]string{l.LocalInterface, l.LocalAddress}, " "))
			fmt.Fprintf(w, "  -> %s  %s", l.PeerNodeID, orDash(via))
			if l.PeerAddress != "" {
				fmt.Fprintf(w, " -> %s", l.PeerAddress)
			}
			if l.Prefixlen > 0 {
				fmt.Fprintf(w, "/%d", l.Prefixlen)
			}
			fmt.Fprintln(w)
		}
	}
	if len(inv.Notes) > 0 {
		fmt.Fprintf(w, "\nNotes\n")
		for _, n := range inv.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
}
