package plan

import (
	"slices"
	"strings"

	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/rollout"
)

// Rollout is the order in which the changes can be made: numbered steps
// in waves, as package rollout computes them (docs/plan-json.md).
type Rollout struct {
	// Status is "optimal" when the exact model proved the order of least
	// uncovered time, "heuristic" otherwise.
	Status string `json:"status"`
	// Method is exact, greedy or stop-first.
	Method string `json:"method"`
	// Actions counts the lane actions ordered (re-routes follow them).
	Actions int `json:"actions"`
	// UncoveredDemandMs is the demand-weighted time aliases covered now
	// and in the plan spend uncovered (demand x ms) when the steps run
	// one after the other; StopFirstDemandMs is that of stopping
	// everything first, then starting.
	UncoveredDemandMs float64 `json:"uncoveredDemandMs"`
	StopFirstDemandMs float64 `json:"stopFirstDemandMs"`
	// DurationMs sums each wave's longest step.
	DurationMs Ms     `json:"durationMs"`
	Waves      int    `json:"waves"`
	Steps      []Step `json:"steps"`
}

// Step is one step of the rollout.
type Step struct {
	Step int `json:"step"` // from 1
	// Wave groups consecutive steps that may run in parallel.
	Wave int `json:"wave"`
	// Action: start, stop, residency, reroute, manual-start, manual-stop.
	Action  string `json:"action"`
	Subject string `json:"subject"` // variant, or source for a re-route
	// LaneKind is the variant's kind, for lane steps.
	LaneKind model.VariantKind `json:"laneKind,omitempty"`
	Nodes    []string          `json:"nodes,omitempty"`
	// Devices are the GPUs the plan chose for a started lane.
	Devices []string `json:"devices,omitempty"`
	// FromNodes are where a lane started elsewhere runs now (a move: its
	// stop is a later step).
	FromNodes []string        `json:"fromNodes,omitempty"`
	Residency model.Residency `json:"residency,omitempty"`
	// From and To are residencies (residency) or models (reroute; To
	// empty: the source becomes uncovered).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// WaitMs is how long the step lasts: a start's load time until the
	// lane is healthy.
	WaitMs Ms `json:"waitMs,omitempty"`
	// Losses are the sources the step leaves uncovered.
	Losses []Loss `json:"losses,omitempty"`
	// OverBudget names the domains ("node domain") the step takes over
	// LLooM's budget: set only when no order can avoid it.
	OverBudget []string `json:"overBudget,omitempty"`
}

// Loss is a source a step leaves uncovered, until a later step (0: the
// plan leaves it uncovered) and for how long.
type Loss struct {
	Source    string  `json:"source"`
	Demand    float64 `json:"demand"`
	UntilStep int     `json:"untilStep,omitempty"`
	ForMs     Ms      `json:"forMs,omitempty"`
}

// rollout orders the plan's changes from what runs now.
func (b *builder) rollout(changes []Change) *Rollout {
	if len(changes) == 0 {
		return nil
	}
	in := rollout.Input{Budgets: map[[2]string]float64{}}
	for _, n := range b.p.Nodes {
		for _, d := range n.Domains {
			in.Budgets[[2]string{n.ID, d.ID}] = d.Budget.AdmitGb
		}
	}
	for _, cl := range b.p.Current.Lanes {
		v := b.variant(cl.Variant)
		if v == nil || model.IsLaneUnknown(cl.Status) {
			continue
		}
		res := cl.Residency
		if !res.Valid() {
			res = model.Always // running with a residency we cannot read: it holds its memory
		}
		in.Now = append(in.Now, b.rolloutLane(v, sortedCopy(cl.Nodes), cl.Devices, res))
	}
	for _, id := range sortedKeys(b.lanes) {
		l := b.lanes[id]
		in.Planned = append(in.Planned, b.rolloutLane(l.v, l.nodes, l.devices, l.res))
	}
	rerouted := map[string]bool{}
	for _, c := range changes {
		if c.Kind == Reroute {
			rerouted[c.Subject] = true
		}
	}
	current := map[string]string{}
	for _, cr := range b.p.Current.Routes {
		if _, seen := current[cr.Alias]; !seen {
			current[cr.Alias] = cr.Primary
		}
	}
	for _, s := range b.sources() {
		src := rollout.Source{Name: s.name, Demand: finite(s.demand), Reroute: rerouted[s.name]}
		if s.alias != nil {
			src.Now = current[s.name]
		} else if m := b.model(strings.TrimPrefix(s.name, "model:")); m != nil && (m.External || b.runsNow(m)) {
			src.Now = m.ID
		}
		if m := b.model(src.Now); m != nil {
			src.NowExternal = m.External
		}
		if rc, ok := b.served[s.name]; ok && rc.Model != "" {
			src.Planned = rc.Model
			if m := b.model(rc.Model); m != nil && m.External {
				src.PlannedExternal = true
			} else if b.lanes[rc.Variant] != nil {
				src.PlannedVariant = rc.Variant
			}
		}
		in.Sources = append(in.Sources, src)
	}
	r := rollout.Plan(in)
	if r == nil {
		return nil
	}
	out := &Rollout{Status: r.Status, Method: r.Method, Actions: r.Actions,
		UncoveredDemandMs: roundTo(finite(r.UncoveredDemandMs), 1), StopFirstDemandMs: roundTo(finite(r.StopFirstDemandMs), 1),
		DurationMs: Ms(r.DurationMs), Waves: r.Waves, Steps: []Step{}}
	for i, s := range r.Steps {
		st := Step{Step: i + 1, Wave: s.Wave, Action: string(s.Action), Subject: s.Subject, LaneKind: s.LaneKind, Nodes: s.Nodes, Devices: s.Devices,
			FromNodes: s.FromNodes, Residency: s.Residency, From: s.From, To: s.To, WaitMs: Ms(s.WaitMs),
			OverBudget: s.OverBudget}
		for _, l := range s.Losses {
			st.Losses = append(st.Losses, Loss{Source: l.Source, Demand: l.Demand, UntilStep: l.UntilStep, ForMs: Ms(l.ForMs)})
		}
		out.Steps = append(out.Steps, st)
	}
	return out
}

// rolloutLane is variant v on nodes with residency r as the rollout
// counts it; a lane off its candidate placements draws its memory on
// each node's first domain.
func (b *builder) rolloutLane(v *model.Variant, nodes, devices []string, r model.Residency) rollout.Lane {
	l := rollout.Lane{Variant: v.ID, Nodes: nodes, Devices: devices, Residency: r, LoadMs: finite(v.LoadTimeMs), Manual: !v.Actionable(), Kind: v.Kind}
	if k := v.Placement(nodes, devices); k >= 0 {
		l.Draws = slices.Clone(v.Placements[k].Draws)
	} else {
		for _, n := range nodes {
			if i, ok := b.ix.Node[n]; ok && len(b.p.Nodes[i].Domains) > 0 {
				l.Draws = append(l.Draws, model.Draw{Node: n, Domain: b.p.Nodes[i].Domains[0].ID, Gb: v.MemoryGb})
			}
		}
	}
	for i := range b.p.Models {
		if m := &b.p.Models[i]; serves(v, m) {
			l.Models = append(l.Models, m.ID)
		}
	}
	return l
}

// runsNow reports whether a lane running now serves m.
func (b *builder) runsNow(m *model.Model) bool {
	for _, cl := range b.p.Current.Lanes {
		if v := b.variant(cl.Variant); v != nil && !model.IsLaneUnknown(cl.Status) && serves(v, m) {
			return true
		}
	}
	return false
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
