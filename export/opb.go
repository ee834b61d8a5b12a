package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"

	"github.com/poolsolve/poolsolve/encode"

	"github.com/poolsolve/poolsolve/internal/printable"
)

// opbRow is a row in the form every PB solver reads: sum >= rhs or
// sum = rhs ("<=" is negated, since clasp rejects it).
type opbRow struct {
	name  string
	terms []encode.Term
	op    string
	rhs   int64
}

// linearRows turns the rows into >= / = form. An empty row is kept out
// when it holds and becomes an impossible one (1 x >= 2) when it does not.
func (in *Instance) linearRows() []opbRow {
	var out []opbRow
	for _, r := range in.rows {
		if len(r.Terms) == 0 {
			if constHolds(r) {
				continue
			}
			out = append(out, opbRow{name: r.Name + " (never holds)", terms: []encode.Term{{Var: in.Enc.T.Var(), Coef: 1}}, op: ">=", rhs: 2})
			continue
		}
		switch r.Op {
		case encode.LE:
			ts := make([]encode.Term, len(r.Terms))
			for i, t := range r.Terms {
				ts[i] = encode.Term{Var: t.Var, Coef: -t.Coef}
			}
			out = append(out, opbRow{r.Name, ts, ">=", -r.RHS})
		case encode.EQ:
			out = append(out, opbRow{r.Name, r.Terms, "=", r.RHS})
		default:
			out = append(out, opbRow{r.Name, r.Terms, ">=", r.RHS})
		}
	}
	return out
}

func constHolds(r encode.Row) bool {
	switch r.Op {
	case encode.LE:
		return 0 <= r.RHS
	case encode.GE:
		return 0 >= r.RHS
	}
	return r.RHS == 0
}

// WriteOPB writes the instance as OPB: "* #variable= N #constraint= M",
// comments starting "*", "min: ... ;" and constraints with ">=" and "="
// only. Variables are x<number>; N is the highest number used.
func (in *Instance) WriteOPB(w io.Writer) error {
	bw := bufio.NewWriter(w)
	rows := in.linearRows()
	obj := in.Objective()
	n := 0
	for _, r := range rows {
		for _, t := range r.terms {
			n = max(n, int(t.Var))
		}
	}
	for _, t := range obj.Terms {
		n = max(n, int(t.Var))
	}
	fmt.Fprintf(bw, "* #variable= %d #constraint= %d\n", n, len(rows))
	for _, l := range in.header(OPB) {
		fmt.Fprintf(bw, "* %s\n", l)
	}
	fmt.Fprintf(bw, "* variables:\n")
	for _, x := range in.vars {
		if x.Linear {
			fmt.Fprintf(bw, "*   x%d %s\n", x.Var, printable.String(x.About))
		}
	}
	if len(obj.Terms) > 0 {
		bw.WriteString("min: ")
		writeOPBTerms(bw, obj.Terms)
		bw.WriteString(" ;\n")
	} else if obj.Level > 0 || obj.Flattened {
		bw.WriteString("* the objective has no terms: every solution scores the offset\n")
	}
	for _, r := range rows {
		fmt.Fprintf(bw, "* %s\n", printable.String(r.name))
		writeOPBTerms(bw, r.terms)
		fmt.Fprintf(bw, " %s %d ;\n", r.op, r.rhs)
	}
	return bw.Flush()
}

func writeOPBTerms(bw *bufio.Writer, ts []encode.Term) {
	var buf []byte
	for i, t := range ts {
		buf = buf[:0]
		if i > 0 {
			buf = append(buf, ' ')
		}
		if t.Coef >= 0 {
			buf = append(buf, '+')
		}
		buf = strconv.AppendInt(buf, t.Coef, 10)
		buf = append(buf, " x"...)
		buf = strconv.AppendInt(buf, int64(t.Var), 10)
		bw.Write(buf)
	}
}
