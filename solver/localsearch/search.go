package localsearch

import (
	"context"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/clock"
	"github.com/poolsolve/poolsolve/model"
)

// This file holds the local search over the state.

// Improve runs first-improvement local search from a: single-lane moves
// (another placement or residency, placed or not), swaps of two lanes'
// node sets, ejections of one or two lanes to admit another, demotions
// of the lanes crowding it out (lower residency, same nodes), and seeded
// random kicks (iterated local search), always re-deriving the best
// routes. It stops at a local optimum that kicks no longer improve, or at
// deadline, and never returns a plan that eval.Check rates worse than a
// (nor an invalid one when a is valid). The same pool, assignment and seed
// give the same result when the deadline does not cut the search short.
func Improve(p *model.Pool, a model.Assignment, seed uint64, deadline time.Time) model.Assignment {
	return ImproveUntilStale(p, a, seed, deadline, StaleKicks)
}

// ImproveUntilStale is Improve with the kick phase ending after stale
// kicks in a row that do not improve (Improve's is StaleKicks).
func ImproveUntilStale(p *model.Pool, a model.Assignment, seed uint64, deadline time.Time, stale int) model.Assignment {
	return ImproveContext(context.Background(), p, a, seed, deadline, stale)
}

// ImproveContext is ImproveUntilStale that also stops, as at its
// deadline, once ctx is done (an interrupted solve).
func ImproveContext(ctx context.Context, p *model.Pool, a model.Assignment, seed uint64, deadline time.Time, stale int) model.Assignment {
	return improve(ctx, p, a, seed, nil, deadline, stale)
}

// ImproveOn is ImproveContext against clk's time: a counted clock is
// charged for each evaluation of a move, so the search ends at the same
// move on every machine.
func ImproveOn(ctx context.Context, p *model.Pool, a model.Assignment, seed uint64, clk *clock.Clock, deadline time.Time, stale int) model.Assignment {
	return improve(ctx, p, a, seed, clk, deadline, stale)
}

// EvalCost is what an evaluation of a move stands for in work, on a pool
// of items variants and sources: it re-derives the routes of the sources
// the move touches, 2-3.5 µs.
func EvalCost(items int) time.Duration {
	return time.Duration(2000+items/8) * time.Nanosecond
}

// A Searcher runs ImproveOn's search on one pool, again and again: the
// moves and costs it searches are built once (on 256x1000 that is 90 ms,
// as much as a short round of search) and only read after, so searches
// may run at once, each on its own state.
type Searcher struct {
	p       *model.Pool
	pr      *lsProblem
	chkOnce sync.Once
	chk     *eval.Checker
}

// NewSearcher builds the search's view of p.
func NewSearcher(p *model.Pool) *Searcher {
	return &Searcher{p: p, pr: newLSProblem(p)}
}

// Check is eval's report of a on s's pool. Its checker is built once,
// when first asked (the greedy pass needs none): on 256x1000 building one
// takes three times as long as a check, and the warm start's checks are
// on the way to the exact search.
func (s *Searcher) Check(a model.Assignment) eval.Report { return s.checker().Check(a) }

func (s *Searcher) checker() *eval.Checker {
	s.chkOnce.Do(func() { s.chk = eval.NewChecker(s.p) })
	return s.chk
}

// Pool is the pool s searches.
func (s *Searcher) Pool() *model.Pool { return s.p }

func improve(ctx context.Context, p *model.Pool, a model.Assignment, seed uint64, clk *clock.Clock, deadline time.Time, stale int) model.Assignment {
	return NewSearcher(p).ImproveOn(ctx, a, seed, clk, deadline, stale)
}

// ImproveOn is the package's ImproveOn on s's pool.
func (s *Searcher) ImproveOn(ctx context.Context, a model.Assignment, seed uint64, clk *clock.Clock, deadline time.Time, stale int) model.Assignment {
	pr := s.pr
	st := pr.newState()
	st.load(a)
	ls := &lsSearch{st: st, rng: rand.New(rand.NewPCG(seed, 0x5eed10ca1)), deadline: deadline, staleKicks: stale, ctx: ctx, clk: clk}
	if clk.Counted() {
		// An evaluation re-derives the routes of the sources a move
		// touches: a few microseconds, more on a large pool.
		ls.checkCost = EvalCost(len(pr.vars) + len(pr.srcs))
	}
	ls.run()
	return ls.result(s.checker(), a)
}

// result is the search's plan, or a when eval rates a better.
func (ls *lsSearch) result(chk *eval.Checker, a model.Assignment) model.Assignment {
	st := ls.st
	out := st.assignment()
	after := chk.Check(out)
	before := chk.Check(a)
	if before.Valid && (!after.Valid || before.Objective.Less(after.Objective)) {
		return a // cannot happen while the search's costs match eval's
	}
	return out
}

type lsSearch struct {
	st       *lsState
	rng      *rand.Rand
	deadline time.Time
	ctx      context.Context
	// clk is the time the deadline is read on, charged checkCost for
	// each evaluation when it is counted.
	clk       *clock.Clock
	checkCost time.Duration
	queue     []int
	queued    []bool
	stopped   bool
	checks    int
	// staleKicks ends the kick phase after that many kicks in a row
	// fail to improve.
	staleKicks int
}

// timeUp checks the clock every few dozen evaluations.
func (ls *lsSearch) timeUp() bool {
	if ls.stopped {
		return true
	}
	ls.checks++
	if ls.checks%32 == 0 && (!ls.deadline.IsZero() && ls.pastDeadline() || ls.ctx.Err() != nil) {
		ls.stopped = true
	}
	return ls.stopped
}

func (ls *lsSearch) pastDeadline() bool {
	ls.clk.Charge(32 * ls.checkCost)
	return ls.clk.Now().After(ls.deadline)
}

func (ls *lsSearch) push(vi int) {
	if !ls.queued[vi] {
		ls.queued[vi] = true
		ls.queue = append(ls.queue, vi)
	}
}

func (ls *lsSearch) touch(vis ...int) {
	for _, vi := range vis {
		for _, n := range ls.st.pr.vars[vi].nbrs {
			ls.push(n)
		}
		ls.push(vi)
	}
}

// Limits of the kick phase: kicks stop after this many in a row fail to
// improve the best plan, or after maxKicks in all.
const (
	// StaleKicks is Improve's: the kick phase ends after this many
	// kicks in a row fail to improve the best plan.
	StaleKicks = 60
	lsMaxKicks = 400
)

func (ls *lsSearch) run() {
	st := ls.st
	n := len(st.pr.vars)
	ls.queued = make([]bool, n)
	for _, vi := range st.byStake() {
		ls.push(vi)
	}
	ls.descend()
	best, bestCost := st.snapshot(), st.total
	stale := 0
	for kick := 0; kick < lsMaxKicks && stale < ls.staleKicks && n > 0 && !ls.timeUp(); kick++ {
		ls.kick()
		ls.descend()
		switch {
		case st.total.less(bestCost):
			best, bestCost, stale = st.snapshot(), st.total, 0
		case st.total == bestCost:
			best, stale = st.snapshot(), stale+1 // drift across plateaus
		default:
			st.restore(best)
			stale++
		}
	}
	if st.total != bestCost {
		st.restore(best)
	}
}

// descend applies improving moves until the work list is empty.
func (ls *lsSearch) descend() {
	for len(ls.queue) > 0 && !ls.timeUp() {
		vi := ls.queue[0]
		ls.queue = ls.queue[1:]
		ls.queued[vi] = false
		if changed := ls.improve(vi); len(changed) > 0 {
			ls.touch(changed...)
		}
	}
	if ls.stopped {
		for _, vi := range ls.queue {
			ls.queued[vi] = false
		}
		ls.queue = ls.queue[:0]
	}
}

// improve tries the moves of one variant and applies the first that
// lowers the cost, returning the variants it changed.
func (ls *lsSearch) improve(vi int) []int {
	st := ls.st
	pr := st.pr
	start, before := st.cur[vi], st.total
	bestO, bestC := start, before
	type blocked struct {
		o lsOption
		c lsCost
	}
	var ejects []blocked
	for _, o := range pr.options(vi) {
		if o == start || ls.timeUp() {
			continue
		}
		st.set(vi, o)
		switch c := st.total; {
		case c.less(bestC):
			bestO, bestC = o, c
		case o.k >= 0 && c[0] > before[0]:
			ejects = append(ejects, blocked{o, c})
		}
		st.set(vi, start)
	}
	if bestO != start {
		st.set(vi, bestO)
		return []int{vi}
	}
	if changed := ls.swap(vi); changed != nil {
		return changed
	}
	sort.SliceStable(ejects, func(i, j int) bool { return ejects[i].c.objectiveLess(ejects[j].c) })
	for i, e := range ejects {
		if i == 3 || ls.timeUp() {
			break
		}
		if changed := ls.eject(vi, e.o, e.c.objectiveLess(before)); changed != nil {
			return changed
		}
	}
	// Demotion, for the options that break one rule only (a domain
	// over its budget) and would pay were it repaired.
	tries := 0
	for _, e := range ejects {
		if tries == demoteTries || ls.timeUp() || !e.c.objectiveLess(before) {
			break
		}
		if e.c[0] != before[0]+1 {
			continue
		}
		tries++
		if changed := ls.demote(vi, e.o); changed != nil {
			return changed
		}
	}
	tries = 0
	for _, e := range ejects {
		if tries == clearTries || ls.timeUp() || !e.c.objectiveLess(before) {
			break
		}
		if len(pr.vars[vi].pls[e.o.k].nodes) < 2 {
			continue // one node's room: eject's ground
		}
		tries++
		if changed := ls.clear(vi, e.o); changed != nil {
			return changed
		}
	}
	return nil
}

// clearTries caps the options improve admits by clearing their
// domains, those that would lower the objective most first: on
// 256x1000 seed 1 a four-node lane must be made resident on one clique
// of several, and the two best by objective are cliques whose lanes
// find no room elsewhere; with 16, level 4 at 10 s went from 2,258,926
// to 576,373 (two runs each). clearMax caps the lanes one clearing
// takes off (two on each node of a four-node lane). Only lanes over two
// nodes or more are cleared for, where eject cannot make the room:
// tried for single-node lanes too, it made the greedy solver's search
// on six 64x250 fleets 17-77% slower.
const (
	clearTries = 16
	clearMax   = 8
)

// clear admits option o of vi by taking lanes off every domain it
// overfills, the largest lane of such a domain first, until it fits,
// then gives each lane taken off its best option, largest first. A lane
// over four nodes made resident needs room on all four at once, which
// taking off one lane or two (eject) does not make, and which demoting
// the lanes there (demote) makes only when they can wait cold.
func (ls *lsSearch) clear(vi int, o lsOption) []int {
	st := ls.st
	pr := st.pr
	before, start := st.total, st.cur[vi]
	st.set(vi, o)
	var out []int
	var saved []lsOption
	undo := func() []int {
		st.set(vi, start)
		for i := len(out) - 1; i >= 0; i-- {
			st.set(out[i], saved[i])
		}
		return nil
	}
	for {
		b, bgb := -1, 0.0
		for _, d := range pr.vars[vi].pls[o.k].draws {
			if !st.over[d.dom] {
				continue
			}
			for _, u := range st.uses[d.dom] {
				if u.v != vi && len(pr.vars[u.v].pins) == 0 && (b < 0 || u.gb > bgb) {
					b, bgb = u.v, u.gb
				}
			}
		}
		if b < 0 {
			break
		}
		if len(out) == clearMax || ls.timeUp() {
			return undo()
		}
		saved, out = append(saved, st.cur[b]), append(out, b)
		st.set(b, lsUnplaced)
	}
	if len(out) < 3 {
		return undo() // eject's ground
	}
	order := slices.Clone(out)
	sort.SliceStable(order, func(i, j int) bool { return pr.vars[order[i]].maxGb > pr.vars[order[j]].maxGb })
	for _, b := range order {
		ls.bestFor(b)
	}
	if st.total.less(before) {
		return append([]int{vi}, out...)
	}
	return undo()
}

// demoteTries caps the options improve repairs by demotion: on
// 24x60-tight the one that pays is the fifth of those breaking one rule.
const demoteTries = 6

// demote admits option o of vi by lowering the residency of the lanes
// it crowds out, where they are: one lane at a time, the demotion that
// costs least first, until o fits. Ejection takes lanes off and places
// each anew in turn, so the first takes back the room the second
// needed; on 24x60-tight a two-node lane moved to a clique as preferred
// only pays with both lanes already on one of its nodes made auto.
func (ls *lsSearch) demote(vi int, o lsOption) []int {
	st := ls.st
	pr := st.pr
	before, start := st.total, st.cur[vi]
	st.set(vi, o)
	changed := []int{vi}
	var saved []lsOption
	undo := func() []int {
		for i := len(saved) - 1; i >= 0; i-- {
			st.set(changed[i+1], saved[i])
		}
		st.set(vi, start)
		return nil
	}
	for st.total[0] > before[0] {
		if ls.timeUp() {
			return undo()
		}
		bestB, bestO, bestC := -1, lsOption{}, lsCost{}
		for _, d := range pr.vars[vi].pls[o.k].draws {
			for _, u := range st.uses[d.dom] {
				b := u.v
				cur := st.cur[b]
				if b == vi || cur.r == model.Auto || len(pr.vars[b].pins) > 0 {
					continue
				}
				for _, r := range pr.vars[b].res {
					if resIndex(r) <= resIndex(cur.r) {
						continue // not lower
					}
					st.set(b, lsOption{cur.k, r})
					if c := st.total; bestB < 0 || c.less(bestC) {
						bestB, bestO, bestC = b, lsOption{cur.k, r}, c
					}
					st.set(b, cur)
				}
			}
		}
		if bestB < 0 {
			return undo()
		}
		saved = append(saved, st.cur[bestB])
		changed = append(changed, bestB)
		st.set(bestB, bestO)
	}
	if st.total.less(before) {
		return changed
	}
	return undo()
}

// swap exchanges the node sets of vi and another placed lane when both can
// run on the other's nodes.
func (ls *lsSearch) swap(vi int) []int {
	st := ls.st
	pr := st.pr
	a := st.cur[vi]
	if a.k < 0 || len(pr.vars[vi].pls) < 2 {
		return nil
	}
	keyA := laneKey(pr.vars[vi].pls[a.k].nodes, pr.vars[vi].pls[a.k].devices)
	before := st.total
	for _, bi := range pr.vars[vi].nbrs {
		b := st.cur[bi]
		if bi == vi || b.k < 0 || len(pr.vars[bi].pls) < 2 {
			continue
		}
		keyB := laneKey(pr.vars[bi].pls[b.k].nodes, pr.vars[bi].pls[b.k].devices)
		if keyA == keyB {
			continue
		}
		ka := placementByKey(&pr.vars[vi], keyB)
		kb := placementByKey(&pr.vars[bi], keyA)
		if ka < 0 || kb < 0 {
			continue
		}
		st.set(vi, lsUnplaced)
		st.set(bi, lsOption{kb, b.r})
		st.set(vi, lsOption{ka, a.r})
		if st.total.less(before) {
			return []int{vi, bi}
		}
		st.set(vi, lsUnplaced)
		st.set(bi, b)
		st.set(vi, a)
		if ls.timeUp() {
			break
		}
	}
	return nil
}

func placementByKey(lv *lsVar, key string) int {
	for k := range lv.pls {
		if laneKey(lv.pls[k].nodes, lv.pls[k].devices) == key {
			return k
		}
	}
	return -1
}

// eject admits option o of vi by taking one blocking lane (or two, when
// pairs) off its domains, then gives each ejected lane its best option.
func (ls *lsSearch) eject(vi int, o lsOption, pairs bool) []int {
	st := ls.st
	pr := st.pr
	before, start := st.total, st.cur[vi]
	var blockers []int
	for _, d := range pr.vars[vi].pls[o.k].draws {
		for _, u := range st.uses[d.dom] {
			if u.v != vi && !slices.Contains(blockers, u.v) && len(pr.vars[u.v].pins) == 0 {
				blockers = append(blockers, u.v)
			}
		}
	}
	sort.SliceStable(blockers, func(i, j int) bool { return pr.vars[blockers[i]].maxGb > pr.vars[blockers[j]].maxGb })
	if len(blockers) > 6 {
		blockers = blockers[:6]
	}
	try := func(out ...int) []int {
		saved := make([]lsOption, len(out))
		for i, b := range out {
			saved[i] = st.cur[b]
			st.set(b, lsUnplaced)
		}
		st.set(vi, o)
		for _, b := range out {
			ls.bestFor(b)
		}
		if st.total.less(before) {
			return append([]int{vi}, out...)
		}
		st.set(vi, start)
		for i, b := range out {
			st.set(b, saved[i])
		}
		return nil
	}
	for _, b := range blockers {
		if changed := try(b); changed != nil {
			return changed
		}
	}
	for i := range blockers {
		for j := i + 1; j < len(blockers) && pairs; j++ {
			if ls.timeUp() {
				return nil
			}
			if changed := try(blockers[i], blockers[j]); changed != nil {
				return changed
			}
		}
	}
	return nil
}

// bestFor moves vi to its cheapest option given everything else.
func (ls *lsSearch) bestFor(vi int) {
	st := ls.st
	bestO, bestC := st.cur[vi], st.total
	start := bestO
	for _, o := range st.pr.options(vi) {
		if o == start {
			continue
		}
		st.set(vi, o)
		if st.total.less(bestC) {
			bestO, bestC = o, st.total
		}
	}
	st.set(vi, bestO)
}

// kick perturbs a few random lanes: each goes to a random option that
// fits, or off, and its neighbourhood is queued for repair.
func (ls *lsSearch) kick() {
	st := ls.st
	n := len(st.pr.vars)
	for range 1 + ls.rng.IntN(3) {
		vi := ls.rng.IntN(n)
		opts := st.pr.options(vi)
		o := opts[ls.rng.IntN(len(opts))]
		if !st.fits(vi, o) {
			o = lsUnplaced
		}
		st.set(vi, o)
		ls.touch(vi)
	}
}
