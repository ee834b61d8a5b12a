package rollout_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/rollout"
)

// fleet is a random change set: a pool whose variants have one or two
// candidate placements, what runs now and what the plan runs, both valid
// by the evaluator (now against LLooM's budget, the plan against the plan
// budget).
type fleet struct {
	pool    *model.Pool
	now     []model.LaneChoice
	planned []model.LaneChoice
	manual  map[string]bool
	sources []rollout.Source
}

var residencies = []model.Residency{model.Always, model.Preferred, model.Auto}

func randomFleet(rng *rand.Rand) fleet {
	p := &model.Pool{Settings: model.DefaultSettings()}
	nn := 2 + rng.IntN(3)
	var nodes []string
	for i := range nn {
		id := fmt.Sprintf("n%d", i+1)
		nodes = append(nodes, id)
		admit := float64(50 + rng.IntN(6)*10)
		p.Nodes = append(p.Nodes, model.Node{ID: id, Domains: []model.Domain{{ID: "unified:0", Kind: "unified",
			Budget: model.Budget{AdmitGb: admit, HeadroomGb: 4, PlanGb: admit - 4}}}})
		for j := range i {
			p.Links = append(p.Links, model.Link{A: nodes[j], B: id})
		}
	}
	place := func(gb float64, ns ...string) model.Placement {
		pl := model.Placement{Nodes: ns}
		for _, n := range ns {
			pl.Draws = append(pl.Draws, model.Draw{Node: n, Domain: "unified:0", Gb: gb})
		}
		return pl
	}
	f := fleet{manual: map[string]bool{}}
	nv := 4 + rng.IntN(7)
	for i := range nv {
		id := fmt.Sprintf("v%d", i)
		gb := float64(5+rng.IntN(50)) + float64(rng.IntN(10))/10
		tp := rng.IntN(5) == 0
		var pls []model.Placement
		for range 1 + rng.IntN(2) {
			a := nodes[rng.IntN(nn)]
			if tp {
				b := nodes[rng.IntN(nn)]
				if a == b {
					continue
				}
				pls = append(pls, place(gb, min(a, b), max(a, b)))
			} else {
				pls = append(pls, place(gb, a))
			}
		}
		if len(pls) == 0 {
			pls = append(pls, place(gb, nodes[0]))
		}
		kind := model.Recipe
		if rng.IntN(6) == 0 {
			kind = model.Unmanaged
			f.manual[id] = true
			pls = pls[:1]
		}
		m := "m" + id
		p.Variants = append(p.Variants, model.Variant{ID: id, Kind: kind, Models: []string{m}, MemoryGb: gb,
			Placements: pls, LoadTimeMs: float64(1000 * (1 + rng.IntN(300)))})
		p.Models = append(p.Models, model.Model{ID: m, Variants: []string{id}})
	}
	p.Models = append(p.Models, model.Model{ID: "cloud", External: true})
	for i := range 2 + rng.IntN(4) {
		var members []string
		for _, m := range rng.Perm(nv)[:1+rng.IntN(3)] {
			members = append(members, fmt.Sprintf("mv%d", m))
		}
		if rng.IntN(4) == 0 {
			members = append(members, "cloud")
		}
		p.Aliases = append(p.Aliases, model.Alias{ID: fmt.Sprintf("a%d", i), Members: members, Demand: float64(1 + rng.IntN(1000))})
	}
	state := func(budget func(model.Budget) float64) []model.LaneChoice {
		for {
			var ls []model.LaneChoice
			for _, v := range p.Variants {
				if rng.IntN(2) == 0 {
					continue
				}
				res := residencies[rng.IntN(3)]
				if fixed, ok := v.FixedResidency(); ok {
					res = fixed
				}
				ls = append(ls, model.LaneChoice{Variant: v.ID, Nodes: v.Placements[rng.IntN(len(v.Placements))].Nodes, Residency: res})
			}
			if memoryViolations(p, budget, ls) == nil {
				return ls
			}
		}
	}
	f.now = state(func(b model.Budget) float64 { return b.AdmitGb })
	f.planned = state(func(b model.Budget) float64 { return b.PlanGb })
	f.pool = p
	for _, a := range p.Aliases {
		s := rollout.Source{Name: a.ID, Demand: a.Demand}
		s.Now, s.NowExternal, _ = firstServed(a.Members, f.now)
		s.Planned, s.PlannedExternal, s.PlannedVariant = firstServed(a.Members, f.planned)
		s.Reroute = s.Now != "" && s.Now != s.Planned
		f.sources = append(f.sources, s)
	}
	return f
}

// firstServed is the first member a state can serve.
func firstServed(members []string, ls []model.LaneChoice) (string, bool, string) {
	for _, m := range members {
		if m == "cloud" {
			return m, true, ""
		}
		for _, l := range ls {
			if "m"+l.Variant == m {
				return m, false, l.Variant
			}
		}
	}
	return "", false, ""
}

func (f fleet) lanes(ls []model.LaneChoice) []rollout.Lane {
	var out []rollout.Lane
	for _, l := range ls {
		v := f.variant(l.Variant)
		k := slices.IndexFunc(v.Placements, func(pl model.Placement) bool { return slices.Equal(pl.Nodes, l.Nodes) })
		out = append(out, rollout.Lane{Variant: v.ID, Nodes: l.Nodes, Residency: l.Residency, Draws: v.Placements[k].Draws,
			LoadMs: v.LoadTimeMs, Manual: f.manual[v.ID], Models: v.Models})
	}
	return out
}

func (f fleet) variant(id string) *model.Variant {
	return &f.pool.Variants[slices.IndexFunc(f.pool.Variants, func(v model.Variant) bool { return v.ID == id })]
}

func (f fleet) input(limit int) rollout.Input {
	in := rollout.Input{Budgets: map[[2]string]float64{}, Now: f.lanes(f.now), Planned: f.lanes(f.planned),
		Sources: f.sources, ExactLimit: limit}
	for _, n := range f.pool.Nodes {
		in.Budgets[[2]string{n.ID, "unified:0"}] = n.Domains[0].Budget.AdmitGb
	}
	return in
}

// memoryViolations asks the evaluator about a state in which a variant
// may run twice (a move, between its start and its stop): each running
// copy becomes a variant of its own, and each domain's plan budget is
// what budget says.
func memoryViolations(p *model.Pool, budget func(model.Budget) float64, ls []model.LaneChoice) []eval.Violation {
	q := *p
	q.Nodes = slices.Clone(p.Nodes)
	for i := range q.Nodes {
		q.Nodes[i].Domains = slices.Clone(q.Nodes[i].Domains)
		for j := range q.Nodes[i].Domains {
			b := &q.Nodes[i].Domains[j].Budget
			b.PlanGb = budget(*b)
		}
	}
	q.Variants = nil
	q.Pins, q.Current = nil, model.Current{}
	var a model.Assignment
	for _, l := range ls {
		i := slices.IndexFunc(p.Variants, func(v model.Variant) bool { return v.ID == l.Variant })
		v := p.Variants[i]
		copyID := v.ID + "@" + strings.Join(l.Nodes, "+")
		k := slices.IndexFunc(v.Placements, func(pl model.Placement) bool { return slices.Equal(pl.Nodes, l.Nodes) })
		v.ID, v.Placements = copyID, []model.Placement{v.Placements[k]}
		q.Variants = append(q.Variants, v)
		a.Lanes = append(a.Lanes, model.LaneChoice{Variant: copyID, Nodes: l.Nodes, Residency: l.Residency})
	}
	var out []eval.Violation
	for _, v := range eval.Check(&q, a).Violations {
		if v.Rule == eval.RuleMemory || v.Rule == eval.RuleMemoryAuto || v.Rule == eval.RuleDuplicateLane || v.Rule == eval.RulePlacement {
			out = append(out, v)
		}
	}
	return out
}

// apply runs one lane step on a state, as an operator would.
func apply(t *testing.T, ls []model.LaneChoice, s rollout.Step) []model.LaneChoice {
	at := slices.IndexFunc(ls, func(l model.LaneChoice) bool { return l.Variant == s.Subject && slices.Equal(l.Nodes, s.Nodes) })
	switch s.Action {
	case rollout.Start, rollout.ManualStart:
		if at >= 0 {
			t.Fatalf("step starts %s on %v, which runs", s.Subject, s.Nodes)
		}
		return append(slices.Clone(ls), model.LaneChoice{Variant: s.Subject, Nodes: s.Nodes, Residency: s.Residency})
	case rollout.Stop, rollout.ManualStop:
		if at < 0 {
			t.Fatalf("step stops %s on %v, which does not run", s.Subject, s.Nodes)
		}
		return slices.Delete(slices.Clone(ls), at, at+1)
	case rollout.Residency:
		if at < 0 || string(ls[at].Residency) != s.From {
			t.Fatalf("step changes %s on %v from %s, which does not run so", s.Subject, s.Nodes, s.From)
		}
		out := slices.Clone(ls)
		out[at].Residency = model.Residency(s.To)
		return out
	}
	return ls
}

func same(a, b []model.LaneChoice) bool {
	key := func(ls []model.LaneChoice) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.Variant+"@"+strings.Join(l.Nodes, "+")+":"+string(l.Residency))
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(key(a), key(b))
}

// served reports whether a state serves model m.
func served(ls []model.LaneChoice, m string) bool {
	return m == "cloud" || slices.ContainsFunc(ls, func(l model.LaneChoice) bool { return "m"+l.Variant == m })
}

// TestEveryRolloutOfRandomPlansKeepsEveryStateValidAndBeatsStoppingFirst
// replays each rollout on the state it starts from: the evaluator (not
// the rollout) checks every state after a step and the worst state of
// every wave (its starts done, none of its stops), coverage and the
// uncovered time are recounted from the steps alone, and the exact order
// is compared with the greedy one and with stopping everything first.
func TestEveryRolloutOfRandomPlansKeepsEveryStateValidAndBeatsStoppingFirst(t *testing.T) {
	admit := func(b model.Budget) float64 { return b.AdmitGb }
	rng := rand.New(rand.NewPCG(31, 7))
	exact := 0
	for n := range 300 {
		f := randomFleet(rng)
		for _, limit := range []int{0, -1} {
			in := f.input(limit)
			r := rollout.Plan(in)
			if r == nil {
				if !same(f.now, f.planned) {
					t.Fatalf("fleet %d: no rollout, but the plan differs from what runs", n)
				}
				continue
			}
			if limit == 0 && r.Status == "optimal" {
				exact++
			}
			state := f.now
			routedTo := map[string]string{}
			for _, s := range f.sources {
				routedTo[s.Name] = s.Now
			}
			counted := func(s rollout.Source) bool {
				return s.Now != "" && served(f.now, s.Now) && s.Planned != "" && served(f.planned, s.Planned)
			}
			var cost float64
			waveStart, worst := state, state
			for i, s := range r.Steps {
				for _, src := range f.sources {
					if counted(src) && !served(state, routedTo[src.Name]) {
						cost += src.Demand * s.WaitMs
					}
				}
				if i == 0 || s.Wave != r.Steps[i-1].Wave {
					if vs := memoryViolations(f.pool, admit, worst); vs != nil {
						t.Fatalf("fleet %d (limit %d): wave %d may break memory: %v\n%v", n, limit, r.Steps[i-1].Wave, vs, r.Steps)
					}
					waveStart, worst = state, state
					checkWaveCoverage(t, n, r.Steps, i, waveStart, routedTo, f.sources, counted)
				}
				if s.Action == rollout.Reroute {
					if s.To != "" && !served(state, s.To) {
						t.Fatalf("fleet %d: step %d re-routes %s to %s, which nothing serves yet", n, i+1, s.Subject, s.To)
					}
					routedTo[s.Subject] = s.To
					continue
				}
				state = apply(t, state, s)
				if s.Action == rollout.Start || s.Action == rollout.ManualStart ||
					s.Action == rollout.Residency && rank(model.Residency(s.To)) < rank(model.Residency(s.From)) {
					worst = apply(t, worst, s)
				}
				if vs := memoryViolations(f.pool, admit, state); vs != nil {
					t.Fatalf("fleet %d (limit %d): after step %d (%s %s) memory breaks: %v", n, limit, i+1, s.Action, s.Subject, vs)
				}
			}
			if vs := memoryViolations(f.pool, admit, worst); vs != nil {
				t.Fatalf("fleet %d (limit %d): the last wave may break memory: %v", n, limit, vs)
			}
			if !same(state, f.planned) {
				t.Fatalf("fleet %d: the rollout ends in %v, the plan is %v", n, state, f.planned)
			}
			for _, src := range f.sources {
				if routedTo[src.Name] != src.Planned && src.Now != "" {
					t.Fatalf("fleet %d: %s ends routed to %q, the plan says %q", n, src.Name, routedTo[src.Name], src.Planned)
				}
			}
			if math.Abs(cost-r.UncoveredDemandMs) > 1e-6*math.Max(1, cost) {
				t.Fatalf("fleet %d (limit %d): the steps leave %g demand-ms uncovered, the rollout says %g", n, limit, cost, r.UncoveredDemandMs)
			}
			if stopFirst := rollout.StopFirstCost(in); r.UncoveredDemandMs > stopFirst+1e-6 {
				t.Fatalf("fleet %d (limit %d): %g is worse than stopping everything first (%g)", n, limit, r.UncoveredDemandMs, stopFirst)
			}
			if ex, ok := rollout.ExactCost(in); ok && ex > rollout.GreedyCost(in)+1e-6 {
				t.Fatalf("fleet %d: the exact order costs %g, more than the greedy one (%g)", n, ex, rollout.GreedyCost(in))
			}
		}
	}
	if exact < 200 {
		t.Errorf("only %d of 300 rollouts were solved exactly", exact)
	}
}

// checkWaveCoverage checks that the wave beginning at step first, with
// its stops done before any of its starts, leaves no source covered at
// its start uncovered unless one of its steps says so.
func checkWaveCoverage(t *testing.T, n int, steps []rollout.Step, first int, state []model.LaneChoice,
	routedTo map[string]string, sources []rollout.Source, counted func(rollout.Source) bool) {
	t.Helper()
	declared := map[string]bool{}
	pess := state
	for k := first; k < len(steps) && steps[k].Wave == steps[first].Wave; k++ {
		if a := steps[k].Action; a == rollout.Stop || a == rollout.ManualStop {
			pess = apply(t, pess, steps[k])
		}
		for _, l := range steps[k].Losses {
			declared[l.Source] = true
		}
	}
	for _, src := range sources {
		if counted(src) && served(state, routedTo[src.Name]) && !served(pess, routedTo[src.Name]) && !declared[src.Name] {
			t.Fatalf("fleet %d: wave %d may leave %s uncovered and does not say so", n, steps[first].Wave, src.Name)
		}
	}
}

func rank(r model.Residency) int { return slices.Index(residencies, r) }
