package lp

import (
	"math"
	"math/rand/v2"
)

// perturbCosts returns the costs with a small seeded perturbation that
// breaks dual degeneracy: a nonzero cost moves away from zero by
// 0.5e-7 to 1.5e-7 of 1+|c|, a zero one up by at most 1e-9. Solve
// removes it again before it reports an optimum (setCosts).
func perturbCosts(cost []float64) []float64 {
	rng := rand.New(rand.NewPCG(0x5eed, uint64(len(cost))))
	out := make([]float64, len(cost))
	for j, c := range cost {
		if c != 0 {
			c += math.Copysign(1e-7*(1+math.Abs(c))*(0.5+rng.Float64()), c)
		} else {
			c = 1e-9 * rng.Float64()
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
