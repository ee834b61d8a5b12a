package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/go-air/gini/z"

	"github.com/poolsolve/poolsolve/internal/printable"
)

// WriteCNF writes the hard constraints as DIMACS CNF: the clause log with
// pins, cordons and level bounds as unit clauses. It carries no
// objective; levels are bounded only through Options.Fixes.
func (in *Instance) WriteCNF(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, l := range in.header(CNF) {
		fmt.Fprintf(bw, "c %s\n", l)
	}
	in.writeVarComments(bw)
	n := 0
	in.Clauses(func([]z.Lit) { n++ })
	fmt.Fprintf(bw, "p cnf %d %d\n", in.NumVars(), n)
	var buf []byte
	in.Clauses(func(ls []z.Lit) {
		buf = in.appendClause(buf[:0], ls)
		bw.Write(buf)
	})
	return bw.Flush()
}

// WriteWCNF writes the instance as classic weighted MaxSAT: "p wcnf
// vars clauses top", hard clauses weighted top (the clause log, pins,
// cordons, level bounds), and one soft unit clause per objective term: a
// term c x costs c when x is true, so it is the clause (-x) weighted c; a
// negative c becomes the clause (x) weighted -c, and the constant moves
// into the offset the header states.
func (in *Instance) WriteWCNF(w io.Writer) error {
	obj := in.Objective()
	offset := obj.Offset
	var top int64 = 1
	for _, t := range obj.Terms {
		if t.Coef < 0 {
			offset += t.Coef
		}
		var ok bool
		if top, ok = addChecked(top, abs64(t.Coef)); !ok {
			return ErrOverflow
		}
	}
	bw := bufio.NewWriter(w)
	for _, l := range in.header(WCNF) {
		fmt.Fprintf(bw, "c %s\n", l)
	}
	if obj.Level > 0 || obj.Flattened {
		fmt.Fprintf(bw, "c soft clauses: one unit per objective term; the objective's value = the file's optimum cost + %d\n", offset)
	}
	in.writeVarComments(bw)
	hard := 0
	in.Clauses(func([]z.Lit) { hard++ })
	fmt.Fprintf(bw, "p wcnf %d %d %d\n", in.NumVars(), hard+len(obj.Terms), top)
	topText := strconv.FormatInt(top, 10) + " "
	var buf []byte
	in.Clauses(func(ls []z.Lit) {
		buf = append(buf[:0], topText...)
		buf = in.appendClause(buf, ls)
		bw.Write(buf)
	})
	for _, t := range obj.Terms {
		lit := -int64(t.Var)
		if t.Coef < 0 {
			lit = int64(t.Var)
		}
		fmt.Fprintf(bw, "%d %d 0\n", abs64(t.Coef), lit)
	}
	return bw.Flush()
}

// appendClause appends "l1 l2 ... 0\n"; the empty clause is written as
// the negated constant, which the log's unit clause contradicts, because
// not every reader takes a bare "0".
func (in *Instance) appendClause(buf []byte, ls []z.Lit) []byte {
	if len(ls) == 0 {
		ls = []z.Lit{in.Enc.T.Not()}
	}
	for _, m := range ls {
		buf = strconv.AppendInt(buf, int64(m.Dimacs()), 10)
		buf = append(buf, ' ')
	}
	return append(buf, "0\n"...)
}

// writeVarComments lists the variables that mean something to an
// operator; the rest are the encodings' auxiliaries.
func (in *Instance) writeVarComments(bw *bufio.Writer) {
	bw.WriteString("c variables (numbers not listed are auxiliary: decision-diagram nodes, totalizer outputs, at-most-one registers; the JSON export names them all):\n")
	for _, x := range in.vars {
		if x.Var == 0 || auxiliary(x.Meaning) {
			continue
		}
		fmt.Fprintf(bw, "c   %d %s\n", x.Var, printable.String(x.About))
	}
}
