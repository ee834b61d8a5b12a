package solver

import (
	"math"
	"testing"
)

func TestRootAt(t *testing.T) {
	none := math.Inf(-1)
	tests := []struct {
		name     string
		bounds   []float64
		complete bool
		want     bool
	}{
		{"a loop stopped at the first solve that reaches the optimum is the root", []float64{90, 95.5, 100}, false, true},
		{"a loop that reached the optimum and went on is not", []float64{90, 100, 100}, false, false},
		{"a complete loop that reached it before its end is not", []float64{100, 100}, true, false},
		{"a complete loop below the optimum is the root", []float64{90, 95}, true, true},
		{"a loop stopped below the optimum by the clock is not", []float64{90, 95}, false, false},
		{"a bound a hair under an integer rounds up to it", []float64{90, 99.9999995}, false, true},
		{"a solve without a bound reaches nothing", []float64{none, 100}, false, true},
		{"no solve at all is no root", nil, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rootAt(tt.bounds, 0, 100, tt.complete); got != tt.want {
				t.Errorf("rootAt(%v, complete %v) = %v, want %v", tt.bounds, tt.complete, got, tt.want)
			}
		})
	}
}

func TestALevelIsHeuristicOnlyWhenNothingIsProved(t *testing.T) {
	tests := []struct {
		name     string
		fromWarm bool
		lb       int64
		src      BoundSource
		want     Status
	}{
		{"the warm plan under a proved LP bound is bounded", true, 100, BoundLP, Bounded},
		{"the warm plan under the trivial bound is heuristic", true, 0, BoundTrivial, Heuristic},
		{"a searched plan under the trivial bound is bounded", false, 0, BoundTrivial, Bounded},
		{"a plan at its bound is optimal", true, 120, BoundLP, Optimal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			x := &exact{run: &run{}, fromWarm: tt.fromWarm}
			x.settle(3, tt.lb, 120, tt.src)
			if got := x.levels[3].Status; got != tt.want {
				t.Errorf("status %s, want %s", got, tt.want)
			}
		})
	}
}
