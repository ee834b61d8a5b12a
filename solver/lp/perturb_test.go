package lp

import (
	"math"
	"testing"
)

// A zero cost is moved past the dual tolerance on large models, where
// one left within it stalled the dual simplex, and stays within it on
// smaller ones; a nonzero cost moves away from zero by about 1e-7 of
// itself on both, and the same costs give the same perturbation.
func TestZeroCostsArePerturbedPastTheDualToleranceOnlyOnLargeModels(t *testing.T) {
	cost := []float64{0, 3, 0, -2, 0, 0, 1000, 0}
	for _, tc := range []struct {
		name   string
		rows   int
		lo, hi float64 // the range of a perturbed zero cost
	}{
		{"a model under largeRows keeps zero costs within the tolerance", largeRows - 1, 0, 1e-9},
		{"a model of largeRows rows moves them past it", largeRows, 0.5e-5, 1.5e-5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := perturbCosts(cost, tc.rows)
			again := perturbCosts(cost, tc.rows)
			for j, c := range cost {
				if out[j] != again[j] {
					t.Fatalf("cost %d: %g, then %g", j, out[j], again[j])
				}
				if c == 0 {
					if out[j] < tc.lo || out[j] > tc.hi {
						t.Errorf("zero cost %d perturbed to %g, want within [%g, %g]", j, out[j], tc.lo, tc.hi)
					}
					if tc.rows >= largeRows && out[j] <= tolDual {
						t.Errorf("zero cost %d perturbed to %g, not past tolDual %g", j, out[j], tolDual)
					}
					continue
				}
				d := (out[j] - c) / (1 + math.Abs(c))
				if math.Signbit(d) != math.Signbit(c) || math.Abs(d) < 0.5e-7 || math.Abs(d) > 1.5e-7 {
					t.Errorf("cost %g perturbed to %g: relative move %g", c, out[j], d)
				}
			}
		})
	}
}
