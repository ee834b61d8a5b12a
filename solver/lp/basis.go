package lp

// basisInverse is B⁻¹ as an LU factorisation of the last refactored
// basis followed by product-form etas, one per basis change since:
// B_k = B_0·E_1⋯E_k, where E_t replaces column r_t by α_t = B_{t−1}⁻¹·a_q.
type basisInverse struct {
	lu      *lu
	m       int
	etaPos  []int
	etaPiv  []float64
	etaIdx  [][]int
	etaVal  [][]float64
	etaNZ   int
	scratch []float64
}

func newBasisInverse(f *lu) *basisInverse {
	return &basisInverse{lu: f, m: f.m, scratch: make([]float64, f.m)}
}

// ftran solves B·x = a in place (a by rows in, x by positions out).
func (b *basisInverse) ftran(w []float64) {
	b.lu.ftran(w, b.scratch)
	for t, r := range b.etaPos {
		v := w[r]
		if v == 0 {
			continue
		}
		v /= b.etaPiv[t]
		w[r] = v
		idx, val := b.etaIdx[t], b.etaVal[t]
		for s, i := range idx {
			w[i] -= val[s] * v
		}
	}
}

// btran solves Bᵀ·y = c in place (c by positions in, y by rows out).
func (b *basisInverse) btran(w []float64) {
	for t := len(b.etaPos) - 1; t >= 0; t-- {
		r := b.etaPos[t]
		s := w[r]
		idx, val := b.etaIdx[t], b.etaVal[t]
		for k, i := range idx {
			s -= val[k] * w[i]
		}
		w[r] = s / b.etaPiv[t]
	}
	b.lu.btran(w, b.scratch)
}

// update records the basis change at position r with the entering
// column's FTRAN alpha (by positions).
func (b *basisInverse) update(r int, alpha []float64) {
	var idx []int
	var val []float64
	for i, v := range alpha {
		if i != r && v != 0 && (v > luDrop || v < -luDrop) {
			idx = append(idx, i)
			val = append(val, v)
		}
	}
	b.etaPos = append(b.etaPos, r)
	b.etaPiv = append(b.etaPiv, alpha[r])
	b.etaIdx = append(b.etaIdx, idx)
	b.etaVal = append(b.etaVal, val)
	b.etaNZ += len(idx) + 1
}

func (b *basisInverse) updates() int { return len(b.etaPos) }
