package encode

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/internal/clock"
	"github.com/poolsolve/poolsolve/internal/slab"
	"github.com/poolsolve/poolsolve/model"
)

// Options tune an encoding. The zero value is the default.
type Options struct {
	// UnitsPerGiB fixes the memory resolution. Zero picks 10^k units per
	// GiB with k the most decimal places of any draw (see scale).
	UnitsPerGiB int64
	// Deadline, when set, stops New itself: past it (checked every few
	// thousand variables) New gives up with ErrDeadline. It also becomes
	// the Encoding's Deadline.
	Deadline time.Time
	// Stop, when set, is asked where Deadline is checked: true stops New
	// with ErrDeadline too. It serves a caller that encodes before it
	// knows its deadline (the solver encodes during its warm start).
	Stop func() bool
	// Clock is the time Deadline is read on; a counted clock also makes
	// TryUnder a budget of gini's ticks (nil: the wall clock).
	Clock *clock.Clock
	// LinearMemory writes the memory rules as linear rows only, without
	// their CNF diagrams (on huge pools, most of the clauses): gini's
	// models may then break memory, so such an encoding is for the PB
	// workers and the LP, which read the rows, and never for gini search.
	LinearMemory bool
	// NoSAT keeps gini out: clauses are logged (for exports and counts)
	// but never added to it, and variables are numbered without it, so
	// TryUnder and TryTicks answer 0 (no answer), Why and Value nothing.
	// For an encoding only the linear rows serve (LinearMemory's), it
	// saves gini's per-variable and per-clause arrays.
	NoSAT bool
}

// Encoding is one pool as CNF in one gini solver, with the literal map back
// to the model, the linear mirror, the clause log and the named assumptions.
// It is not safe for concurrent use; one goroutine drives it.
type Encoding struct {
	*cnf
	Pool  *model.Pool
	Index *model.PoolIndex
	// Scale is memory units per GiB. Exact is true when every draw is a
	// whole number of units, so that the budgets, rounded down, change no
	// fit; when false, draws are rounded up and a fit may be refused.
	Scale int64
	Exact bool

	Lanes    []Lane
	Variants []VariantLits // indexed like Pool.Variants
	Sources  []Source      // sorted by ID
	// Assumptions are the named pin and cordon literals; a normal solve
	// assumes all of them, so that gini's Why can name the ones that fail.
	Assumptions []Assumption
	Rejected    []Rejection
	Domains     []DomainMemory
	Linear      Linear
	// Deadline, when set, stops level-4 diagrams from growing past it.
	Deadline time.Time
	// Clock is Options.Clock; SetClock changes it.
	Clock *clock.Clock
	// LinearMemory: memory is in the linear rows only (Options).
	LinearMemory bool

	costs     costs
	counts    [3][]z.Lit // level 1-3 literals
	l4        []Group    // level-4 groups (sources, then variants)
	l4src     []int      // the source of each level-4 group, -1 for a variant
	yRoute    [][2]z.Lit // latency literal -> its route literal
	l4var     []int      // the variant of each level-4 group, -1 for a source
	tot       [3]*Totalizer
	tots      []*Totalizer
	sym       []*lexLeader
	mdds      []*mdd
	ladders   []ladder
	defs      []def
	sourceIx  map[string]int
	l4Live    map[l4Key]*diagram // live level-4 diagrams
	availMemo map[string]z.Lit
	figs      map[float64]figure // memory figures read so far
	// termSlab is what rows' terms are cut from: rows grown term by
	// term, each in its own allocation, made 256x1000's encoding about
	// 9% slower.
	termSlab slab.Slab[Term]
	// rowChunk and rowChunks gather the rows while New runs (row).
	rowChunk  []Row
	rowChunks [][]Row
}

// Lane is a variant on one candidate placement: the x variable.
type Lane struct {
	Variant   int    // index into Pool.Variants
	Placement int    // index into that variant's Placements
	Key       string // placement key, nodes joined by "+"
	Nodes     []string
	Lit       z.Lit
	// Cordons are the unavailable nodes that alone make the placement
	// ineligible. Such a lane exists only so that a pin on it and the
	// cordon can be named together; the cordon assumptions keep it off.
	Cordons []string
	// Resident and Always are the lane's memory terms (x and not auto,
	// x and always); zero when the lane draws nothing.
	Resident, Always z.Lit
}

// VariantLits are a variant's placement and residency literals.
type VariantLits struct {
	Placed z.Lit    // F when no lane exists
	Res    [3]z.Lit // always, preferred, auto (model.Residencies order); F where impossible
	Lanes  []int    // indexes into Encoding.Lanes
	// Eligible is true when some lane is eligible as is (not cordoned).
	Eligible bool
}

// Source is a demand source: an alias, or a model asked for by its id.
type Source struct {
	ID     string
	Alias  int // index into Pool.Aliases, or -1
	Model  int // index into Pool.Models for model sources, or -1
	Demand float64
	U      z.Lit // uncovered; T when nothing can serve the source
	Routes []Route
	// E is the level-2 literal (external first although a local lane could
	// serve), Viol the level-3 one; zero where the level does not apply.
	E, Viol z.Lit
	// Skipped says why candidates have no route literal, for explanations.
	Skipped []string
}

// Route is one thing that may serve a source first.
type Route struct {
	Model   string
	Variant int // index into Pool.Variants, -1 for an external model
	Lit     z.Lit
	// Split, where the lane's residency changes the route's cost, holds
	// the level-4 latency literal per residency (route ∧ res[ρ]), in
	// model.Residencies order; zero elsewhere. Relaxations use it.
	Split [3]z.Lit
}

// AssumptionKind says what a named assumption stands for.
type AssumptionKind string

const (
	AssumePin    AssumptionKind = "pin"
	AssumeCordon AssumptionKind = "cordon"
)

// Assumption is a named literal that guards a pin's or a cordon's clauses.
type Assumption struct {
	Lit   z.Lit
	Kind  AssumptionKind
	Pin   int    // index into Pool.Pins, or -1
	Node  string // the cordoned node
	Label string
}

// Rejection is a candidate placement that eligibility removed.
type Rejection struct {
	Variant, Placement int
	Reason             string
}

// DomainMemory is one domain's memory rows, in units.
type DomainMemory struct {
	Node, Domain string
	Budget       int64 // plan budget in units, rounded down
	Lanes        []int
	Units        []int64 // draw of Lanes[i], rounded up
}

// def computes a derived variable's intended value from the decisions,
// for Values; defs run in creation order.
type def struct {
	v z.Var
	f func(val func(z.Lit) bool) bool
}

// ErrNilPool is returned for a nil pool.
var ErrNilPool = errors.New("encode: nil pool")

// ErrDeadline is returned by New when Options.Deadline passed before the
// encoding was complete.
var ErrDeadline = errors.New("encode: deadline passed while encoding")

// New encodes p's hard constraints and objective terms. Bound encodings
// (LevelBound) are added later, on demand.
func New(p *model.Pool, opts Options) (e *Encoding, err error) {
	if p == nil {
		return nil, ErrNilPool
	}
	if !opts.Deadline.IsZero() && opts.Clock.Now().After(opts.Deadline) {
		return nil, ErrDeadline
	}
	e = &Encoding{cnf: newCNF(opts.NoSAT), Pool: p, Index: p.Index(), costs: newCosts(p.Settings),
		sourceIx: map[string]int{}, availMemo: map[string]z.Lit{}, figs: map[float64]figure{}, Deadline: opts.Deadline,
		LinearMemory: opts.LinearMemory, Clock: opts.Clock}
	e.cnf.stop, e.cnf.stopFn, e.cnf.clock = opts.Deadline, opts.Stop, opts.Clock
	defer func() {
		e.cnf.stop, e.cnf.stopFn = time.Time{}, nil
		if r := recover(); r != nil {
			if r != errDeadline { //nolint:errorlint // our own sentinel value
				panic(r)
			}
			e, err = nil, ErrDeadline
		}
	}()
	e.Linear.Offsets = [4]int64{}
	e.rowChunk = make([]Row, 0, rowChunk)
	e.lanes()
	e.scale(opts.UnitsPerGiB)
	e.variants()
	e.cordons()
	e.memory()
	e.sources()
	e.pins()
	e.churn()
	e.gatherRows()
	e.Linear.Vars = e.NumVars()
	for _, a := range e.Assumptions {
		e.Linear.Assumed = append(e.Linear.Assumed, a.Lit)
	}
	return e, nil
}

func (e *Encoding) define(m z.Lit, f func(val func(z.Lit) bool) bool) {
	e.defs = append(e.defs, def{v: m.Var(), f: f})
}

// lanes runs eligibility and creates one x per eligible placement, plus
// cordon-only lanes of fixed variants.
func (e *Encoding) lanes() {
	p := e.Pool
	uncordoned := p.EveryNodeAvailable()
	e.Variants = make([]VariantLits, len(p.Variants))
	e.family("lane")
	for vi := range p.Variants {
		e.checkStop()
		v := &p.Variants[vi]
		seen := map[string]bool{}
		for pi, pl := range v.Placements {
			nodes := slices.Clone(pl.Nodes)
			slices.Sort(nodes)
			key := model.PlacementKey(nodes, pl.Devices) // Devices are sorted
			if seen[key] {
				e.Rejected = append(e.Rejected, Rejection{vi, pi, "duplicate of an earlier placement " + key})
				continue
			}
			seen[key] = true
			ok, why := model.Eligible(p, e.Index, v, pl)
			var cordons []string
			if !ok && v.Kind != model.Recipe {
				for _, n := range nodes {
					if i, in := e.Index.Node[n]; in && p.Nodes[i].Unavailable != "" {
						cordons = append(cordons, n)
					}
				}
				if len(cordons) > 0 {
					ok, _ = model.Eligible(uncordoned, e.Index, v, pl)
				}
			}
			if !ok {
				e.Rejected = append(e.Rejected, Rejection{vi, pi, why})
				continue
			}
			l := Lane{Variant: vi, Placement: pi, Key: key, Nodes: nodes, Cordons: cordons}
			l.Lit = e.newVar("x["+v.ID+"@"+key+"]", MeanLane)
			e.Variants[vi].Lanes = append(e.Variants[vi].Lanes, len(e.Lanes))
			if len(cordons) == 0 {
				e.Variants[vi].Eligible = true
			}
			e.Lanes = append(e.Lanes, l)
		}
	}
}

// variants: at most one placement, placed iff some lane, one residency
// iff placed.
func (e *Encoding) variants() {
	p := e.Pool
	for vi := range p.Variants {
		v := &p.Variants[vi]
		vl := &e.Variants[vi]
		if len(vl.Lanes) == 0 {
			vl.Placed = e.F()
			vl.Res = [3]z.Lit{e.F(), e.F(), e.F()}
			continue
		}
		e.family("placement")
		xs := make([]z.Lit, len(vl.Lanes))
		for i, li := range vl.Lanes {
			xs[i] = e.Lanes[li].Lit
		}
		vl.Placed = e.newVar("placed["+v.ID+"]", MeanPlaced)
		for _, x := range xs {
			e.implies(x, vl.Placed)
		}
		e.clause(append([]z.Lit{vl.Placed.Not()}, xs...)...)
		e.ladders = append(e.ladders, e.atMostOne("placement["+v.ID+"]", xs)...)
		coefs := make([]int64, len(xs)+1)
		for i := range xs {
			coefs[i] = 1
		}
		coefs[len(xs)] = -1
		e.row("one-placement["+v.ID+"]", EQ, 0, append(slices.Clone(xs), vl.Placed), coefs)
		placed := vl.Placed
		e.define(placed, func(val func(z.Lit) bool) bool {
			for _, x := range xs {
				if val(x) {
					return true
				}
			}
			return false
		})
		e.family("residency")
		if r, fixed := v.FixedResidency(); fixed && r == model.Always {
			vl.Res = [3]z.Lit{vl.Placed, e.F(), e.F()}
			continue
		}
		for i, r := range model.Residencies {
			vl.Res[i] = e.newVar("res["+v.ID+"]="+string(r), MeanResidency)
			e.implies(vl.Res[i], vl.Placed)
		}
		e.clause(vl.Placed.Not(), vl.Res[0], vl.Res[1], vl.Res[2])
		e.atMostOne("residency["+v.ID+"]", vl.Res[:])
		e.row("one-residency["+v.ID+"]", EQ, 0, []z.Lit{vl.Res[0], vl.Res[1], vl.Res[2], vl.Placed}, []int64{1, 1, 1, -1})
	}
}

// cordons: one assumption per unavailable node, which keeps the
// cordon-only lanes off.
func (e *Encoding) cordons() {
	e.family("cordon")
	for _, n := range e.Pool.Nodes {
		if n.Unavailable == "" {
			continue
		}
		a := e.newVar("cordon["+n.ID+"]", MeanAssumption)
		e.Assumptions = append(e.Assumptions, Assumption{Lit: a, Kind: AssumeCordon, Pin: -1, Node: n.ID,
			Label: fmt.Sprintf("%s is %s", n.ID, n.Unavailable)})
		for _, l := range e.Lanes {
			if slices.Contains(l.Cordons, n.ID) {
				e.orClause("cordon["+n.ID+"]", a.Not(), l.Lit.Not())
			}
		}
	}
}

// memory: per domain, the resident lanes fit, and each auto lane fits with
// the always lanes. Both are interval-reduced diagrams over per-variant
// groups (a variant's lanes are at most one).
func (e *Encoding) memory() {
	p := e.Pool
	type key struct{ node, dom string }
	idx := map[key]int{}
	var budgets []float64 // plan budget in GiB, per e.Domains entry
	for li := range e.Lanes {
		l := &e.Lanes[li]
		for _, d := range p.Variants[l.Variant].Placements[l.Placement].Draws {
			w, fits := e.drawUnits(d.Gb)
			if !fits {
				e.family("memory-resident")
				e.orClause("memory-never-fits["+p.Variants[l.Variant].ID+"@"+l.Key+"]", l.Lit.Not())
				continue
			}
			if w <= 0 {
				// Draws nothing, yet sits on the domain: a budget below
				// zero holds not even that (eval reads it so).
				if dom := p.Domain(e.Index, d.Node, d.Domain); dom != nil && !(dom.Budget.PlanGb >= 0) {
					e.family("memory-resident")
					e.orClause("memory-negative-budget["+d.Node+"/"+d.Domain+"]", l.Lit.Not())
				}
				continue
			}
			k := key{d.Node, d.Domain}
			di, ok := idx[k]
			if !ok {
				dom := p.Domain(e.Index, d.Node, d.Domain)
				if dom == nil {
					continue // eligibility already refused such lanes
				}
				di = len(e.Domains)
				idx[k] = di
				e.Domains = append(e.Domains, DomainMemory{Node: d.Node, Domain: d.Domain})
				budgets = append(budgets, dom.Budget.PlanGb)
			}
			dm := &e.Domains[di]
			if n := len(dm.Lanes); n > 0 && dm.Lanes[n-1] == li {
				dm.Units[n-1] += w // two draws on one domain
				continue
			}
			dm.Lanes = append(dm.Lanes, li)
			dm.Units = append(dm.Units, w)
		}
	}
	for di := range e.Domains {
		dm := &e.Domains[di]
		var total int64
		for _, w := range dm.Units {
			total = min(total+w, unitLimit)
		}
		dm.Budget = e.budgetUnits(budgets[di], total)
	}
	sort.Slice(e.Domains, func(i, j int) bool {
		a, b := e.Domains[i], e.Domains[j]
		if a.Node != b.Node {
			return a.Node < b.Node
		}
		return a.Domain < b.Domain
	})
	for di := range e.Domains {
		e.checkStop()
		e.domain(&e.Domains[di])
	}
}

func (e *Encoding) memTerms(li int) {
	l := &e.Lanes[li]
	if l.Resident != z.LitNull {
		return
	}
	vl := &e.Variants[l.Variant]
	v := &e.Pool.Variants[l.Variant]
	e.family("memory-terms")
	if vl.Res[2] == e.F() {
		l.Resident, l.Always = l.Lit, l.Lit
		return
	}
	x, ra, ru := l.Lit, vl.Res[0], vl.Res[2]
	l.Resident = e.newVar("resident["+v.ID+"@"+l.Key+"]", MeanMemory)
	e.orClause("resident["+v.ID+"@"+l.Key+"]", x.Not(), ru, l.Resident)
	e.define(l.Resident, func(val func(z.Lit) bool) bool { return val(x) && !val(ru) })
	l.Always = e.newVar("always["+v.ID+"@"+l.Key+"]", MeanMemory)
	e.orClause("always["+v.ID+"@"+l.Key+"]", x.Not(), ra.Not(), l.Always)
	e.define(l.Always, func(val func(z.Lit) bool) bool { return val(x) && val(ra) })
}

func (e *Encoding) domain(dm *DomainMemory) {
	name := dm.Node + "/" + dm.Domain
	var res, alw []Group
	var resLits, alwLits []z.Lit
	var ws []int64
	byVariant := map[int]int{}
	var maxAlways int64
	for i, li := range dm.Lanes {
		e.memTerms(li)
		l := &e.Lanes[li]
		w := dm.Units[i]
		gi, ok := byVariant[l.Variant]
		if !ok {
			gi = len(res)
			byVariant[l.Variant] = gi
			res = append(res, Group{})
			alw = append(alw, Group{})
		}
		res[gi].Branches = append(res[gi].Branches, Branch{l.Resident, w})
		alw[gi].Branches = append(alw[gi].Branches, Branch{l.Always, w})
		resLits = append(resLits, l.Resident)
		alwLits = append(alwLits, l.Always)
		ws = append(ws, w)
	}
	for _, g := range alw {
		var m int64
		for _, b := range g.Branches {
			m = max(m, b.W)
		}
		maxAlways = min(maxAlways+m, unitLimit) // saturates only past the cap (Exact false)
	}
	e.family("memory-resident")
	if !e.LinearMemory {
		rm := newMDD(e.cnf, "mem-resident["+name+"]", res)
		e.mdds = append(e.mdds, rm)
		if r := rm.Root(dm.Budget); r != e.T {
			e.clause(r)
		}
	}
	e.row("memory-resident["+name+"]", LE, dm.Budget, resLits, ws)
	e.family("memory-auto")
	var am *mdd
	if !e.LinearMemory {
		am = newMDD(e.cnf, "mem-always["+name+"]", alw)
		e.mdds = append(e.mdds, am)
	}
	// autos are the lanes whose auto draw the always draws could crowd
	// out, and their draws.
	var autos []int
	var draws []int64
	for i, li := range dm.Lanes {
		l := &e.Lanes[li]
		ru := e.Variants[l.Variant].Res[2]
		if ru == e.F() {
			continue
		}
		e.checkStop()
		k := dm.Budget - dm.Units[i]
		if am != nil {
			r := am.Root(k)
			if r == e.T {
				continue
			}
			e.clause(l.Lit.Not(), ru.Not(), r)
		} else if k >= maxAlways {
			continue // the always draws can never pass it
		}
		autos = append(autos, li)
		draws = append(draws, dm.Units[i])
	}
	e.autoRow(name, dm.Budget, autos, draws, alwLits, ws)
}

// autoRow writes the auto rule's linear mirror for one domain: every
// always draw plus the largest draw of a lane on and auto fits the
// budget. The largest draw is a ladder over the draws' distinct sizes
// t_1 < ... < t_T: y_s says an auto lane drawing t_s or more is on, y_s
// implies y_s-1, and y_s weighs t_s - t_s-1 in the one row. One big-M
// row per auto lane over every always draw of the domain grew as the
// square of the domain's lanes: 2.4 kB of encoding a placement on
// 256x1000, 5.9 kB on 1024x4000.
func (e *Encoding) autoRow(name string, budget int64, autos []int, draws []int64, alwLits []z.Lit, ws []int64) {
	if len(autos) == 0 {
		return
	}
	sizes := slices.Clone(draws)
	slices.Sort(sizes)
	sizes = slices.Compact(sizes)
	ys := make([]z.Lit, len(sizes))
	lits := slices.Clone(alwLits)
	coefs := slices.Clone(ws)
	prev := int64(0)
	for s, t := range sizes {
		ys[s] = e.newVar(fmt.Sprintf("auto-draw[%s]>=%d", name, t), MeanMemory)
		lits, coefs = append(lits, ys[s]), append(coefs, t-prev)
		prev = t
		if s > 0 {
			e.orClause("auto-draw["+name+"]", ys[s].Not(), ys[s-1])
		}
	}
	for k, li := range autos {
		l := &e.Lanes[li]
		s, _ := slices.BinarySearch(sizes, draws[k])
		e.orClause("auto-draw["+name+"]", l.Lit.Not(), e.Variants[l.Variant].Res[2].Not(), ys[s])
	}
	for s := range sizes {
		var on []z.Lit
		for k, li := range autos {
			if draws[k] >= sizes[s] {
				on = append(on, e.Lanes[li].Lit, e.Variants[e.Lanes[li].Variant].Res[2])
			}
		}
		e.define(ys[s], func(val func(z.Lit) bool) bool {
			for j := 0; j < len(on); j += 2 {
				if val(on[j]) && val(on[j+1]) {
					return true
				}
			}
			return false
		})
	}
	e.row("memory-auto["+name+"]", LE, budget, lits, coefs)
}
