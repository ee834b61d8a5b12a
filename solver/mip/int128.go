package mip

import (
	"math"
	"math/bits"
)

// i128 is a signed 128-bit integer, for the exact arithmetic of cuts:
// every operation reports overflow instead of wrapping, and a cut whose
// arithmetic overflows is dropped, never rounded.
type i128 struct {
	hi int64
	lo uint64
}

func i128of(v int64) i128 {
	if v < 0 {
		return i128{-1, uint64(v)}
	}
	return i128{0, uint64(v)}
}

func (a i128) neg() (i128, bool) {
	lo, borrow := bits.Sub64(0, a.lo, 0)
	hi := -a.hi - int64(borrow)
	if a.hi == math.MinInt64 && a.lo == 0 {
		return i128{}, false
	}
	return i128{hi, lo}, true
}

func (a i128) sign() int {
	switch {
	case a.hi < 0:
		return -1
	case a.hi == 0 && a.lo == 0:
		return 0
	}
	return 1
}

func (a i128) add(b i128) (i128, bool) {
	lo, carry := bits.Add64(a.lo, b.lo, 0)
	hi := a.hi + b.hi + int64(carry)
	// Overflow when both signs agree and the result's differs.
	if (a.hi >= 0) == (b.hi >= 0) && (hi >= 0) != (a.hi >= 0) {
		return i128{}, false
	}
	return i128{hi, lo}, true
}

func (a i128) sub(b i128) (i128, bool) {
	nb, ok := b.neg()
	if !ok {
		return i128{}, false
	}
	return a.add(nb)
}

// abs returns |a| as an unsigned 128-bit pair.
func (a i128) abs() (uint64, uint64, bool) {
	if a.hi >= 0 {
		return uint64(a.hi), a.lo, true
	}
	n, ok := a.neg()
	if !ok {
		return 0, 0, false
	}
	return uint64(n.hi), n.lo, true
}

// mul64 is a·b for a 64-bit b.
func (a i128) mul64(b int64) (i128, bool) {
	neg := (a.sign() < 0) != (b < 0)
	ahi, alo, ok := a.abs()
	if !ok || b == math.MinInt64 {
		return i128{}, false
	}
	ub := uint64(b)
	if b < 0 {
		ub = uint64(-b)
	}
	h1, l1 := bits.Mul64(alo, ub)
	h2, l2 := bits.Mul64(ahi, ub)
	if h2 != 0 {
		return i128{}, false
	}
	hi, carry := bits.Add64(h1, l2, 0)
	if carry != 0 || hi >= 1<<63 {
		return i128{}, false
	}
	r := i128{int64(hi), l1}
	if neg {
		return r.neg()
	}
	return r, true
}

// mulAdd is a + b·c.
func (a i128) mulAdd(b i128, c int64) (i128, bool) {
	p, ok := b.mul64(c)
	if !ok {
		return i128{}, false
	}
	return a.add(p)
}

// floorMod is a mod d in [0, d) for 0 < d < 2^63, and whether the
// quotient fit in 64 bits.
func (a i128) floorMod(d int64) (int64, bool) {
	if d <= 0 {
		return 0, false
	}
	hi, lo, ok := a.abs()
	if !ok || hi >= uint64(d) {
		return 0, false
	}
	_, rem := bits.Div64(hi, lo, uint64(d))
	r := int64(rem)
	if a.sign() < 0 && r != 0 {
		r = d - r
	}
	return r, true
}

// toInt64 reports a as an int64 when it fits.
func (a i128) toInt64() (int64, bool) {
	if (a.hi == 0 && a.lo < 1<<63) || (a.hi == -1 && a.lo >= 1<<63) {
		return int64(a.lo), true
	}
	return 0, false
}

// float is a's nearest float64 (for scaling decisions only).
func (a i128) float() float64 {
	hi, lo, _ := a.abs()
	f := float64(hi)*18446744073709551616.0 + float64(lo)
	if a.sign() < 0 {
		return -f
	}
	return f
}

// ceilDiv is ⌈a / d⌉ for d > 0, when the quotient fits in 64 bits.
func (a i128) ceilDiv(d int64) (int64, bool) {
	return a.divRound(d, true)
}

// floorDiv is ⌊a / d⌋ for d > 0, when the quotient fits in 64 bits.
func (a i128) floorDiv(d int64) (int64, bool) {
	return a.divRound(d, false)
}

func (a i128) divRound(d int64, up bool) (int64, bool) {
	if d <= 0 {
		return 0, false
	}
	hi, lo, ok := a.abs()
	if !ok || hi >= uint64(d) {
		return 0, false
	}
	q, rem := bits.Div64(hi, lo, uint64(d))
	if q >= 1<<63 {
		return 0, false
	}
	v := int64(q)
	if a.sign() < 0 {
		v = -v
		if rem != 0 && !up {
			v--
		}
	} else if rem != 0 && up {
		v++
	}
	return v, true
}
