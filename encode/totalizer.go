package encode

import "github.com/go-air/gini/z"

// Totalizer counts true literals (Bailleux and Boufkhad 2003), k-bounded
// and one-directional: out[j] is forced true when at least j+1 inputs are
// true, and counts at or above the cap all land on the last output. Only
// the direction inputs -> outputs is encoded, which suffices because
// bounds are asserted as ¬out[k] ("at most k").
type Totalizer struct {
	Inputs []z.Lit
	Cap    int
	Out    []z.Lit
	c      *cnf
	nodes  []totNode
	// Clauses is the number of clauses the tree took.
	Clauses int
}

// totNode is one tree node, for Values: out[j] = count(inputs[lo:hi]) > j.
type totNode struct {
	lo, hi int
	out    []z.Lit
}

// newTotalizer builds a totalizer whose outputs reach cap (at least 1).
func newTotalizer(c *cnf, name string, inputs []z.Lit, cap int) *Totalizer {
	t := &Totalizer{Inputs: inputs, Cap: max(1, min(cap, len(inputs))), c: c}
	if len(inputs) > 0 {
		t.Out = t.build(name, 0, len(inputs))
	}
	return t
}

func (t *Totalizer) build(name string, lo, hi int) []z.Lit {
	if hi-lo == 1 {
		return []z.Lit{t.Inputs[lo]}
	}
	mid := (lo + hi) / 2
	a := t.build(name, lo, mid)
	b := t.build(name, mid, hi)
	n := min(hi-lo, t.Cap)
	out := make([]z.Lit, n)
	for j := range out {
		out[j] = t.c.newVar(name+"#tot"+itoa(lo)+"-"+itoa(hi)+">"+itoa(j), MeanTotalizer)
	}
	// a_i and b_j true (i, j counted from 1; 0 means "nothing needed")
	// imply out[i+j-1], saturated at the cap.
	for i := 0; i <= len(a); i++ {
		for j := 0; j <= len(b); j++ {
			if i+j == 0 {
				continue
			}
			o := out[min(i+j, n)-1]
			switch {
			case i == 0:
				t.c.clause(b[j-1].Not(), o)
			case j == 0:
				t.c.clause(a[i-1].Not(), o)
			default:
				t.c.clause(a[i-1].Not(), b[j-1].Not(), o)
			}
			t.Clauses++
		}
	}
	t.nodes = append(t.nodes, totNode{lo: lo, hi: hi, out: out})
	return out
}

// Leq returns a literal that forces at most k inputs true, and false when
// k is beyond the cap (not encodable: rebuild with a larger cap).
func (t *Totalizer) Leq(k int) (z.Lit, bool) {
	switch {
	case k < 0:
		return t.c.F(), true
	case k >= len(t.Inputs):
		return t.c.T, true
	case k+1 <= t.Cap:
		return t.Out[k].Not(), true
	}
	return z.LitNull, false
}
