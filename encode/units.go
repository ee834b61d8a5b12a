package encode

import (
	"math"
	"math/bits"
	"strconv"
)

// figure is a GiB figure read as the decimal it is written as: the
// shortest decimal that reads back as the same float64 (strconv), so
// 56.1111111 is 561111111·10^-7, not the binary fraction nearest it.
// The value is ±mant·10^exp; mant has at most 17 digits.
type figure struct {
	neg  bool
	mant uint64
	exp  int
}

// readFigure reads x; false for NaN and infinities.
func readFigure(x float64) (figure, bool) {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return figure{}, false
	}
	// 'e' with the shortest precision: d.ddde±XX, no trailing zeros.
	s := strconv.FormatFloat(x, 'e', -1, 64)
	var f figure
	if s[0] == '-' {
		f.neg, s = true, s[1:]
	}
	digits := 0
	i := 0
	for ; i < len(s) && s[i] != 'e'; i++ {
		if s[i] == '.' {
			continue
		}
		f.mant = f.mant*10 + uint64(s[i]-'0')
		digits++
	}
	e, err := strconv.Atoi(s[i+1:])
	if err != nil {
		return figure{}, false // cannot happen for strconv's own output
	}
	f.exp = e - (digits - 1)
	if f.mant == 0 {
		f.exp = 0
	}
	for f.mant != 0 && f.mant%10 == 0 {
		f.mant /= 10
		f.exp++
	}
	return f, true
}

// places is the number of decimal places the figure needs.
func (f figure) places() int { return max(0, -f.exp) }

// unitLimit bounds every unit count this file returns, so that sums of a
// few of them cannot overflow int64.
const unitLimit = 1 << 60

// units is f·scale rounded up (up) or down to a whole number, and whether
// that was exact; ok is false when the magnitude passes unitLimit.
func (f figure) units(scale int64, up bool) (u int64, exact, ok bool) {
	if scale <= 0 {
		return 0, false, false
	}
	if f.neg {
		// floor(-v) = -ceil(v) and the other way round.
		u, exact, ok = figure{mant: f.mant, exp: f.exp}.units(scale, !up)
		return -u, exact, ok
	}
	hi, lo := bits.Mul64(f.mant, uint64(scale))
	rem := false
	for e := f.exp; e > 0; e-- {
		if hi != 0 || lo > unitLimit {
			return 0, false, false
		}
		hi, lo = bits.Mul64(lo, 10)
	}
	for e := f.exp; e < 0 && (hi != 0 || lo != 0); e++ {
		var r1, r2 uint64
		hi, r1 = hi/10, hi%10
		lo, r2 = bits.Div64(r1, lo, 10)
		rem = rem || r2 != 0
	}
	if f.exp < 0 && hi == 0 && lo == 0 && f.mant != 0 {
		rem = true // divided down to nothing
	}
	if hi != 0 || lo > unitLimit {
		return 0, false, false
	}
	u = int64(lo)
	if up && rem {
		u++
	}
	return u, !rem, true
}

// maxDomainUnits caps the sum of every draw on one domain, in units. The
// memory rows then stay below 3·2^50 < 2^53 (the resident row, the
// auto rule's row with its ladder, and their right-hand sides), so LP readers such as CBC,
// which read coefficients as doubles, see them exactly, and no sum of
// them overflows int64.
const maxDomainUnits = 1 << 50

// maxScaleExp is the finest resolution tried: 10^18 units per GiB.
const maxScaleExp = 18

// figureOf reads a draw or budget once per distinct value.
func (e *Encoding) figureOf(x float64) (figure, bool) {
	if f, ok := e.figs[x]; ok {
		return f, true
	}
	f, ok := readFigure(x)
	if ok {
		e.figs[x] = f
	}
	return f, ok
}

// scale picks the memory resolution: 10^k units per GiB with k the most
// decimal places of any draw, so every draw is a whole number of units
// and rounding each budget down to whole units changes no fit (a sum of
// whole numbers is at most B exactly when it is at most floor(B)). Only
// when some domain's draws would then pass maxDomainUnits does k shrink;
// draws are then rounded up and budgets down, which never overcommits,
// and Exact is false.
func (e *Encoding) scale(fixed int64) {
	type dom struct{ node, id string }
	need := 0
	total := map[dom]float64{}
	var doms []dom
	for _, l := range e.Lanes {
		for _, d := range e.Pool.Variants[l.Variant].Placements[l.Placement].Draws {
			f, ok := e.figureOf(d.Gb)
			if !ok || f.neg || f.mant == 0 {
				continue // never fits (eligibility) or draws nothing
			}
			need = max(need, f.places())
			k := dom{d.Node, d.Domain}
			if _, seen := total[k]; !seen {
				doms = append(doms, k)
			}
			total[k] += d.Gb
		}
	}
	// fits reports whether every domain's draws stay within the cap at s,
	// and whether every draw is whole there.
	fits := func(s int64) (within, whole bool) {
		whole = true
		sums := map[dom]int64{}
		for _, l := range e.Lanes {
			for _, d := range e.Pool.Variants[l.Variant].Placements[l.Placement].Draws {
				f, ok := e.figureOf(d.Gb)
				if !ok || f.neg || f.mant == 0 {
					continue
				}
				u, ex, ok := f.units(s, true)
				k := dom{d.Node, d.Domain}
				if !ok || sums[k]+u > maxDomainUnits {
					return false, false
				}
				sums[k] += u
				whole = whole && ex
			}
		}
		return true, whole
	}
	if fixed > 0 {
		e.Scale = fixed
		_, e.Exact = fits(fixed)
		return
	}
	// The float totals give the start; the exact check has the last word.
	k := min(need, maxScaleExp)
	for _, d := range doms {
		for k > 0 && total[d]*math.Pow10(k) > maxDomainUnits {
			k--
		}
	}
	for ; k >= 0; k-- {
		s := int64(math.Pow10(k))
		if within, whole := fits(s); within {
			e.Scale, e.Exact = s, whole && k == need
			return
		}
	}
	// Not even whole GiB fit the cap (more than 2^50 GiB on a domain):
	// count in GiB anyway, rounded up, and say it is not exact.
	e.Scale, e.Exact = 1, false
}

// drawUnits is a draw in units, rounded up; negative draws count as
// zero, like the evaluator reads them. It is false for a draw that never
// fits: one that is not a finite number (eval's reading), or one past
// maxDomainUnits, above every encoded budget (and then Exact is false,
// see scale), which also keeps every weight and sum far from overflow.
func (e *Encoding) drawUnits(gb float64) (int64, bool) {
	f, ok := e.figureOf(gb)
	switch {
	case !ok:
		return 0, math.IsInf(gb, -1)
	case f.neg:
		return 0, true
	}
	u, _, ok := f.units(e.Scale, true)
	return u, ok && u <= maxDomainUnits
}

// budgetUnits is a plan budget in units, rounded down, at most total
// (the domain's draws, in units) when it would pass the cap: a budget
// that large holds every lane, as total does.
func (e *Encoding) budgetUnits(gb float64, total int64) int64 {
	if math.IsInf(gb, 1) {
		return min(total, maxDomainUnits)
	}
	f, ok := e.figureOf(gb)
	if !ok {
		return -1 // NaN: nothing fits (eligibility refuses such lanes first)
	}
	u, _, ok := f.units(e.Scale, false)
	switch {
	case !ok && f.neg:
		return -1
	case !ok || u > maxDomainUnits:
		return min(total, maxDomainUnits)
	}
	return u
}
