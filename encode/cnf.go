package encode

import (
	"errors"
	"slices"
	"time"

	"github.com/go-air/gini"
	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/internal/clock"
	"github.com/poolsolve/poolsolve/model"
)

// Meaning says what a variable stands for, for names, exports and tests.
type Meaning string

const (
	MeanConst      Meaning = "const"      // the constant true variable
	MeanLane       Meaning = "lane"       // x: a variant on one placement
	MeanPlaced     Meaning = "placed"     // a variant is placed somewhere
	MeanResidency  Meaning = "residency"  // a placed variant's residency
	MeanRoute      Meaning = "route"      // a source served by a model (and lane)
	MeanUncovered  Meaning = "uncovered"  // u: a source served by nothing
	MeanExternal   Meaning = "external"   // e: an alias served first by an external model (level 2)
	MeanViolation  Meaning = "slo"        // an alias breaking its SLO (level 3)
	MeanLatency    Meaning = "latency"    // a route together with the lane's residency (level 4)
	MeanStart      Meaning = "start"      // churn: a lane not running now on its node set
	MeanStop       Meaning = "stop"       // churn: a current lane stopped or moved
	MeanChange     Meaning = "change"     // churn: a kept lane with another residency
	MeanReroute    Meaning = "reroute"    // churn: an alias served by another model than now
	MeanKeep       Meaning = "keep"       // a lane kept with one residency (exact)
	MeanAvailable  Meaning = "available"  // a model has a placed lane (route pins)
	MeanMemory     Meaning = "memory"     // a lane's resident or always draw is on
	MeanAssumption Meaning = "assumption" // a named pin or cordon
	MeanActivation Meaning = "activation" // guards a removable bound encoding
	MeanMDD        Meaning = "mdd"        // a node of a bound decision diagram
	MeanTotalizer  Meaning = "totalizer"  // a totalizer output
	MeanLadder     Meaning = "amo"        // a sequential at-most-one register
	MeanSymmetry   Meaning = "symmetry"   // lex-leader "equal so far"
	MeanUnused     Meaning = "unused"     // allocated, then released
)

// VarInfo names one variable (Encoding.Info). The optional fields say
// what a derived term is about, so that exports need not parse names;
// they are set for latency, start, stop, change, keep, reroute and
// available variables.
type VarInfo struct {
	Name      string          `json:"name"`
	Meaning   Meaning         `json:"meaning"`
	Variant   string          `json:"variant,omitempty"`
	Nodes     []string        `json:"nodes,omitempty"`
	Source    string          `json:"source,omitempty"`
	Model     string          `json:"model,omitempty"`
	Residency model.Residency `json:"residency,omitempty"`
}

// About is what a derived variable is about: VarInfo's optional fields.
type About struct {
	Variant   string
	Nodes     []string
	Source    string
	Model     string
	Residency model.Residency
}

// varSlot is a variable's entry in the table, indexed by z.Var (0
// unused): 40 bytes where a VarInfo takes 128, and one pointer to scan
// instead of seven. On 1024x4000 (1.3 M variables, the table doubling as
// it grows) the VarInfo table held 219 MB of the planning process.
type varSlot struct {
	name    string
	meaning Meaning
	// lazy, when set, is 1 + the index of the variable's name parts in
	// cnf.lazy: diagram nodes, millions on big pools, are named on demand
	// (cnf.VarName) rather than each with a string of its own.
	lazy int32
	// about, when set, is 1 + the index of its About in cnf.abouts.
	about int32
}

// Guard is one activation literal and the bound it guards.
type Guard struct {
	Lit     z.Lit  `json:"lit"`
	Name    string `json:"name"`
	Retired bool   `json:"retired"` // deactivated: its clauses are gone from the solver
	// Dead is set when a guarded clause was empty at level 0: the guard
	// literal is then false for good and is never recycled.
	Dead bool `json:"dead,omitempty"`
}

// ClauseLog keeps every clause as it was written, before the solver
// simplifies it (gini's own Write prints the simplified database), so
// exports and tests see the whole model.
type ClauseLog struct {
	lits   []z.Lit
	starts []int32
	guards []int32 // index into Guards, -1 for a permanent clause
	tags   []uint16
	// Tags name the constraint families, indexed by Clause.Tag.
	Tags []string
	// Guards are the activation literals, indexed by Clause.Guard.
	Guards []Guard
	tagIx  map[string]uint16
}

// Clause is one logged clause.
type Clause struct {
	Lits  []z.Lit
	Guard int // index into ClauseLog.Guards, -1 when permanent
	Tag   int // index into ClauseLog.Tags
}

// Len is the number of logged clauses.
func (l *ClauseLog) Len() int { return len(l.starts) }

// Clause returns clause i; its Lits alias the log and must not be changed.
func (l *ClauseLog) Clause(i int) Clause {
	end := len(l.lits)
	if i+1 < len(l.starts) {
		end = int(l.starts[i+1])
	}
	return Clause{Lits: l.lits[l.starts[i]:end], Guard: int(l.guards[i]), Tag: int(l.tags[i])}
}

func (l *ClauseLog) tag(name string) uint16 {
	if t, ok := l.tagIx[name]; ok {
		return t
	}
	if l.tagIx == nil {
		l.tagIx = map[string]uint16{}
	}
	t := uint16(len(l.Tags))
	l.Tags = append(l.Tags, name)
	l.tagIx[name] = t
	return t
}

// cnf allocates variables from the one solver, adds clauses to it and logs
// them. Every variable comes from gini's own allocator so that activation
// literals, which gini hands out itself, never collide with ours.
type cnf struct {
	// sat is the solver; callers reach it through sat.go's methods.
	// With noSAT it is empty: clauses are only logged, and variables are
	// numbered by nvars as gini would number them.
	sat    *gini.Gini
	noSAT  bool
	nvars  z.Var
	vars   []varSlot
	abouts []About
	Log    ClauseLog
	T      z.Lit // constant true

	tag   uint16 // family of the clauses being added
	guard int32  // current guard, -1 for none
	buf   []z.Lit
	// stop, while set (during New), makes newVar panic with errDeadline
	// once it has passed; checked every stopEvery variables. stopFn,
	// when set, is asked there too (Options.Stop).
	stop   time.Time
	stopFn func() bool
	clock  *clock.Clock // what stop is read on
	// lazy and prefixes hold the parts of the lazily named variables.
	lazy     []lazyName
	prefixes []string
}

// lazyName is a diagram node's name in parts: prefix#layer/k.
type lazyName struct {
	prefix int32
	layer  int32
	k      int64
}

// namePrefix registers a prefix for lazily named variables.
func (c *cnf) namePrefix(p string) int32 {
	c.prefixes = append(c.prefixes, p)
	return int32(len(c.prefixes) - 1)
}

// varCost is what a variable and its clauses stand for on a counted
// clock: a diagram node or a rule's literal, named, with a few clauses.
const varCost = 4 * time.Microsecond

// checkStop panics with errDeadline once stop has passed; for the loops
// of New that may run long without a new variable.
func (c *cnf) checkStop() {
	if c.stopped() {
		panic(errDeadline)
	}
}

// stopped says whether New is past its deadline or told to stop.
func (c *cnf) stopped() bool {
	return !c.stop.IsZero() && c.clock.Now().After(c.stop) || c.stopFn != nil && c.stopFn()
}

// newLazyVar is newVar for a diagram node named prefix#layer/k.
func (c *cnf) newLazyVar(prefix int32, layer int, k int64, m Meaning) z.Lit {
	l := c.newVar("", m)
	c.lazy = append(c.lazy, lazyName{prefix: prefix, layer: int32(layer), k: k})
	c.vars[l.Var()].lazy = int32(len(c.lazy))
	return l
}

// VarName is variable v's name, built on demand for diagram nodes.
func (c *cnf) VarName(v z.Var) string {
	if int(v) >= len(c.vars) {
		return ""
	}
	vi := &c.vars[v]
	if vi.name != "" || vi.lazy == 0 {
		return vi.name
	}
	n := c.lazy[vi.lazy-1]
	return c.prefixes[n.prefix] + "#" + itoa(int(n.layer)) + "/" + itoa(int(n.k))
}

// errDeadline aborts New past Options.Deadline; New recovers it.
var errDeadline = errors.New("encode: deadline")

const stopEvery = 4096

func newCNF(noSAT bool) *cnf {
	c := &cnf{sat: gini.New(), noSAT: noSAT, vars: []varSlot{{}}, guard: -1}
	c.T = c.newVar("true", MeanConst)
	c.family("const")
	c.clause(c.T)
	return c
}

// F is the constant false literal.
func (c *cnf) F() z.Lit { return c.T.Not() }

func (c *cnf) newVar(name string, m Meaning) z.Lit {
	l := c.newLit()
	if l.Var()%stopEvery == 0 {
		c.clock.Charge(stopEvery * varCost)
		if c.stopped() {
			panic(errDeadline)
		}
	}
	c.setSlot(l.Var(), varSlot{name: name, meaning: m})
	return l
}

// newLit is a new variable's positive literal.
func (c *cnf) newLit() z.Lit {
	if c.noSAT {
		c.nvars++
		return c.nvars.Pos()
	}
	return c.sat.Lit()
}

// about fills the optional fields of a variable's info.
func (c *cnf) about(m z.Lit, f func(*About)) {
	vs := &c.vars[m.Var()]
	if vs.about == 0 {
		c.abouts = append(c.abouts, About{})
		vs.about = int32(len(c.abouts))
	}
	f(&c.abouts[vs.about-1])
}

func (c *cnf) setSlot(v z.Var, vs varSlot) {
	if n := int(v) + 1; n > cap(c.vars) {
		c.checkStop() // growing a big table is slow: not past the deadline
		// Double: append's gentler growth past 256 elements copies the
		// table (millions of variables on big pools) too often.
		c.vars = slices.Grow(c.vars, max(n, 2*cap(c.vars))-len(c.vars))
	}
	for int(v) >= len(c.vars) {
		c.vars = append(c.vars, varSlot{meaning: MeanUnused})
	}
	c.vars[v] = vs
}

// NumVars is the size of the variable table: every variable, and index
// 0, which none has.
func (c *cnf) NumVars() int { return len(c.vars) }

// Info is variable v's name, meaning and what it is about; the name is
// empty for a diagram node, named on demand by VarName. A variable past
// the table has none, as with VarName.
func (c *cnf) Info(v z.Var) VarInfo {
	if int(v) >= len(c.vars) {
		return VarInfo{}
	}
	vs := &c.vars[v]
	vi := VarInfo{Name: vs.name, Meaning: vs.meaning}
	if vs.about > 0 {
		a := &c.abouts[vs.about-1]
		vi.Variant, vi.Nodes, vi.Source, vi.Model, vi.Residency = a.Variant, a.Nodes, a.Source, a.Model, a.Residency
	}
	return vi
}

// family sets the tag of the clauses added next.
func (c *cnf) family(name string) { c.tag = c.Log.tag(name) }

// isConst reports whether m is the constant true or false literal.
func (c *cnf) isConst(m z.Lit) bool { return m.Var() == c.T.Var() }

// clause adds a permanent clause, or a guarded one while a guard is open.
// Constant literals are folded here so that the log and the solver agree.
func (c *cnf) clause(ms ...z.Lit) {
	buf := c.buf[:0]
	for _, m := range ms {
		if m == c.T && len(ms) > 1 {
			return // satisfied
		}
		if m == c.F() {
			continue
		}
		buf = append(buf, m)
	}
	c.buf = buf
	c.Log.starts = append(c.Log.starts, int32(len(c.Log.lits)))
	c.Log.lits = append(c.Log.lits, buf...)
	c.Log.guards = append(c.Log.guards, c.guard)
	c.Log.tags = append(c.Log.tags, c.tag)
	if c.noSAT {
		return
	}
	if c.guard >= 0 {
		c.addGuarded(buf)
		return
	}
	for _, m := range buf {
		c.sat.Add(m)
	}
	c.sat.Add(z.LitNull)
}

// addGuarded adds a clause under the open guard. gini panics when an
// activated clause is already true at level 0 or becomes empty, so both
// cases are settled here with level-0 values (the guard was opened with
// ActivationLit, which backtracks to level 0, and nothing has solved since).
func (c *cnf) addGuarded(ms []z.Lit) {
	g := &c.Log.Guards[c.guard]
	if g.Dead {
		return
	}
	n := 0
	for _, m := range ms {
		if c.sat.Value(m) {
			return // true at level 0
		}
		if !c.sat.Value(m.Not()) {
			n++
		}
	}
	if n == 0 {
		// The bound is impossible under level-0 facts: make the guard
		// false for good; assuming it then fails at once.
		g.Dead = true
		c.sat.Add(g.Lit.Not())
		c.sat.Add(z.LitNull)
		return
	}
	for _, m := range ms {
		if !c.sat.Value(m.Not()) {
			c.sat.Add(m)
		}
	}
	c.sat.ActivateWith(g.Lit)
}

// openGuard starts a group of clauses that one activation literal guards.
func (c *cnf) openGuard(name string) int {
	var l z.Lit
	if c.noSAT {
		l = c.newLit()
	} else {
		l = c.sat.ActivationLit()
	}
	c.setSlot(l.Var(), varSlot{name: name, meaning: MeanActivation})
	c.Log.Guards = append(c.Log.Guards, Guard{Lit: l, Name: name})
	c.guard = int32(len(c.Log.Guards) - 1)
	return int(c.guard)
}

func (c *cnf) closeGuard() { c.guard = -1 }

// retireGuard removes a guarded group from the solver. The clauses stay in
// the log, marked retired.
func (c *cnf) retireGuard(i int) {
	g := &c.Log.Guards[i]
	if g.Retired {
		return
	}
	g.Retired = true
	if g.Dead {
		return // its literal is false at level 0 and must not be recycled
	}
	if !c.noSAT {
		c.sat.Deactivate(g.Lit)
	}
	c.setSlot(g.Lit.Var(), varSlot{name: g.Name + " (retired)", meaning: MeanUnused})
}

// implies adds a -> b.
func (c *cnf) implies(a, b z.Lit) { c.clause(a.Not(), b) }

// atMostOne: pairwise up to 6 literals, else a sequential (ladder)
// register, Sinz 2005: 3n clauses and n-1 auxiliaries.
func (c *cnf) atMostOne(name string, ms []z.Lit) []ladder {
	if len(ms) <= 1 {
		return nil
	}
	if len(ms) <= 6 {
		for i := range ms {
			for j := i + 1; j < len(ms); j++ {
				c.clause(ms[i].Not(), ms[j].Not())
			}
		}
		return nil
	}
	var out []ladder
	group := append([]z.Lit(nil), ms...)
	prev := z.LitNull
	for i := 0; i < len(ms)-1; i++ {
		s := c.newVar(name+"#amo"+itoa(i), MeanLadder)
		out = append(out, ladder{s: s, group: group, n: i + 1})
		c.clause(ms[i].Not(), s)
		if prev != z.LitNull {
			c.clause(prev.Not(), s)
			c.clause(prev.Not(), ms[i].Not())
		}
		prev = s
	}
	c.clause(prev.Not(), ms[len(ms)-1].Not())
	return out
}

// ladder records one AMO register: s is the OR of group[:n].
type ladder struct {
	s     z.Lit
	group []z.Lit
	n     int
}

func itoa(i int) string {
	if i == 0 {
		return "0"
	}
	neg := i < 0
	if neg {
		i = -i
	}
	var b [20]byte
	p := len(b)
	for i > 0 {
		p--
		b[p] = byte('0' + i%10)
		i /= 10
	}
	if neg {
		p--
		b[p] = '-'
	}
	return string(b[p:])
}
