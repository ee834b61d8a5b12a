package lp

import (
	"math"
	"math/rand/v2"
)

// perturbCosts returns the costs with a small seeded perturbation that
// breaks dual degeneracy: a nonzero cost moves away from zero by
// 0.5e-7 to 1.5e-7 of 1+|c|, a zero one up by at most 1e-9, or, on a
// model of largeRows rows or more, by 0.5e-5 to 1.5e-5. Solve removes
// it again before it reports an optimum (setCosts).
//
// A zero cost moved by less than tolDual stays degenerate: on level 4
// of a 256-node fleet (112,200 rows, most of its 83,897 columns without
// a cost) six to nine in ten iterations made no dual step, and the
// bound stood still from iteration 8,000 to 24,000 (2 s to 86 s) while
// the basis filled in; moved by 1e-5, under 2% made none and the bound
// was within 0.4% of the LP optimum after 20,000 iterations (12.5 s).
// On smaller models the same move made branch and cut slower
// (24x60-tight) or left 64x250-tight unproved in 10 s, so they keep the
// small one.
func perturbCosts(cost []float64, rows int) []float64 {
	rng := rand.New(rand.NewPCG(0x5eed, uint64(len(cost))))
	out := make([]float64, len(cost))
	for j, c := range cost {
		if c != 0 {
			c += math.Copysign(1e-7*(1+math.Abs(c))*(0.5+rng.Float64()), c)
		} else {
			u := rng.Float64()
			c = 1e-9 * u
			if rows >= largeRows {
				c = 1e-5 * (0.5 + u)
			}
		}
		out[j] = c
	}
	return out
}

// setCosts puts the perturbed or the true costs on the structurals and
// drops the shifts recompute gave the logicals; the values and reduced
// costs are recomputed before the next iteration.
func (s *State) setCosts(perturbed bool) {
	if s.perturbed == perturbed {
		return
	}
	src := s.trueCost
	if perturbed {
		src = s.pertCost
	}
	for j := 0; j < s.n; j++ {
		s.cost[j] = src[j]
	}
	for k := s.n; k < s.n+s.m; k++ {
		s.cost[k] = 0
	}
	s.perturbed = perturbed
	s.stale = true
}
