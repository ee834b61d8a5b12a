package export

import (
	"fmt"
	"math"
	"strings"

	"github.com/poolsolve/poolsolve/encode"
)

// Limit is a known reader that cannot read a file of this instance as
// written, and why. The file is still exact; the reader is too narrow.
type Limit struct {
	Reader string // e.g. "clasp 3.3.5"
	Why    string
	// May: the reader reads the file, but may answer it wrongly.
	May bool
}

func (l Limit) String() string {
	if l.May {
		return l.Reader + " may misread this file: " + l.Why
	}
	return l.Reader + " cannot read this file: " + l.Why
}

// claspMax is clasp's weight_t: OPB coefficients and right-hand sides,
// and WCNF soft weights, are read as 32-bit signed integers.
const claspMax = math.MaxInt32

// Limits names the readers known to refuse the file in format f, first
// the one that fails first; nil when every reader the help names reads it.
func (in *Instance) Limits(f Format) []Limit {
	var out []Limit
	switch f {
	case OPB:
		if why := in.claspOPB(); why != "" {
			out = append(out, Limit{Reader: "clasp 3.3.5", Why: why})
		}
	case WCNF:
		for _, t := range in.Objective().Terms {
			if abs64(t.Coef) > claspMax {
				out = append(out, Limit{Reader: "clasp 3.3.5", Why: fmt.Sprintf("soft weight %d of x%d is past 2^31-1 (\"Clause weight out of bounds\")", abs64(t.Coef), t.Var)})
				break
			}
		}
	case LP:
		for _, t := range in.Objective().Terms {
			if abs64(t.Coef) > maxExact {
				out = append(out, Limit{Reader: "CBC and HiGHS", Why: fmt.Sprintf("objective coefficient %d of x%d is past 2^53, where doubles stop being exact; export level by level", abs64(t.Coef), t.Var)})
				break
			}
		}
		for _, r := range in.rows {
			if why := pastDoubles(r); why != "" {
				out = append(out, Limit{Reader: "CBC and HiGHS", Why: why})
				break
			}
		}
		for _, r := range in.rows {
			if why := pastTolerance(r); why != "" {
				out = append(out, Limit{Reader: "CBC and HiGHS", Why: why, May: true})
				break
			}
		}
	}
	return out
}

// mipTolerant is the largest coefficient a MIP solver's tolerances still
// tell a unit apart at: CBC and HiGHS take a column within 10^-6 of a
// whole number as whole, and past 10^6 that slack is a unit of the row.
// CBC 2.10.8, given two lanes 10^-7 GiB over a budget at 10^7 units per
// GiB, answered both resident and called it optimal.
const mipTolerant = 1_000_000

// pastTolerance names a row with a number past mipTolerant, or "".
func pastTolerance(r encode.Row) string {
	big := abs64(r.RHS)
	for _, t := range r.Terms {
		big = max(big, abs64(t.Coef))
	}
	if big <= mipTolerant {
		return ""
	}
	return fmt.Sprintf("row %s has numbers up to %d, past 10^6, where their integrality tolerance (10^-6) exceeds a unit: an answer may break the row by a unit, or a feasible one be refused; check answers against the rows", r.Name, big)
}

// pastDoubles says which number of r a reader that reads doubles cannot
// hold exactly, or "".
func pastDoubles(r encode.Row) string {
	if abs64(r.RHS) > maxExact {
		return fmt.Sprintf("row %s has right-hand side %d, past 2^53, where doubles stop being exact", r.Name, r.RHS)
	}
	for _, t := range r.Terms {
		if abs64(t.Coef) > maxExact {
			return fmt.Sprintf("row %s has coefficient %d on x%d, past 2^53, where doubles stop being exact", r.Name, t.Coef, t.Var)
		}
	}
	return ""
}

// claspOPB says why clasp 3.3.5 stops on the OPB file, or "". Its reader
// takes every coefficient and right-hand side as a 32-bit integer ("parse
// error ... coefficient expected"); a constraint then has its negative
// terms flipped onto their complements, which raises the bound by their
// magnitude ("bound out of range" past 2^31-1), each weight is cut down
// to the bound, and the weights must sum to at most 2^31-1 ("Sum of
// weights out of range"), and with room for one more weight, which its
// rounding adds; an equality is read with the bound one higher.
// Literals fixed before the constraint is read only lower these figures,
// so a file this passes, clasp reads; past them clasp stops with an
// error, or, where such fixed literals keep the overflow from its check,
// may answer UNSATISFIABLE on a feasible file.
func (in *Instance) claspOPB() string {
	for _, t := range in.Objective().Terms {
		if abs64(t.Coef) > claspMax {
			return fmt.Sprintf("objective coefficient %d of x%d is past 2^31-1 (clasp reads 32-bit coefficients); export level by level", t.Coef, t.Var)
		}
	}
	for _, r := range in.linearRows() {
		if why := claspRow(r); why != "" {
			return fmt.Sprintf("row %s %s", strings.TrimSpace(r.name), why)
		}
	}
	return ""
}

func claspRow(r opbRow) string {
	if abs64(r.rhs) > claspMax {
		return fmt.Sprintf("has right-hand side %d, past 2^31-1 (clasp reads 32-bit coefficients)", r.rhs)
	}
	for _, t := range r.terms {
		if abs64(t.Coef) > claspMax {
			return fmt.Sprintf("has coefficient %d on x%d, past 2^31-1 (clasp reads 32-bit coefficients)", t.Coef, t.Var)
		}
	}
	bound := r.rhs
	if r.op == "=" {
		bound++
	}
	for _, t := range r.terms {
		if t.Coef >= 0 {
			continue
		}
		if bound >= 0 && claspMax-bound < -t.Coef {
			return "needs a bound past 2^31-1 once its negative terms are flipped (clasp: \"bound out of range\")"
		}
		bound -= t.Coef
	}
	cut := max(bound, 1)
	var sum, top int64
	for _, t := range r.terms {
		w := min(abs64(t.Coef), cut)
		sum, top = sum+w, max(top, w)
		if sum > claspMax {
			return "has weights summing past 2^31-1 (clasp: \"Sum of weights out of range\")"
		}
	}
	// Where the weights left are equal, clasp divides by them, rounding
	// up as (sum + w - 1) / w in 32 bits: past that it answers wrongly
	// (UNSATISFIABLE on a feasible row), without an error.
	if sum+top-1 > claspMax || cut+top-1 > claspMax {
		return "has weights whose sum and largest together pass 2^31-1 (clasp's rounding overflows there, and it may answer UNSATISFIABLE without an error)"
	}
	return ""
}
