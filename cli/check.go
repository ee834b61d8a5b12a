package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/printable"
	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

const checkHelp = `Verifies a plan against every hard constraint of the pool and recomputes its
objective vector, with the independent evaluator (package eval), which shares
no code with the encoder or the solvers. The plan is a poolsolve.plan/v1
document (docs/plan-json.md), as written by 'poolsolve plan --format json' or
by hand: "schema", "nodes" with their "lanes" ("variant", "residency", "with"),
and "routes" ("source", "model", "variant") are read; other fields are ignored.

Each broken constraint is printed in operator terms. When the plan states an
objective, it must match the recomputed one.

Exit codes:
   0  the plan is valid (and its stated objective, if any, is right)
   1  the plan is invalid: a hard constraint is broken, or its stated
      objective is wrong
   2  bad flags or input files: a plan that is not valid JSON or is cut
      short, another schema, or names (nodes, variants, models, aliases)
      the pool does not have, i.e. a plan for another fleet
   4  any other failure

Examples:
   poolsolve plan --fleet examples/spark-fleet.json --format json -o plan.json
   poolsolve check --fleet examples/spark-fleet.json --plan plan.json
   poolsolve check --fleet examples/spark-fleet.json --cordon spark-node-02 --plan plan.json --format json`

func checkCommand() *cli.Command {
	return &cli.Command{
		Name:        "check",
		Usage:       "verify a plan against the hard constraints and recompute its objective, independently of the solver",
		Description: checkHelp,
		Flags: append(append(inputFlags(), poolFlags()...),
			&cli.StringFlag{Name: "plan", Usage: "the plan to check (`FILE`, poolsolve.plan/v1 JSON; required)", TakesFile: true},
			formatFlag(),
		),
		OnUsageError: usageError,
		Action:       runCheck,
	}
}

// exitInvalid is check's code for a plan that breaks a hard constraint.
const exitInvalid = 1

// checkResult is check's JSON output.
type checkResult struct {
	Plan       string           `json:"plan"`
	Valid      bool             `json:"valid"`
	Violations []eval.Violation `json:"violations"`
	Objective  model.Objective  `json:"objective"`
	Stated     *model.Objective `json:"stated,omitempty"`
	Uncovered  []string         `json:"uncovered,omitempty"`
	External   []string         `json:"externalFirst,omitempty"`
	SLOBroken  []string         `json:"sloBroken,omitempty"`
	Terms      []eval.Term      `json:"terms,omitempty"`
	Notes      []string         `json:"notes,omitempty"`
}

func runCheck(c *cli.Context) error {
	format := c.String("format")
	if err := checkFormat(format); err != nil {
		return err
	}
	if err := applyInputLimit(c); err != nil {
		return err
	}
	file := c.String("plan")
	if file == "" {
		return badInput("--plan FILE is required: the plan to check")
	}
	data, err := lloom.ReadInput(file)
	if err != nil {
		return inputErr(fmt.Errorf("--plan: %w", err))
	}
	doc, err := eval.ReadPlan(file, data)
	if err != nil {
		return inputErr(err)
	}
	_, cat, err := buildCatalog(c, nil)
	if err != nil {
		return err
	}
	if err := doc.Resolve(cat.Pool); err != nil {
		return inputErr(err)
	}
	rep := eval.Check(cat.Pool, doc.Assignment)
	res := checkResult{Plan: file, Valid: rep.Valid, Violations: rep.Violations, Objective: rep.Objective, Stated: doc.Objective,
		Uncovered: rep.Uncovered, External: rep.ExternalFirst, SLOBroken: rep.SLOBroken, Terms: rep.Terms}
	if res.Violations == nil {
		res.Violations = []eval.Violation{}
	}
	if rt := cat.Pool.Routing; rt != nil && doc.Reading != "" && doc.Reading != rt.Reading {
		res.Notes = append(res.Notes, fmt.Sprintf("the plan was made with the %s reading of aliases; it is checked with the %s reading of LLooM %s (%s)", doc.Reading, rt.Reading, rt.Release, rt.Basis))
	}
	if doc.Infeasible {
		res.Notes = append(res.Notes, "the plan says the pool is infeasible; check judges its (empty) decisions, and cannot prove infeasibility itself")
	}
	claimWrong := rep.Valid && doc.Objective != nil && *doc.Objective != rep.Objective
	if claimWrong {
		res.Valid = false
		res.Notes = append(res.Notes, fmt.Sprintf("the plan states objective %v, but it scores %v", *doc.Objective, rep.Objective))
	}
	if format == "json" {
		enc := json.NewEncoder(c.App.Writer)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(res); err != nil {
			return errorf("write: %w", err)
		}
	} else {
		writeCheckText(c.App.Writer, res)
	}
	if !res.Valid {
		return &exitError{exitInvalid, errSilent}
	}
	return nil
}

func writeCheckText(w io.Writer, r checkResult) {
	r = printable.Copy(r)
	switch {
	case len(r.Violations) > 0:
		fmt.Fprintf(w, "%s: INVALID, %d hard constraint(s) broken\n", r.Plan, len(r.Violations))
		for _, v := range r.Violations {
			fmt.Fprintf(w, "  %-15s %s: %s\n", v.Rule, v.Subject, v.Message)
		}
	case !r.Valid:
		fmt.Fprintf(w, "%s: INVALID, its stated objective is wrong\n", r.Plan)
	default:
		fmt.Fprintf(w, "%s: valid, every hard constraint holds\n", r.Plan)
	}
	what := "objective"
	if len(r.Violations) > 0 {
		what = "objective (computed anyway; it means little for an invalid plan)"
	}
	fmt.Fprintf(w, "%s %v\n", what, r.Objective)
	lists := [3][]string{r.Uncovered, r.External, r.SLOBroken}
	for i, name := range model.LevelNames {
		detail := ""
		if i < 3 && len(lists[i]) > 0 {
			detail = "  " + strings.Join(lists[i], ", ")
		}
		fmt.Fprintf(w, "  level %d %-18s %6d%s\n", i+1, name, r.Objective[i], detail)
	}
	for _, t := range r.Terms {
		fmt.Fprintf(w, "      %6d  %-9s %s: %s\n", t.Units, t.Kind, t.Subject, t.Detail)
	}
	if r.Stated != nil && *r.Stated == r.Objective {
		fmt.Fprintf(w, "the plan states the same objective\n")
	}
	for _, n := range r.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
}
