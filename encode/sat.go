package encode

import (
	"time"

	"github.com/go-air/gini/z"
)

// The solver is reached through these methods only, so that every call
// is a Try with a time cap: after a Try that timed out, gini's Solve
// inherits the expired deadline and returns at once.

// TryUnder asks gini for a model of the clauses under the literals of
// every set in assume, within d: 1 satisfiable (Decode reads the model),
// -1 unsatisfiable (Why names the assumptions at fault), 0 undecided.
// The assumptions hold for this call only.
func (e *Encoding) TryUnder(d time.Duration, assume ...[]z.Lit) int {
	for _, ms := range assume {
		e.sat.Assume(ms...)
	}
	return e.sat.Try(d)
}

// TryTicks is TryUnder with a budget of ticks, each 20,000 of gini's
// propagations, that ends the search at the same point on every machine;
// d, when positive, caps it in time too. It returns 0 when either ran out,
// and the ticks used: fewer than ticks when the search answered, or when
// d stopped it first.
func (e *Encoding) TryTicks(ticks int64, d time.Duration, assume ...[]z.Lit) (int, int64) {
	for _, ms := range assume {
		e.sat.Assume(ms...)
	}
	return e.sat.TryTicks(ticks, d)
}

// Why appends to dst the assumptions of the last unsatisfiable TryUnder
// that the answer rests on, and returns it.
func (e *Encoding) Why(dst []z.Lit) []z.Lit { return e.sat.Why(dst) }

// Value is m's value in the model of the last satisfiable TryUnder.
func (e *Encoding) Value(m z.Lit) bool { return e.sat.Value(m) }

// MaxVar is the highest variable the solver holds.
func (e *Encoding) MaxVar() z.Var { return e.sat.MaxVar() }

// AssumptionLits are the pin and cordon literals that a normal solve
// assumes, in the order of Assumptions.
func (e *Encoding) AssumptionLits() []z.Lit {
	out := make([]z.Lit, len(e.Assumptions))
	for i, a := range e.Assumptions {
		out[i] = a.Lit
	}
	return out
}
