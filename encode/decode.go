package encode

import (
	"fmt"
	"slices"
	"sort"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/model"
)

// Decode reads the plan out of the solver's last SAT model. Call it right
// after a SAT answer, before any clause is added (adding a clause wipes
// the model). Every source gets a route; an uncovered
// one has an empty Model.
func (e *Encoding) Decode() model.Assignment {
	return e.decode(e.Value)
}

// DecodeWith reads the plan out of any model of the CNF, such as an
// external solver's, given as the value of each literal.
func (e *Encoding) DecodeWith(val func(z.Lit) bool) model.Assignment { return e.decode(val) }

func (e *Encoding) decode(val func(z.Lit) bool) model.Assignment {
	p := e.Pool
	a := model.Assignment{Lanes: []model.LaneChoice{}, Routes: []model.RouteChoice{}}
	for vi := range p.Variants {
		v := &p.Variants[vi]
		vl := &e.Variants[vi]
		for _, li := range vl.Lanes {
			l := &e.Lanes[li]
			if !val(l.Lit) {
				continue
			}
			lc := model.LaneChoice{Variant: v.ID, Nodes: slices.Clone(l.Nodes), Devices: slices.Clone(v.Placements[l.Placement].Devices), Residency: model.Always}
			if r, fixed := v.FixedResidency(); fixed {
				lc.Residency = r
			} else {
				for ri, rho := range model.Residencies {
					if val(vl.Res[ri]) {
						lc.Residency = rho
						break
					}
				}
			}
			a.Lanes = append(a.Lanes, lc)
			break
		}
	}
	sort.SliceStable(a.Lanes, func(i, j int) bool { return a.Lanes[i].Variant < a.Lanes[j].Variant })
	for _, s := range e.Sources {
		rc := model.RouteChoice{Source: s.ID}
		for _, r := range s.Routes {
			if val(r.Lit) {
				rc.Model = r.Model
				if r.Variant >= 0 {
					rc.Variant = p.Variants[r.Variant].ID
				}
				break
			}
		}
		a.Routes = append(a.Routes, rc)
	}
	return a
}

// Values maps a plan onto the encoding: the decisions it makes, and every
// derived literal at its intended value (memory terms, churn, violations,
// diagram nodes, totalizer outputs, AMO registers), with every assumption
// true and every open guard active. It fails when the plan names a lane or
// route the encoding does not have, such as an ineligible placement.
//
// A valid plan's values satisfy every logged clause whose guard is
// active, and the linear mirror's objectives then give the encoding's own
// view of the plan's objective (Objective).
func (e *Encoding) Values(a model.Assignment) ([]bool, error) {
	vals := make([]bool, e.NumVars())
	vals[e.T.Var()] = true
	for _, as := range e.Assumptions {
		e.setValue(vals, as.Lit, true)
	}
	for _, g := range e.Log.Guards {
		if !g.Retired && !g.Dead {
			e.setValue(vals, g.Lit, true)
		}
	}
	if err := e.laneValues(vals, a.Lanes); err != nil {
		return nil, err
	}
	if err := e.routeValues(vals, a.Routes); err != nil {
		return nil, err
	}
	e.derivedValues(vals)
	return vals, nil
}

// setValue gives m the value b in vals; constants, and variables past
// vals (allocated after it), are left alone.
func (e *Encoding) setValue(vals []bool, m z.Lit, b bool) {
	if int(m.Var()) < len(vals) && !e.isConst(m) {
		vals[m.Var()] = b == m.IsPos()
	}
}

// valueIn reads literals in vals; a variable past its end is false.
func valueIn(vals []bool) func(z.Lit) bool {
	return func(m z.Lit) bool {
		if int(m.Var()) >= len(vals) {
			return false
		}
		return vals[m.Var()] == m.IsPos()
	}
}

// laneValues sets each placed lane and its residency.
func (e *Encoding) laneValues(vals []bool, lanes []model.LaneChoice) error {
	for _, lc := range lanes {
		vi, ok := e.Index.Variant[lc.Variant]
		if !ok {
			return fmt.Errorf("encode: plan places unknown variant %q", lc.Variant)
		}
		vl := &e.Variants[vi]
		found := false
		for _, li := range vl.Lanes {
			l := &e.Lanes[li]
			if e.Pool.Variants[vi].Placements[l.Placement].On(lc.Nodes, lc.Devices) {
				e.setValue(vals, e.Lanes[li].Lit, true)
				found = true
			}
		}
		if !found {
			return fmt.Errorf("encode: plan places %s on %v, which is no eligible placement", lc.Variant, lc.Nodes)
		}
		ri := slices.Index(model.Residencies, lc.Residency)
		if ri < 0 || vl.Res[ri] == e.F() {
			return fmt.Errorf("encode: plan gives %s residency %q, which it cannot have", lc.Variant, lc.Residency)
		}
		e.setValue(vals, vl.Res[ri], true)
	}
	return nil
}

// routeValues sets each covered source's route.
func (e *Encoding) routeValues(vals []bool, routes []model.RouteChoice) error {
	for _, rc := range routes {
		if rc.Model == "" {
			continue
		}
		si, ok := e.sourceIx[rc.Source]
		if !ok {
			return fmt.Errorf("encode: plan routes unknown source %q", rc.Source)
		}
		found := false
		for _, r := range e.Sources[si].Routes {
			if r.Model != rc.Model {
				continue
			}
			if (r.Variant < 0 && rc.Variant == "") || (r.Variant >= 0 && e.Pool.Variants[r.Variant].ID == rc.Variant) {
				e.setValue(vals, r.Lit, true)
				found = true
			}
		}
		if !found {
			return fmt.Errorf("encode: plan routes %s to %s@%s, which is no route", rc.Source, rc.Model, rc.Variant)
		}
	}
	return nil
}

// derivedValues sets every derived literal from the decisions, in the
// order they may read each other: defined terms (memory, churn,
// violations) first, then AMO registers, totalizer outputs, diagram
// nodes and the symmetry chains.
func (e *Encoding) derivedValues(vals []bool) {
	val := valueIn(vals)
	for _, d := range e.defs {
		if int(d.v) < len(vals) {
			vals[d.v] = d.f(val)
		}
	}
	for _, l := range e.ladders {
		vals[l.s.Var()] = anyOf(l.group[:l.n])(val)
	}
	for _, t := range e.tots {
		for _, n := range t.nodes {
			c := 0
			for _, m := range t.Inputs[n.lo:n.hi] {
				if val(m) {
					c++
				}
			}
			for j, o := range n.out {
				vals[o.Var()] = c > j
			}
		}
	}
	mdds := slices.Clone(e.mdds)
	for _, d := range e.l4Live {
		mdds = append(mdds, d.m)
	}
	for _, m := range mdds {
		suffix := make([]int64, len(m.groups)+1)
		for i := len(m.groups) - 1; i >= 0; i-- {
			suffix[i] = suffix[i+1] + m.groups[i].cost(val)
		}
		for _, n := range m.nodes {
			vals[n.lit.Var()] = suffix[n.layer] <= n.lo
		}
	}
	for _, s := range e.sym {
		s.values(vals, val)
	}
}

// Objective is the encoding's own objective of a plan: the linear mirror's
// levels at Values(a). The solver compares it with the independent
// evaluator's; a difference is a bug in one of them.
func (e *Encoding) Objective(a model.Assignment) (model.Objective, error) {
	vals, err := e.Values(a)
	if err != nil {
		return model.Objective{}, err
	}
	var o model.Objective
	for i := range o {
		o[i] = e.Linear.Value(i, func(v z.Var) bool { return vals[v] })
	}
	return o, nil
}

// Lits returns the decision literals of a plan (lanes, residencies,
// routes, uncovered) as assumptions, for seeding phases and for LNS.
func (e *Encoding) Lits(a model.Assignment) ([]z.Lit, error) {
	vals, err := e.Values(a)
	if err != nil {
		return nil, err
	}
	var out []z.Lit
	lit := func(m z.Lit) {
		if e.isConst(m) {
			return
		}
		if vals[m.Var()] == m.IsPos() {
			out = append(out, m)
		} else {
			out = append(out, m.Not())
		}
	}
	for _, l := range e.Lanes {
		lit(l.Lit)
	}
	for _, vl := range e.Variants {
		for _, r := range vl.Res {
			lit(r)
		}
	}
	for _, s := range e.Sources {
		lit(s.U)
		for _, r := range s.Routes {
			lit(r.Lit)
		}
	}
	return out, nil
}

// Unsatisfied lists the logged clauses that vals break, skipping clauses
// of retired or inactive guards. Tests use it to check that the intended
// values of a valid plan satisfy the whole encoding.
func (e *Encoding) Unsatisfied(vals []bool) []Clause {
	var out []Clause
	for i := 0; i < e.Log.Len(); i++ {
		c := e.Log.Clause(i)
		if c.Guard >= 0 {
			g := e.Log.Guards[c.Guard]
			if g.Retired || g.Dead {
				continue
			}
		}
		ok := false
		for _, m := range c.Lits {
			if int(m.Var()) < len(vals) && vals[m.Var()] == m.IsPos() {
				ok = true
				break
			}
		}
		if !ok {
			out = append(out, c)
		}
	}
	return out
}
