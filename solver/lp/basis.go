package lp

// basisInverse is B⁻¹ as an LU factorisation of the last refactored
// basis followed by product-form etas, one per basis change since:
// B_k = B_0·E_1⋯E_k, where E_t replaces column r_t by α_t = B_{t−1}⁻¹·a_q.
type basisInverse struct {
	lu     *lu
	m      int
	etaPos []int
	etaPiv []float64
	etaIdx [][]int
	etaVal [][]float64
	work   *svec
}

func newBasisInverse(f *lu) *basisInverse {
	return &basisInverse{lu: f, m: f.m, work: newSvec(f.m)}
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
		idx, val := b.etaIdx[t], b.etaVal[t]
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
		idx, val := b.etaIdx[t], b.etaVal[t]
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
	var idx []int
	var val []float64
	for _, i := range alpha.list() {
		if v := alpha.v[i]; i != r && (v > luDrop || v < -luDrop) {
			idx = append(idx, i)
			val = append(val, v)
		}
	}
	b.etaPos = append(b.etaPos, r)
	b.etaPiv = append(b.etaPiv, alpha.v[r])
	b.etaIdx = append(b.etaIdx, idx)
	b.etaVal = append(b.etaVal, val)
}

func (b *basisInverse) updates() int { return len(b.etaPos) }
