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
