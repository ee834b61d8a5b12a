package eval

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

func TestFitsReadsFiguresAsTheDecimalsTheyAre(t *testing.T) {
	tests := []struct {
		name   string
		budget float64
		draws  []float64
		want   bool
	}{
		{"56.1111111 and 40.2222222 fill 96.3333333 to the last decimal", 96.3333333, []float64{56.1111111, 40.2222222}, true},
		{"0.1 and 0.2 fill 0.3 although their float sum is above it", 0.3, []float64{0.1, 0.2}, true},
		{"half a billionth of a GiB over is over, however small", 96.3333333, []float64{56.1111111, 40.2222222, 0.0000000005}, false},
		{"ten tenths fill one", 1, []float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}, true},
		{"three thirds written to sixteen places fit in one", 1, []float64{1.0 / 3, 1.0 / 3, 1.0 / 3}, true},
		{"nothing fits in any budget that is not negative", 0, nil, true},
		{"an empty sum breaks a budget below zero", -1, nil, false},
		{"a negative draw counts as zero", 10, []float64{11, -5}, false},
		{"a NaN draw never fits", 100, []float64{math.NaN()}, false},
		{"an infinite draw never fits", math.Inf(1), []float64{math.Inf(1)}, false},
		{"an infinite budget holds any finite draws", math.Inf(1), []float64{1e308, 1e308}, true},
		{"a NaN budget holds nothing", math.NaN(), []float64{0}, false},
		{"draws whose float sum overflows are still added exactly", 1.7e308, []float64{1e308, 1e308}, false},
		{"figures far below a byte still count", 5e-324, []float64{5e-324, 5e-324}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fits(tc.budget, tc.draws...); got != tc.want {
				t.Fatalf("fits(%v, %v) = %v, want %v", tc.budget, tc.draws, got, tc.want)
			}
		})
	}
}

// The float fast path never answers differently from exact rational
// arithmetic, on sums built to land on, just over and just under the
// budget with up to nine decimals.
func TestFitsFastPathAgreesWithExactArithmetic(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	for range 20000 {
		places := r.IntN(10)
		scale := math.Pow10(places)
		n := 1 + r.IntN(6)
		draws := make([]float64, n)
		var units int64
		for i := range draws {
			u := r.Int64N(200 * int64(scale))
			units += u
			draws[i] = float64(u) / scale // the nearest float to the decimal
		}
		budgetUnits := units + r.Int64N(3) - 1
		budget := float64(budgetUnits) / scale
		sum := new(big.Rat)
		for _, d := range draws {
			x, _ := new(big.Rat).SetString(strconv.FormatFloat(d, 'g', -1, 64))
			sum.Add(sum, x)
		}
		b, _ := new(big.Rat).SetString(strconv.FormatFloat(budget, 'g', -1, 64))
		if want := sum.Cmp(b) <= 0; fits(budget, draws...) != want {
			t.Fatalf("fits(%v, %v) = %v, exact arithmetic says %v", budget, draws, !want, want)
		}
	}
}
