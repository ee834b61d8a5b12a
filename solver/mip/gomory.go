package mip

import (
	"math"
	"slices"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/solver/lp"
)

// Gomory mixed-integer cuts (Gomory 1960; Balas, Ceria, Cornuéjols,
// Natraj 1996) from the optimal tableau, computed so that every cut is
// valid for every integer point of the rows, whatever the floating-point
// error of the simplex (in the spirit of Cook, Dash, Fukasawa, Goycoolea
// 2009, "Numerically safe Gomory mixed-integer cuts").
//
// The simplex only proposes multipliers ρ. For ANY ρ the combination
// Σ_i ρ_i·(a_i·x − s_i) = 0 holds at every point, s_i = a_i·x being row
// i's activity, an integer when x is (the rows have integer data). So ρ
// is rounded to integers P_i = round(ρ_i·2^40), and from there on
// everything is integer arithmetic in 128 bits (i128): the combined row,
// its shift to each variable's bound, the fractional parts, the GMI
// coefficients, the substitution of s_i = a_i·x, and the final scaling
// to int64, where coefficients are rounded up and the right-hand side
// down (valid for x >= 0). Any overflow drops the cut. The cuts then
// enter the LP and the bound like any row, and the bound stays exact.

// gmiScale is the fixed point of the rounded multipliers: the chosen
// basic column's coefficient comes out near 2^40.
const gmiScale = 1 << 40

// gomoryCuts returns up to max violated cuts from the tableau rows of the
// most fractional basic columns at the LP point xs.
func gomoryCuts(r *Relaxation, rows []Row, st *lp.State, xs []float64, max, maxLen int) []Row {
	type cand struct {
		pos  int
		j    int
		frac float64
	}
	var cs []cand
	for p, k := range st.Basic() {
		if k >= len(r.Vars) || r.Lo[k] == r.Hi[k] {
			continue
		}
		v := xs[k]
		f := v - math.Floor(v)
		if f < gmiMinFrac || f > 1-gmiMinFrac {
			continue
		}
		cs = append(cs, cand{p, k, math.Abs(f - 0.5)})
	}
	slices.SortStableFunc(cs, func(a, b cand) int {
		switch {
		case a.frac < b.frac:
			return -1
		case a.frac > b.frac:
			return 1
		}
		return a.j - b.j
	})
	g := newGMI(r, rows, st)
	g.maxLen = maxLen
	var out []Row
	tries := 0
	for _, c := range cs {
		if len(out) >= max || tries >= 3*max {
			break
		}
		tries++
		if w, ok := g.cut(c.pos, c.j, xs); ok {
			out = append(out, w)
		}
	}
	return out
}

const (
	gmiMinFrac = 0.01
	// gmiMaxDensity caps a cut's nonzeros as a share of the columns.
	gmiMaxDensity = 0.3
	// gmiMaxLen caps it in nonzeros too: on 256x1000 cuts of thousands
	// of nonzeros made each later simplex iteration several times
	// slower; with 300 the bound after 40 s was higher than with 1,000
	// or no cap. Past fitsSparse the cap is gmiMaxLenLarge: with Devex
	// pricing and cuts of up to 300, one 256x1000 run's third round took
	// 12,000 iterations and 25 s (columns of 6,000 nonzeros); with 50,
	// 2,500 iterations, and the three level-4 models measured reached
	// that round's bound 3-24 s sooner. On 24x60-tight 50 ends the loop
	// 5.6% below the optimum instead of 0.1%, so smaller models keep 300.
	gmiMaxLen      = 300
	gmiMaxLenLarge = 50
)

// gmi holds the scratch of cut generation.
type gmi struct {
	r       *Relaxation
	rows    []Row // the LP's rows, in its order
	st      *lp.State
	n       int
	coef    []i128 // per column
	touched []int
	onList  []bool
	maxLen  int // a cut's most nonzeros
	// pRows and p are the rounded multipliers' rows and values.
	pRows []int
	p     []int64
}

func newGMI(r *Relaxation, rows []Row, st *lp.State) *gmi {
	n := len(r.Vars)
	return &gmi{r: r, rows: rows, st: st, n: n, coef: make([]i128, n), onList: make([]bool, n)}
}

func (g *gmi) reset() {
	for _, j := range g.touched {
		g.coef[j] = i128{}
		g.onList[j] = false
	}
	g.touched = g.touched[:0]
}

func (g *gmi) touch(j int) {
	if !g.onList[j] {
		g.onList[j] = true
		g.touched = append(g.touched, j)
	}
}

// shifted is one variable of the row after its shift to a bound: t >= 0
// with t = z − bound (lower) or bound − z (upper), and its coefficient
// numerator in the row x_b + Σ coef/D·t = β.
type shifted struct {
	col   int  // column, or −1 for a row's activity
	row   int  // the row when col < 0
	upper bool // t = bound − z
	bound int64
	num   i128
}

// cut derives the GMI cut of the tableau row at basis position pos
// (basic column b) and reports it when xs violates it. Each step below
// either succeeds exactly or drops the cut.
func (g *gmi) cut(pos, b int, xs []float64) (Row, bool) {
	defer g.reset()
	rowsP, P, ok := g.multipliers(pos)
	if !ok || !g.combine(rowsP, P) {
		return Row{}, false
	}
	D, flip, ok := g.basicCoef(b)
	if !ok {
		return Row{}, false
	}
	s := gmiShift{flip: flip}
	if !g.shiftColumns(&s, b, xs) || !g.shiftRows(&s, rowsP, P) {
		return Row{}, false
	}
	F0, ok := s.beta.floorMod(D)
	if !ok || float64(F0) < gmiMinFrac*float64(D) || float64(F0) > (1-gmiMinFrac)*float64(D) {
		return Row{}, false
	}
	gs, shift, R, ok := gmiCoefs(s.ts, F0, D)
	if !ok {
		return Row{}, false
	}
	Rc, ok := g.substitute(s.ts, gs, shift, R)
	if !ok {
		return Row{}, false
	}
	Rc, maxC, nz, ok := g.moveFixed(Rc)
	if !ok || nz == 0 || float64(nz) > gmiMaxDensity*float64(g.n)+10 || nz > g.maxLen {
		return Row{}, false
	}
	w, act, norm, ok := g.scaleRow(Rc, maxC, xs)
	if !ok {
		return Row{}, false
	}
	// Efficacy: the distance the cut moves the point.
	if norm == 0 || (float64(w.Rhs)-act)/math.Sqrt(norm) < gmiMinEfficacy {
		return Row{}, false
	}
	return sortedCut(w)
}

// multipliers rounds the tableau row's multipliers ρ to integers
// P_i = round(ρ_i·2^40); from here on the arithmetic is exact.
func (g *gmi) multipliers(pos int) ([]int, []int64, bool) {
	if g.st.Rows() != len(g.rows) {
		return nil, nil, false
	}
	rows, rho := g.st.TableauMultipliers(pos)
	g.pRows, g.p = g.pRows[:0], g.p[:0]
	for k, v := range rho {
		f := math.Round(v * gmiScale)
		if math.IsNaN(f) || math.Abs(f) >= 1<<62 {
			return nil, nil, false
		}
		if f != 0 {
			g.pRows = append(g.pRows, rows[k])
			g.p = append(g.p, int64(f))
		}
	}
	return g.pRows, g.p, true
}

// combine sets coef to the combined row over the columns:
// C_j = Σ_i P_i·a_ij.
func (g *gmi) combine(rows []int, P []int64) bool {
	for k, p := range P {
		i := rows[k]
		w := &g.rows[i]
		for k, j := range w.Idx {
			g.touch(j)
			v, ok := g.coef[j].mulAdd(i128of(p), w.Val[k])
			if !ok {
				return false
			}
			g.coef[j] = v
		}
	}
	return true
}

// basicCoef returns D, the basic column's coefficient made positive, and
// whether the row was flipped to make it so.
func (g *gmi) basicCoef(b int) (D int64, flip, ok bool) {
	D, ok = g.coef[b].toInt64()
	if !ok {
		return 0, false, false
	}
	flip = D < 0
	if flip {
		D = -D
	}
	if D < gmiScale/4 || D > gmiScale*4 {
		return 0, false, false // the tableau row is not what the basis says
	}
	return D, flip, true
}

// gmiShift collects the row's shifted variables and β's numerator,
// −Σ num·bound over shifted and fixed variables alike.
type gmiShift struct {
	flip bool
	ts   []shifted
	beta i128
}

// sgn applies the row's flip.
func (s *gmiShift) sgn(v i128) (i128, bool) {
	if s.flip {
		return v.neg()
	}
	return v, true
}

func (s *gmiShift) addConst(num i128, bound int64) bool {
	p, ok := num.mul64(bound)
	if !ok {
		return false
	}
	s.beta, ok = s.beta.sub(p)
	return ok
}

// shiftColumns shifts every column but the basic one to a bound: the
// one it is nonbasic at, or for a basic column the nearer one.
func (g *gmi) shiftColumns(s *gmiShift, b int, xs []float64) bool {
	r := g.r
	for _, j := range g.touched {
		if j == b || g.coef[j].sign() == 0 {
			continue
		}
		num, ok := s.sgn(g.coef[j])
		if !ok {
			return false
		}
		lo, hi := r.Lo[j], r.Hi[j]
		if lo == hi {
			if !s.addConst(num, lo) {
				return false
			}
			continue
		}
		upper := g.st.AtUpper(j)
		if g.st.IsBasic(j) {
			upper = xs[j] > 0.5*float64(lo+hi)
		}
		bound := lo
		if upper {
			bound = hi
		}
		if !s.addConst(num, bound) {
			return false
		}
		t := shifted{col: j, upper: upper, bound: bound, num: num}
		if upper {
			if t.num, ok = num.neg(); !ok {
				return false
			}
		}
		s.ts = append(s.ts, t)
	}
	return true
}

// shiftRows shifts each combined row's activity s_i to its right-hand
// side; an equality's is fixed.
func (g *gmi) shiftRows(s *gmiShift, rows []int, P []int64) bool {
	for k, p := range P {
		i := rows[k]
		// The activity s_i enters with −P_i.
		num, ok := s.sgn(i128of(-p))
		if !ok {
			return false
		}
		w := &g.rows[i]
		switch w.Op {
		case encode.EQ:
			if !s.addConst(num, w.Rhs) {
				return false
			}
			continue
		case encode.LE:
			if !s.addConst(num, w.Rhs) {
				return false
			}
			if num, ok = num.neg(); !ok {
				return false
			}
			s.ts = append(s.ts, shifted{col: -1, row: i, upper: true, bound: w.Rhs, num: num})
		default: // GE
			if !s.addConst(num, w.Rhs) {
				return false
			}
			s.ts = append(s.ts, shifted{col: -1, row: i, bound: w.Rhs, num: num})
		}
	}
	return true
}

// gmiCoefs returns the GMI over integer t: Σ g_t·t >= F0·(D − F0), with
// g_t = F_t·(D−F0) when F_t <= F0, else (D − F_t)·F0. The caller scales
// it down by shift, a power of two, rounding the coefficients up; R is
// the right-hand side already rounded down.
func gmiCoefs(ts []shifted, F0, D int64) (gs []i128, shift, R int64, ok bool) {
	rhs, ok := i128of(F0).mul64(D - F0)
	if !ok {
		return nil, 0, 0, false
	}
	gs = make([]i128, len(ts))
	big := rhs.float()
	for k, t := range ts {
		F, ok := t.num.floorMod(D)
		if !ok {
			return nil, 0, 0, false
		}
		var gv i128
		if F <= F0 {
			gv, ok = i128of(F).mul64(D - F0)
		} else {
			gv, ok = i128of(D - F).mul64(F0)
		}
		if !ok {
			return nil, 0, 0, false
		}
		gs[k] = gv
		big = math.Max(big, gv.float())
	}
	shift = int64(1)
	for float64(shift) < big/(1<<30) {
		shift *= 2
	}
	R, ok = rhs.floorDiv(shift)
	if !ok {
		return nil, 0, 0, false
	}
	return gs, shift, R, true
}

// substitute writes the cut back over the columns into coef and returns
// its right-hand side. Lower t = z − bound, upper t = bound − z, so g·t
// is sg·z − sg·bound with sg = ±g; z is x_j, or s_i = a_i·x.
func (g *gmi) substitute(ts []shifted, gs []i128, shift, R int64) (i128, bool) {
	for _, j := range g.touched {
		g.coef[j] = i128{}
	}
	Rc := i128of(R)
	for k, t := range ts {
		gk, ok := gs[k].ceilDiv(shift)
		if !ok {
			return i128{}, false
		}
		if gk == 0 {
			continue
		}
		sg := gk
		if t.upper {
			sg = -gk
		}
		if Rc, ok = Rc.mulAdd(i128of(sg), t.bound); !ok {
			return i128{}, false
		}
		if t.col >= 0 {
			if g.coef[t.col], ok = g.coef[t.col].add(i128of(sg)); !ok {
				return i128{}, false
			}
			continue
		}
		w := &g.rows[t.row]
		for q, j := range w.Idx {
			g.touch(j)
			if g.coef[j], ok = g.coef[j].mulAdd(i128of(sg), w.Val[q]); !ok {
				return i128{}, false
			}
		}
	}
	return Rc, true
}

// moveFixed moves fixed columns to the right-hand side Rc and returns it
// with the largest remaining coefficient and their count.
func (g *gmi) moveFixed(Rc i128) (i128, float64, int, bool) {
	r := g.r
	var maxC float64
	nz := 0
	for _, j := range g.touched {
		c := g.coef[j]
		if c.sign() == 0 {
			continue
		}
		if r.Lo[j] == r.Hi[j] {
			p, ok := c.mul64(r.Lo[j])
			if !ok {
				return i128{}, 0, 0, false
			}
			if Rc, ok = Rc.sub(p); !ok {
				return i128{}, 0, 0, false
			}
			g.coef[j] = i128{}
			continue
		}
		maxC = math.Max(maxC, math.Abs(c.float()))
		nz++
	}
	return Rc, maxC, nz, true
}

// scaleRow scales the cut to int64 by a power of two, coefficients
// rounded up (every column is >= 0) and the right-hand side down, and
// returns it with its activity at xs and its squared norm.
func (g *gmi) scaleRow(Rc i128, maxC float64, xs []float64) (w Row, act, norm float64, ok bool) {
	div := int64(1)
	for float64(div) < math.Max(maxC, math.Abs(Rc.float()))/(1<<40) {
		div *= 2
	}
	w = Row{Op: encode.GE}
	for _, j := range g.touched {
		c := g.coef[j]
		if c.sign() == 0 {
			continue
		}
		v, ok := c.ceilDiv(div)
		if !ok {
			return Row{}, 0, 0, false
		}
		if v == 0 {
			continue
		}
		w.Idx = append(w.Idx, j)
		w.Val = append(w.Val, v)
		act += float64(v) * xs[j]
		norm += float64(v) * float64(v)
	}
	rv, ok := Rc.floorDiv(div)
	if !ok || len(w.Idx) == 0 {
		return Row{}, 0, 0, false
	}
	w.Rhs = rv
	return w, act, norm, true
}

// sortedCut orders the cut's columns and returns it as a tightened LE row.
func sortedCut(w Row) (Row, bool) {
	order := make([]int, len(w.Idx))
	for k := range order {
		order[k] = k
	}
	slices.SortFunc(order, func(a, b int) int { return w.Idx[a] - w.Idx[b] })
	sorted := Row{Op: w.Op, Rhs: w.Rhs, Idx: make([]int, len(order)), Val: make([]int64, len(order))}
	for k, o := range order {
		sorted.Idx[k], sorted.Val[k] = w.Idx[o], w.Val[o]
	}
	le, keep := tighten(asLE(sorted)[0])
	if !keep {
		return Row{}, false
	}
	return le, true
}

const gmiMinEfficacy = 1e-6
