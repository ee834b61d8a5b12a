package encode

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/go-air/gini/z"
)

// Levels is the number of objective levels.
const Levels = 4

// Offset is the part of level i (0-based) that no decision changes.
func (e *Encoding) Offset(i int) int64 { return e.Linear.Offsets[i] }

// LevelBound returns a literal that, assumed, forces level i (0-based, 0-2)
// to at most k: a k-bounded totalizer over the counted literals, built on
// first use with its cap at k+1 (and rebuilt larger if a later k exceeds
// it); its clauses are permanent and its outputs serve every later k. It
// is e.T when every plan meets k and e.F when none can. Level 4 has
// L4Bound instead.
func (e *Encoding) LevelBound(i int, k int64) z.Lit {
	if i < 0 || i >= 3 {
		return e.F()
	}
	k -= e.Linear.Offsets[i]
	if k < 0 {
		return e.F()
	}
	return e.countBound(i, k)
}

// errTooBig aborts a diagram that outgrows its node cap.
var errTooBig = errors.New("encode: bound diagram over its node cap")

// diagram is one level-4 decision diagram at one resolution. Its interval
// memo is shared by every bound asked of it, so a new bound adds only the
// nodes it does not share; each batch of new clauses has its own
// activation literal (gini needs level 0 to check a guarded clause, and
// opening a guard is what gets it there), and all are assumed with a root.
type diagram struct {
	m        *mdd
	guards   []int
	constant int64 // groups made constant by fixed literals
}

// L4Bound returns literals that, assumed together, bound level 4 by k over
// weights divided by delta (a positive resolution, 1 = exact):
//
//   - restrict rounds each weight up and the bound down: every plan the
//     literals admit has level 4 <= k, so a SAT answer is an improvement;
//   - otherwise weights round down: every plan with level 4 <= k is
//     admitted, so an UNSAT answer proves level 4 > k.
//
// This is the varying-resolution scheme of Demirović and Stuckey (CP
// 2019): a coarse diagram is small, and the caller halves delta as time
// allows. Diagrams stay in the solver until ReleaseBound. ok is false when
// the diagram would pass maxNodes in all (0: no cap), or e.Deadline
// passes while it grows; it is then removed.
func (e *Encoding) L4Bound(k, delta int64, restrict bool, maxNodes int) (lits []z.Lit, ok bool) {
	delta = max(delta, 1)
	return e.l4Bound(l4Key{delta: delta, restrict: restrict}, k, maxNodes, func() ([]Group, int64) {
		if delta > 1 {
			return scaled(e.l4, delta, restrict), 0
		}
		return e.l4, 0
	})
}

// L4BoundFixed is the exact L4Bound (delta 1) for plans that also meet
// fixed: the diagram leaves out every branch fixed false and turns a
// group with a branch fixed true into a constant, so it is much smaller
// when many literals are fixed. Its literals must be assumed together
// with fixed: alone they admit plans of any value. gen names the fixed
// set (non-zero); a new gen retires the diagram of the old one.
func (e *Encoding) L4BoundFixed(k int64, gen uint64, fixed []z.Lit, maxNodes int) (lits []z.Lit, ok bool) {
	for key := range e.l4Live {
		if key.fixed != 0 && key.fixed != gen {
			e.retire(key)
		}
	}
	return e.l4Bound(l4Key{delta: 1, restrict: true, fixed: gen}, k, maxNodes, func() ([]Group, int64) {
		return fixGroups(e.l4, fixed)
	})
}

// SumBound returns literals that, assumed, bound a sum of groups by k:
// the caller's own pseudo-boolean constraint (a reduced-cost knapsack),
// removed with the level-4 diagrams of the same gen by ReleaseBound or
// by L4BoundFixed with another gen.
func (e *Encoding) SumBound(gen uint64, groups []Group, k int64, maxNodes int) (lits []z.Lit, ok bool) {
	return e.l4Bound(l4Key{delta: 1, fixed: gen}, k+e.Linear.Offsets[3], maxNodes, func() ([]Group, int64) {
		return groups, 0
	})
}

// fixGroups simplifies groups under fixed literals; the constant part
// of the groups that became constant is returned apart.
func fixGroups(gs []Group, fixed []z.Lit) ([]Group, int64) {
	val := map[z.Var]bool{}
	for _, m := range fixed {
		val[m.Var()] = m.IsPos()
	}
	known := func(m z.Lit) (truth, ok bool) {
		v, ok := val[m.Var()]
		return v == m.IsPos(), ok
	}
	var out []Group
	var constant int64
	for _, g := range gs {
		ng := Group{Else: g.Else}
		forced, isForced := int64(0), false
		for _, b := range g.Branches {
			t, ok := known(b.Lit)
			switch {
			case !ok:
				ng.Branches = append(ng.Branches, b)
			case t && isForced:
				forced = max(forced, b.W) // diagram semantics: the dearest true branch
			case t:
				forced, isForced = b.W, true
			}
		}
		switch {
		case isForced:
			constant += forced
		case len(ng.Branches) == 0:
			constant += g.Else
		default:
			out = append(out, ng)
		}
	}
	return out, constant
}

func (e *Encoding) l4Bound(key l4Key, k int64, maxNodes int, groups func() ([]Group, int64)) (lits []z.Lit, ok bool) {
	k -= e.Linear.Offsets[3]
	if k < 0 {
		return []z.Lit{e.F()}, true
	}
	delta := key.delta
	d := e.l4Live[key]
	if d == nil {
		gs, constant := groups()
		name := fmt.Sprintf("l4/%d", delta)
		if !key.restrict {
			name += "~"
		}
		if key.fixed != 0 {
			name = fmt.Sprintf("l4/fixed%d", key.fixed)
			if !key.restrict {
				name = fmt.Sprintf("rc/%d", key.fixed)
			}
		}
		d = &diagram{m: newMDD(e.cnf, name, gs), constant: constant}
		if e.l4Live == nil {
			e.l4Live = map[l4Key]*diagram{}
		}
		e.l4Live[key] = d
	}
	k -= d.constant
	if k < 0 {
		return []z.Lit{e.F()}, true
	}
	kk := floorDiv(k, delta)
	if kk >= d.m.MaxSum() {
		return []z.Lit{e.T}, true
	}
	g := e.openGuard(fmt.Sprintf("%s<=%d", d.m.name, kk))
	e.family("level4-bound")
	d.m.limit = maxNodes
	d.m.deadline, d.m.clock = e.Deadline, e.Clock
	d.guards = append(d.guards, g)
	defer e.closeGuard()
	defer func() {
		if r := recover(); r != nil {
			if r != errTooBig { //nolint:errorlint // our own sentinel value
				panic(r)
			}
			e.closeGuard()
			e.retire(key)
			lits, ok = nil, false
		}
	}()
	before := e.Log.Len()
	root := d.m.Root(kk)
	if e.Log.Len() == before {
		// Every node was shared: the batch guards nothing.
		e.closeGuard()
		e.retireGuard(g)
		d.guards = d.guards[:len(d.guards)-1]
	}
	for _, gi := range d.guards {
		if gd := e.Log.Guards[gi]; !gd.Dead {
			lits = append(lits, gd.Lit)
		} else if gd.Lit != z.LitNull {
			lits = append(lits, gd.Lit) // false for good: the bound fails
		}
	}
	return append(lits, root), true
}

func (e *Encoding) retire(key l4Key) {
	d := e.l4Live[key]
	if d == nil {
		return
	}
	for _, g := range d.guards {
		e.retireGuard(g)
	}
	delete(e.l4Live, key)
}

type l4Key struct {
	delta    int64
	restrict bool
	fixed    uint64 // L4BoundFixed's generation, 0 otherwise
}

func scaled(gs []Group, delta int64, up bool) []Group {
	f := func(w int64) int64 {
		if up {
			return -floorDiv(-w, delta)
		}
		return floorDiv(w, delta)
	}
	out := make([]Group, len(gs))
	for i, g := range gs {
		ng := Group{Else: f(g.Else), Branches: make([]Branch, len(g.Branches))}
		for j, b := range g.Branches {
			ng.Branches[j] = Branch{b.Lit, f(b.W)}
		}
		out[i] = ng
	}
	return out
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// L4MaxSum is the largest value level 4 can take, offset included.
func (e *Encoding) L4MaxSum() int64 {
	return newMDD(e.cnf, "", e.l4).MaxSum() + e.Linear.Offsets[3]
}

func (e *Encoding) countBound(i int, k int64) z.Lit {
	n := int64(len(e.counts[i]))
	if k >= n {
		return e.T
	}
	t := e.tot[i]
	if t == nil || int64(t.Cap) < k+1 {
		e.family(fmt.Sprintf("level%d-totalizer", i+1))
		t = newTotalizer(e.cnf, fmt.Sprintf("level%d", i+1), e.counts[i], int(k+1))
		e.tot[i] = t
		e.tots = append(e.tots, t)
	}
	l, _ := t.Leq(int(k))
	return l
}

// ReleaseBound removes every level-4 diagram from the solver.
func (e *Encoding) ReleaseBound() {
	keys := make([]l4Key, 0, len(e.l4Live))
	for k := range e.l4Live {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b l4Key) int { // map order must not reach gini
		switch {
		case a.fixed != b.fixed:
			return cmp.Compare(a.fixed, b.fixed)
		case a.delta != b.delta:
			return cmp.Compare(a.delta, b.delta)
		case a.restrict == b.restrict:
			return 0
		case a.restrict:
			return -1
		}
		return 1
	})
	for _, k := range keys {
		e.retire(k)
	}
}

// Freeze makes "level i <= k" permanent for levels 0-2: a unit clause on
// the totalizer output. Level 4 is the last level and is never frozen.
func (e *Encoding) Freeze(i int, k int64) {
	if i < 0 || i >= 3 {
		return
	}
	l := e.LevelBound(i, k)
	e.family(fmt.Sprintf("level%d-freeze", i+1))
	e.clause(l)
}

// BoundSize is the size of the live level-4 diagrams, for reports.
func (e *Encoding) BoundSize() (nodes, clauses int) {
	for _, d := range e.l4Live {
		nodes += d.m.Nodes
		clauses += d.m.Clauses
	}
	return nodes, clauses
}

// GroupBound is a lower bound on level 4 once levels 1 and 2 are frozen at
// l1 and l2. Every variant group costs at least its cheapest option a_v,
// and placing it at least d_v more. A covered source costs at least its
// cheapest allowed route plus d_v / n_v of that route's variant, n_v being
// how many sources could share the lane: over any plan the shares of a
// placed variant add up to at most d_v, so the sum stays below the plan's
// level 4. A source may take its free option (uncovered) only as often as
// level 1 allows, and with level 2 at its floor no alias that counts there
// may go external. Shares are fractional; the bound rounds up at the end.
func (e *Encoding) GroupBound(l1, l2 int64) int64 {
	uncover := l1 - e.Linear.Offsets[0]
	noExternal := l2 <= e.Linear.Offsets[1]
	nv := len(e.Pool.Variants)
	a, d := make([]int64, nv), make([]int64, nv)
	share := make([]int, nv)
	for gi, g := range e.l4 {
		if vi := e.l4var[gi]; vi >= 0 {
			lo, placed := g.Else, int64(-1)
			for _, b := range g.Branches {
				lo = min(lo, b.W)
				if placed < 0 || b.W < placed {
					placed = b.W
				}
			}
			a[vi] = lo
			if placed >= 0 {
				d[vi] = placed - lo
			}
		}
	}
	for _, s := range e.Sources {
		for _, r := range s.Routes {
			if r.Variant >= 0 {
				share[r.Variant]++
			}
		}
	}
	lb := float64(e.Linear.Offsets[3])
	for vi := range a {
		lb += float64(a[vi])
	}
	var slack []float64
	for gi, g := range e.l4 {
		si := e.l4src[gi]
		if si < 0 {
			continue
		}
		s := &e.Sources[si]
		covered := -1.0
		for _, b := range g.Branches {
			if noExternal && s.E != z.LitNull && e.isExternalRoute(s, b.Lit) {
				continue
			}
			w := float64(b.W)
			if r := e.routeFor(s, b.Lit); r != nil && r.Variant >= 0 && share[r.Variant] > 0 {
				w += float64(d[r.Variant]) / float64(share[r.Variant])
			}
			if covered < 0 || w < covered {
				covered = w
			}
		}
		// Uncovered (Else) costs nothing at level 4 and every route at
		// least that, so a source pays covered unless level 1 lets it go.
		if covered < 0 {
			continue
		}
		lb += covered
		slack = append(slack, covered)
	}
	slices.Sort(slack)
	for i := len(slack) - 1; i >= 0 && uncover > 0; i-- {
		lb -= slack[i]
		uncover--
	}
	return int64(math.Ceil(lb - 1e-6))
}

// routeFor is the route behind a level-4 branch literal.
func (e *Encoding) routeFor(s *Source, m z.Lit) *Route {
	rl := routeOf(s, m, e)
	for i := range s.Routes {
		if s.Routes[i].Lit == rl {
			return &s.Routes[i]
		}
	}
	return nil
}

func (e *Encoding) isExternalRoute(s *Source, m z.Lit) bool {
	for _, r := range s.Routes {
		if r.Variant < 0 && r.Lit == m {
			return true
		}
	}
	return false
}
