package lp

// basisInverse is B⁻¹ as an LU factorisation of the last refactored
// basis followed by product-form etas, one per basis change since:
// B_k = B_0·E_1⋯E_k, where E_t replaces column r_t by α_t = B_{t−1}⁻¹·a_q.
type basisInverse struct {
	lu     *lu
	m      int
	etaPos []int
	etaPiv []float64
	// Eta t's entries are etaIdx[etaStart[t]:etaStart[t+1]], flat so
	// that an update allocates nothing once the arrays have grown.
	etaStart []int
	etaIdx   []int
	etaVal   []float64
	work     *svec
}

func newBasisInverse(f *lu) *basisInverse {
	b := &basisInverse{m: f.m, work: newSvec(f.m)}
	b.reset(f)
	return b
}

// reset starts over from the factorisation f (of the same order) with
// no etas, keeping the arrays.
func (b *basisInverse) reset(f *lu) {
	b.lu = f
	b.etaPos, b.etaPiv = b.etaPos[:0], b.etaPiv[:0]
	b.etaStart = append(b.etaStart[:0], 0)
	b.etaIdx, b.etaVal = b.etaIdx[:0], b.etaVal[:0]
}

// ftran solves B·x = a in place (a by rows in, x by positions out).
func (b *basisInverse) ftran(x *svec) {
	b.lu.ftran(x, b.work)
	for t, r := range b.etaPos {
		v := x.v[r]
		if v == 0 {
			continue
		}
		v /= b.etaPiv[t]
		x.v[r] = v
		idx, val := b.eta(t)
		for s, i := range idx {
			x.v[i] -= val[s] * v
			x.add(i)
		}
	}
}

// btran solves Bᵀ·y = c in place (c by positions in, y by rows out).
func (b *basisInverse) btran(x *svec) {
	x.list()
	for t := len(b.etaPos) - 1; t >= 0; t-- {
		r := b.etaPos[t]
		s := x.v[r]
		idx, val := b.eta(t)
		for k, i := range idx {
			s -= val[k] * x.v[i]
		}
		if s != 0 || x.v[r] != 0 {
			x.v[r] = s / b.etaPiv[t]
			x.add(r)
		}
	}
	b.lu.btran(x, b.work)
}

// update records the basis change at position r with the entering
// column's FTRAN alpha (by positions).
func (b *basisInverse) update(r int, alpha *svec) {
	for _, i := range alpha.list() {
		if v := alpha.v[i]; i != r && (v > luDrop || v < -luDrop) {
			b.etaIdx = append(b.etaIdx, i)
			b.etaVal = append(b.etaVal, v)
		}
	}
	b.etaPos = append(b.etaPos, r)
	b.etaPiv = append(b.etaPiv, alpha.v[r])
	b.etaStart = append(b.etaStart, len(b.etaIdx))
}

// eta is eta t's off-pivot entries.
func (b *basisInverse) eta(t int) ([]int, []float64) {
	lo, hi := b.etaStart[t], b.etaStart[t+1]
	return b.etaIdx[lo:hi], b.etaVal[lo:hi]
}

func (b *basisInverse) updates() int { return len(b.etaPos) }

// heavy says whether the etas hold more nonzeros than the factors (and
// one per row): past that an FTRAN or BTRAN spends more on the etas
// than a solve with fresh factors would in all. Cut rows make the
// entering columns, and so the etas, dense: on 256x1000-tight's level 4
// the BTRAN's etas took 4.5 s of a 20 s round; refactoring here made
// that round 13 s, and 256x1000's cut loop reached its bound of round 3
// at 11.8 s instead of 16.5 s.
func (b *basisInverse) heavy() bool {
	return len(b.etaIdx) > len(b.lu.lIdx)+len(b.lu.uIdx)+b.m
}
