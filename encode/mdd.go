package encode

import (
	"slices"
	"sort"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/internal/clock"
)

// Group is one layer of a weighted sum: at most one of its branches is
// true, and the group costs that branch's weight, or Else when none is.
// A single literal with weight w is Group{Branches: []Branch{{m, w}}}.
type Group struct {
	Else     int64    `json:"else"`
	Branches []Branch `json:"branches"`
}

// Branch is one choice of a group.
type Branch struct {
	Lit z.Lit `json:"lit"`
	W   int64 `json:"w"`
}

// cost is the group's value under val, the first true branch counting.
func (g *Group) cost(val func(z.Lit) bool) int64 {
	for _, b := range g.Branches {
		if val(b.Lit) {
			return b.W
		}
	}
	return g.Else
}

const (
	inf    = int64(1) << 60
	negInf = -inf
)

// mdd encodes "sum of the groups <= K" as an interval-reduced multi-valued
// decision diagram (Abío, Nieuwenhuis, Oliveras, Rodríguez-Carbonell,
// "A New Look at BDDs for Pseudo-Boolean Constraints", JAIR 45, 2012,
// generalised to at-most-one groups as in Bofill et al. 2020). A node of
// layer i stands for "groups i.. sum to at most K" and is valid for every
// K of an interval [lo, hi]; the memo keeps those intervals per layer, so
// one diagram serves many bounds K (the memory auto-lane bounds share it).
//
// Clauses are one-sided, which is enough because roots are only ever
// asserted or assumed true: per branch (¬node ∨ ¬lit ∨ child(K-w)) and
// for the rest (¬node ∨ lit_1 ∨ … ∨ lit_k ∨ child(K-else)).
//
// Soundness needs either exact branch literals or branches that cost at
// least Else: a spuriously true branch then only asks for more. Weights
// are normalised so that each group's cheapest option costs 0 (Offset).
type mdd struct {
	c      *cnf
	name   string
	prefix int32 // name, registered for the nodes' lazy names
	groups []Group
	// Offset is what the normalisation took out; bounds are on the
	// original sum, so Root subtracts it.
	Offset  int64
	maxRest []int64 // maxRest[i]: the largest sum of groups i..
	layers  [][]mddNode
	Nodes   int
	Clauses int
	order   []int // order[i]: index of layer i's group in the caller's slice
	nodes   []mddRef
	limit   int // node cap, 0 for none; build panics with errTooBig past it
	// deadline, when set, also stops the build (checked every 1024 nodes).
	deadline time.Time
	clock    *clock.Clock // what deadline is read on
}

// mddRef is a node for Values: true iff groups layer.. sum to at most lo.
type mddRef struct {
	lit   z.Lit
	layer int
	lo    int64
}

type mddNode struct {
	lo, hi int64
	lit    z.Lit
}

// newMDD prepares a diagram; groups with no branch and no cost are
// dropped, the rest are ordered by their largest weight, descending, which
// keeps interval-reduced diagrams small.
func newMDD(c *cnf, name string, groups []Group) *mdd {
	m := &mdd{c: c, name: name, prefix: c.namePrefix(name)}
	type og struct {
		g   Group
		ix  int
		max int64
	}
	var gs []og
	for i, g := range groups {
		lo, hi := g.Else, g.Else
		var bs []Branch
		for _, b := range g.Branches {
			if b.Lit == c.F() {
				continue
			}
			bs = append(bs, b)
			lo, hi = min(lo, b.W), max(hi, b.W)
		}
		if b, ok := constBranch(c, bs); ok {
			m.Offset += b.W
			continue
		}
		m.Offset += lo
		ng := Group{Else: g.Else - lo}
		for _, b := range bs {
			ng.Branches = append(ng.Branches, Branch{b.Lit, b.W - lo})
		}
		if hi == lo {
			continue
		}
		gs = append(gs, og{ng, i, hi - lo})
	}
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].max > gs[j].max })
	m.maxRest = make([]int64, len(gs)+1)
	for i := len(gs) - 1; i >= 0; i-- {
		m.maxRest[i] = min(inf, m.maxRest[i+1]+gs[i].max) // saturated: never wraps
	}
	for _, g := range gs {
		m.groups = append(m.groups, g.g)
		m.order = append(m.order, g.ix)
	}
	m.layers = make([][]mddNode, len(gs))
	return m
}

// constBranch reports a branch that is constant true.
func constBranch(c *cnf, bs []Branch) (Branch, bool) {
	for _, b := range bs {
		if b.Lit == c.T {
			return b, true
		}
	}
	return Branch{}, false
}

// Root returns a literal that, when true, forces sum <= k. It is c.T when
// every assignment fits and c.F when none does.
func (m *mdd) Root(k int64) z.Lit {
	l, _, _ := m.build(0, k-m.Offset)
	return l
}

// MaxSum is the largest value the sum can take.
func (m *mdd) MaxSum() int64 { return m.Offset + m.maxRest[0] }

func (m *mdd) build(i int, k int64) (z.Lit, int64, int64) {
	if k < 0 {
		return m.c.F(), negInf, -1
	}
	if k >= m.maxRest[i] {
		return m.c.T, m.maxRest[i], inf
	}
	layer := m.layers[i]
	j := sort.Search(len(layer), func(j int) bool { return layer[j].hi >= k })
	if j < len(layer) && layer[j].lo <= k {
		return layer[j].lit, layer[j].lo, layer[j].hi
	}
	g := &m.groups[i]
	lo, hi := negInf, inf
	kids := make([]z.Lit, len(g.Branches)+1)
	for b := -1; b < len(g.Branches); b++ {
		w := g.Else
		if b >= 0 {
			w = g.Branches[b].W
		}
		l, clo, chi := m.build(i+1, k-w)
		kids[b+1] = l
		lo = max(lo, sat(clo+w))
		hi = min(hi, sat(chi+w))
	}
	var lit z.Lit
	if allSame(kids) {
		lit = kids[0]
	} else {
		if m.limit > 0 && m.Nodes >= m.limit {
			panic(errTooBig)
		}
		if m.Nodes&1023 == 0 && !m.deadline.IsZero() && m.clock.Now().After(m.deadline) {
			panic(errTooBig)
		}
		lit = m.c.newLazyVar(m.prefix, i, k, MeanMDD)
		m.Nodes++
		n := lit.Not()
		for b, br := range g.Branches {
			if kids[b+1] == m.c.T {
				continue
			}
			m.c.clause(n, br.Lit.Not(), kids[b+1])
			m.Clauses++
		}
		if kids[0] != m.c.T {
			cl := make([]z.Lit, 0, len(g.Branches)+2)
			cl = append(cl, n)
			for _, br := range g.Branches {
				cl = append(cl, br.Lit)
			}
			cl = append(cl, kids[0])
			m.c.clause(cl...)
			m.Clauses++
		}
		m.nodes = append(m.nodes, mddRef{lit: lit, layer: i, lo: lo})
	}
	m.layers[i] = slices.Insert(layer, j, mddNode{lo: lo, hi: hi, lit: lit})
	return lit, lo, hi
}

func sat(x int64) int64 { return max(negInf, min(inf, x)) }

func allSame(ms []z.Lit) bool {
	for _, m := range ms[1:] {
		if m != ms[0] {
			return false
		}
	}
	return true
}
