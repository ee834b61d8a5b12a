package localsearch

import (
	"math/rand/v2"
	"slices"
	"sort"

	"github.com/poolsolve/poolsolve/model"
)

// Greedy is LLooM's original planner, a fast first plan: pins first, then
// the lanes running now where they still fit, then lanes in first-fit
// decreasing order (fewest eligible placements first, then the most
// memory) wherever a lane improves coverage, external fallback or SLOs,
// then any lane that pays for itself at level 4. A placed lane is always
// when it is high-demand and fits, else preferred if that fits, else auto;
// routes then go to each source's best placed candidate. It never breaks
// the memory rule, and holds every pin that it can hold one by one; with
// pins that conflict it returns its best effort and leaves the
// explanation to the exact solver. The seed only breaks ties in the order.
func Greedy(p *model.Pool, seed uint64) model.Assignment { return NewSearcher(p).Greedy(seed) }

// Greedy is the package's Greedy on s's pool, from the search's view of
// it: built once for both, it was built twice (1024x4000: 0.9 s each).
func (s *Searcher) Greedy(seed uint64) model.Assignment {
	st := s.pr.newState()
	greedyFill(st, seed)
	return st.assignment()
}

// greedyFill places lanes on an empty state.
func greedyFill(st *lsState, seed uint64) {
	pr := st.pr
	n := len(pr.vars)
	rng := rand.New(rand.NewPCG(seed, 0x9ead1))
	tie := rng.Perm(n)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := &pr.vars[order[i]], &pr.vars[order[j]]
		if len(a.pls) != len(b.pls) {
			return len(a.pls) < len(b.pls)
		}
		if a.maxGb != b.maxGb {
			return a.maxGb > b.maxGb
		}
		return tie[order[i]] < tie[order[j]]
	})
	high := highDemand(pr)

	// Pins first, as auto unless a pin says otherwise: auto needs the
	// least room, so pins that can hold together on their placements do.
	// Every residency is offered (a keepWarm pin needs always, whatever
	// the lane's demand).
	for _, vi := range order {
		if len(pr.vars[vi].pins) == 0 {
			continue
		}
		opts := greedyOptions(st, vi, true)
		slices.SortStableFunc(opts, func(a, b lsOption) int { return resIndex(b.r) - resIndex(a.r) })
		for _, o := range opts {
			if pr.pinBroken(vi, o) == 0 && st.fits(vi, o) {
				st.set(vi, o)
				break
			}
		}
	}
	// Lanes running now stay where they run, weaker if they must.
	for _, vi := range order {
		lv := &pr.vars[vi]
		if st.cur[vi].k >= 0 {
			continue
		}
		for k := range lv.pls {
			if lv.pls[k].curMatch == 0 {
				continue
			}
			placed := false
			for _, r := range keepOrder(lv, lv.pls[k].curRes) {
				o := lsOption{k, r}
				if !st.fits(vi, o) {
					continue
				}
				before := st.total
				st.set(vi, o)
				if st.total[0] <= before[0] {
					placed = true
					break
				}
				st.set(vi, lsUnplaced)
			}
			if placed {
				break
			}
		}
	}
	// Coverage: lanes that serve a source that is uncovered, served
	// externally although it need not be, or breaking its SLO.
	for _, vi := range order {
		if st.cur[vi].k >= 0 || !servesWanting(st, vi) {
			continue
		}
		before := st.total
		for _, o := range greedyOptions(st, vi, high[vi]) {
			if !st.fits(vi, o) {
				continue
			}
			st.set(vi, o)
			if st.total.less(before) {
				break
			}
			st.set(vi, lsUnplaced)
		}
	}
	// Latency: any other lane whose best fitting option pays for itself.
	for _, vi := range order {
		if st.cur[vi].k < 0 {
			bestFitting(st, vi)
		}
	}
	// Residency: placed lanes, busiest first, take a stronger residency
	// where it fits and pays.
	busy := slices.Clone(order)
	sort.SliceStable(busy, func(i, j int) bool { return pr.vars[busy[i]].demand > pr.vars[busy[j]].demand })
	for _, vi := range busy {
		if st.cur[vi].k >= 0 {
			bestFitting(st, vi)
		}
	}
}

// bestFitting moves vi to its cheapest option that fits, if that is
// cheaper than where it is.
func bestFitting(st *lsState, vi int) {
	start := st.cur[vi]
	bestO, bestC := start, st.total
	for _, o := range st.pr.options(vi) {
		if o == start || !st.fits(vi, o) {
			continue
		}
		st.set(vi, o)
		if st.total.less(bestC) {
			bestO, bestC = o, st.total
		}
	}
	st.set(vi, bestO)
}

// greedyOptions orders a variant's placed options: residency by the rule
// (always only for high-demand lanes), and within one residency the
// current placement first, then best fit on the largest draw.
func greedyOptions(st *lsState, vi int, high bool) []lsOption {
	lv := &st.pr.vars[vi]
	ks := make([]int, len(lv.pls))
	room := make([]float64, len(lv.pls))
	for k := range ks {
		ks[k] = k
		pl := &lv.pls[k]
		if pl.primary >= 0 {
			var used float64
			for _, u := range st.uses[pl.primary] {
				if u.r.Resident() {
					used += u.gb
				}
			}
			room[k] = st.pr.budget[pl.primary] - used
		}
	}
	sort.SliceStable(ks, func(i, j int) bool {
		a, b := &lv.pls[ks[i]], &lv.pls[ks[j]]
		if (a.curMatch > 0) != (b.curMatch > 0) {
			return a.curMatch > 0
		}
		return room[ks[i]] < room[ks[j]]
	})
	var rs []model.Residency
	for _, r := range model.Residencies {
		if slices.Contains(lv.res, r) && (r != model.Always || high || len(lv.res) == 1) {
			rs = append(rs, r)
		}
	}
	var out []lsOption
	for _, r := range rs {
		for _, k := range ks {
			out = append(out, lsOption{k, r})
		}
	}
	return out
}

// keepOrder is the residencies to try for a lane kept where it runs: its
// current one, then weaker ones.
func keepOrder(lv *lsVar, cur model.Residency) []model.Residency {
	if cur == "" {
		cur = lv.v.DefaultResidency
	}
	from := 0
	if cur.Valid() {
		from = resIndex(cur)
	}
	var out []model.Residency
	for _, r := range model.Residencies[from:] {
		if slices.Contains(lv.res, r) {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		out = lv.res
	}
	return out
}

// servesWanting reports whether the variant could serve a source that is
// uncovered, served externally although it need not be, or over its SLO.
func servesWanting(st *lsState, vi int) bool {
	for _, si := range st.pr.vars[vi].srcs {
		c := st.srcCost[si]
		if c[1] > 0 || c[2] > 0 || c[3] > 0 {
			return true
		}
	}
	return false
}

// highDemand marks the variants whose sources carry the top quarter of
// demand among variants with any.
func highDemand(pr *lsProblem) []bool {
	var ds []float64
	for _, lv := range pr.vars {
		if lv.demand > 0 {
			ds = append(ds, lv.demand)
		}
	}
	high := make([]bool, len(pr.vars))
	if len(ds) == 0 {
		return high
	}
	slices.Sort(ds)
	threshold := ds[len(ds)*3/4]
	for vi, lv := range pr.vars {
		high[vi] = lv.demand > 0 && lv.demand >= threshold
	}
	return high
}
