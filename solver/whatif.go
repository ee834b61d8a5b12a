package solver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/clock"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/localsearch"
)

// What-if questions share one encoding of the pool. A scenario is a set
// of assumption literals on it: a node taken away is every lane that uses
// it held off, a link taken away every lane that spans it, a forced lane
// or route its literal held on. Nothing is added to the solver but the
// level bounds (totalizer outputs and level-4 diagrams, reused by every
// scenario), so a scenario costs a few gini calls under assumptions.
//
// Each scenario is re-planned by the level loop every part of Solve
// runs (level.go), on the shared encoding: its fixes, the kept pins and
// cordons are the standing assumptions, each level is frozen by an
// assumption rather than a clause, nothing breaks symmetry (a scenario
// that takes a node away breaks the node's), and no PB worker starts.
// The warm start is the base plan without what the scenario takes away,
// repaired by local search.
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
	p     *model.Pool
	e     *encode.Encoding
	base  *Result
	seed  uint64
	short *Shortfall // the base plan's, once asked
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
	if ctx == nil {
		ctx = context.Background()
	}
	return w.replan(ctx, sc, nil, deadline)
}

// ReplanWork re-plans the pool under sc within work, a budget that ends
// the search at the same step on every run: the search reads a counted
// clock (internal/clock), charged for each step as a work limit's plan
// is. deadline is only a safety cap, and Replan.ClockCut says when it,
// not the budget, ended the search. What the solver learns carries over
// to later scenarios, so a series of re-plans is the same on every run
// while none is clock-cut.
func (w *WhatIf) ReplanWork(ctx context.Context, sc Scenario, work Work, deadline time.Time) (*Replan, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	cut, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	clk := clock.Counted(time.Now())
	clk.Charge(durationOf(w.overheadWork()))
	out, err := w.replan(cut, sc, clk, clk.Now().Add(durationOf(work)))
	if out != nil {
		out.Work, out.ClockCut = Work(clk.Spent()/time.Microsecond), cut.Err() != nil
	}
	return out, err
}

// replan re-plans under sc until deadline, read on clk.
func (w *WhatIf) replan(ctx context.Context, sc Scenario, clk *clock.Clock, deadline time.Time) (*Replan, error) {
	if err := w.check(sc); err != nil {
		return nil, err
	}
	// Diagrams built for this scenario stop at its deadline, on its clock.
	defer func(d time.Time, c *clock.Clock) { w.e.Deadline = d; w.e.SetClock(c) }(w.e.Deadline, w.e.Clock)
	w.e.Deadline = deadline
	w.e.SetClock(clk)
	sp, down := w.scenarioPool(sc)
	k := &asker{p: sp, ix: sp.Index(), e: w.e, plan: w.base.Assignment, deadline: deadline, dropped: map[int]bool{}}
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
	s := &replanSearch{w: w, k: k, ctx: ctx, clk: clk, deadline: deadline, sp: sp, trace: newTracer(w.Trace, time.Now()), sc: sc}
	s.warm(sc)
	s.trace.f("what-if %s: warm start %v", sc.Name(), s.have)
	if !s.holdPins(sc, out) {
		return out, nil
	}
	slices.SortFunc(out.Dropped, func(a, b Explanation) int { return strings.Compare(a.Subject, b.Subject) })
	s.trace.f("what-if %s: pins checked", sc.Name())
	defer func() { s.trace.f("what-if %s: done, %v of work", sc.Name(), clk.Spent()) }()
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
	k, x := s.k, s.x
	out.Result.Assignment, out.Result.Objective, out.Result.Levels = x.best, x.rep.Objective, x.levels
	out.Result.Stats.SolveCalls = k.calls
	out.Uncovered, out.ExternalFirst, out.SLOBroken = x.rep.Uncovered, x.rep.ExternalFirst, x.rep.SLOBroken
	k.plan = x.best
	for _, sid := range x.rep.Uncovered {
		out.Result.Explanations = append(out.Result.Explanations, k.explainSource(sid, x.levels[0].Status == Optimal))
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

// replanSearch is one scenario's re-plan: its warm start and pool, and
// the level loop's search of it (x).
type replanSearch struct {
	w        *WhatIf
	k        *asker
	ctx      context.Context
	clk      *clock.Clock
	deadline time.Time
	sp       *model.Pool
	chk      *eval.Checker
	// best is the warm start, valid on ep and meeting the scenario
	// (have), until the search (x) takes over.
	best  model.Assignment
	have  bool
	x     *exact
	trace tracer
	ep    *model.Pool // sp with the forced lanes and routes as pins
	sc    Scenario
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

// warm is the first incumbent: the base plan repaired for the scenario,
// improved by local search for its share of the time (under a work
// budget, at least the scenario's warmWork).
func (s *replanSearch) warm(sc Scenario) {
	ep := s.check(sc)
	warm := s.repair(sc, ep)
	end := until(s.clk, s.deadline, shareScenarioWarm)
	if s.clk.Counted() {
		end = later(end, s.clk.Now().Add(durationOf(s.w.warmWork())))
	}
	warm = localsearch.ImproveOn(s.ctx, ep, warm, s.w.seed, s.clk, end, exactWarmKicks)
	if s.chk.Check(warm).Valid && s.meets(warm) {
		s.best, s.have = warm, true
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// run searches the scenario by the level loop, from the warm start or
// from gini's first model, and counts its levels as eval does on the
// scenario's pool.
func (s *replanSearch) run(sc Scenario) error {
	r := &run{pool: s.ep, ctx: s.ctx, clock: s.clk, trace: s.trace, deadline: s.deadline, start: time.Now()}
	x := newShared(r, s.ep, s.k.e, s.chk, slices.Concat(s.k.fixed, s.k.assumed()), s.deadline, s.w.seed)
	x.admit = s.meets
	s.x = x
	defer func() { s.k.calls += x.calls }()
	ok, err := x.start(s.best, s.have)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%w: the scenario %s admits no plan after its pins were checked", ErrMismatch, sc.Name())
	}
	if err := x.solve(); err != nil {
		return err
	}
	// A later level's plan may be better at an earlier, unproved level;
	// and levels count as eval counts them on the scenario's pool.
	for i := range x.levels {
		lv := &x.levels[i]
		d := x.obj[i] - x.rep.Objective[i]
		lv.Value = x.rep.Objective[i]
		lv.LowerBound = max(0, min(lv.LowerBound-d, lv.Value))
		if i == 1 && x.levels[0].Status != Optimal {
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
	if open || k.unavoidable[sid] {
		parts = append(parts, notCovered(proved, k.unavoidable[sid]))
	}
	ex.Pins = sortedUnique(ex.Pins)
	ex.Reason = strings.Join(parts, "; ")
	return withUnread(k.p, ex)
}
