package encode

import (
	"fmt"
	"slices"

	"github.com/go-air/gini/z"
)

// Linear is the encoding's integer-linear mirror over the same 0/1
// variables as the CNF: every hard constraint as a named row, and the
// four objective levels as weighted sums. It is what exports (OPB, LP,
// WCNF, JSON) and the LP relaxation read. Memory rows count in memory
// units (Encoding.Scale per GiB), rounded exactly as the CNF rounds them.
//
// Auxiliary variables of bound encodings (diagram nodes, totalizer
// outputs, AMO registers) appear in the clause log only.
type Linear struct {
	// Vars counts the variables, with index 0, which none has: the
	// encoding names them (Encoding.Info).
	Vars int   `json:"vars"`
	Rows []Row `json:"rows"`
	// Objectives are the levels' terms, most important first; each level
	// is Offsets[i] + sum of its terms.
	Objectives [4][]Term `json:"objectives"`
	Offsets    [4]int64  `json:"offsets"`
	// Assumed are the named assumption literals (pins, cordons) that a
	// normal solve assumes true; an export fixes them to 1.
	Assumed []z.Lit `json:"assumed"`
}

// Op is a row's relation.
type Op string

const (
	LE Op = "<="
	GE Op = ">="
	EQ Op = "="
)

// Term is coefficient times a 0/1 variable.
type Term struct {
	Var  z.Var `json:"var"`
	Coef int64 `json:"coef"`
}

// Row is sum(Terms) Op RHS.
type Row struct {
	Name  string `json:"name"`
	Terms []Term `json:"terms"`
	Op    Op     `json:"op"`
	RHS   int64  `json:"rhs"`
}

// Holds reports whether the row holds under val.
func (r *Row) Holds(val func(z.Var) bool) bool {
	s := sum(r.Terms, val)
	switch r.Op {
	case LE:
		return s <= r.RHS
	case GE:
		return s >= r.RHS
	default:
		return s == r.RHS
	}
}

func (r *Row) String() string {
	s := r.Name + ":"
	for _, t := range r.Terms {
		s += fmt.Sprintf(" %+d x%d", t.Coef, t.Var)
	}
	return s + fmt.Sprintf(" %s %d", r.Op, r.RHS)
}

func sum(ts []Term, val func(z.Var) bool) int64 {
	var s int64
	for _, t := range ts {
		if val(t.Var) {
			s += t.Coef
		}
	}
	return s
}

// Value is level i's value under val (0-based i).
func (l *Linear) Value(i int, val func(z.Var) bool) int64 {
	return l.Offsets[i] + sum(l.Objectives[i], val)
}

// row appends a row; constant-true literals fold into the right side.
func (e *Encoding) row(name string, op Op, rhs int64, lits []z.Lit, coefs []int64) {
	r := Row{Name: name, Op: op, RHS: rhs, Terms: e.termSlab.Make(len(lits))}
	for i, m := range lits {
		c := int64(1)
		if coefs != nil {
			c = coefs[i]
		}
		if c == 0 {
			continue
		}
		v := m.Var()
		if !m.IsPos() {
			// c·(1-v)
			r.RHS -= c
			c = -c
		}
		if v == e.T.Var() {
			r.RHS -= c
			continue
		}
		r.Terms = append(r.Terms, Term{Var: v, Coef: c})
	}
	if e.rowChunk == nil {
		e.Linear.Rows = append(e.Linear.Rows, r)
		return
	}
	if len(e.rowChunk) == cap(e.rowChunk) {
		e.rowChunks = append(e.rowChunks, e.rowChunk)
		e.rowChunk = make([]Row, 0, rowChunk)
	}
	e.rowChunk = append(e.rowChunk, r)
}

// rowChunk is how many rows New gathers in each chunk. Appended to one
// growing slice, the rows (with their pointers) were copied four or five
// times over: about a tenth of 256x1000's encoding.
const rowChunk = 4096

// gatherRows ends New's chunks: the rows in one slice of their size.
func (e *Encoding) gatherRows() {
	n := len(e.Linear.Rows) + len(e.rowChunk)
	for _, c := range e.rowChunks {
		n += len(c)
	}
	rows := slices.Grow(e.Linear.Rows, n-len(e.Linear.Rows))
	for _, c := range e.rowChunks {
		rows = append(rows, c...)
	}
	e.Linear.Rows = append(rows, e.rowChunk...)
	e.rowChunks, e.rowChunk = nil, nil
}

// clauseRow mirrors a clause as sum of its literals >= 1.
func (e *Encoding) clauseRow(name string, lits ...z.Lit) {
	e.row(name, GE, 1, lits, nil)
}

// orClause adds a clause and its row.
func (e *Encoding) orClause(name string, lits ...z.Lit) {
	e.clause(lits...)
	e.clauseRow(name, lits...)
}

// objTerm adds w·m to level i; a negative literal becomes w - w·v.
func (e *Encoding) objTerm(i int, m z.Lit, w int64) {
	if w == 0 || m == e.F() {
		return
	}
	if m == e.T {
		e.Linear.Offsets[i] += w
		return
	}
	if !m.IsPos() {
		e.Linear.Offsets[i] += w
		e.Linear.Objectives[i] = append(e.Linear.Objectives[i], Term{Var: m.Var(), Coef: -w})
		return
	}
	e.Linear.Objectives[i] = append(e.Linear.Objectives[i], Term{Var: m.Var(), Coef: w})
}
