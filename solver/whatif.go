package solver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/localsearch"
	"github.com/poolsolve/poolsolve/solver/mip"
)

// What-if questions share one encoding of the pool. A scenario is a set
// of assumption literals on it: a node taken away is every lane that uses
// it held off, a link taken away every lane that spans it, a forced lane
// or route its literal held on. Nothing is added to the solver but the
// level bounds (totalizer outputs and level-4 diagrams, reused by every
// scenario), so a scenario costs a few gini calls under assumptions.
//
// Each scenario is re-planned level by level like Solve, but with each
// level's bound assumed rather than frozen: model-improving linear search
// from a warm start (the base plan without what the scenario takes away,
// repaired by local search), a level proved by an UNSAT answer one below
// its value. Level 4 uses the exact diagram up to l4MaxNodes and is
// otherwise left bounded by the group bound; no LP or PB worker runs.
//
// Levels are counted as package eval counts them on the pool the scenario
// leaves (its nodes marked unavailable, its links gone). The encoding was
// built for the whole pool, where level 2 also counts an alias served
// from the cloud whose local lanes the scenario took away; such an alias
// is cloud-served in every plan at the level-1 optimum, so the two counts
// differ by a constant there, and a proved bound carries over.

// Scenario is a change to the pool to re-plan under.
type Scenario struct {
	// Nodes and Links are taken away: no lane may use the node, or span
	// both ends of the link.
	Nodes []string     `json:"nodes,omitempty"`
	Links []model.Link `json:"links,omitempty"`
	// Lanes must run (any residency when Residency is empty) and Routes
	// must hold (Variant empty for an external model).
	Lanes  []model.LaneChoice  `json:"lanes,omitempty"`
	Routes []model.RouteChoice `json:"routes,omitempty"`
	// Off are lanes that must not run: the variant on any placement
	// that uses one of Nodes (on any placement when Nodes is empty).
	Off []model.LaneChoice `json:"off,omitempty"`
}

// holdsOff reports whether the scenario keeps variant off a placement on
// nodes.
func (s Scenario) holdsOff(variant string, nodes []string) bool {
	return slices.ContainsFunc(s.Off, func(o model.LaneChoice) bool {
		return o.Variant == variant && (len(o.Nodes) == 0 || slices.ContainsFunc(o.Nodes, func(n string) bool { return slices.Contains(nodes, n) }))
	})
}

// Name is the scenario in words: "spark-node-03 down", "spark-node-01<->
// spark-node-02 link down", "a, b down".
func (s Scenario) Name() string {
	var parts []string
	if len(s.Nodes) > 0 {
		parts = append(parts, strings.Join(s.Nodes, ", ")+" down")
	}
	for _, l := range s.Links {
		parts = append(parts, l.A+"<->"+l.B+" link down")
	}
	for _, l := range s.Lanes {
		t := l.Variant + " on " + strings.Join(l.Nodes, "+")
		if l.Residency != "" {
			t += " as " + string(l.Residency)
		}
		parts = append(parts, t)
	}
	for _, r := range s.Routes {
		parts = append(parts, r.Source+" served by "+r.Model)
	}
	for _, o := range s.Off {
		t := o.Variant + " not running"
		if len(o.Nodes) > 0 {
			t = o.Variant + " not on " + strings.Join(o.Nodes, ", ")
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "nothing changed"
	}
	return strings.Join(parts, "; ")
}

func (s Scenario) takesAway() bool { return len(s.Lanes) == 0 && len(s.Routes) == 0 }

// Replan is a scenario's re-plan.
type Replan struct {
	Scenario Scenario
	// Pool is the pool as the scenario leaves it: nodes taken away marked
	// unavailable ("down"), links taken away gone, dropped pins gone.
	Pool *model.Pool
	// Result is the re-plan; Infeasible when even the scenario's own
	// demands admit no plan, with Explanations saying why. Otherwise its
	// Explanations say why each uncovered source is uncovered.
	Result *Result
	// Dropped are the pins the scenario breaks (a pinned lane's nodes
	// taken away), with why; a re-plan goes on without them.
	Dropped []Explanation
	// Uncovered, ExternalFirst and SLOBroken are eval's lists for the
	// re-plan.
	Uncovered, ExternalFirst, SLOBroken []string
	// TimedOut is set when no plan was found in the scenario's time (or
	// work); Result then holds none.
	TimedOut bool
	// Work is the work the search did (ReplanWork).
	Work Work
	// ClockCut is set when ReplanWork's deadline or ctx, not its work
	// budget or the search's own end, stopped some step: the answer may
	// then differ between runs, and on a slower machine.
	ClockCut bool
}

// Shortfall is what the re-plan leaves short, on the scenario's pool.
func (r *Replan) Shortfall() Shortfall {
	if r.Result.Infeasible || r.TimedOut {
		return Shortfall{Uncovered: []string{}, ToCloud: []string{}, SLOBroken: []string{}}
	}
	return Shortfall{Uncovered: orEmpty(r.Uncovered), ToCloud: orEmpty(servedExternally(r.Pool, r.Result.Assignment)), SLOBroken: orEmpty(r.SLOBroken)}
}

// Proved reports whether every level of the re-plan is proved optimal.
func (r *Replan) Proved() bool {
	if r == nil || r.Result == nil || r.Result.Infeasible || r.TimedOut {
		return false
	}
	for _, l := range r.Result.Levels {
		if l.Status != Optimal {
			return false
		}
	}
	return true
}

// WhatIf asks what a plan becomes under scenarios, and why options are
// not taken, on one encoding of the pool. It is not safe for concurrent
// use.
type WhatIf struct {
	p    *model.Pool
	e    *encode.Encoding
	base *Result
	seed uint64
	// l4TooBig is set once level 4's exact diagram has passed its cap:
	// it would again for every scenario, and building it is the cost.
	l4TooBig bool
	short    *Shortfall // the base plan's, once asked
	// Calls counts gini calls, for benchmarks.
	Calls int
	// Trace, when set, gets the scenarios' search timeline, as
	// Options.Trace does a solve's.
	Trace io.Writer
}

// ErrUnknown marks a scenario or question that names something the pool
// lacks.
var ErrUnknown = errors.New("not in the pool")

// NewWhatIf encodes p once for questions about base, a plan of p (Solve's
// result). The encoding must be done by deadline.
func NewWhatIf(p *model.Pool, base *Result, seed uint64, deadline time.Time) (*WhatIf, error) {
	if p == nil || base == nil {
		return nil, errors.New("solver: what-if needs a pool and its plan")
	}
	if base.Infeasible {
		return nil, errors.New("solver: the base plan is infeasible; there is nothing to ask what-if of")
	}
	e, err := encode.New(p, encode.Options{Deadline: deadline})
	if err != nil {
		return nil, fmt.Errorf("solver: encode the pool for what-if questions: %w", err)
	}
	return &WhatIf{p: p, e: e, base: base, seed: seed}, nil
}

// Base is the plan questions are asked of.
func (w *WhatIf) Base() *Result { return w.base }

// BaseShortfall is what the base plan leaves short.
func (w *WhatIf) BaseShortfall() Shortfall {
	if w.short == nil {
		s := shortfall(w.p, w.base.Assignment)
		w.short = &s
	}
	return *w.short
}

// check names what a scenario names and the pool lacks.
func (w *WhatIf) check(sc Scenario) error {
	ix := w.e.Index
	for _, n := range sc.Nodes {
		if _, ok := ix.Node[n]; !ok {
			return fmt.Errorf("node %q: %w", n, ErrUnknown)
		}
	}
	for _, l := range sc.Links {
		if !ix.Linked(l.A, l.B) {
			return fmt.Errorf("link %s<->%s: %w", l.A, l.B, ErrUnknown)
		}
	}
	for _, l := range slices.Concat(sc.Lanes, sc.Off) {
		if _, ok := ix.Variant[l.Variant]; !ok {
			return fmt.Errorf("runtime %q: %w", l.Variant, ErrUnknown)
		}
	}
	for _, r := range sc.Routes {
		if findSource(w.e, r.Source) == nil {
			return fmt.Errorf("alias %q: %w", r.Source, ErrUnknown)
		}
	}
	return nil
}

// scenarioPool is p as the scenario leaves it, and which nodes are down.
func (w *WhatIf) scenarioPool(sc Scenario) (*model.Pool, map[string]bool) {
	sp := *w.p
	sp.Nodes = slices.Clone(w.p.Nodes)
	down := map[string]bool{}
	for _, n := range sc.Nodes {
		down[n] = true
	}
	for i := range sp.Nodes {
		if down[sp.Nodes[i].ID] && sp.Nodes[i].Unavailable == "" {
			sp.Nodes[i].Unavailable = "down"
		}
	}
	sp.Links = nil
	for _, l := range w.p.Links {
		if !slices.ContainsFunc(sc.Links, func(x model.Link) bool { return sameLink(x, l) }) {
			sp.Links = append(sp.Links, l)
		}
	}
	sp.Pins = slices.Clone(w.p.Pins)
	return &sp, down
}

func sameLink(a, b model.Link) bool {
	return a.A == b.A && a.B == b.B || a.A == b.B && a.B == b.A
}

// awayFrom reports whether a lane on nodes uses what the scenario takes.
func awayFrom(nodes []string, down map[string]bool, links []model.Link) bool {
	return awayCause(nodes, down, links) != ""
}

// Replan re-plans the pool under sc, by deadline.
func (w *WhatIf) Replan(ctx context.Context, sc Scenario, deadline time.Time) (*Replan, error) {
	return w.replan(ctx, sc, nil, deadline)
}

// ReplanWork re-plans the pool under sc within work, a budget that ends
// the search at the same step on every run; deadline is only a safety
// cap, and Replan.ClockCut says when it, not the budget, ended a step.
// What the solver learns carries over to later scenarios, so a series of
// re-plans is the same on every run while none is clock-cut.
func (w *WhatIf) ReplanWork(ctx context.Context, sc Scenario, work Work, deadline time.Time) (*Replan, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	m := &workMeter{left: work, deadline: deadline, ctx: ctx, costs: w.costs()}
	m.spend(w.overheadWork())
	vars := w.e.MaxVar()
	out, err := w.replan(ctx, sc, m, deadline)
	// The bounds a scenario builds first (totalizers, diagrams) stay for
	// the later ones: charged by what they add, each variable the dearer
	// the bigger the solver it grows.
	m.spend(Work(w.e.MaxVar()-vars) * (varWork2/2 + Work(vars)/growVarsDiv))
	if out != nil {
		out.Work, out.ClockCut = m.used, m.clock
	}
	return out, err
}

func (w *WhatIf) replan(ctx context.Context, sc Scenario, m *workMeter, deadline time.Time) (*Replan, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := w.check(sc); err != nil {
		return nil, err
	}
	sp, down := w.scenarioPool(sc)
	k := &asker{p: sp, ix: sp.Index(), e: w.e, plan: w.base.Assignment, deadline: deadline, dropped: map[int]bool{}, work: m}
	defer func() { w.Calls += k.calls }()
	out := &Replan{Scenario: sc, Pool: sp, Result: &Result{Stats: Stats{Solver: Exact}}}
	// Every answer says why the replan ended; a timed-out one has no
	// level proved, so it reads as the deadline (or the interrupt).
	defer func() { out.Result.Stop = stopReason(ctx, out.Result, false) }()

	if infeasible := w.fixScenario(k, sc, down); len(infeasible) > 0 {
		out.Result.Infeasible, out.Result.Explanations = true, infeasible
		return out, nil
	}
	w.dropBrokenPins(k, out, down, sc.Links)
	sp.Pins = w.keptPins(k.dropped)
	// Diagrams built for this scenario stop at its deadline.
	defer func(d time.Time) { w.e.Deadline = d }(w.e.Deadline)
	w.e.Deadline = deadline
	s := &replanSearch{w: w, k: k, ctx: ctx, deadline: deadline, sp: sp, trace: newTracer(w.Trace, time.Now()), sc: sc, m: m}
	if err := s.warm(sc); err != nil {
		return nil, err
	}
	s.trace.f("what-if %s: warm start %v", sc.Name(), s.have)
	if !s.holdPins(sc, out) {
		return out, nil
	}
	slices.SortFunc(out.Dropped, func(a, b Explanation) int { return strings.Compare(a.Subject, b.Subject) })
	s.trace.f("what-if %s: pins checked", sc.Name())
	defer s.trace.f("what-if %s: done", sc.Name())
	if err := s.run(sc); err != nil {
		if errors.Is(err, ErrNoPlan) {
			out.TimedOut = true
			return out, nil
		}
		return nil, err
	}
	s.report(out)
	return out, nil
}

// fixScenario adds to k.fixed what the scenario takes away (lanes on its
// down nodes and cut links) and what it forces (lanes, residencies,
// routes); it explains each forced thing the pool cannot take.
func (w *WhatIf) fixScenario(k *asker, sc Scenario, down map[string]bool) []Explanation {
	for _, l := range w.e.Lanes {
		if awayFrom(l.Nodes, down, sc.Links) || sc.holdsOff(w.p.Variants[l.Variant].ID, l.Nodes) {
			k.fixed = append(k.fixed, l.Lit.Not())
		}
	}
	var infeasible []Explanation
	for _, l := range sc.Lanes {
		vi := w.e.Index.Variant[l.Variant]
		x, ok := k.laneLit(l.Variant, l.Nodes, l.Devices)
		if !ok {
			o := k.option("", "", &w.p.Variants[vi], placementOn(&w.p.Variants[vi], l.Nodes, l.Devices))
			infeasible = append(infeasible, Explanation{Subject: sc.Name(), Reason: o.shortOr(l.Variant + " has no candidate placement on " + strings.Join(l.Nodes, "+"))})
			continue
		}
		k.fixed = append(k.fixed, x)
		if l.Residency != "" {
			r, ok := k.resLit(l.Variant, l.Residency)
			if !ok {
				infeasible = append(infeasible, Explanation{Subject: sc.Name(), Reason: fmt.Sprintf("%s cannot take residency %s", l.Variant, l.Residency)})
				continue
			}
			k.fixed = append(k.fixed, r)
		}
	}
	for _, r := range sc.Routes {
		m, ok := k.routeLit(r.Source, r.Model, r.Variant)
		if !ok {
			infeasible = append(infeasible, Explanation{Subject: sc.Name(), Reason: fmt.Sprintf("%s cannot be served first by %s", r.Source, r.Model)})
			continue
		}
		k.fixed = append(k.fixed, m)
	}
	return infeasible
}

// dropBrokenPins lets pins whose lane the scenario takes away give way,
// as keepWarm pins give way to a cordon.
func (w *WhatIf) dropBrokenPins(k *asker, out *Replan, down map[string]bool, links []model.Link) {
	for pi, pin := range w.p.Pins {
		if why := w.brokenPin(pin, down, links); why != "" {
			k.dropped[pi] = true
			out.Dropped = append(out.Dropped, Explanation{Subject: pinName(&w.p.Pins[pi]), Reason: why, Pins: []string{pin.Label}})
		}
	}
}

// keptPins are the pool's pins that have not given way.
func (w *WhatIf) keptPins(dropped map[int]bool) []model.Pin {
	var kept []model.Pin
	for pi, pin := range w.p.Pins {
		if !dropped[pi] {
			kept = append(kept, pin)
		}
	}
	return kept
}

// holdPins finds the kept pins a plan: a valid warm plan shows they hold
// together; else gini looks, and a conflict set of pins gives way when
// the scenario only takes things away. False when out is final: timed
// out, or infeasible with its explanations.
func (s *replanSearch) holdPins(sc Scenario, out *Replan) bool {
	k := s.k
	var infeasible []Explanation
	for !s.have {
		r := k.try(k.assumed())
		if r == 1 {
			break
		}
		if r == 0 {
			out.TimedOut = true
			return false
		}
		cs, _ := k.cores(nil, k.rules())
		progress := false
		for _, c := range cs {
			if s.giveWay(sc, c, out, &infeasible) {
				progress = true
			}
		}
		if !progress {
			if len(infeasible) == 0 {
				infeasible = append(infeasible, Explanation{Subject: sc.Name(), Reason: "no plan takes it (no conflict set found in time)"})
			}
			out.Result.Infeasible, out.Result.Explanations = true, infeasible
			return false
		}
		s.sp.Pins = s.w.keptPins(k.dropped)
		s.check(sc)
	}
	return true
}

// giveWay explains the conflict set c: when the scenario only takes
// things away its pins are dropped, else it is why sc is infeasible.
// It reports whether a pin was dropped.
func (s *replanSearch) giveWay(sc Scenario, c []item, out *Replan, infeasible *[]Explanation) bool {
	k := s.k
	reason := strings.Join(reasonTexts(k.renderOne(nil, nil, "", c)), "; ")
	progress := false
	var labels []string
	for _, it := range c {
		labels = append(labels, it.label)
		if it.kind == pinItem && sc.takesAway() {
			k.dropped[it.pin] = true
			progress = true
		}
	}
	ex := Explanation{Subject: labels[len(labels)-1], Reason: reason, Pins: labels}
	if sc.takesAway() {
		ex.Reason = "cannot hold with " + sc.Name() + ": " + reason
		out.Dropped = append(out.Dropped, ex)
	} else {
		*infeasible = append(*infeasible, ex)
	}
	return progress
}

// report fills out with the best plan found and explains the sources it
// leaves uncovered.
func (s *replanSearch) report(out *Replan) {
	k := s.k
	out.Result.Assignment, out.Result.Objective, out.Result.Levels = s.best, s.rep.Objective, s.levels
	out.Result.Stats.SolveCalls = k.calls
	out.Uncovered, out.ExternalFirst, out.SLOBroken = s.rep.Uncovered, s.rep.ExternalFirst, s.rep.SLOBroken
	k.plan = s.best
	for _, sid := range s.rep.Uncovered {
		out.Result.Explanations = append(out.Result.Explanations, k.explainSource(sid, s.levels[0].Status == Optimal))
	}
}

// assumed are the scenario's literals and the kept pins and cordons.
func (k *asker) assumed() []z.Lit {
	var out []z.Lit
	for _, it := range k.rules() {
		out = append(out, it.lit)
	}
	return out
}

func reasonTexts(rs []model.Reason) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.Text
	}
	return out
}

func placementOn(v *model.Variant, nodes, devices []string) *model.Placement {
	if k := v.Placement(nodes, devices); k >= 0 {
		return &v.Placements[k]
	}
	return &model.Placement{Nodes: sortedUnique(nodes), Devices: devices}
}

// brokenPin says why a lane pin cannot hold once the scenario takes its
// nodes, or every placement it could take, away; "" when it can.
func (w *WhatIf) brokenPin(pin model.Pin, down map[string]bool, links []model.Link) string {
	if pin.Variant == "" {
		return ""
	}
	for _, n := range pin.Nodes {
		if down[n] {
			return fmt.Sprintf("%s cannot hold: %s is down; the lane stops", pin.Label, n)
		}
	}
	vi, ok := w.e.Index.Variant[pin.Variant]
	if !ok || len(w.e.Variants[vi].Lanes) == 0 {
		return ""
	}
	var why []string
	for _, li := range w.e.Variants[vi].Lanes {
		l := &w.e.Lanes[li]
		cause := awayCause(l.Nodes, down, links)
		if cause == "" {
			return ""
		}
		if !slices.Contains(why, cause) {
			why = append(why, cause)
		}
	}
	return fmt.Sprintf("%s cannot hold: %s; the lane stops", pin.Label, strings.Join(why, " and "))
}

// awayCause names what the scenario takes from a lane on nodes: "n is
// down" or "a<->b link is down"; "" when nothing.
func awayCause(nodes []string, down map[string]bool, links []model.Link) string {
	for _, n := range nodes {
		if down[n] {
			return n + " is down"
		}
	}
	for _, l := range links {
		if slices.Contains(nodes, l.A) && slices.Contains(nodes, l.B) {
			return l.A + "<->" + l.B + " link is down"
		}
	}
	return ""
}

// replanSearch is one scenario's lexicographic search.
type replanSearch struct {
	w        *WhatIf
	k        *asker
	ctx      context.Context
	deadline time.Time
	sp       *model.Pool
	chk      *eval.Checker
	best     model.Assignment
	enc      model.Objective // the encoding's objective of best
	rep      eval.Report     // eval's report of best, on sp
	have     bool
	levels   [4]Level
	trace    tracer
	ep       *model.Pool // sp with the forced lanes and routes as pins
	sc       Scenario
	// m, when set, bounds the search by work, the deadline only a
	// safety cap (ReplanWork).
	m *workMeter
}

// check is eval on the scenario's pool, with its forced lanes and
// routes as pins, so that local search and eval hold them too.
func (s *replanSearch) check(sc Scenario) *model.Pool {
	ep := *s.sp
	ep.Pins = slices.Clone(s.sp.Pins)
	for _, l := range sc.Lanes {
		ep.Pins = append(ep.Pins, model.Pin{Source: model.PinFlag, Variant: l.Variant, Nodes: l.Nodes, Residency: l.Residency, Label: "what-if " + l.Variant})
	}
	for _, r := range sc.Routes {
		if _, ok := s.k.ix.Alias[r.Source]; ok {
			ep.Pins = append(ep.Pins, model.Pin{Source: model.PinFlag, Alias: r.Source, Route: []string{r.Model}, Label: "what-if " + r.Source})
		}
	}
	s.chk = eval.NewChecker(&ep)
	s.ep = &ep
	return &ep
}

// warm is the first incumbent: the base plan repaired for the scenario
// by local search, in a tenth of the time.
func (s *replanSearch) warm(sc Scenario) error {
	ep := s.check(sc)
	s.ep = ep
	warm := s.repair(sc, ep)
	if s.m != nil {
		warm = s.improve(warm, s.w.seed, max(s.m.left/10, s.w.warmWork()))
	} else {
		warm = localsearch.ImproveUntilStale(ep, warm, s.w.seed, until(nil, s.deadline, shareScenarioWarm), exactWarmKicks)
	}
	return s.accept(warm, false)
}

// improve is local search from a, within share of the work budget.
func (s *replanSearch) improve(a model.Assignment, seed uint64, share Work) model.Assignment {
	if share <= 0 || s.m.timeUp() {
		return a
	}
	out, n, clock := localsearch.ImproveChecks(s.ctx, s.ep, a, seed, s.deadline, exactWarmKicks, s.m.checks(share))
	s.m.spendChecks(n, clock)
	return out
}

// run finds a first plan if the warm start gave none, then searches
// level by level.
func (s *replanSearch) run(sc Scenario) error {
	if s.have {
		if lits, err := s.k.e.Lits(s.best); err == nil {
			s.try(probeTry, lits...) // seeds gini's phases with the warm plan
		}
	}
	if !s.have {
		switch s.try(fullTryMax) {
		case 1:
			if err := s.accept(s.k.e.Decode(), true); err != nil {
				return err
			}
		case -1:
			return fmt.Errorf("%w: the scenario %s admits no plan after its pins were checked", ErrMismatch, sc.Name())
		}
		if !s.have {
			return fmt.Errorf("%w: the scenario %s found no plan in time", ErrNoPlan, sc.Name())
		}
	}
	var frozen []z.Lit
	for i := range s.levels {
		// Levels 1-3 decide coverage, the cloud and SLOs, and mostly
		// close at once: each may take all the time left. Level 4 has
		// the rest.
		end := s.deadline
		lb, src, err := s.level(i, frozen, end)
		if err != nil {
			return err
		}
		s.levels[i] = Level{Index: i + 1, Name: model.LevelNames[i], Value: s.enc[i], LowerBound: lb, BoundSource: src}
		s.trace.f("what-if level %d: %d, bound %d (%s)", i+1, s.enc[i], lb, src)
		if i < 3 {
			frozen = append(frozen, s.k.e.LevelBound(i, s.enc[i]))
		}
	}
	// A later level's plan may be better at an earlier, unproved level;
	// and levels count as eval counts them on the scenario's pool.
	for i := range s.levels {
		lv := &s.levels[i]
		d := s.enc[i] - s.rep.Objective[i]
		lv.Value = s.rep.Objective[i]
		lv.LowerBound = max(0, min(lv.LowerBound-d, lv.Value))
		if i == 1 && s.levels[0].Status != Optimal {
			lv.LowerBound = max(0, min(lv.LowerBound, lv.Value-s.localLost()))
		}
		lv.Status = Bounded
		if lv.LowerBound >= lv.Value {
			lv.Status = Optimal
		}
		lv.Gap = gap(lv.Value, lv.LowerBound)
	}
	return nil
}

// localLost counts the aliases whose local lanes the scenario took all
// away: level 2 of the encoding may count them where eval does not.
func (s *replanSearch) localLost() int64 {
	var n int64
	for _, src := range s.k.e.Sources {
		if src.E == 0 {
			continue
		}
		lost := true
		for _, r := range src.Routes {
			if r.Variant >= 0 && slices.ContainsFunc(s.k.e.Variants[r.Variant].Lanes, func(li int) bool {
				return s.k.e.Lanes[li].Cordons == nil && !slices.Contains(s.k.fixed, s.k.e.Lanes[li].Lit.Not())
			}) {
				lost = false
			}
		}
		if lost {
			n++
		}
	}
	return n
}

// repair is the base plan without what the scenario takes away, with
// its forced lanes and routes; local search then mends the routes.
func (s *replanSearch) repair(sc Scenario, ep *model.Pool) model.Assignment {
	down := map[string]bool{}
	for _, n := range sc.Nodes {
		down[n] = true
	}
	out := model.Assignment{Lanes: []model.LaneChoice{}, Routes: []model.RouteChoice{}}
	gone := map[string]bool{}
	for _, l := range s.w.base.Assignment.Lanes {
		forced := slices.ContainsFunc(sc.Lanes, func(f model.LaneChoice) bool { return f.Variant == l.Variant })
		if forced || awayFrom(l.Nodes, down, sc.Links) || sc.holdsOff(l.Variant, l.Nodes) {
			gone[l.Variant] = true
			continue
		}
		out.Lanes = append(out.Lanes, l)
	}
	for _, f := range sc.Lanes {
		r := f.Residency
		if r == "" {
			r = model.Auto
			if vi, ok := s.k.ix.Variant[f.Variant]; ok {
				if fr, fixed := s.sp.Variants[vi].FixedResidency(); fixed {
					r = fr
				}
			}
		}
		out.Lanes = append(out.Lanes, model.LaneChoice{Variant: f.Variant, Nodes: sortedUnique(f.Nodes), Devices: f.Devices, Residency: r})
	}
	for _, rc := range s.w.base.Assignment.Routes {
		if i := slices.IndexFunc(sc.Routes, func(f model.RouteChoice) bool { return f.Source == rc.Source }); i >= 0 {
			rc = sc.Routes[i]
		} else if rc.Variant != "" && gone[rc.Variant] {
			rc = model.RouteChoice{Source: rc.Source}
		}
		out.Routes = append(out.Routes, rc)
	}
	slices.SortFunc(out.Lanes, func(a, b model.LaneChoice) int { return strings.Compare(a.Variant, b.Variant) })
	return out
}

// meets reports whether a plan serves each forced route through the
// forced lane: eval's route pin holds for any lane of the model.
func (s *replanSearch) meets(a model.Assignment) bool {
	if slices.ContainsFunc(a.Lanes, func(l model.LaneChoice) bool { return s.sc.holdsOff(l.Variant, l.Nodes) }) {
		return false
	}
	for _, f := range s.sc.Routes {
		i := slices.IndexFunc(a.Routes, func(r model.RouteChoice) bool { return r.Source == f.Source })
		if i < 0 || a.Routes[i].Model != f.Model || a.Routes[i].Variant != f.Variant {
			return false
		}
	}
	return true
}

// try runs one gini call under the scenario, the kept pins and cordons,
// and ms.
func (s *replanSearch) try(cap time.Duration, ms ...z.Lit) int {
	e := s.k.e
	if s.m != nil {
		s.k.calls++
		return s.m.sat(e, forTime(cap), s.k.fixed, s.k.assumed(), ms)
	}
	left := time.Until(s.deadline)
	if s.ctx.Err() != nil || left <= 0 {
		return 0
	}
	s.k.calls++
	return e.TryUnder(min(cap, left), s.k.fixed, s.k.assumed(), ms)
}

// accept checks a plan with eval on the scenario's pool and with the
// encoding, and keeps it when it is better. A SAT plan eval rejects is a
// bug.
func (s *replanSearch) accept(a model.Assignment, fromSAT bool) error {
	rep := s.chk.Check(a)
	if !rep.Valid || !s.meets(a) {
		if fromSAT {
			return fmt.Errorf("%w: what-if plan invalid: %w (or not what the scenario forces)", ErrMismatch, rep.Err())
		}
		return nil
	}
	enc, err := s.k.e.Objective(a)
	if err != nil {
		if fromSAT {
			return fmt.Errorf("%w: %w", ErrMismatch, err)
		}
		return nil
	}
	if s.have && !enc.Less(s.enc) {
		return nil
	}
	s.best, s.enc, s.rep, s.have = a, enc, rep, true
	return nil
}

// level searches level i down from the incumbent under the earlier
// levels' bounds, until end; it returns the level's lower bound (in the
// encoding's count) and its source.
func (s *replanSearch) level(i int, frozen []z.Lit, end time.Time) (int64, BoundSource, error) {
	e := s.k.e
	lb, src := e.Offset(i), BoundTrivial
	if i == 3 {
		if b := e.GroupBound(s.enc[0], s.enc[1]); b > lb {
			lb, src = b, BoundRelaxation
		}
	}
	for lb < s.enc[i] && s.searching(end) {
		var bound []z.Lit
		if i < 3 {
			bound = []z.Lit{e.LevelBound(i, s.enc[i]-1)}
		} else {
			if s.w.l4TooBig {
				break
			}
			lits, ok := e.L4Bound(s.enc[i]-1, 1, true, l4MaxNodes)
			if !ok && s.m != nil && s.m.timeUp() {
				// The deadline, not the node cap: another scenario
				// may build it.
				break
			}
			if !ok {
				// Past its node cap (or a share of time) it would be
				// again for every scenario, and building it is the cost.
				s.w.l4TooBig = true
				break
			}
			bound = lits
		}
		r := s.tryUntil(end, append(slices.Clone(frozen), bound...)...)
		switch r {
		case 1:
			before := s.enc
			if err := s.accept(e.Decode(), true); err != nil {
				return 0, "", err
			}
			if !s.enc.Less(before) {
				return 0, "", fmt.Errorf("%w: a plan under level %d <= %d is no better than %v", ErrMismatch, i+1, before[i]-1, before)
			}
		case -1:
			if !e.Exact {
				return lb, src, nil // rounded memory proves nothing
			}
			lb, src = s.enc[i], BoundSATUnsat
		default:
			return lb, src, nil
		}
	}
	if i == 3 && lb < s.enc[i] && s.searching(end) {
		lpEnd := s.deadline
		if s.m == nil {
			lpEnd = until(nil, end, shareScenarioLP)
		}
		if b, ok := s.lpBound(lpEnd); ok && b > lb {
			lb, src = b, BoundLP
		}
	}
	if i == 3 && s.w.l4TooBig && lb < s.enc[i] && s.searching(end) {
		// No exact diagram: local search polishes the incumbent instead.
		var polished model.Assignment
		if s.m != nil {
			polished = s.improve(s.best, s.w.seed+1, s.m.left)
		} else {
			polished = localsearch.ImproveUntilStale(s.ep, s.best, s.w.seed+1, end, exactWarmKicks)
		}
		if err := s.accept(polished, false); err != nil {
			return 0, "", err
		}
	}
	return min(lb, s.enc[i]), src, nil
}

// searching reports whether the search goes on: before end, or with work
// left under a work budget (the deadline then only a safety cap).
func (s *replanSearch) searching(end time.Time) bool {
	if s.m != nil {
		return !s.m.spent()
	}
	return time.Now().Before(end) && s.ctx.Err() == nil
}

// scenarioLPMax caps the LP a scenario's level 4 gets: its root and a few
// rounds of cuts, as a bound; the scenario's search goes on without it.
const scenarioLPMax = 250 * time.Millisecond

// lpBound bounds level 4 under the scenario by the LP with its cuts: the
// encoding's linear mirror with the scenario's assumptions true (its
// fixes and the pins it keeps, not the encoding's own set) and the
// earlier levels at most their values, as the SAT bounds assume them.
func (s *replanSearch) lpBound(deadline time.Time) (int64, bool) {
	e := s.k.e
	if !e.Exact || s.k.static {
		return 0, false // rounded memory proves nothing
	}
	assumed := append(slices.Clone(s.k.fixed), s.k.assumed()...)
	if s.m != nil {
		s.m.spend(s.m.lp) // the relaxation and its presolve
	}
	r, ok := mip.Presolve(mip.NewRelaxation(e, s.enc, assumed, 3), deadline)
	if s.m != nil && s.m.timeUp() {
		return 0, false
	}
	if !ok || len(r.Rows) == 0 || !mip.FitsSparse(r) {
		return 0, false
	}
	stop := func() bool { return s.ctx.Err() != nil }
	if m := s.m; m != nil {
		// Its share of the work: half what is left, at most what
		// scenarioLPMax stands for.
		lpLeft := min(m.left/2, forTime(scenarioLPMax))
		stop = func() bool {
			if m.timeUp() || lpLeft <= 0 {
				return true
			}
			lpLeft -= lpStopWork
			m.spend(lpStopWork)
			return false
		}
	}
	best, _, pr, _, rounds, _ := mip.SparseRounds(r, deadline, stop, s.trace.f, nil)
	if s.m != nil && s.m.timeUp() {
		return 0, false
	}
	if pr == nil {
		return 0, false
	}
	b := int64(math.Ceil(best-1e-6)) + r.Constant + e.Linear.Offsets[3]
	s.trace.f("what-if level 4 LP: bound %d after %d rounds", b, rounds)
	return b, true
}

func (s *replanSearch) tryUntil(end time.Time, ms ...z.Lit) int {
	if s.m != nil {
		return s.try(fullTryMax, ms...)
	}
	left := time.Until(end)
	if left <= 0 {
		return 0
	}
	return s.try(min(fullTryMax, left), ms...)
}

// explainSource says why source sid is uncovered in k's plan: every
// candidate with its reasons, on one line.
func (k *asker) explainSource(sid string, proved bool) Explanation {
	ex := Explanation{Subject: sid}
	_, cands := k.candidates(sid)
	if len(cands) == 0 {
		ex.Reason = "no candidate model"
		return withUnread(k.p, ex)
	}
	var parts []string
	open := false
	shown := map[string]int{}
	hidden := map[string]int{}
	var order []string
	same := map[string]int{} // text -> index in parts: GPU sets of one node read alike
	for _, c := range cands {
		o := k.weigh(sid, c)
		ex.Pins = append(ex.Pins, o.Pins...)
		if len(o.Reasons) == 0 {
			open = true
		}
		text := o.short()
		if _, ok := same[text]; ok {
			continue
		}
		key := o.Model + "\x00" + o.Variant
		if shown[key] >= 3 {
			if hidden[key] == 0 {
				order = append(order, key)
			}
			hidden[key]++
			continue
		}
		shown[key]++
		same[text] = len(parts)
		parts = append(parts, text)
	}
	for _, key := range order {
		m, v, _ := strings.Cut(key, "\x00")
		parts = append(parts, fmt.Sprintf("and %d more placements of %s via %s", hidden[key], m, v))
	}
	if open {
		parts = append(parts, notCovered(proved))
	}
	ex.Pins = sortedUnique(ex.Pins)
	ex.Reason = strings.Join(parts, "; ")
	return withUnread(k.p, ex)
}
