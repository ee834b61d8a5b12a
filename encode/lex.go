package encode

import "github.com/go-air/gini/z"

// lexLeader records one "a >= b lexicographically" constraint.
type lexLeader struct {
	a, b, eq []z.Lit
}

// LexLeader adds "a >= b, lexicographically" (a[0] most significant), the
// symmetry-breaking constraint between the columns of two interchangeable
// nodes. eq[i] is forced true while the vectors agree on 0..i; three
// clauses per position, and the last position needs no eq.
func (e *Encoding) LexLeader(name string, a, b []z.Lit) {
	if len(a) != len(b) || len(a) == 0 {
		return
	}
	e.family("symmetry")
	s := &lexLeader{a: a, b: b}
	prev := e.T
	for i := range a {
		e.orClause(name, prev.Not(), b[i].Not(), a[i])
		if i == len(a)-1 {
			break
		}
		eq := e.newVar(name+"#eq"+itoa(i), MeanSymmetry)
		e.orClause(name, prev.Not(), a[i].Not(), b[i].Not(), eq)
		e.orClause(name, prev.Not(), a[i], b[i], eq)
		s.eq = append(s.eq, eq)
		prev = eq
	}
	e.sym = append(e.sym, s)
}

func (s *lexLeader) values(vals []bool, val func(z.Lit) bool) {
	eq := true
	for i, q := range s.eq {
		eq = eq && val(s.a[i]) == val(s.b[i])
		vals[q.Var()] = eq
	}
}
