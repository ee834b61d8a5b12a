package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/internal/printable"
	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
)

func catalogCommand() *cli.Command {
	return &cli.Command{
		Name:  "catalog",
		Usage: "print the pool as the planner will see it",
		Description: `Prints nodes with their memory domains, admission budgets, archs and links;
variants with requirements, memory (and its source: estimate or measured RSS)
and performance (and its source: metrics, a benchmark, or the default);
aliases with their members, route profiles and demand; pins; what runs now.

Exit codes:
   0  the pool was printed
   2  bad flags or input files
   4  any other failure

Examples:
   poolsolve catalog --fleet examples/spark-fleet.json
   poolsolve catalog --config examples/spark-fleet/config.json --metrics examples/spark-fleet/metrics.json --format json
   poolsolve catalog --fleet examples/spark-fleet.json --consider-installs --cordon spark-node-02`,
		Flags:        append(append(inputFlags(), poolFlags()...), formatFlag()),
		OnUsageError: usageError,
		Action: func(c *cli.Context) error {
			if err := checkFormat(c.String("format")); err != nil {
				return err
			}
			_, cat, err := buildCatalog(c, nil)
			if err != nil {
				return err
			}
			if c.String("format") == "json" {
				return writeCatalogJSON(c.App.Writer, cat)
			}
			writeCatalogText(c.App.Writer, cat)
			return nil
		},
	}
}

func writeCatalogJSON(w io.Writer, cat *catalog.Catalog) error {
	doc := struct {
		Schema string      `json:"schema"`
		Pool   *model.Pool `json:"pool"`
		Notes  []string    `json:"notes"`
	}{"poolsolve.catalog/v1", cat.Pool, cat.Notes}
	if doc.Notes == nil {
		doc.Notes = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}

func writeCatalogText(w io.Writer, cat *catalog.Catalog) {
	cat = printable.Copy(cat) // ids and notes come from the inputs
	p := cat.Pool
	fmt.Fprintf(w, "Nodes (%d)\n", len(p.Nodes))
	for _, n := range p.Nodes {
		state := ""
		if n.Unavailable != "" {
			state = "  " + plan.UnavailableText(n.Unavailable)
		}
		fmt.Fprintf(w, "  %s%s\n", n.ID, state)
		fmt.Fprintf(w, "      platform %s, archs %s, accelerators %s (from %s)\n", orDash(n.Platform), list(n.Archs), list(n.Accelerators), orDash(n.Source))
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		for _, d := range n.Domains {
			fmt.Fprintf(tw, "      %s\t%s\tadmits %s (%s)\tplan %s after %s headroom\n", d.ID, d.Kind, model.Gb(d.Budget.AdmitGb), d.Budget.Rule, model.Gb(d.Budget.PlanGb), model.Gb(d.Budget.HeadroomGb))
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\nLinks (%d)\n", len(p.Links))
	for _, l := range p.Links {
		fmt.Fprintf(w, "  %s <-> %s  (%s)\n", l.A, l.B, l.Source)
	}
	fmt.Fprintf(w, "\nVariants (%d)\n", len(p.Variants))
	for _, v := range p.Variants {
		fmt.Fprintf(w, "  %s  [%s]  serves %s\n", v.ID, v.Kind, servesText(v))
		r := v.Req
		fmt.Fprintf(w, "      needs    %d node(s), TP %d, archs %s, platforms %s, accelerators %s, backend %s, context %d, sequences %d\n",
			r.NodeCount, r.TensorParallel, list(r.ComputeArchs), list(r.Platforms), list(r.Accelerators), orDash(r.Backend), r.ContextWindow, r.MaxSequences)
		fmt.Fprintf(w, "      memory   %s per node (%s); load %.0f s; residency now %s\n", model.Gb(v.MemoryGb), v.MemorySource, v.LoadTimeMs/1000, v.DefaultResidency)
		fmt.Fprintf(w, "      perf     first token %.0f ms", v.Perf.FirstTokenMs)
		if v.Perf.DecodeTokPerSec > 0 {
			fmt.Fprintf(w, ", decode %.1f tok/s", v.Perf.DecodeTokPerSec)
		}
		fmt.Fprintf(w, " (%s)\n", v.Perf.Source)
		places := make([]string, 0, len(v.Placements))
		for _, pl := range v.Placements {
			places = append(places, pl.Key())
		}
		if len(places) > 8 {
			places = append(places[:8], fmt.Sprintf("... %d more", len(v.Placements)-8))
		}
		fmt.Fprintf(w, "      places   %s\n", strings.Join(places, " | "))
	}
	fmt.Fprintf(w, "\nModels (%d)\n", len(p.Models))
	for _, m := range p.Models {
		what := "lanes " + list(m.Variants)
		if m.External {
			what = fmt.Sprintf("external, first token %.0f ms (%s)", m.Perf.FirstTokenMs, m.Perf.Source)
		}
		extra := ""
		if m.DirectDemand > 0 {
			extra += fmt.Sprintf(", %g direct requests", m.DirectDemand)
		}
		if m.Required {
			extra += ", required"
		}
		fmt.Fprintf(w, "  %s  [%s]  %s%s\n", m.ID, m.Kind, what, extra)
	}
	fmt.Fprintf(w, "\nAliases (%d)\n", len(p.Aliases))
	for _, a := range p.Aliases {
		demand := fmt.Sprintf("%g requests", a.Demand)
		if a.DemandSource != "" {
			demand += " (" + a.DemandSource + ")"
		}
		fmt.Fprintf(w, "  %s  members %s  demand %s", a.ID, list(a.Members), demand)
		if a.SLO != nil {
			fmt.Fprintf(w, "  SLO%s", sloText(a.SLO))
		}
		fmt.Fprintln(w)
		for _, r := range a.Routes {
			active := ""
			if r.Name == a.ActiveRoute {
				active = " (active)"
			}
			fmt.Fprintf(w, "      route %s%s: %s\n", r.Name, active, list(r.Members))
		}
	}
	if len(p.Pins) > 0 {
		fmt.Fprintf(w, "\nPins (%d)\n", len(p.Pins))
		for _, pin := range p.Pins {
			fmt.Fprintf(w, "  %s  [%s]\n", pin.Label, pin.Source)
		}
	}
	fmt.Fprintf(w, "\nRunning now\n")
	for _, l := range p.Current.Lanes {
		status := ""
		if l.Status != "" {
			status = " (" + l.Status + ")"
		}
		fmt.Fprintf(w, "  %s on %s, %s%s\n", l.Variant, strings.Join(l.Nodes, "+"), l.Residency, status)
	}
	for _, r := range p.Current.Routes {
		fmt.Fprintf(w, "  %s -> %s\n", r.Alias, orDash(r.Primary))
	}
	if len(p.Current.NotRunning) > 0 {
		fmt.Fprintf(w, "\nNot running now\n")
		for _, l := range p.Current.NotRunning {
			fmt.Fprintf(w, "  %s on %s (%s)\n", l.Variant, strings.Join(l.Nodes, "+"), l.Status)
		}
	}
	if len(cat.Notes) > 0 {
		fmt.Fprintf(w, "\nNotes\n")
		for _, n := range cat.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
}

// servesText lists a lane's models; a federated name of the lane says
// whose gateway it goes through.
func servesText(v model.Variant) string {
	names := make([]string, len(v.Models))
	for i, m := range v.Models {
		names[i] = m
		if via, ok := v.Forwarded[m]; ok {
			names[i] += " (federated, through " + via + "'s gateway)"
		}
	}
	return strings.Join(names, ", ")
}

func sloText(s *model.SLO) string {
	out := ""
	if s.FirstTokenMs > 0 {
		out += fmt.Sprintf(" first token <= %.0f ms", s.FirstTokenMs)
	}
	if s.TotalMs > 0 {
		out += fmt.Sprintf(" total <= %.0f ms", s.TotalMs)
	}
	return out
}

func list(ss []string) string {
	if len(ss) == 0 {
		return "-"
	}
	return strings.Join(ss, ",")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func validateCommand() *cli.Command {
	return &cli.Command{
		Name:  "validate",
		Usage: "report every problem in the inputs at once",
		Description: `Reads every input, checks each against LLooM's rules and poolsolve's, and
reports all problems together, each with its file, JSON path or TOML key,
and what was expected. A file it cannot read (missing, not well-formed JSON
or TOML, a value of the wrong type, an unknown pool.toml key) stops the
reading there, with that one error: what it holds cannot be checked.

It also refuses a pin that no placement can hold, where plan would find no
plan (exit 3), and a file of another kind (a bundle as --config, a plan as
--fleet), naming the flag that takes it. A config key one edit from one
LLooM reads ("cluser", "memoryGB") is a warning: LLooM ignores it.

Exit codes:
   0  the inputs are sound
   2  bad flags, or problems in the inputs (each printed on stderr)
   4  any other failure

Examples:
   poolsolve validate --fleet examples/spark-fleet.json
   poolsolve validate --config examples/spark-fleet/config.json --policy examples/spark-fleet/pool.toml --profiles examples/spark-fleet/profiles/`,
		Flags:        append(inputFlags(), poolFlags()...),
		OnUsageError: usageError,
		Action: func(c *cli.Context) error {
			// The same path as every other command: loading validates,
			// building the pool checks pins, cordons and the profile.
			_, cat, err := buildCatalog(c, nil)
			if err != nil {
				return err
			}
			// A pin no placement can hold leaves plan no plan (exit 3);
			// the same eligibility rules say so without a search.
			if ps := model.PinProblems(cat.Pool); len(ps) > 0 {
				for _, p := range ps {
					fmt.Fprintf(c.App.ErrWriter, "poolsolve: %s\n", p)
				}
				return badInput("%d pin(s) that no placement can hold: plan would find no plan", len(ps))
			}
			fmt.Fprintln(c.App.Writer, "inputs are valid")
			return nil
		},
	}
}

func asProblems(err error, ps *lloom.Problems) bool {
	switch e := err.(type) {
	case lloom.Problems:
		*ps = e
		return true
	case *lloom.InputError:
		*ps = lloom.Problems{e}
		return true
	}
	return false
}
