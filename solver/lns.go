package solver

import (
	"slices"
	"time"

	"github.com/go-air/gini/z"
)

// lns is one step of SAT-based large neighbourhood search: a few nodes
// drawn with the seeded generator are freed, every lane touching none of
// them is held at the incumbent, and gini looks for a
// plan under the level's bound in a short Try. An UNSAT or a timeout says
// nothing about the level, so only a SAT answer counts.
func (x *exact) lns(i int, end time.Time, bound []z.Lit) (bool, error) {
	if len(x.nodes) < 2 {
		return false, nil
	}
	k := min(4, max(1, len(x.nodes)/2))
	free := map[string]bool{}
	for _, j := range x.rng.Perm(len(x.nodes))[:k] {
		free[x.nodes[j]] = true
	}
	placed := map[[2]string]bool{}
	for _, l := range x.best.Lanes {
		placed[[2]string{l.Variant, joinNodes(l.Nodes)}] = true
	}
	fix := slices.Clone(bound)
	for _, l := range x.e.Lanes {
		if slices.ContainsFunc(l.Nodes, func(n string) bool { return free[n] }) {
			continue
		}
		if placed[[2]string{x.p.Variants[l.Variant].ID, l.Key}] {
			fix = append(fix, l.Lit)
		} else {
			fix = append(fix, l.Lit.Not())
		}
	}
	if x.tryUntil(end, lnsTry, fix...) != 1 {
		return false, nil
	}
	return x.decodeSAT()
}

func joinNodes(ns []string) string {
	s := slices.Clone(ns)
	slices.Sort(s)
	out := ""
	for i, n := range s {
		if i > 0 {
			out += "+"
		}
		out += n
	}
	return out
}
