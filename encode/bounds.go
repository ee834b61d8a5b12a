package encode

import (
	"fmt"

	"github.com/go-air/gini/z"
)

// Levels is the number of objective levels.
const Levels = 4

// Offset is the part of level i (0-based) that no decision changes.
func (e *Encoding) Offset(i int) int64 { return e.Linear.Offsets[i] }

// Counted returns the literals that level i (0-2) counts, each worth one.
func (e *Encoding) Counted(i int) []z.Lit { return e.counts[i] }

// L4Groups are level 4's terms as at-most-one groups, as the level-4
// diagram sees them (sources, then variants).
func (e *Encoding) L4Groups() []Group { return e.l4 }

// LevelBound returns a literal that, assumed, forces level i (0-based) to
// at most k. It is e.T when every plan meets k and e.F when none can.
//
// Levels 0-2 use a k-bounded totalizer over the counted literals, built on
// first use with its cap at k+1 (and rebuilt larger if a later k exceeds
// it); its clauses are permanent and its outputs serve every later k.
// Level 3 builds a fresh decision diagram for k under one activation
// literal, which it returns; the diagram of the previous k is deactivated
// first, so old bounds do not pile up.
func (e *Encoding) LevelBound(i int, k int64) z.Lit {
	if i < 0 || i >= Levels {
		return e.F()
	}
	k -= e.Linear.Offsets[i]
	if k < 0 {
		return e.F()
	}
	if i < 3 {
		return e.countBound(i, k)
	}
	if e.l4Guard >= 0 && e.l4Bound == k && !e.Log.Guards[e.l4Guard].Retired {
		return e.Log.Guards[e.l4Guard].Lit
	}
	e.ReleaseBound()
	probe := newMDD(e.cnf, "", e.l4)
	if k >= probe.MaxSum() {
		return e.T
	}
	g := e.openGuard(fmt.Sprintf("level4<=%d", k+e.Linear.Offsets[3]))
	e.family("level4-bound")
	m := newMDD(e.cnf, fmt.Sprintf("l4<=%d", k+e.Linear.Offsets[3]), e.l4)
	r := m.Root(k)
	e.clause(r)
	e.closeGuard()
	e.lastL4 = m
	e.l4Guard, e.l4Bound = g, k
	return e.Log.Guards[g].Lit
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

// ReleaseBound deactivates the current level-4 bound, if any.
func (e *Encoding) ReleaseBound() {
	if e.l4Guard >= 0 {
		e.retireGuard(e.l4Guard)
		e.l4Guard = -1
	}
}

// Freeze makes "level i <= k" permanent: a unit clause on the totalizer
// output for levels 0-2, an unguarded diagram root for level 3.
func (e *Encoding) Freeze(i int, k int64) {
	if i == 3 {
		e.ReleaseBound()
		k -= e.Linear.Offsets[3]
		e.family("level4-freeze")
		if k < 0 {
			e.clause(e.F())
			return
		}
		m := newMDD(e.cnf, fmt.Sprintf("l4<=%d!", k+e.Linear.Offsets[3]), e.l4)
		e.mdds = append(e.mdds, m)
		e.clause(m.Root(k))
		return
	}
	l := e.LevelBound(i, k)
	e.family(fmt.Sprintf("level%d-freeze", i+1))
	e.clause(l)
}

// BoundSize is the size of the last level-4 bound diagram, for reports.
func (e *Encoding) BoundSize() (nodes, clauses int) {
	if e.lastL4 == nil {
		return 0, 0
	}
	return e.lastL4.Nodes, e.lastL4.Clauses
}
