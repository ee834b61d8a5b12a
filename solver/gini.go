package solver

import (
	"slices"
	"strings"
	"time"

	"github.com/go-air/gini/z"
)

// giniSearch is model-improving search on gini under the level's bound
// literals until giniEnd: a probe at the lower bound, then tries with a
// growing cap, LNS and the LP between them; at level 4 the diagram's
// resolution coarsens when it grows too large.
func (l *levelRun) giniSearch() error {
	x := l.x
	if l.lpRan() {
		// After the LP gini has the first part of what is left.
		l.giniEnd = x.within(l.end).until(shareGini)
	}
	g := &giniRun{b: &bounder{x: x, i: l.i, delta: 1}, end: l.giniEnd}
	g.bl, g.ok = g.b.search(l.ub - 1)
	x.seed()
	if err := l.probeLowerBound(g.b); err != nil {
		return err
	}
	if l.lb < l.ub && g.ok {
		g.bl, g.ok = g.b.search(l.ub - 1)
	}
	cap := fullTryMin
	for g.ok && l.lb < l.ub && x.clock().Now().Before(g.end) && x.run.ctx.Err() == nil {
		next, err := l.giniTry(g, cap)
		if err != nil {
			return err
		}
		if next == giniStop {
			break
		}
		if next == giniAgain {
			continue
		}
		// Timed out (or nothing finer to try): a bound from the LP, a few
		// neighbourhood searches, then a longer try.
		l.askLP()
		if err := l.giniLNS(g); err != nil {
			return err
		}
		cap = min(2*cap, fullTryMax)
	}
	return nil
}

// giniRun is giniSearch's state: the bound literals bl below the
// incumbent (ok when the diagram could be built), searched until end.
type giniRun struct {
	b   *bounder
	bl  []z.Lit
	ok  bool
	end time.Time
}

// giniNext is what giniSearch does after a try.
type giniNext int

const (
	giniAgain giniNext = iota // try again at the same cap
	giniStop                  // stop searching
	giniWiden                 // ask the LP and LNS, then try with a larger cap
)

// probeLowerBound is a cheap try at the lower bound: the optimum is
// often there.
func (l *levelRun) probeLowerBound(b *bounder) error {
	x := l.x
	pl, ok := b.search(l.lb)
	if !ok {
		return nil
	}
	switch x.try(probeTry, pl...) {
	case 1:
		if _, err := x.decodeSAT(); err != nil {
			return err
		}
		l.ub = x.obj[l.i]
	case -1:
		if b.proves() {
			l.lb, l.src = l.lb+1, BoundSATUnsat
		}
	}
	return nil
}

// giniTry takes the workers' news, then tries for a plan below the
// incumbent with the given cap.
func (l *levelRun) giniTry(g *giniRun, cap time.Duration) (giniNext, error) {
	x, i := l.x, l.i
	before := l.ub
	if err := l.poll(l.end, false); err != nil {
		return giniStop, err
	}
	if l.lb >= l.ub {
		return giniStop, nil
	}
	if l.ub < before {
		if g.bl, g.ok = g.b.search(l.ub - 1); !g.ok {
			return giniStop, nil
		}
	}
	x.run.progress(i, x.obj, l.lb)
	switch x.tryUntil(g.end, l.pw.capTry(cap), g.bl...) {
	case 1:
		if _, err := x.decodeSAT(); err != nil {
			return giniStop, err
		}
		l.ub = x.obj[i]
		l.pw.improved(l.ub)
		if l.lb < l.ub {
			g.bl, g.ok = g.b.search(l.ub - 1)
		}
		return giniAgain, nil
	case -1:
		return l.giniRefuted(g, cap)
	}
	return giniWiden, nil
}

// giniRefuted follows a try that found nothing below the incumbent: a
// proof when the diagram is exact, else the coarse relaxation either
// proves the incumbent or asks for a finer resolution.
func (l *levelRun) giniRefuted(g *giniRun, cap time.Duration) (giniNext, error) {
	x, i := l.x, l.i
	if g.b.proves() {
		l.lb, l.src = l.ub, BoundSATUnsat
		return giniAgain, nil
	}
	if g.b.exact() {
		return giniStop, nil // rounded memory holds nothing better; nothing proved
	}
	if rl, rok := g.b.relax(l.ub - 1); rok {
		switch x.tryUntil(g.end, cap, rl...) {
		case -1:
			if x.e.Exact {
				l.lb, l.src = l.ub, BoundSATUnsat
				return giniAgain, nil
			}
		case 1:
			if _, err := x.decodeSAT(); err != nil {
				return giniStop, err
			}
			l.ub = x.obj[i]
		}
	}
	if l.lb < l.ub && g.b.refine() {
		g.bl, g.ok = g.b.search(l.ub - 1)
		return giniAgain, nil
	}
	return giniWiden, nil
}

// giniLNS runs up to four neighbourhood searches below the incumbent.
func (l *levelRun) giniLNS(g *giniRun) error {
	x, i := l.x, l.i
	for range 4 {
		if !x.clock().Now().Before(g.end) || l.lb >= l.ub || x.run.ctx.Err() != nil {
			break
		}
		improved, err := x.lns(i, g.end, g.bl)
		if err != nil {
			return err
		}
		if improved {
			l.ub = x.obj[i]
			if l.lb < l.ub {
				g.bl, g.ok = g.b.search(l.ub - 1)
			}
		}
	}
	return nil
}

// l4MaxNodes caps a level-4 bound diagram; past it the resolution
// coarsens (about 0.3 s of building, measured on the 8x20 benchmark).
const l4MaxNodes = 60000

// bounder gives the bound literals of one level. Levels 1-3 are exact
// totalizer outputs; level 4 works at a resolution delta that starts
// exact and coarsens until the diagram fits l4MaxNodes: search bounds are
// restrictions (weights rounded up), relax bounds relaxations (rounded
// down), the two equal when delta is 1.
type bounder struct {
	x     *exact
	i     int
	delta int64
}

func (b *bounder) exact() bool { return b.i < 3 || b.delta == 1 }

// proves says an UNSAT answer under a search bound is a proof: the bound
// is exact and so is the memory arithmetic (rounded memory may refuse
// plans that fit).
func (b *bounder) proves() bool { return b.exact() && b.x.e.Exact }

func (b *bounder) search(k int64) ([]z.Lit, bool) { return b.bound(k, true) }

func (b *bounder) relax(k int64) ([]z.Lit, bool) { return b.bound(k, false) }

func (b *bounder) bound(k int64, restrict bool) ([]z.Lit, bool) {
	if b.i < 3 {
		return []z.Lit{b.x.e.LevelBound(b.i, k)}, true
	}
	maxSum := b.x.e.L4MaxSum()
	for {
		if l, ok := b.x.e.L4Bound(k, b.delta, restrict, l4MaxNodes); ok {
			return l, true
		}
		if b.delta >= maxSum {
			return nil, false
		}
		b.delta = max(2*b.delta, maxSum/4096)
	}
}

// refine halves the resolution; false when it is already exact.
func (b *bounder) refine() bool {
	if b.exact() {
		return false
	}
	b.x.e.ReleaseBound()
	b.delta /= 2
	return true
}

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

// joinNodes is a lane's node set as the encoding keys it.
func joinNodes(ns []string) string {
	s := slices.Clone(ns)
	slices.Sort(s)
	return strings.Join(s, "+")
}
