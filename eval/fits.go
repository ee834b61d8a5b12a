package eval

import (
	"math"
	"math/big"
	"strconv"
)

// fits is the memory rule's arithmetic: do the draws (GiB) sum to at most
// the budget? Every figure is read as the decimal it is written as, the
// shortest that reads back as the same float64 (56.1111111, not the
// binary fraction nearest it), and the comparison is exact: float noise
// neither admits an overcommit nor refuses an exact fit. A negative draw
// counts as zero; a draw that is not a finite number never fits; an
// infinite budget holds any finite draws, a NaN budget nothing.
//
// Float arithmetic answers when the sum is clearly on one side (its error
// is far below the margin); only near the boundary is the sum redone in
// exact rationals.
func fits(budget float64, draws ...float64) bool { return fitsWith(budget, 0, draws) }

// fitsWith is fits of draws and one more draw, extra (0 for none).
func fitsWith(budget, extra float64, draws []float64) bool {
	s := 0.0
	switch {
	case math.IsNaN(extra) || math.IsInf(extra, 1):
		return false
	case extra > 0:
		s = extra
	}
	for _, d := range draws {
		switch {
		case math.IsNaN(d) || math.IsInf(d, 1):
			return false
		case d > 0:
			s += d
		}
	}
	switch {
	case math.IsNaN(budget) || math.IsInf(budget, -1):
		return false
	case math.IsInf(budget, 1):
		return true
	}
	// Each figure's float is within 2^-53 of its decimal, relatively, and
	// each addition adds at most 2^-53 of the sum; 2^-50 leaves room for
	// the margin's own rounding (and a subnormal term for tiny figures).
	n := float64(len(draws) + 3)
	margin := n * ((s+math.Abs(budget))*0x1p-50 + 0x1p-1060)
	switch {
	case s < budget-margin:
		return true
	case s > budget+margin:
		return false
	}
	sum := new(big.Rat)
	if extra > 0 {
		sum.Add(sum, decimal(extra))
	}
	for _, d := range draws {
		if d > 0 {
			sum.Add(sum, decimal(d))
		}
	}
	return sum.Cmp(decimal(budget)) <= 0
}

// decimal is a finite float64 as the shortest decimal that reads back as
// it, exactly.
func decimal(x float64) *big.Rat {
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(x, 'g', -1, 64))
	if !ok {
		return new(big.Rat) // unreachable for finite x
	}
	return r
}
