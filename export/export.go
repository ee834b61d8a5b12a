package export

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-air/gini/z"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/model"

	"github.com/poolsolve/poolsolve/internal/printable"
)

// Format names an export format.
type Format string

const (
	OPB  Format = "opb"  // pseudo-boolean competition format (PB06), >= and = only
	LP   Format = "lp"   // CPLEX LP, a 0/1 MILP
	WCNF Format = "wcnf" // classic weighted MaxSAT, "p wcnf vars clauses top"
	CNF  Format = "cnf"  // DIMACS CNF of the hard constraints
	JSON Format = "json" // the linear model with every variable's meaning
)

// Formats lists every format.
var Formats = []Format{OPB, LP, WCNF, CNF, JSON}

// ParseFormat reads a format name.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("export: unknown format %q (want opb, lp, wcnf, cnf or json)", s)
}

// Fix bounds one objective level from above: level <= AtMost. With the
// level's optimum as AtMost this fixes the level, as the lexicographic
// search does once a level is done.
type Fix struct {
	Level  int   `json:"level"` // 1-4
	AtMost int64 `json:"atMost"`
}

// Options say which objective an export minimises and which levels it
// bounds. The zero value exports the hard constraints with no objective.
type Options struct {
	// Level (1-4) is the objective level that OPB, LP and WCNF minimise.
	Level int
	// Flatten minimises all four levels at once, weighted so that one
	// unit of a level outweighs every level below it (Instance.Weights).
	// It excludes Level.
	Flatten bool
	// Fixes bound levels, at most one per level. CNF and WCNF encode a
	// bound on levels 1-3 with a totalizer and on level 4 with a decision
	// diagram, both from the encoder.
	Fixes []Fix
	// Source names the instance in the files' headers (the fleet file).
	Source string
	// Encode tunes the encoding (memory resolution).
	Encode encode.Options
}

// Errors of New and the writers.
var (
	ErrNilPool  = errors.New("export: nil pool")
	ErrOverflow = errors.New("export: flattened weights overflow 63 bits; export level by level instead")
)

// Instance is one pool's problem, ready to write in any format and to
// decode a solver's answer. It owns an encoding and is not safe for
// concurrent use.
type Instance struct {
	Pool *model.Pool
	Enc  *encode.Encoding
	opts Options

	weights [4]int64
	vars    []Var // indexed by variable number; 0 unused
	lpIndex map[string]int
	// units are the extra unit literals of the CNF side: the bound
	// literals of fixed levels.
	units []z.Lit
	rows  []encode.Row // the linear rows, then fix rows, then assumptions
}

// New encodes p and prepares its export. It fails on a nil pool, bad
// options, or flattened weights that do not fit in 63 bits.
func New(p *model.Pool, opts Options) (*Instance, error) {
	if p == nil {
		return nil, ErrNilPool
	}
	if opts.Level < 0 || opts.Level > encode.Levels {
		return nil, fmt.Errorf("export: level %d: want 1 to %d", opts.Level, encode.Levels)
	}
	if opts.Flatten && opts.Level != 0 {
		return nil, errors.New("export: a flattened objective has no level; give one or the other")
	}
	fixes := slices.Clone(opts.Fixes)
	sort.SliceStable(fixes, func(i, j int) bool { return fixes[i].Level < fixes[j].Level })
	for i, f := range fixes {
		if f.Level < 1 || f.Level > encode.Levels {
			return nil, fmt.Errorf("export: fix of level %d: want 1 to %d", f.Level, encode.Levels)
		}
		if i > 0 && fixes[i-1].Level == f.Level {
			return nil, fmt.Errorf("export: level %d fixed twice", f.Level)
		}
	}
	opts.Fixes = fixes
	e, err := encode.New(p, opts.Encode)
	if err != nil {
		return nil, err
	}
	in := &Instance{Pool: p, Enc: e, opts: opts}
	if opts.Flatten {
		if err := in.flatten(); err != nil {
			return nil, err
		}
	}
	in.buildRows()
	if err := in.buildFixUnits(); err != nil {
		return nil, err
	}
	in.describe()
	return in, nil
}

// Weights are the flattening weights, level 1 first (zero unless
// flattened): W4 = 1 and W(i) = W(i+1) * (span(i+1) + 1), where a level's
// span is the sum of its coefficients' magnitudes. Any gain at level i
// then outweighs the largest possible loss on all levels below it.
func (in *Instance) Weights() [4]int64 { return in.weights }

func (in *Instance) flatten() error {
	l := &in.Enc.Linear
	w := int64(1)
	for i := encode.Levels - 1; i >= 0; i-- {
		in.weights[i] = w
		var span int64
		for _, t := range l.Objectives[i] {
			var ok bool
			if span, ok = addChecked(span, abs64(t.Coef)); !ok {
				return ErrOverflow
			}
		}
		if i > 0 {
			var ok bool
			if w, ok = mulChecked(w, span+1); !ok {
				return ErrOverflow
			}
		}
	}
	// The weighted sum and its offset must fit too.
	var total int64
	for i := range encode.Levels {
		for _, t := range l.Objectives[i] {
			c, ok := mulChecked(abs64(t.Coef), in.weights[i])
			if !ok {
				return ErrOverflow
			}
			if total, ok = addChecked(total, c); !ok {
				return ErrOverflow
			}
		}
		c, ok := mulChecked(abs64(l.Offsets[i]), in.weights[i])
		if !ok {
			return ErrOverflow
		}
		if total, ok = addChecked(total, c); !ok {
			return ErrOverflow
		}
	}
	// WCNF needs top = sum of soft weights + 1 below 2^63.
	if total == math.MaxInt64 {
		return ErrOverflow
	}
	return nil
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func addChecked(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

func mulChecked(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

// Objective is what the OPB, LP and WCNF files minimise: terms over
// variables (merged, by variable) and the constant the files leave out.
// The exported objective's value is Offset + the sum of the terms.
type Objective struct {
	Terms  []encode.Term
	Offset int64
	// Level is 1-4, or 0 when flattened or when there is no objective.
	Level     int
	Flattened bool
}

// Objective returns the exported objective; it has no terms and no
// offset when the options select none.
func (in *Instance) Objective() Objective {
	l := &in.Enc.Linear
	switch {
	case in.opts.Flatten:
		var ts []encode.Term
		var off int64
		for i := range encode.Levels {
			for _, t := range l.Objectives[i] {
				ts = append(ts, encode.Term{Var: t.Var, Coef: t.Coef * in.weights[i]})
			}
			off += l.Offsets[i] * in.weights[i]
		}
		return Objective{Terms: mergeTerms(ts), Offset: off, Flattened: true}
	case in.opts.Level > 0:
		i := in.opts.Level - 1
		return Objective{Terms: mergeTerms(l.Objectives[i]), Offset: l.Offsets[i], Level: in.opts.Level}
	}
	return Objective{}
}

// mergeTerms adds up the coefficients of each variable, drops zeros, and
// sorts by variable, so that no solver sees a variable twice in a sum.
func mergeTerms(ts []encode.Term) []encode.Term {
	out := slices.Clone(ts)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Var < out[j].Var })
	n := 0
	for _, t := range out {
		if n > 0 && out[n-1].Var == t.Var {
			out[n-1].Coef += t.Coef
			continue
		}
		out[n] = t
		n++
	}
	out = out[:n]
	return slices.DeleteFunc(out, func(t encode.Term) bool { return t.Coef == 0 })
}

// buildRows collects the rows every linear format writes: the encoding's
// rows, one row per fixed level, and one per assumed pin or cordon.
func (in *Instance) buildRows() {
	l := &in.Enc.Linear
	for _, r := range l.Rows {
		r.Terms = mergeTerms(r.Terms)
		in.rows = append(in.rows, r)
	}
	for _, f := range in.opts.Fixes {
		i := f.Level - 1
		in.rows = append(in.rows, encode.Row{
			Name:  fmt.Sprintf("fix-level%d[%s]", f.Level, model.LevelNames[i]),
			Terms: mergeTerms(l.Objectives[i]),
			Op:    encode.LE,
			RHS:   f.AtMost - l.Offsets[i],
		})
	}
	for _, a := range in.Enc.Assumptions {
		if in.isConst(a.Lit) {
			continue
		}
		c := int64(1)
		rhs := int64(1)
		if !a.Lit.IsPos() {
			c, rhs = -1, 0
		}
		in.rows = append(in.rows, encode.Row{
			Name:  fmt.Sprintf("assume-%s[%s]", a.Kind, a.Label),
			Terms: []encode.Term{{Var: a.Lit.Var(), Coef: c}},
			Op:    encode.GE,
			RHS:   rhs,
		})
	}
}

// buildFixUnits adds the CNF side of each fix: levels 1-3 are frozen by
// the encoder (a unit on a totalizer output, in the log); level 4 is an
// exact decision diagram whose guard and root literals are written as
// unit clauses.
func (in *Instance) buildFixUnits() error {
	for _, f := range in.opts.Fixes {
		if f.Level <= 3 {
			in.Enc.Freeze(f.Level-1, f.AtMost)
			continue
		}
		lits, ok := in.Enc.L4Bound(f.AtMost, 1, true, 0)
		if !ok {
			return fmt.Errorf("export: the level-4 bound %d could not be encoded", f.AtMost)
		}
		in.units = append(in.units, lits...)
	}
	return nil
}

func (in *Instance) isConst(m z.Lit) bool { return m.Var() == in.Enc.T.Var() }

// Rows are the linear rows every linear format writes, in order: the
// encoding's own, one per fixed level ("fix-level<N>[...]"), and one per
// pin or cordon fixed true ("assume-pin[...]", "assume-cordon[...]").
func (in *Instance) Rows() []encode.Row { return in.rows }

// Clauses calls f with every hard clause the CNF side writes, in order:
// the clause log (a clause under an activation guard g as ¬g ∨ clause;
// clauses of retired guards left out), then one unit per pin or cordon
// and one per bounded level. An empty clause is passed as is.
func (in *Instance) Clauses(f func(lits []z.Lit)) {
	e := in.Enc
	var buf []z.Lit
	for i := 0; i < e.Log.Len(); i++ {
		c := e.Log.Clause(i)
		buf = buf[:0]
		if c.Guard >= 0 {
			g := e.Log.Guards[c.Guard]
			if g.Retired {
				continue
			}
			buf = append(buf, g.Lit.Not())
		}
		buf = append(buf, c.Lits...)
		f(buf)
	}
	for _, a := range e.Assumptions {
		f([]z.Lit{a.Lit})
	}
	for _, u := range in.units {
		switch u {
		case e.T:
		case e.T.Not():
			f(nil)
		default:
			f([]z.Lit{u})
		}
	}
}

// NumVars is the highest variable number of the CNF side.
func (in *Instance) NumVars() int { return in.Enc.NumVars() - 1 }

// Write writes the instance in format f.
func (in *Instance) Write(w io.Writer, f Format) error {
	switch f {
	case OPB:
		return in.WriteOPB(w)
	case LP:
		return in.WriteLP(w)
	case WCNF:
		return in.WriteWCNF(w)
	case CNF:
		return in.WriteCNF(w)
	case JSON:
		return in.WriteJSON(w)
	}
	return fmt.Errorf("export: unknown format %q", f)
}

// Verdict is the answer of a feasibility check.
type Verdict string

const (
	Feasible   Verdict = "feasible"
	Infeasible Verdict = "infeasible"
	Unknown    Verdict = "unknown" // the time limit passed first
)

// Feasibility asks gini whether the exported hard constraints, with every
// pin, cordon and level bound fixed, admit a solution within limit.
func (in *Instance) Feasibility(limit time.Duration) Verdict {
	switch in.Enc.TryUnder(max(limit, time.Millisecond), in.Enc.AssumptionLits(), in.units) {
	case 1:
		return Feasible
	case -1:
		return Infeasible
	}
	return Unknown
}

// Values maps a variable number to its value in a solver's answer.
type Values func(v int) bool

func (in *Instance) lit(val Values, m z.Lit) bool {
	if in.isConst(m) {
		return m == in.Enc.T
	}
	return val(int(m.Var())) == m.IsPos()
}

// Assignment decodes a solver's answer into a plan: for each variant its
// first lane set true and its residency, and for each demand source its
// first route set true (none: uncovered). Only the decision variables are
// read; the evaluator then judges the plan on its own.
func (in *Instance) Assignment(val Values) model.Assignment {
	return in.Enc.DecodeWith(func(m z.Lit) bool { return in.lit(val, m) })
}

// Levels evaluates the four levels of the linear model under val,
// offsets included. For an optimal answer they match the evaluator's
// vector on the levels that were fixed or minimised.
func (in *Instance) Levels(val Values) model.Objective {
	var o model.Objective
	l := &in.Enc.Linear
	for i := range o {
		o[i] = l.Offsets[i] + in.sum(l.Objectives[i], val)
	}
	return o
}

// Value is the exported objective's value under val, offset included.
func (in *Instance) Value(val Values) int64 {
	obj := in.Objective()
	return obj.Offset + in.sum(obj.Terms, val)
}

func (in *Instance) sum(ts []encode.Term, val Values) int64 {
	var s int64
	for _, t := range ts {
		if val(int(t.Var)) {
			s += t.Coef
		}
	}
	return s
}

// fixText says which levels are bounded, for headers.
func (in *Instance) fixText() string {
	if len(in.opts.Fixes) == 0 {
		return "none"
	}
	var parts []string
	for _, f := range in.opts.Fixes {
		parts = append(parts, fmt.Sprintf("level %d (%s) <= %d", f.Level, model.LevelNames[f.Level-1], f.AtMost))
	}
	return strings.Join(parts, ", ")
}

// ObjectiveText says what the exported objective is, in words.
func (in *Instance) ObjectiveText() string {
	switch {
	case in.opts.Flatten:
		w := in.weights
		return fmt.Sprintf("all four levels flattened, weights %d, %d, %d, %d (level 1 first)", w[0], w[1], w[2], w[3])
	case in.opts.Level > 0:
		return fmt.Sprintf("level %d (%s)", in.opts.Level, model.LevelNames[in.opts.Level-1])
	}
	return "none (feasibility only)"
}

// header is the comment text every format starts with, one line each.
func (in *Instance) header(f Format) []string {
	src := in.opts.Source
	if src == "" {
		src = "(unnamed pool)"
	}
	unit := fmt.Sprintf("memory in units of 1/%d GiB", in.Enc.Scale)
	if !in.Enc.Exact {
		unit = fmt.Sprintf("memory in units of 1/%d GiB, draws rounded up and budgets down (the figures are too fine to count exactly): an exact fit finer than that may be refused", in.Enc.Scale)
	}
	lines := []string{
		fmt.Sprintf("poolsolve export, format %s", f),
		"instance: " + src,
		unit,
	}
	if f != CNF {
		obj := in.Objective()
		lines = append(lines, "objective: "+in.ObjectiveText())
		if (obj.Level > 0 || obj.Flattened) && f != WCNF {
			lines = append(lines, fmt.Sprintf("objective offset: %d (the objective's value = the file's optimum + %d)", obj.Offset, obj.Offset))
		}
	}
	lines = append(lines, "bounded levels: "+in.fixText())
	for _, l := range in.Limits(f) {
		lines = append(lines, "WARNING: "+l.String())
	}
	var pins []string
	for _, a := range in.Enc.Assumptions {
		pins = append(pins, fmt.Sprintf("%s %s (x%d)", a.Kind, a.Label, a.Lit.Var()))
	}
	if len(pins) > 0 {
		lines = append(lines, "fixed true: "+strings.Join(pins, "; "))
	}
	// Comments end at a line break: an id holding one must not start a
	// row of the file.
	for i, l := range lines {
		lines[i] = printable.String(l)
	}
	return lines
}

// Size counts what the files hold.
type Size struct {
	LinearVars int // variables of the linear model (OPB, LP)
	Rows       int // constraints of the linear model, as OPB writes them
	CNFVars    int // variables of the CNF side (CNF, WCNF)
	Clauses    int // hard clauses of the CNF side
}

// Size counts the instance's variables, rows and clauses.
func (in *Instance) Size() Size {
	s := Size{Rows: len(in.linearRows()), CNFVars: in.NumVars()}
	for _, x := range in.vars {
		if x.Linear {
			s.LinearVars++
		}
	}
	in.Clauses(func([]z.Lit) { s.Clauses++ })
	return s
}
