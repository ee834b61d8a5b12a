package rollout

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/poolsolve/poolsolve/model"
)

// ExactLimit is how many lane actions the exact model orders by default:
// its table has 2^n entries.
const ExactLimit = 16

// Lane is a lane as the rollout sees it: where it runs, how it holds its
// memory, and what it serves.
type Lane struct {
	Variant string
	Nodes   []string
	// Devices are the lane's device choice (model.Placement.Devices): the
	// same lane on other GPUs is a restart.
	Devices   []string
	Residency model.Residency
	// Draws are the lane's draws on every node it runs on.
	Draws []model.Draw
	// LoadMs is how long the lane takes to start and become healthy.
	LoadMs float64
	// Manual lanes are started and stopped by the operator, not by LLooM;
	// Kind says why (unmanaged, federated).
	Manual bool
	Kind   model.VariantKind
	// Models are the models the lane serves.
	Models []string
}

// Source is a demand source (an alias or a model requested by its own
// id) with what serves it first now and in the plan.
type Source struct {
	Name   string
	Demand float64
	// Now and Planned are the models served first, "" when uncovered.
	Now, Planned string
	// NowExternal and PlannedExternal mark external models: reachable
	// whatever runs.
	NowExternal, PlannedExternal bool
	// PlannedVariant is the lane that serves Planned in the plan.
	PlannedVariant string
	// Reroute is set when the plan re-routes the source: its route must
	// be switched, once Planned is served.
	Reroute bool
}

// Input is a change set: the lanes that run now, the lanes of the plan,
// the demand sources, and the budget LLooM admits on each memory domain.
type Input struct {
	// Budgets are AdmitGb per {node, domain}.
	Budgets map[[2]string]float64
	Now     []Lane
	Planned []Lane
	Sources []Source
	// ExactLimit bounds the exact model by the number of lane actions:
	// 0 means ExactLimit, a negative value always orders greedily.
	ExactLimit int
}

// Action is what a step does.
type Action string

const (
	Start       Action = "start"
	Stop        Action = "stop"
	Residency   Action = "residency"
	Reroute     Action = "reroute"
	ManualStart Action = "manual-start"
	ManualStop  Action = "manual-stop"
)

// Step is one step of the rollout.
type Step struct {
	// Wave numbers the group of consecutive steps that may run in
	// parallel, from 1.
	Wave    int
	Action  Action
	Subject string // variant, or source for a re-route
	// LaneKind is the lane's kind, for lane steps.
	LaneKind model.VariantKind
	Nodes    []string
	// Devices are the GPUs of a started lane, where the plan chose them.
	Devices []string
	// FromNodes are where a lane started elsewhere runs now: the start
	// half of a move, whose stop is a later step.
	FromNodes []string
	Residency model.Residency
	// From and To are residencies of a residency change and models of a
	// re-route (To empty: the source becomes uncovered).
	From, To string
	// WaitMs is how long the step lasts: a start's load time until
	// healthy, zero for the others.
	WaitMs float64
	// Losses are the sources this step leaves uncovered.
	Losses []Loss
	// OverBudget names the domains where this step breaks the budget,
	// when no order could keep it (the plan itself is over budget).
	OverBudget []string
}

// Loss is a source a step leaves uncovered.
type Loss struct {
	Source string
	Demand float64
	// UntilStep is the step after which the source is covered again, 0
	// when the plan leaves it uncovered; ForMs is how long that is when
	// the steps run one after the other.
	UntilStep int
	ForMs     float64
}

// Rollout is an ordered, grouped change set.
type Rollout struct {
	// Status is "optimal" when the exact model proved the order of least
	// uncovered time, else "heuristic".
	Status string
	// Method is "exact", "greedy" or "stop-first".
	Method string
	Steps  []Step
	// Actions counts the lane actions the order was chosen over.
	Actions int
	// UncoveredDemandMs is the demand-weighted uncovered time of the
	// order (demand x ms, summed over sources covered now and in the
	// plan); StopFirstDemandMs is that of stopping everything first,
	// then starting.
	UncoveredDemandMs float64
	StopFirstDemandMs float64
	// DurationMs sums each wave's longest step; Waves counts them.
	DurationMs float64
	Waves      int
}

// inst is one lane instance: a lane that runs now, or one the plan
// starts.
type inst struct {
	lane  Lane
	now   bool
	stop  int // action stopping it, -1
	start int // action starting it, -1 for lanes that run now
	res   int // action changing its residency, -1
	to    model.Residency
}

type action struct {
	kind Action
	inst int
	dur  float64
	adds bool // takes memory: a start or a stronger residency
}

// source is a demand source, resolved to instances.
type source struct {
	Source
	before     []int // instances serving Now
	beforeKept bool  // Now stays reachable whatever stops
	after      int   // action starting the planned lane, -1 when it is up
	counted    bool  // covered now and in the plan
	coveredNow bool
}

type problem struct {
	in    Input
	insts []inst
	acts  []action
	srcs  []source
	// groups are the sources whose coverage some order can take away,
	// those alike (same lanes before and after) merged, their demand
	// summed: the costs loop over them, not over every alias.
	groups  []source
	byAfter map[int][]int // action -> groups its start covers
	byInst  map[int][]int // instance -> groups it serves now
	// reach[i] are the budgeted domains instance i draws on, each with
	// every draw on it.
	reach [][]domainUse
}

type domainUse struct {
	name   string // "node domain"
	budget float64
	uses   []draw
}

type draw struct {
	inst int
	gb   float64
}

// Plan orders the change from in.Now to in.Planned. The same input gives
// the same rollout; nil when nothing changes.
func Plan(in Input) *Rollout {
	p := newProblem(in)
	if len(p.acts) == 0 && !slices.ContainsFunc(p.srcs, func(s source) bool { return s.Reroute }) {
		return nil
	}
	limit := in.ExactLimit
	if limit == 0 {
		limit = ExactLimit
	}
	r := &Rollout{Actions: len(p.acts)}
	base := p.stopFirst()
	r.StopFirstDemandMs = p.cost(base)
	var order []int
	if len(p.acts) <= limit {
		if o, ok := p.exact(); ok {
			order, r.Status, r.Method = o, "optimal", "exact"
		}
	}
	if order == nil {
		order, r.Status, r.Method = p.greedy(), "heuristic", "greedy"
		if p.cost(base) < p.cost(order) {
			order, r.Method = base, "stop-first"
		}
	}
	r.UncoveredDemandMs = p.cost(order)
	r.Steps = p.steps(order)
	// Steps come in wave order: a wave lasts as long as its longest step.
	longest := 0.0
	for i, s := range r.Steps {
		if i > 0 && s.Wave != r.Steps[i-1].Wave {
			r.DurationMs += longest
			longest = 0
		}
		longest = math.Max(longest, s.WaitMs)
		r.Waves = s.Wave
	}
	r.DurationMs += longest
	return r
}

// ExactCost, GreedyCost and StopFirstCost are the demand-weighted
// uncovered time of each method's order on in, the exact one with false
// when no order keeps every state within budget or in is too large; for
// tests and benchmarks that compare the methods.
func ExactCost(in Input) (float64, bool) {
	p := newProblem(in)
	if len(p.acts) > 18 {
		return 0, false
	}
	o, ok := p.exact()
	if !ok {
		return 0, false
	}
	return p.cost(o), true
}

// GreedyCost is the cost of the greedy order.
func GreedyCost(in Input) float64 { p := newProblem(in); return p.cost(p.greedy()) }

// StopFirstCost is the cost of stopping everything, then starting.
func StopFirstCost(in Input) float64 { p := newProblem(in); return p.cost(p.stopFirst()) }

func newProblem(in Input) *problem {
	p := &problem{in: in}
	planned := map[string]int{} // variant -> index in in.Planned
	for i, l := range in.Planned {
		if _, dup := planned[l.Variant]; !dup {
			planned[l.Variant] = i
		}
	}
	kept := map[string]int{} // variant -> instance kept from now
	for _, l := range sortedLanes(in.Now) {
		l.Nodes = sorted(l.Nodes)
		it := inst{lane: l, now: true, stop: -1, start: -1, res: -1}
		if pi, ok := planned[l.Variant]; ok && slices.Equal(l.Nodes, sorted(in.Planned[pi].Nodes)) && slices.Equal(sorted(l.Devices), sorted(in.Planned[pi].Devices)) {
			if _, dup := kept[l.Variant]; !dup {
				kept[l.Variant] = len(p.insts)
				if want := in.Planned[pi].Residency; want.Valid() && l.Residency.Valid() && want != l.Residency {
					it.to = want
					it.res = p.add(action{kind: Residency, inst: len(p.insts), adds: stronger(want, l.Residency),
						dur: warmDur(l, want)})
				}
				p.insts = append(p.insts, it)
				continue
			}
		}
		kind := Stop
		if l.Manual {
			kind = ManualStop
		}
		it.stop = p.add(action{kind: kind, inst: len(p.insts)})
		p.insts = append(p.insts, it)
	}
	startOf := map[string]int{}
	for _, l := range sortedLanes(in.Planned) {
		if _, ok := kept[l.Variant]; ok {
			continue
		}
		if _, dup := startOf[l.Variant]; dup {
			continue
		}
		l.Nodes = sorted(l.Nodes)
		kind := Start
		if l.Manual {
			kind = ManualStart
		}
		i := len(p.insts)
		it := inst{lane: l, stop: -1, res: -1}
		it.start = p.add(action{kind: kind, inst: i, adds: true, dur: finite(l.LoadMs)})
		startOf[l.Variant] = it.start
		p.insts = append(p.insts, it)
	}
	uses := map[[2]string][]draw{}
	for i, it := range p.insts {
		for _, d := range it.lane.Draws {
			k := [2]string{d.Node, d.Domain}
			uses[k] = append(uses[k], draw{i, math.Max(finite(d.Gb), 0)})
		}
	}
	p.reach = make([][]domainUse, len(p.insts))
	for i, it := range p.insts {
		var seen [][2]string
		for _, d := range it.lane.Draws {
			k := [2]string{d.Node, d.Domain}
			budget, ok := in.Budgets[k]
			if !ok || slices.Contains(seen, k) {
				continue
			}
			seen = append(seen, k)
			p.reach[i] = append(p.reach[i], domainUse{name: d.Node + " " + d.Domain, budget: budget, uses: uses[k]})
		}
	}
	srcs := slices.Clone(in.Sources)
	slices.SortStableFunc(srcs, func(a, b Source) int { return strings.Compare(a.Name, b.Name) })
	for _, s := range srcs {
		rs := source{Source: s, after: -1, beforeKept: s.NowExternal}
		if s.Now != "" && !s.NowExternal {
			for i, it := range p.insts {
				if it.now && slices.Contains(it.lane.Models, s.Now) {
					rs.before = append(rs.before, i)
					rs.beforeKept = rs.beforeKept || it.stop < 0
				}
			}
		}
		rs.coveredNow = rs.beforeKept || len(rs.before) > 0
		coveredPlanned := s.Planned != "" && (s.PlannedExternal || s.PlannedVariant != "")
		if coveredPlanned && !s.PlannedExternal {
			if a, ok := startOf[s.PlannedVariant]; ok {
				rs.after = a
			} else if _, ok := kept[s.PlannedVariant]; !ok {
				coveredPlanned = false // the plan names a lane it does not run
			}
		}
		rs.counted = rs.coveredNow && coveredPlanned
		p.srcs = append(p.srcs, rs)
	}
	p.group()
	return p
}

func (p *problem) group() {
	p.byAfter, p.byInst = map[int][]int{}, map[int][]int{}
	at := map[string]int{}
	for _, s := range p.srcs {
		if !s.coveredNow || s.beforeKept || s.counted && s.after < 0 {
			continue // no order uncovers it
		}
		key := fmt.Sprint(s.counted, s.after, s.before)
		g, ok := at[key]
		if !ok {
			g = len(p.groups)
			at[key] = g
			p.groups = append(p.groups, source{before: s.before, after: s.after, counted: s.counted, coveredNow: true})
			if s.after >= 0 {
				p.byAfter[s.after] = append(p.byAfter[s.after], g)
			}
			for _, i := range s.before {
				p.byInst[i] = append(p.byInst[i], g)
			}
		}
		p.groups[g].Demand += finite(s.Demand)
	}
}

func (p *problem) add(a action) int {
	p.acts = append(p.acts, a)
	return len(p.acts) - 1
}

// warmDur is how long a residency change takes: loading the lane when it
// becomes resident from auto.
func warmDur(l Lane, to model.Residency) float64 {
	if !l.Residency.Resident() && to.Resident() {
		return finite(l.LoadMs)
	}
	return 0
}

// stronger reports whether a holds more memory than b.
func stronger(a, b model.Residency) bool { return rank(a) < rank(b) }

func rank(r model.Residency) int {
	if i := slices.Index(model.Residencies, r); i >= 0 {
		return i
	}
	return len(model.Residencies)
}

// set is the actions done so far.
type set []bool

func (s set) with(x int) set { t := slices.Clone(s); t[x] = true; return t }

// view says, for a state, whether each instance is up and with which
// residency.
type view struct {
	up  func(i int) bool
	res func(i int) model.Residency
}

// after is the state once the actions of done have run.
func (p *problem) after(done set) view {
	return view{
		up: func(i int) bool {
			in := &p.insts[i]
			if in.now {
				return in.stop < 0 || !done[in.stop]
			}
			return done[in.start]
		},
		res: func(i int) model.Residency {
			in := &p.insts[i]
			if in.res >= 0 && done[in.res] {
				return in.to
			}
			return in.lane.Residency
		},
	}
}

// pessimistic is the state while the actions of wave run in any order
// after done: every memory the wave takes is taken, none it frees is.
func (p *problem) pessimistic(done, wave set) view {
	return view{
		up: func(i int) bool {
			in := &p.insts[i]
			if in.now {
				return in.stop < 0 || !done[in.stop]
			}
			return done[in.start] || wave[in.start]
		},
		res: func(i int) model.Residency {
			in := &p.insts[i]
			switch {
			case in.res < 0:
			case done[in.res]:
				return in.to
			case wave[in.res] && stronger(in.to, in.lane.Residency):
				return in.to
			}
			return in.lane.Residency
		},
	}
}

// over lists the domains the instance draws on that break the residency
// rule against LLooM's budget in state v.
func (p *problem) over(i int, v view) []string {
	var out []string
	for _, d := range p.reach[i] {
		var resident, always, auto float64
		for _, u := range d.uses {
			if !v.up(u.inst) {
				continue
			}
			switch v.res(u.inst) {
			case model.Always:
				always += u.gb
				resident += u.gb
			case model.Preferred:
				resident += u.gb
			default:
				auto = math.Max(auto, u.gb)
			}
		}
		const eps = 1e-9
		if resident > d.budget+eps || always+auto > d.budget+eps {
			out = append(out, d.name)
		}
	}
	return out
}

// feasible reports whether action x may follow done: a step that frees
// memory always may; one that takes memory must leave its domains within
// budget.
func (p *problem) feasible(done set, x int) bool {
	a := p.acts[x]
	if !a.adds {
		return true
	}
	// Marked in place and unmarked: this runs n^2 times in the greedy order.
	was := done[x]
	done[x] = true
	ok := len(p.over(a.inst, p.after(done))) == 0
	done[x] = was
	return ok
}

// uncoveredDuring is the demand of counted sources uncovered while x
// runs after done.
func (p *problem) uncoveredDuring(done set, x int) float64 {
	var d float64
	for i := range p.groups {
		s := &p.groups[i]
		if s.counted && !p.covered(s, done, x) {
			d += finite(s.Demand)
		}
	}
	return d
}

// covered reports whether s is covered while action x (-1: none) runs
// after done: its planned lane is up (its re-route then done), or a lane
// serving its current model still runs.
func (p *problem) covered(s *source, done set, x int) bool {
	if s.beforeKept || s.after < 0 && s.counted || s.after >= 0 && done[s.after] && s.after != x {
		return true
	}
	for _, i := range s.before {
		st := p.insts[i].stop
		if st < 0 || !done[st] && st != x {
			return true
		}
	}
	return false
}

func (p *problem) stepCost(done set, x int) float64 {
	if p.acts[x].dur <= 0 {
		return 0
	}
	return p.acts[x].dur * p.uncoveredDuring(done, x)
}

// droppedCost breaks ties between orders of equal cost: the demand-
// weighted time that sources the plan leaves uncovered lose before the
// last start, so a lane the plan drops serves until it must stop.
func (p *problem) droppedCost(done set, x int) float64 {
	if p.acts[x].dur <= 0 {
		return 0
	}
	var d float64
	for i := range p.groups {
		s := &p.groups[i]
		if !s.counted && !p.covered(s, done, x) {
			d += finite(s.Demand)
		}
	}
	return p.acts[x].dur * d
}

// cost is the demand-weighted uncovered time of an order.
func (p *problem) cost(order []int) float64 {
	done := make(set, len(p.acts))
	var c float64
	for _, x := range order {
		c += p.stepCost(done, x)
		done[x] = true
	}
	return c
}

// exact finds an order of least cost whose every state is within budget,
// by a dynamic program over the subsets of actions done.
func (p *problem) exact() ([]int, bool) {
	n := len(p.acts)
	full := 1<<n - 1
	best := make([]float64, full+1)
	tie := make([]float64, full+1)
	from := make([]int8, full+1)
	for i := range best {
		best[i] = math.Inf(1)
	}
	best[0] = 0
	done := make(set, n)
	for s := 0; s < full; s++ {
		if math.IsInf(best[s], 1) {
			continue
		}
		for i := range n {
			done[i] = s&(1<<i) != 0
		}
		for x := range n {
			if done[x] || !p.feasible(done, x) {
				continue
			}
			t := s | 1<<x
			c, d := best[s]+p.stepCost(done, x), tie[s]+p.droppedCost(done, x)
			if math.IsInf(best[t], 1) || less(c, best[t]) || !less(best[t], c) && less(d, tie[t]) {
				best[t], tie[t], from[t] = c, d, int8(x)
			}
		}
	}
	if math.IsInf(best[full], 1) {
		return nil, false
	}
	order := make([]int, n)
	for s, k := full, n-1; s != 0; k-- {
		x := int(from[s])
		order[k] = x
		s &^= 1 << x
	}
	return order, true
}

// greedy starts what restores coverage, then frees memory that costs no
// coverage, then starts the rest, then takes the stop losing least; when
// nothing fits it forces the first start (the plan is over budget).
func (p *problem) greedy() []int {
	n := len(p.acts)
	done := make(set, n)
	var order []int
	for len(order) < n {
		pick, pickScore, pickClass := -1, 0.0, 99
		for x := range n {
			if done[x] || !p.feasible(done, x) {
				continue
			}
			class, score := p.greedyClass(done, x)
			if class < pickClass || class == pickClass && score > pickScore {
				pick, pickScore, pickClass = x, score, class
			}
		}
		if pick < 0 {
			for x := range n {
				if !done[x] {
					pick = x
					break
				}
			}
		}
		order = append(order, pick)
		done[pick] = true
	}
	return order
}

// greedyClass ranks action x after done: lower classes first, then the
// higher score.
func (p *problem) greedyClass(done set, x int) (int, float64) {
	a := p.acts[x]
	if a.adds {
		var restores float64
		for _, g := range p.byAfter[x] {
			s := &p.groups[g]
			if s.counted && !p.covered(s, done, -1) {
				restores += finite(s.Demand)
			}
		}
		if restores > 0 {
			return 0, restores
		}
		return 2, 0
	}
	var loses float64
	for _, g := range p.byInst[a.inst] {
		s := &p.groups[g]
		// Covered now but not while (and so after) x stops its lane.
		if s.counted && p.covered(s, done, -1) && !p.covered(s, done, x) {
			load := 0.0
			if s.after >= 0 {
				load = p.acts[s.after].dur
			}
			loses += finite(s.Demand) * load
		}
	}
	if loses == 0 {
		return 1, 0
	}
	return 3, -loses
}

// stopFirst frees everything first (stops, weaker residencies), then
// takes (starts, stronger residencies), each in action order.
func (p *problem) stopFirst() []int {
	var frees, takes []int
	for x, a := range p.acts {
		if a.adds {
			takes = append(takes, x)
		} else {
			frees = append(frees, x)
		}
	}
	return append(frees, takes...)
}
