package encode

import (
	"math/rand/v2"
	"testing"

	"github.com/go-air/gini/z"
)

// solveUnder reports whether the solver is SAT under the assumptions.
func solveUnder(c *cnf, ms ...z.Lit) bool {
	c.sat.Assume(ms...)
	return c.sat.Solve() == 1
}

// choose assigns the inputs of groups from a mixed-radix counter: digit 0
// is Else, digit b+1 is branch b.
func choose(gs []Group, inputs [][]z.Lit, code int) ([]z.Lit, int64) {
	var as []z.Lit
	var total int64
	for gi, g := range gs {
		n := len(g.Branches) + 1
		d := code % n
		code /= n
		for b := range g.Branches {
			if b+1 == d {
				as = append(as, inputs[gi][b])
			} else {
				as = append(as, inputs[gi][b].Not())
			}
		}
		if d == 0 {
			total += g.Else
		} else {
			total += g.Branches[d-1].W
		}
	}
	return as, total
}

func combos(gs []Group) int {
	n := 1
	for _, g := range gs {
		n *= len(g.Branches) + 1
	}
	return n
}

func randomGroups(r *rand.Rand, c *cnf, singletons bool) ([]Group, [][]z.Lit) {
	var gs []Group
	var inputs [][]z.Lit
	budget := 12 // input literals in all
	for budget > 0 {
		nb := 1
		if !singletons {
			nb = 1 + r.IntN(min(3, budget))
		}
		budget -= nb
		g := Group{}
		if !singletons && r.IntN(2) == 0 {
			g.Else = int64(r.IntN(6))
		}
		var in []z.Lit
		for range nb {
			m := c.newVar("in", MeanLane)
			in = append(in, m)
			g.Branches = append(g.Branches, Branch{m, int64(r.IntN(9))})
		}
		gs = append(gs, g)
		inputs = append(inputs, in)
	}
	return gs, inputs
}

// The diagram must accept exactly the assignments whose sum fits: for
// every bound K and every choice per group, SAT(root(K) ∧ choice) iff the
// sum is at most K. Singleton groups make it the plain monotone BDD.
func TestDiagramAcceptsExactlyTheAssignmentsThatFit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		singletons bool
	}{
		{"a BDD over single weighted literals", true},
		{"an MDD over at-most-one groups with else costs", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 11))
			for round := range 6 {
				c := newCNF(false)
				gs, inputs := randomGroups(r, c, tc.singletons)
				// Exact at-most-one per group, as the encoder's inputs are.
				for _, in := range inputs {
					c.atMostOne("g", in)
				}
				m := newMDD(c, "t", gs)
				var maxSum int64
				for code := range combos(gs) {
					_, s := choose(gs, inputs, code)
					maxSum = max(maxSum, s)
				}
				if m.MaxSum() != maxSum {
					t.Fatalf("round %d: MaxSum = %d, want %d", round, m.MaxSum(), maxSum)
				}
				// The ends, and a sample of bounds in between.
				ks := []int64{-1, 0, maxSum, maxSum + 1}
				for range 5 {
					ks = append(ks, r.Int64N(maxSum+1))
				}
				for _, k := range ks {
					root := m.Root(k)
					for code := range combos(gs) {
						as, s := choose(gs, inputs, code)
						got := solveUnder(c, append(as, root)...)
						if got != (s <= k) {
							t.Fatalf("round %d, K=%d, sum %d: SAT = %v, want %v", round, k, s, got, s <= k)
						}
					}
				}
			}
		})
	}
}

// Interval reduction shares nodes between bounds: asking for every K of a
// range must not create a node per K and layer.
func TestDiagramSharesNodesAcrossBounds(t *testing.T) {
	c := newCNF(false)
	var gs []Group
	for i := range 10 {
		gs = append(gs, Group{Branches: []Branch{{c.newVar("in", MeanLane), int64(10 + i%3)}}})
	}
	m := newMDD(c, "t", gs)
	for k := int64(0); k <= 110; k++ {
		m.Root(k)
	}
	if m.Nodes > 200 {
		t.Errorf("nodes = %d for 111 bounds over 10 terms, want far fewer than 111*10", m.Nodes)
	}
}

// The totalizer's Leq(k) must accept exactly the assignments with at
// most k true inputs, for every k up to its cap.
func TestTotalizerAcceptsExactlyTheCountsThatFit(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	for round := range 10 {
		c := newCNF(false)
		n := 1 + r.IntN(12)
		cap := 1 + r.IntN(n)
		var in []z.Lit
		for range n {
			in = append(in, c.newVar("in", MeanUncovered))
		}
		tot := newTotalizer(c, "t", in, cap)
		for k := -1; k <= n; k++ {
			leq, ok := tot.Leq(k)
			if !ok {
				if k+1 <= cap || k >= n {
					t.Fatalf("round %d: Leq(%d) unavailable with cap %d, n %d", round, k, cap, n)
				}
				continue
			}
			for bits := range 1 << n {
				var as []z.Lit
				cnt := 0
				for i, m := range in {
					if bits>>i&1 == 1 {
						as = append(as, m)
						cnt++
					} else {
						as = append(as, m.Not())
					}
				}
				got := solveUnder(c, append(as, leq)...)
				if got != (cnt <= k) {
					t.Fatalf("round %d, n=%d cap=%d k=%d count=%d: SAT = %v, want %v", round, n, cap, k, cnt, got, cnt <= k)
				}
			}
		}
	}
}

// A guarded clause whose literals are already false at level 0 must not
// panic gini: the guard dies instead, and assuming it fails.
func TestGuardedEmptyClauseKillsTheGuardInsteadOfPanicking(t *testing.T) {
	c := newCNF(false)
	x := c.newVar("x", MeanLane)
	c.clause(x.Not())
	g := c.openGuard("g")
	c.clause(x)
	c.closeGuard()
	if !c.Log.Guards[g].Dead {
		t.Fatal("guard is alive after an empty guarded clause")
	}
	if solveUnder(c, c.Log.Guards[g].Lit) {
		t.Error("assuming a dead guard is SAT, want UNSAT")
	}
	if !solveUnder(c) {
		t.Error("problem without the guard is UNSAT, want SAT")
	}
	c.retireGuard(g)
}
