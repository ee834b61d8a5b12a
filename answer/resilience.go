package answer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
	"github.com/poolsolve/poolsolve/solver"
)

// ResilienceSchema names the JSON document WriteResilienceJSON writes. A
// change that breaks a reader of the document takes a new version.
const ResilienceSchema = "poolsolve.resilience/v1"

// DefaultReplanLimit bounds all re-plans of a resilience run together
// when ResilienceOptions.Limit is zero.
const DefaultReplanLimit = 5 * time.Second

// budgetShare is the part of the limit the work budget stands for: the
// rest is room for a machine slower or busier than
// solver.WorkPerSecond assumes (a shared CI runner) before the clock has
// to cut a search and the report may differ between runs.
const budgetShare = 0.7

// ResilienceOptions steer Resilience.
type ResilienceOptions struct {
	// Scenarios to re-plan; nil means SingleLosses (N-1).
	Scenarios []solver.Scenario
	// Limit bounds every re-plan together. 70% of it is turned into a
	// work budget (solver.WorkPerSecond, budgetShare), and each scenario
	// searched gets an equal share of the work left when it starts, so
	// that the report does not depend on the clock; the clock only caps
	// the run. Zero: DefaultReplanLimit.
	Limit time.Duration
	// Work, when positive, is the work budget instead of Limit's; Limit
	// then only caps the run's time. The same Work gives the same report
	// on any machine that does it within Limit.
	Work solver.Work
	// Seed seeds the re-plans' local search.
	Seed uint64
	// Fleet names the input, for the report.
	Fleet string
	// Notes are the catalog's notes on the pool.
	Notes []string
	// Progress, if set, is told each scenario as it is done.
	Progress func(done, of int, elapsed time.Duration)
	// Trace, when set, gets the re-plans' search timeline
	// (solver.WhatIf.Trace).
	Trace io.Writer
}

// Report is a resilience run: the base plan and every scenario, worst
// first.
type Report struct {
	Schema string `json:"schema"`
	Fleet  string `json:"fleet,omitempty"`
	// Single is set when the scenarios are every single node and link
	// loss (N-1); false for scenarios the caller named.
	Single    bool       `json:"single"`
	Base      Base       `json:"base"`
	Scenarios []Scenario `json:"scenarios"`
	Summary   Summary    `json:"summary"`
	Notes     []string   `json:"notes,omitempty"`
	// Routing is the reading every scenario is planned with.
	Routing *model.Routing `json:"routing,omitempty"`

	plans []*plan.Plan // per scenario, for the picture
}

// Base is the plan every scenario is compared with.
type Base struct {
	Objective model.Objective `json:"objective"`
	Levels    []plan.Level    `json:"levels"`
	// Shortfall is what the base plan already leaves uncovered, serves
	// from an external model first, or breaks.
	solver.Shortfall
}

// Status says how far a scenario's re-plan is proved.
type Status string

const (
	// Proved: every level of the re-plan is proved optimal.
	Proved Status = "proved"
	// Bounded: some level is only the best found in the scenario's time
	// share, with a lower bound below it.
	Bounded Status = "bounded"
	// Infeasible: no plan meets the scenario's own demands.
	Infeasible Status = "infeasible"
	// Undecided: no plan was found in the scenario's time share; it
	// counts as losing coverage, since it is not shown to keep it.
	Undecided Status = "undecided"
	// Skipped: --replan-limit ran out before the scenario's turn; it was
	// not re-planned, and counts as losing coverage, as undecided.
	Skipped Status = "skipped"
)

// Scenario is one scenario's outcome against the base plan.
type Scenario struct {
	Name  string   `json:"name"`
	Nodes []string `json:"nodes"`
	Links []string `json:"links"` // "a<->b"
	// Status is proved, bounded, infeasible or undecided.
	Status    Status           `json:"status"`
	Objective *model.Objective `json:"objective"` // nil when infeasible
	Levels    []plan.Level     `json:"levels"`
	// Loses is what the re-plan falls short of and the base plan does
	// not: sources uncovered (coverage lost), aliases served from an
	// external model first, SLOs broken.
	Loses solver.Shortfall `json:"loses"`
	// Level4Change is the re-plan's level 4 less the base plan's, in
	// latency units (negative: cheaper, e.g. sources left uncovered cost
	// nothing there).
	Level4Change int64 `json:"level4Change"`
	// DroppedPins are the pins the scenario breaks, with why.
	DroppedPins  []plan.Explanation `json:"droppedPins"`
	Explanations []plan.Explanation `json:"explanations"`
	// Changes are what the re-plan changes against the base plan.
	Changes []plan.Change `json:"changes"`
	Summary plan.Summary  `json:"summary"`
	// ClockCut is set when --replan-limit's clock, a safety cap, rather
	// than the scenario's work budget ended its search or skipped it (on
	// a machine slower or busier than the budget assumes), or did so for
	// an earlier scenario whose solver state it inherits: its answer may
	// differ on another run.
	ClockCut bool `json:"clockCut"`
	// ElapsedMs is the re-plan's wall time; it is left out of the JSON
	// so that the same run gives the same bytes.
	ElapsedMs float64 `json:"-"`
}

// Effects is the scenario's outcome in a few words: "embeddings
// uncovered; 2 aliases to cloud".
func (s *Scenario) Effects() string {
	switch s.Status {
	case Infeasible:
		return "no plan: " + strings.Join(explanationTexts(s.Explanations), "; ")
	case Undecided:
		return "no plan found in its time share (raise --replan-limit)"
	case Skipped:
		return "not re-planned: --replan-limit ran out before its turn (raise it)"
	}
	var parts []string
	if n := len(s.Loses.Uncovered); n > 0 {
		parts = append(parts, listOrCount(s.Loses.Uncovered, "sources")+" uncovered")
	}
	if n := len(s.Loses.ToCloud); n > 0 {
		parts = append(parts, listOrCount(s.Loses.ToCloud, "aliases")+" to cloud")
	}
	if n := len(s.Loses.SLOBroken); n > 0 {
		parts = append(parts, listOrCount(s.Loses.SLOBroken, "aliases")+" SLO broken")
	}
	if len(parts) == 0 {
		if s.Summary.Reroute > 0 {
			return fmt.Sprintf("every source covered; %d re-routed", s.Summary.Reroute)
		}
		return "every source covered as before"
	}
	return strings.Join(parts, "; ")
}

func listOrCount(xs []string, what string) string {
	if len(xs) <= 2 {
		return strings.Join(xs, ", ")
	}
	return fmt.Sprintf("%d %s", len(xs), what)
}

// Harmful reports whether the scenario loses coverage, admits no plan
// at all, or was not decided in time.
func (s *Scenario) Harmful() bool {
	return s.Status == Infeasible || s.Status == Undecided || s.Status == Skipped || len(s.Loses.Uncovered) > 0
}

// Summary counts the scenarios by what they lose.
type Summary struct {
	Scenarios    int `json:"scenarios"`
	LoseCoverage int `json:"loseCoverage"`
	ToCloud      int `json:"toCloud"`
	BreakSLO     int `json:"breakSLO"`
	Proved       int `json:"proved"`
	// Skipped counts the scenarios --replan-limit left no time for.
	Skipped int `json:"skipped"`
	// ClockCut counts the scenarios the clock, not the work budget,
	// ended or skipped: their answers may differ on another run.
	ClockCut int `json:"clockCut"`
	// KeepsCoverage is set when no scenario loses coverage: the exit
	// code is then 0.
	KeepsCoverage bool `json:"keepsCoverage"`
}

// Resilience re-plans pool p, whose plan is base, under every scenario
// of opts, on one encoding, and compares each re-plan with base. An
// error means a scenario names what the pool lacks (solver.ErrUnknown),
// an infeasible base, or a solver failure.
func Resilience(ctx context.Context, p *model.Pool, base *solver.Result, opts ResilienceOptions) (*Report, error) {
	limit := opts.Limit
	if limit <= 0 {
		limit = DefaultReplanLimit
	}
	start := time.Now()
	end := start.Add(limit)
	scs := opts.Scenarios
	single := scs == nil
	if single {
		scs = SingleLosses(p)
	}
	basePlan := plan.Build(p, base, plan.Meta{Fleet: opts.Fleet})
	rp, onBase, baseRep := onBasePlan(p, base, basePlan)
	keep := newKeeper(rp, base.Assignment, baseRep.ExternalFirst)
	r := &Report{Schema: ResilienceSchema, Fleet: opts.Fleet, Single: single, Notes: opts.Notes, Routing: p.Routing,
		Base: Base{Objective: base.Objective, Levels: basePlan.Levels, Shortfall: solver.ShortfallOf(rp, base.Assignment)}}
	w, err := solver.NewWhatIf(rp, onBase, opts.Seed, end)
	if errors.Is(err, encode.ErrDeadline) {
		// Not one scenario can be re-planned: each is reported as not
		// re-planned, rather than the limit overrun.
		r.Notes = append(slices.Clone(r.Notes), fmt.Sprintf("encoding the pool for the re-plans did not finish within --replan-limit %s: no scenario was searched; those that take nothing the plan uses keep it", limit))
		r.Scenarios = []Scenario{}
		for _, sc := range scs {
			s := skipped(sc)
			s.ClockCut = true
			if keep.keeps(sc) {
				s = r.asBase(sc, basePlan.Levels, base.Objective, onBase.Objective)
			}
			r.Scenarios = append(r.Scenarios, s)
			r.plans = append(r.plans, nil)
		}
		slices.SortStableFunc(r.Scenarios, func(a, b Scenario) int { return worse(&a, &b) })
		r.Summary = summarize(r.Scenarios)
		return r, nil
	}
	if err != nil {
		return nil, err
	}
	w.Trace = opts.Trace
	type done struct {
		s  Scenario
		pl *plan.Plan
	}
	var all []done
	// The work budget decides how far each scenario is searched and
	// which are skipped, the same on every run; encoding the pool and a
	// scenario's warm start and checks are charged by the pool's size.
	budget := solver.Work(limit.Seconds() * float64(solver.WorkPerSecond) * budgetShare)
	if opts.Work > 0 {
		budget = opts.Work
	}
	budget -= w.EncodeWork()
	searched := 0
	for _, sc := range scs {
		if !keep.keeps(sc) {
			searched++
		}
	}
	// longest is the longest a scenario has taken, and after the search
	// the longest its report took: the clock skips a scenario with less
	// than longest left, and ends a search with after left. The budget
	// skips one with less than mostWork, the most a scenario took, left:
	// however small its share, a re-plan takes its warm start and checks.
	var longest, after time.Duration
	mostWork := w.ScenarioWork()
	clockCut := false
	for i, sc := range scs {
		if keep.keeps(sc) {
			// Decided without a search, so the same on every run.
			all = append(all, done{r.asBase(sc, basePlan.Levels, base.Objective, onBase.Objective), nil})
			continue
		}
		share := max(budget/solver.Work(searched), w.ScenarioWork())
		searched--
		// The rest are skipped, in their fixed order, rather than
		// planned past the limit: by the budget on every run alike, by
		// the clock where this machine is slower than the budget assumes.
		if budget < mostWork {
			all = append(all, done{skipped(sc), nil})
			continue
		}
		t0 := time.Now()
		if left := end.Sub(t0); clockCut || left <= 0 || left < longest {
			s := skipped(sc)
			s.ClockCut, clockCut = true, true
			all = append(all, done{s, nil})
			continue
		}
		re, err := w.ReplanWork(ctx, sc, share, end.Add(-after))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", sc.Name(), err)
		}
		budget -= re.Work
		mostWork = max(mostWork, re.Work)
		t1 := time.Now()
		s, pl := r.compare(re, rp, onBase.Objective, opts)
		clockCut = clockCut || re.ClockCut
		s.ClockCut = clockCut
		el := time.Since(t0)
		longest, after = max(longest, el), max(after, time.Since(t1))
		s.ElapsedMs = float64(el.Microseconds()) / 1000
		all = append(all, done{s, pl})
		if opts.Progress != nil {
			opts.Progress(i+1, len(scs), time.Since(start))
		}
	}
	slices.SortStableFunc(all, func(a, b done) int { return worse(&a.s, &b.s) })
	r.Scenarios = []Scenario{}
	for _, d := range all {
		r.Scenarios = append(r.Scenarios, d.s)
		r.plans = append(r.plans, d.pl)
	}
	r.Summary = summarize(r.Scenarios)
	return r, nil
}

// worse orders scenarios worst first: no plan, undecided, then by sources
// uncovered, aliases to cloud, SLOs broken, level 4 up, then by name.
func worse(a, b *Scenario) int {
	inf := func(s *Scenario) int {
		switch s.Status {
		case Infeasible:
			return 3
		case Undecided:
			return 2
		case Skipped:
			return 1
		}
		return 0
	}
	return cmp.Or(cmp.Compare(inf(b), inf(a)),
		cmp.Compare(len(b.Loses.Uncovered), len(a.Loses.Uncovered)),
		cmp.Compare(len(b.Loses.ToCloud), len(a.Loses.ToCloud)),
		cmp.Compare(len(b.Loses.SLOBroken), len(a.Loses.SLOBroken)),
		cmp.Compare(b.Level4Change, a.Level4Change),
		strings.Compare(a.Name, b.Name))
}

func summarize(ss []Scenario) Summary {
	s := Summary{Scenarios: len(ss), KeepsCoverage: true}
	for i := range ss {
		sc := &ss[i]
		if sc.Harmful() {
			s.LoseCoverage++
			s.KeepsCoverage = false
		}
		if len(sc.Loses.ToCloud) > 0 {
			s.ToCloud++
		}
		if len(sc.Loses.SLOBroken) > 0 {
			s.BreakSLO++
		}
		switch sc.Status {
		case Proved:
			s.Proved++
		case Skipped:
			s.Skipped++
		}
		if sc.ClockCut {
			s.ClockCut++
		}
	}
	return s
}

// renderPool is p with the base plan as what runs now, so that package
// plan's diff of a re-plan lists what it changes against the base plan.
func renderPool(p *model.Pool, base model.Assignment, bp *plan.Plan) *model.Pool {
	rp := *p
	rp.Current = model.Current{Lanes: []model.CurrentLane{}, Routes: []model.CurrentRoute{}}
	for _, l := range base.Lanes {
		rp.Current.Lanes = append(rp.Current.Lanes, model.CurrentLane{Variant: l.Variant, Nodes: l.Nodes, Devices: l.Devices, Residency: l.Residency, Status: "running"})
	}
	ix := p.Index()
	for _, r := range bp.Routes {
		if _, ok := ix.Alias[r.Source]; ok && r.Covered() {
			rp.Current.Routes = append(rp.Current.Routes, model.CurrentRoute{Alias: r.Source, Primary: r.Model, Route: r.RouteName})
		}
	}
	return &rp
}

// compare turns a re-plan into a scenario of the report, and its plan
// against the base plan.
func (r *Report) compare(re *solver.Replan, rp *model.Pool, onBase model.Objective, opts ResilienceOptions) (Scenario, *plan.Plan) {
	sc := re.Scenario
	s := Scenario{Name: sc.Name(), Nodes: orEmpty(sc.Nodes), Links: []string{}, Levels: []plan.Level{},
		Loses: re.Shortfall(), DroppedPins: []plan.Explanation{},
		Explanations: []plan.Explanation{}, Changes: []plan.Change{}}
	for _, l := range sc.Links {
		s.Links = append(s.Links, l.A+"<->"+l.B)
	}
	for _, d := range re.Dropped {
		s.DroppedPins = append(s.DroppedPins, plan.Explanation{Subject: d.Subject, Reason: d.Reason, Pins: d.Pins})
	}
	if re.TimedOut {
		s.Status = Undecided
		return s, nil
	}
	// The re-plan's pool, with the base plan as what runs now.
	sp := *re.Pool
	sp.Current = rp.Current
	notes := []string{"What-if " + sc.Name() + ": the changes are against the base plan."}
	for _, d := range re.Dropped {
		notes = append(notes, d.Reason)
	}
	pl := plan.Build(&sp, re.Result, plan.Meta{Fleet: strings.TrimPrefix(opts.Fleet+", "+sc.Name(), ", "), Solver: "exact", Notes: notes})
	s.Explanations = orEmpty(pl.Explanations)
	if re.Result.Infeasible {
		s.Status = Infeasible
		return s, pl
	}
	s.Status = Bounded
	if re.Proved() {
		s.Status = Proved
	}
	obj := re.Result.Objective
	s.Objective = &obj
	s.Levels = pl.Levels
	s.Loses = re.Shortfall().Minus(r.Base.Shortfall)
	// Both counted with the base plan as what runs.
	s.Level4Change = obj[3] - onBase[3]
	s.Changes = pl.Changes
	s.Summary = pl.Summary
	return s, pl
}

// onBasePlan is the pool scenarios re-plan on: p with the base plan as
// what runs, so that churn counts from it, and of two equally good
// re-plans the one closer to the base plan wins (a scenario lists only
// what it changes); with the base plan's result and eval's report on it.
func onBasePlan(p *model.Pool, base *solver.Result, basePlan *plan.Plan) (*model.Pool, *solver.Result, eval.Report) {
	rp := renderPool(p, base.Assignment, basePlan)
	onBase := *base
	rep := eval.Check(rp, base.Assignment)
	onBase.Objective = rep.Objective
	return rp, &onBase, rep
}

// keeper decides which scenarios keep the base plan (keeps), with what
// it needs computed once for all of them.
type keeper struct {
	lanes [][]string // the base plan's lanes' nodes
	// cloud holds, per alias the plan serves from the cloud, the nodes of
	// each eligible placement of a variant of its candidates: level 2
	// counts the alias only while one of them survives.
	cloud [][][]string
}

func newKeeper(p *model.Pool, base model.Assignment, externalFirst []string) *keeper {
	k := &keeper{}
	for _, l := range base.Lanes {
		k.lanes = append(k.lanes, l.Nodes)
	}
	ix := p.Index()
	listedBy := map[string][]string{}
	for _, m := range p.Models {
		for _, v := range m.Variants {
			listedBy[v] = append(listedBy[v], m.ID)
		}
	}
	for _, id := range externalFirst {
		var places [][]string
		if ai, ok := ix.Alias[id]; ok {
			cands := p.Aliases[ai].Candidates()
			for vi := range p.Variants {
				v := &p.Variants[vi]
				if !slices.ContainsFunc(cands, func(m string) bool { return slices.Contains(v.Models, m) || slices.Contains(listedBy[v.ID], m) }) {
					continue
				}
				for _, pl := range v.Placements {
					if ok, _ := model.Eligible(p, ix, v, pl); ok {
						places = append(places, pl.Nodes)
					}
				}
			}
		}
		k.cloud = append(k.cloud, places)
	}
	return k
}

// keeps reports whether scenario sc takes away nothing the base plan
// uses (no node of its lanes, no link inside one) and leaves every alias
// the plan serves from the cloud an eligible local placement. The base
// plan is then the scenario's best re-plan: it still holds, options were
// only taken away, and churn counts from it.
func (k *keeper) keeps(sc solver.Scenario) bool {
	if len(sc.Lanes) > 0 || len(sc.Routes) > 0 || len(sc.Off) > 0 {
		return false
	}
	touches := func(nodes []string) bool {
		for _, n := range sc.Nodes {
			if slices.Contains(nodes, n) {
				return true
			}
		}
		for _, l := range sc.Links {
			if slices.Contains(nodes, l.A) && slices.Contains(nodes, l.B) {
				return true
			}
		}
		return false
	}
	if slices.ContainsFunc(k.lanes, touches) {
		return false
	}
	for _, places := range k.cloud {
		if !slices.ContainsFunc(places, func(n []string) bool { return !touches(n) }) {
			return false
		}
	}
	return true
}

// asBase is a scenario whose re-plan is the base plan: nothing lost,
// nothing changed. Its levels are the base plan's, level 4 counted with
// the base plan as what runs (onBase): a bound of the whole pool bounds
// the scenario's too, less the base plan's own churn at level 4.
func (r *Report) asBase(sc solver.Scenario, levels []plan.Level, obj, onBase model.Objective) Scenario {
	s := skipped(sc)
	s.Status = Proved
	s.Objective = &onBase
	s.Levels = slices.Clone(levels)
	for i := range s.Levels {
		l := &s.Levels[i]
		if l.Index == 4 {
			l.Value = onBase[3]
			l.LowerBound = max(0, min(l.LowerBound-(obj[3]-onBase[3]), l.Value))
			if l.Status == "optimal" {
				l.LowerBound = l.Value
			}
			l.Gap = 0
			if l.Value > 0 {
				l.Gap = math.Round(float64(l.Value-l.LowerBound)/float64(l.Value)*1000) / 1000
			}
		}
		if l.Status != "optimal" {
			s.Status = Bounded
		}
	}
	return s
}

// skipped is a scenario the limit left no time for.
func skipped(sc solver.Scenario) Scenario {
	s := Scenario{Name: sc.Name(), Nodes: orEmpty(sc.Nodes), Links: []string{}, Levels: []plan.Level{}, Status: Skipped,
		Loses:       solver.Shortfall{Uncovered: []string{}, ToCloud: []string{}, SLOBroken: []string{}},
		DroppedPins: []plan.Explanation{}, Explanations: []plan.Explanation{}, Changes: []plan.Change{}}
	for _, l := range sc.Links {
		s.Links = append(s.Links, l.A+"<->"+l.B)
	}
	return s
}

func orEmpty[T any](xs []T) []T {
	if xs == nil {
		return []T{}
	}
	return xs
}

func explanationTexts(es []plan.Explanation) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Subject+": "+e.Reason)
	}
	return out
}
