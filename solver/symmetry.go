package solver

import (
	"cmp"
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
//
// Devices are the second kind: on one node, two GPUs (device domains)
// with the same plan budget that no current lane names, where every lane
// drawing on either has a twin on the other with the same draws
// (devSwap). Their lex-leader constraints compare the lanes the swap
// moves, in lane order. Every constraint of both kinds is the lex-leader
// of one swap under one variable order (the node columns first, then the
// lanes with a device choice, in lane order), so together they keep the
// lexicographically greatest plan of every orbit.
type symmetry struct {
	classes [][]string
	cols    map[string][]int // node -> per column position, lane index (single-node lanes)
	devs    []devSwap
	e       *encode.Encoding
}

// devSwap exchanges two GPUs of one node: perm maps each lane it moves to
// its twin, and first lists the moved lanes whose twin comes later.
type devSwap struct {
	name  string
	perm  map[int]int
	first []int
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
	sy.findDeviceSwaps(laneAt, named)
	return sy
}

// findDeviceSwaps lists, per node, the swaps of two GPUs next to each
// other in the node's order (among those of equal budget) that are
// symmetries.
func (sy *symmetry) findDeviceSwaps(laneAt map[[2]string]int, named map[string]bool) {
	e := sy.e
	p := e.Pool
	choice := false
	for _, l := range e.Lanes {
		if len(p.Variants[l.Variant].Placements[l.Placement].Devices) > 0 {
			choice = true
			break
		}
	}
	if !choice {
		return
	}
	held := map[string]bool{} // node/domain a current lane names
	for _, cl := range p.Current.Lanes {
		for _, d := range cl.Devices {
			held[d] = true
		}
	}
	// The lanes drawing on each GPU, in lane order: a swap looks at the
	// lanes of its two GPUs only (scanning every lane for every pair
	// took 15.7 s on 1024x4000).
	onDevice := map[string][]int{}
	for li, l := range e.Lanes {
		for _, d := range p.Variants[l.Variant].Placements[l.Placement].Draws {
			ref := model.DeviceRef(d.Node, d.Domain)
			if ls := onDevice[ref]; len(ls) == 0 || ls[len(ls)-1] != li {
				onDevice[ref] = append(ls, li)
			}
		}
	}
	for _, n := range p.Nodes {
		if n.Unavailable != "" {
			continue
		}
		var group map[float64][]string = map[float64][]string{}
		var budgets []float64
		for _, d := range n.Domains {
			if d.Kind != "device" || held[model.DeviceRef(n.ID, d.ID)] {
				continue
			}
			if _, ok := group[d.Budget.PlanGb]; !ok {
				budgets = append(budgets, d.Budget.PlanGb)
			}
			group[d.Budget.PlanGb] = append(group[d.Budget.PlanGb], d.ID)
		}
		for _, b := range budgets {
			g := group[b]
			for i := 0; i+1 < len(g); i++ {
				lanes := mergeSorted(onDevice[model.DeviceRef(n.ID, g[i])], onDevice[model.DeviceRef(n.ID, g[i+1])])
				if ds, ok := sy.deviceSwap(laneAt, lanes, n.ID, g[i], g[i+1]); ok {
					sy.devs = append(sy.devs, ds)
				}
			}
		}
	}
}

// mergeSorted is the union of two ascending lists, ascending.
func mergeSorted(a, b []int) []int {
	out := make([]int, 0, len(a)+len(b))
	for len(a) > 0 || len(b) > 0 {
		switch {
		case len(b) == 0 || len(a) > 0 && a[0] < b[0]:
			out, a = append(out, a[0]), a[1:]
		case len(a) == 0 || b[0] < a[0]:
			out, b = append(out, b[0]), b[1:]
		default:
			out, a, b = append(out, a[0]), a[1:], b[1:]
		}
	}
	return out
}

// deviceSwap is the swap of GPUs a and b on node n, when it is a
// symmetry: every lane drawing on either (lanes, ascending) has its twin.
func (sy *symmetry) deviceSwap(laneAt map[[2]string]int, lanes []int, n, a, b string) (devSwap, bool) {
	e := sy.e
	p := e.Pool
	ra, rb := model.DeviceRef(n, a), model.DeviceRef(n, b)
	mapDev := func(ref string) string {
		switch ref {
		case ra:
			return rb
		case rb:
			return ra
		}
		return ref
	}
	ds := devSwap{name: fmt.Sprintf("symmetry[%s:%s>=%s]", n, a, b), perm: map[int]int{}}
	for _, li := range lanes {
		l := &e.Lanes[li]
		v := &p.Variants[l.Variant]
		pl := &v.Placements[l.Placement]
		devs := make([]string, len(pl.Devices))
		for i, d := range pl.Devices {
			devs[i] = mapDev(d)
		}
		slices.Sort(devs)
		lj, ok := laneAt[[2]string{v.ID, model.PlacementKey(pl.Nodes, devs)}]
		if !ok {
			return devSwap{}, false
		}
		if !slices.Equal(drawKeysBy(v, l.Placement, func(node, dom string) (string, string) {
			if node == n {
				_, dom, _ = strings.Cut(mapDev(model.DeviceRef(node, dom)), "/")
			}
			return node, dom
		}), drawKeysBy(v, e.Lanes[lj].Placement, nil)) {
			return devSwap{}, false
		}
		if lj != li {
			ds.perm[li] = lj
		}
	}
	if len(ds.perm) == 0 {
		return devSwap{}, false
	}
	for li, lj := range ds.perm {
		if li < lj {
			ds.first = append(ds.first, li)
		}
	}
	slices.Sort(ds.first)
	return ds, true
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
		pl := &v.Placements[l.Placement]
		devs := make([]string, len(pl.Devices))
		for i, d := range pl.Devices {
			node, dom, _ := strings.Cut(d, "/")
			devs[i] = model.DeviceRef(swap(node), dom)
		}
		slices.Sort(devs)
		lj, ok := laneAt[[2]string{v.ID, model.PlacementKey(ns, devs)}]
		if !ok {
			return false
		}
		if !slices.Equal(drawKeys(v, l.Placement, swap), drawKeys(v, e.Lanes[lj].Placement, nil)) {
			return false
		}
	}
	return true
}

// drawKeys lists a placement's draws, nodes mapped by f, in a canonical
// order.
func drawKeys(v *model.Variant, k int, f func(string) string) []model.Draw {
	if f == nil {
		return drawKeysBy(v, k, nil)
	}
	return drawKeysBy(v, k, func(n, d string) (string, string) { return f(n), d })
}

// drawKeysBy lists a placement's draws, each node and domain mapped by
// f, in a canonical order, so that equal lists mean equal draws. As
// formatted text they were 40% of the symmetry search's time on
// 256x1000.
func drawKeysBy(v *model.Variant, k int, f func(node, dom string) (string, string)) []model.Draw {
	out := slices.Clone(v.Placements[k].Draws)
	if f != nil {
		for i := range out {
			out[i].Node, out[i].Domain = f(out[i].Node, out[i].Domain)
		}
	}
	slices.SortFunc(out, func(a, b model.Draw) int {
		return cmp.Or(strings.Compare(a.Node, b.Node), strings.Compare(a.Domain, b.Domain), cmp.Compare(a.Gb, b.Gb))
	})
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
	for _, ds := range sy.devs {
		a := make([]z.Lit, len(ds.first))
		b := make([]z.Lit, len(ds.first))
		for i, li := range ds.first {
			a[i], b[i] = sy.e.Lanes[li].Lit, sy.e.Lanes[ds.perm[li]].Lit
		}
		sy.e.LexLeader(ds.name, a, b)
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
	return sy.canonicalDevices(sy.canonicalNodes(a))
}

func (sy *symmetry) canonicalNodes(a model.Assignment) model.Assignment {
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
		l.Devices = slices.Clone(l.Devices)
		for j, d := range l.Devices {
			node, dom, _ := strings.Cut(d, "/")
			if r, ok := rename[node]; ok {
				l.Devices[j] = model.DeviceRef(r, dom)
			}
		}
		slices.Sort(l.Devices)
		out.Lanes[i] = l
	}
	return out
}

// canonicalDevices moves a plan's lanes among interchangeable GPUs until
// every device swap's lex-leader constraint holds: each move it makes
// raises the plan in the constraints' order, so it ends.
func (sy *symmetry) canonicalDevices(a model.Assignment) model.Assignment {
	if len(sy.devs) == 0 {
		return a
	}
	e := sy.e
	at := make([]int, len(a.Lanes)) // assignment lane -> encoding lane
	on := map[int]bool{}
	for i, lc := range a.Lanes {
		at[i] = -1
		vi, ok := e.Index.Variant[lc.Variant]
		if !ok {
			return a
		}
		for _, li := range e.Variants[vi].Lanes {
			if e.Pool.Variants[vi].Placements[e.Lanes[li].Placement].On(lc.Nodes, lc.Devices) {
				at[i] = li
				on[li] = true
				break
			}
		}
	}
	moved := false
	for changed := true; changed; {
		changed = false
		for _, ds := range sy.devs {
			if !lexLess(on, ds) {
				continue
			}
			next := map[int]bool{}
			for li := range on {
				if lj, ok := ds.perm[li]; ok {
					li = lj
				}
				next[li] = true
			}
			for i, li := range at {
				if lj, ok := ds.perm[li]; ok && li >= 0 {
					at[i] = lj
				}
			}
			on, changed, moved = next, true, true
		}
	}
	if !moved {
		return a
	}
	out := model.Assignment{Lanes: slices.Clone(a.Lanes), Routes: a.Routes}
	for i, li := range at {
		if li < 0 {
			continue
		}
		pl := &e.Pool.Variants[e.Lanes[li].Variant].Placements[e.Lanes[li].Placement]
		out.Lanes[i].Nodes, out.Lanes[i].Devices = slices.Clone(pl.Nodes), slices.Clone(pl.Devices)
	}
	return out
}

// lexLess reports whether the plan's lanes moved by ds read
// lexicographically less than their twins: the swap would raise it.
func lexLess(on map[int]bool, ds devSwap) bool {
	for _, li := range ds.first {
		x, y := on[li], on[ds.perm[li]]
		if x != y {
			return y
		}
	}
	return false
}
