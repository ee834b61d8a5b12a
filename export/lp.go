package export

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/poolsolve/poolsolve/encode"

	"github.com/poolsolve/poolsolve/internal/printable"
)

// maxExact is the largest integer a double holds exactly; LP readers
// parse coefficients as doubles.
const maxExact = 1 << 53

// WriteLP writes the instance as a CPLEX LP 0/1 program: "\" comments,
// Minimize, Subject To (one named row per constraint), Binary, End.
// Names are the variables' LP names (Var.LP); rows get the encoder's row
// names, sanitised the same way.
func (in *Instance) WriteLP(w io.Writer) error {
	bw := bufio.NewWriter(w)
	obj := in.Objective()
	for _, l := range in.header(LP) {
		fmt.Fprintf(bw, "\\ %s\n", l)
	}
	bw.WriteString("\\ variables (number as in the OPB, CNF and JSON exports):\n")
	for _, x := range in.vars {
		if x.Linear {
			fmt.Fprintf(bw, "\\   %s (x%d) %s\n", x.LP, x.Var, printable.String(x.About))
		}
	}
	bw.WriteString("Minimize\n obj:")
	if len(obj.Terms) == 0 {
		fmt.Fprintf(bw, " 0 %s\n", in.vars[in.Enc.T.Var()].LP)
	} else {
		in.writeLPTerms(bw, obj.Terms)
		bw.WriteString("\n")
	}
	bw.WriteString("Subject To\n")
	taken := map[string]bool{}
	for _, r := range in.rows {
		name := unique(taken, lpSafe(sanitize(r.Name, 200), "c_"))
		terms, op, rhs := r.Terms, string(r.Op), r.RHS
		if len(terms) == 0 {
			if constHolds(r) {
				continue
			}
			terms, op, rhs = []encode.Term{{Var: in.Enc.T.Var(), Coef: 1}}, ">=", 2
		}
		fmt.Fprintf(bw, " %s:", name)
		in.writeLPTerms(bw, terms)
		fmt.Fprintf(bw, " %s %d\n", op, rhs)
	}
	bw.WriteString("Binary\n")
	n := 0
	for _, x := range in.vars {
		if !x.Linear {
			continue
		}
		if n%8 == 0 {
			if n > 0 {
				bw.WriteString("\n")
			}
			bw.WriteString(" ")
		}
		bw.WriteString(" " + x.LP)
		n++
	}
	if n > 0 {
		bw.WriteString("\n")
	}
	bw.WriteString("End\n")
	return bw.Flush()
}

// writeLPTerms writes " + 3 name - 2 name ...", eight terms a line.
func (in *Instance) writeLPTerms(bw *bufio.Writer, ts []encode.Term) {
	for i, t := range ts {
		if i > 0 && i%8 == 0 {
			bw.WriteString("\n  ")
		}
		sign := "+"
		c := t.Coef
		if c < 0 {
			sign, c = "-", -c
		}
		fmt.Fprintf(bw, " %s %d %s", sign, c, in.vars[t.Var].LP)
	}
}

// lpSafe prefixes a name that is empty or starts with a digit or an "e"
// (some LP readers take "e..." for an exponent).
func lpSafe(name, prefix string) string {
	if name == "" || strings.ContainsRune("0123456789eE", rune(name[0])) {
		return prefix + name
	}
	return name
}

// unique returns name, or name_2, name_3 ... when taken, and takes it.
func unique(taken map[string]bool, name string) string {
	out := name
	for k := 2; taken[out]; k++ {
		out = name + "_" + strconv.Itoa(k)
	}
	taken[out] = true
	return out
}
