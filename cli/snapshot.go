package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/gateway"
	"github.com/poolsolve/poolsolve/lloom"
)

const snapshotHelp = `Captures a live fleet as one fleet bundle (docs/fleet-bundle.md), for offline
replay and bug reports: the config and every local file given, each node's
status (with its inventory, or the machine profile an older gateway falls
back to) and the gateway's metrics. 'poolsolve plan --fleet FILE' on the
snapshot plans what 'poolsolve plan --gateway URL' planned.

Every secret is removed, by the same pass every output goes through: values
under secret-looking keys, the values of secret flags in commands and
argument lists, environment values other than the few poolsolve reads,
credentials in image references and every URL become "[redacted]"; ${ENV}
placeholders and apiKeyEnv names stay. The key itself is only ever sent as a bearer header. The
file is written atomically: readers see the old file or the new one.

A node the gateway cannot reach is kept as {"reachable": false, "error": ...},
so the replay plans it as unreachable too. docs/gateway.md says what is
fetched, with which timeouts and fallbacks.

Exit codes:
   0  the snapshot was written
   2  bad flags or input files, a bad gateway URL, or a key the gateway refuses
   4  the gateway answered nothing usable, or the file could not be written

Examples:
   poolsolve snapshot --gateway http://127.0.0.1:8100 --config examples/spark-fleet/config.json -o fleet.json
   LLOOM_CLUSTER_KEY=... poolsolve snapshot --gateway http://127.0.0.1:8100 --config examples/spark-fleet/config.json --api-key-env LLOOM_CLUSTER_KEY --policy examples/spark-fleet/pool.toml -o fleet.json
   poolsolve plan --fleet fleet.json`

func snapshotCommand() *cli.Command {
	return &cli.Command{
		Name:        "snapshot",
		Usage:       "capture a live fleet as a fleet bundle, with every secret removed",
		Description: snapshotHelp,
		Flags: append(liveInputFlags(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the bundle to `FILE` (atomically) instead of stdout", TakesFile: true},
		),
		OnUsageError: usageError,
		Action:       runSnapshot,
	}
}

// liveInputFlags are the input flags that go with --gateway: the local
// files a gateway does not serve.
func liveInputFlags() []cli.Flag {
	var out []cli.Flag
	for _, f := range inputFlags() {
		if !slices.Contains(liveReplaces, f.Names()[0]) {
			out = append(out, f)
		}
	}
	return out
}

func runSnapshot(c *cli.Context) error {
	if c.String("gateway") == "" {
		return badInput("snapshot reads a live fleet: give --gateway URL and --config FILE")
	}
	in, err := loadInputs(c)
	if err != nil {
		return err
	}
	fl := liveFleet(c)
	in.Description = snapshotDescription(fl)
	// A replay has no gateway to recognise: the bundle keeps its release.
	if rt, err := lloomRouting(c, in); err != nil {
		return err
	} else if r, perr := lloom.ParseRelease(rt.Release); rt.Known && perr == nil {
		in.LLooMRelease = r.String()
	}
	// Written as it is made: a busy gateway's metrics are tens of
	// megabytes, and the bundle is not held whole. Nothing is written when
	// it cannot be made; a failure leaves the file as it was.
	out := c.String("output")
	if out == "" {
		bw := bufio.NewWriterSize(c.App.Writer, 256<<10)
		err := in.WriteBundle(bw, true)
		if err == nil {
			err = bw.Flush()
		}
		if err != nil {
			return errorf("write the snapshot: %w", err)
		}
		return nil
	}
	var werr error
	err = fleet.WriteFileAtomicWith(out, func(w io.Writer) error {
		return in.WriteBundle(writeErrors{w, &werr}, true)
	})
	switch {
	case err != nil && werr == nil && !isFileError(err):
		return errorf("write the snapshot: %w", err)
	case err != nil:
		return errorf("write %s: %w", out, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "poolsolve: wrote %s: %s\n", out, snapshotSummary(fl))
	return nil
}

// snapshotDescription says where the snapshot came from and what the live
// run noted, since a replay cannot know: fallbacks and unreachable nodes.
// It names no URL; the gateway's address stays with the operator.
func snapshotDescription(fl *gateway.Fleet) string {
	var b strings.Builder
	b.WriteString("Snapshot of a live LLooM fleet taken by poolsolve snapshot (" + fl.Mode + " route); secrets and backend URLs removed.")
	if fb := fl.Fallbacks(); len(fb) > 0 {
		b.WriteString(" Nodes planned from a fallback: " + strings.Join(fb, "; ") + ".")
	}
	if un := fl.Unreachable(); len(un) > 0 {
		var parts []string
		for _, id := range sortedIDs(un) {
			parts = append(parts, id+" ("+un[id]+")")
		}
		b.WriteString(" Unreachable: " + strings.Join(parts, "; ") + ".")
	}
	if from := fl.MetricsFrom(); len(from) == 0 {
		b.WriteString(" No metrics: demand is zero.")
	} else {
		b.WriteString(" Metrics of " + strings.Join(from, ", ") + ".")
	}
	return b.String()
}

// writeErrors passes writes on to w and keeps the first error in err, to
// tell a failed write from a bundle that cannot be made.
type writeErrors struct {
	w   io.Writer
	err *error
}

func (we writeErrors) Write(p []byte) (int, error) {
	n, err := we.w.Write(p)
	if err != nil && *we.err == nil {
		*we.err = err
	}
	return n, err
}

// isFileError reports an error of the file system (creating, syncing or
// renaming the file) rather than of the bundle.
func isFileError(err error) bool {
	var pe *fs.PathError
	var le *os.LinkError
	return errors.As(err, &pe) || errors.As(err, &le)
}

func snapshotSummary(fl *gateway.Fleet) string {
	s := fmt.Sprintf("%d node(s)", len(fl.Nodes))
	if n := len(fl.Unreachable()); n > 0 {
		s += fmt.Sprintf(", %d unreachable", n)
	}
	if n := len(fl.Fallbacks()); n > 0 {
		s += fmt.Sprintf(", %d planned from a fallback", n)
	}
	if from := fl.MetricsFrom(); len(from) > 0 {
		s += fmt.Sprintf(", metrics of %d", len(from))
	} else {
		s += ", no metrics"
	}
	return s
}

func sortedIDs(m map[string]string) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}
