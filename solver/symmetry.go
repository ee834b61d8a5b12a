package solver

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/model"
)

// symmetry holds classes of interchangeable nodes: swapping any two nodes
// of a class maps every plan to a plan with the same objective, because
// the two have the same domains and budgets, the same links to every other
// node, and every variant's candidate lanes (with their draws) map onto
// each other; no pin and no current lane names them.
//
// For each class n1 < n2 < … (by id) the encoding gets lex-leader
// constraints column(n_i) >= column(n_i+1), a column being the node's
// single-node lane literals in variant order. Any plan can be permuted
// within a class so that its columns descend, so no objective value is
// lost; canonical does that permutation for plans found outside the
// solver (the warm start).
type symmetry struct {
	classes [][]string
	cols    map[string][]int // node -> per column position, lane index (single-node lanes)
	e       *encode.Encoding
}

func findSymmetry(e *encode.Encoding) *symmetry {
	p := e.Pool
	sy := &symmetry{e: e, cols: map[string][]int{}}
	named := map[string]bool{}
	for _, pin := range p.Pins {
		for _, n := range pin.Nodes {
			named[n] = true
		}
	}
	for _, cl := range p.Current.Lanes {
		for _, n := range cl.Nodes {
			named[n] = true
		}
	}
	used := map[string]bool{}
	for _, l := range e.Lanes {
		for _, n := range l.Nodes {
			used[n] = true
		}
	}
	// A quick signature groups the candidates; the swap check decides.
	groups := map[string][]string{}
	var order []string
	for _, n := range p.Nodes {
		if named[n.ID] || !used[n.ID] || n.Unavailable != "" {
			continue
		}
		var sig []string
		for _, d := range n.Domains {
			sig = append(sig, fmt.Sprintf("%s=%g", d.ID, d.Budget.PlanGb))
		}
		k := strings.Join(sig, ",")
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], n.ID)
	}
	laneAt := map[[2]string]int{} // {variant id, key} -> lane
	for li, l := range e.Lanes {
		laneAt[[2]string{p.Variants[l.Variant].ID, l.Key}] = li
	}
	for _, k := range order {
		var classes [][]string
		for _, n := range groups[k] {
			joined := false
			for ci := range classes {
				if sy.swaps(laneAt, classes[ci][0], n) {
					classes[ci] = append(classes[ci], n)
					joined = true
					break
				}
			}
			if !joined {
				classes = append(classes, []string{n})
			}
		}
		for _, c := range classes {
			if len(c) > 1 {
				slices.Sort(c)
				sy.classes = append(sy.classes, c)
			}
		}
	}
	sort.Slice(sy.classes, func(i, j int) bool { return sy.classes[i][0] < sy.classes[j][0] })
	// Columns: the variants with a single-node lane on the class's nodes.
	for _, c := range sy.classes {
		for vi := range p.Variants {
			id := p.Variants[vi].ID
			if _, ok := laneAt[[2]string{id, c[0]}]; !ok {
				continue
			}
			for _, n := range c {
				sy.cols[n] = append(sy.cols[n], laneAt[[2]string{id, n}])
			}
		}
	}
	return sy
}

// swaps reports whether exchanging nodes a and b is a symmetry.
func (sy *symmetry) swaps(laneAt map[[2]string]int, a, b string) bool {
	e := sy.e
	p := e.Pool
	for _, n := range p.Nodes {
		if n.ID != a && n.ID != b && e.Index.Linked(a, n.ID) != e.Index.Linked(b, n.ID) {
			return false
		}
	}
	swap := func(n string) string {
		switch n {
		case a:
			return b
		case b:
			return a
		}
		return n
	}
	for _, l := range e.Lanes {
		if !slices.Contains(l.Nodes, a) && !slices.Contains(l.Nodes, b) {
			continue
		}
		ns := make([]string, len(l.Nodes))
		for i, n := range l.Nodes {
			ns[i] = swap(n)
		}
		slices.Sort(ns)
		v := &p.Variants[l.Variant]
		lj, ok := laneAt[[2]string{v.ID, strings.Join(ns, "+")}]
		if !ok {
			return false
		}
		if !slices.Equal(drawKeys(v, l.Placement, swap), drawKeys(v, e.Lanes[lj].Placement, nil)) {
			return false
		}
	}
	return true
}

// drawKeys lists a placement's draws as text, nodes mapped by f.
func drawKeys(v *model.Variant, k int, f func(string) string) []string {
	var out []string
	for _, d := range v.Placements[k].Draws {
		n := d.Node
		if f != nil {
			n = f(n)
		}
		out = append(out, fmt.Sprintf("%s/%s=%g", n, d.Domain, d.Gb))
	}
	slices.Sort(out)
	return out
}

// constrain adds the lex-leader constraints of every class.
func (sy *symmetry) constrain() {
	for _, c := range sy.classes {
		for i := 0; i+1 < len(c); i++ {
			a, b := sy.column(c[i]), sy.column(c[i+1])
			sy.e.LexLeader("symmetry["+c[i]+">="+c[i+1]+"]", a, b)
		}
	}
}

func (sy *symmetry) column(n string) []z.Lit {
	var out []z.Lit
	for _, li := range sy.cols[n] {
		out = append(out, sy.e.Lanes[li].Lit)
	}
	return out
}

// canonical permutes the nodes of each class in a plan so that its
// columns descend, which the lex-leader constraints ask for. The objective
// does not change (the permutation is a symmetry).
func (sy *symmetry) canonical(a model.Assignment) model.Assignment {
	if len(sy.classes) == 0 {
		return a
	}
	on := map[[2]string]bool{} // {variant, node} for single-node lanes
	for _, l := range a.Lanes {
		if len(l.Nodes) == 1 {
			on[[2]string{l.Variant, l.Nodes[0]}] = true
		}
	}
	bits := func(n string) []bool {
		var out []bool
		for _, li := range sy.cols[n] {
			v := sy.e.Pool.Variants[sy.e.Lanes[li].Variant].ID
			out = append(out, on[[2]string{v, n}])
		}
		return out
	}
	rename := map[string]string{}
	for _, c := range sy.classes {
		sorted := slices.Clone(c)
		sort.SliceStable(sorted, func(i, j int) bool {
			x, y := bits(sorted[i]), bits(sorted[j])
			for k := range x {
				if x[k] != y[k] {
					return x[k]
				}
			}
			return false
		})
		for i, n := range sorted {
			if n != c[i] {
				rename[n] = c[i]
			}
		}
	}
	if len(rename) == 0 {
		return a
	}
	out := model.Assignment{Lanes: make([]model.LaneChoice, len(a.Lanes)), Routes: a.Routes}
	for i, l := range a.Lanes {
		l.Nodes = slices.Clone(l.Nodes)
		for j, n := range l.Nodes {
			if r, ok := rename[n]; ok {
				l.Nodes[j] = r
			}
		}
		slices.Sort(l.Nodes)
		out.Lanes[i] = l
	}
	return out
}
