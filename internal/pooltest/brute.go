package pooltest

import (
	"fmt"
	"math"
	"slices"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
)

// BruteForceLimit bounds the assignments BruteForce will enumerate.
const BruteForceLimit = 1 << 20

// Combinations is the number of assignments BruteForce enumerates for p
// (saturating at math.MaxUint64): per variant none or any candidate
// placement with any residency, times per demand source uncovered or any
// candidate model through any variant that serves it.
func Combinations(p *model.Pool) uint64 {
	lanes, routes := choices(p)
	n := uint64(1)
	for _, c := range lanes {
		n = mulSat(n, uint64(len(c)))
	}
	for _, c := range routes {
		n = mulSat(n, uint64(len(c)))
	}
	return n
}

func mulSat(a, b uint64) uint64 {
	if b != 0 && a > math.MaxUint64/b {
		return math.MaxUint64
	}
	return a * b
}

// BruteForce enumerates every assignment of p, checks each with
// eval.Check, and returns the lexicographically least objective among the
// valid ones with the first assignment (in enumeration order) that reaches
// it; feasible is false when no assignment is valid. It is the reference
// the solvers are tested against, so it trusts nothing but the evaluator.
// It panics when Combinations(p) exceeds BruteForceLimit: check first.
func BruteForce(p *model.Pool) (best model.Objective, plan model.Assignment, feasible bool) {
	if n := Combinations(p); n > BruteForceLimit {
		panic(fmt.Sprintf("pooltest: BruteForce of %d assignments (limit %d)", n, BruteForceLimit))
	}
	lanes, routes := choices(p)
	c := eval.NewChecker(p)
	li := make([]int, len(lanes))
	for {
		a := model.Assignment{}
		for v, i := range li {
			if lc := lanes[v][i]; lc != nil {
				a.Lanes = append(a.Lanes, *lc)
			}
		}
		// A lane combination that breaks a lane rule stays broken
		// whatever the routes; skip them all.
		if r := c.Check(a); !slices.ContainsFunc(r.Violations, func(v eval.Violation) bool {
			return slices.Contains(eval.LaneRules, v.Rule)
		}) {
			ri := make([]int, len(routes))
			for {
				a.Routes = a.Routes[:0]
				for s, i := range ri {
					a.Routes = append(a.Routes, routes[s][i])
				}
				if r := c.Check(a); r.Valid && (!feasible || r.Objective.Less(best)) {
					best, feasible = r.Objective, true
					plan = model.Assignment{Lanes: slices.Clone(a.Lanes), Routes: slices.Clone(a.Routes)}
				}
				if !odometer(ri, routes) {
					break
				}
			}
		}
		if !odometer(li, lanes) {
			break
		}
	}
	return best, plan, feasible
}

// odometer advances idx to the next combination; false after the last.
func odometer[T any](idx []int, options [][]T) bool {
	for i := range idx {
		idx[i]++
		if idx[i] < len(options[i]) {
			return true
		}
		idx[i] = 0
	}
	return false
}

// choices lists the options BruteForce tries: per variant (nil = none),
// per demand source (sorted by name; Model "" = uncovered).
func choices(p *model.Pool) ([][]*model.LaneChoice, [][]model.RouteChoice) {
	var lanes [][]*model.LaneChoice
	for _, v := range p.Variants {
		opts := []*model.LaneChoice{nil}
		for _, pl := range v.Placements {
			for _, r := range model.Residencies {
				opts = append(opts, &model.LaneChoice{Variant: v.ID, Nodes: pl.Nodes, Devices: pl.Devices, Residency: r})
			}
		}
		lanes = append(lanes, opts)
	}
	models := map[string]*model.Model{}
	for i := range p.Models {
		models[p.Models[i].ID] = &p.Models[i]
	}
	source := func(name string, cands []string) []model.RouteChoice {
		opts := []model.RouteChoice{{Source: name}}
		for _, m := range cands {
			mm, ok := models[m]
			switch {
			case !ok:
			case mm.External:
				opts = append(opts, model.RouteChoice{Source: name, Model: m})
			default:
				for _, v := range p.Variants {
					if slices.Contains(v.Models, m) || slices.Contains(mm.Variants, v.ID) {
						opts = append(opts, model.RouteChoice{Source: name, Model: m, Variant: v.ID})
					}
				}
			}
		}
		return opts
	}
	var routes [][]model.RouteChoice
	for i := range p.Aliases {
		routes = append(routes, source(p.Aliases[i].ID, p.Aliases[i].Candidates()))
	}
	for _, m := range p.Models {
		if m.IsDemandSource() {
			routes = append(routes, source(model.DirectSource(m.ID), []string{m.ID}))
		}
	}
	slices.SortStableFunc(routes, func(a, b []model.RouteChoice) int {
		switch {
		case a[0].Source < b[0].Source:
			return -1
		case a[0].Source > b[0].Source:
			return 1
		}
		return 0
	})
	return lanes, routes
}
