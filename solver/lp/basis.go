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
	// The etas by place, for BTRAN on a sparse vector: entry e of the
	// etas belongs to eta etaOf[e], and the entries at place i, latest
	// first, are byPlace[i], nextAt[byPlace[i]], ...; the etas pivoting
	// at i are pivAt[i], pivNext[pivAt[i]], ...; −1 ends a list.
	// placed lists the places whose lists are not empty.
	etaOf   []int32
	nextAt  []int32
	byPlace []int32
	pivAt   []int32
	pivNext []int32
	placed  []int
	// acc is each eta's dot product over the places changed so far,
	// queued whether it waits in heap; both are zero between BTRANs.
	acc    []float64
	queued []bool
	heap   pivotHeap
}

func newBasisInverse(f *lu) *basisInverse {
	b := &basisInverse{}
	b.reset(f)
	return b
}

// reset starts over from the factorisation f with no etas, keeping the
// arrays: the etas of a long LP grow to hundreds of thousands of
// entries, and a cut round changes the order m.
func (b *basisInverse) reset(f *lu) {
	if b.m != f.m || b.work == nil {
		b.m, b.work = f.m, newSvec(f.m)
		b.byPlace, b.pivAt = filled(b.byPlace, f.m, -1), filled(b.pivAt, f.m, -1)
		b.placed = b.placed[:0]
	}
	b.lu = f
	b.etaPos, b.etaPiv = b.etaPos[:0], b.etaPiv[:0]
	b.etaStart = append(b.etaStart[:0], 0)
	b.etaIdx, b.etaVal = b.etaIdx[:0], b.etaVal[:0]
	for _, i := range b.placed {
		b.byPlace[i], b.pivAt[i] = -1, -1
	}
	b.placed = b.placed[:0]
	b.etaOf, b.nextAt, b.pivNext = b.etaOf[:0], b.nextAt[:0], b.pivNext[:0]
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
// A sparse c (the simplex's pivot rows: 80-90 nonzeros of 53,000 on
// 256x1000's level 4) visits only the etas its places reach, where the
// plain loop read every eta's entries (49,000 a BTRAN there, of which
// the places reached about 7 etas).
func (b *basisInverse) btran(x *svec) {
	if list := x.list(); float64(len(list)) < hypersparse*float64(b.m) {
		b.btranEtasSparse(x, len(list))
	} else {
		b.btranEtas(x)
	}
	b.lu.btran(x, b.work)
}

// btranEtas applies the etas' transposes to x, latest first, each as a
// dot product over its entries.
func (b *basisInverse) btranEtas(x *svec) {
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
}

// btranEtasSparse is btranEtas for an x whose first n listed places are
// its nonzeros: each change of x at a place is added at once to the
// dot products of the etas not yet applied that read it (acc), and an
// eta is applied, latest first, only when a change reached it.
func (b *basisInverse) btranEtasSparse(x *svec, n int) {
	if T := len(b.etaPos); len(b.acc) < T {
		b.acc = append(b.acc, make([]float64, T-len(b.acc))...)
		b.queued = append(b.queued, make([]bool, T-len(b.queued))...)
	}
	h := &b.heap
	h.reset(true)
	queue := func(t int) {
		if !b.queued[t] {
			b.queued[t] = true
			h.push(t)
		}
	}
	// changed tells the etas before limit that x moved by delta at i.
	changed := func(i int, delta float64, limit int) {
		for e := b.byPlace[i]; e >= 0; e = b.nextAt[e] {
			if t := int(b.etaOf[e]); t < limit {
				b.acc[t] += b.etaVal[e] * delta
				queue(t)
			}
		}
		for t := b.pivAt[i]; t >= 0; t = b.pivNext[t] {
			if int(t) < limit {
				queue(int(t))
			}
		}
	}
	T := len(b.etaPos)
	for k := 0; k < n; k++ {
		if i := x.idx[k]; x.v[i] != 0 {
			changed(i, x.v[i], T)
		}
	}
	for h.len() > 0 {
		t := h.pop()
		b.queued[t] = false
		r := b.etaPos[t]
		old := x.v[r]
		v := (old - b.acc[t]) / b.etaPiv[t]
		b.acc[t] = 0
		if v == old {
			continue
		}
		x.v[r] = v
		x.add(r)
		changed(r, v-old, t)
	}
}

// update records the basis change at position r with the entering
// column's FTRAN alpha (by positions).
func (b *basisInverse) update(r int, alpha *svec) {
	t := int32(len(b.etaPos))
	for _, i := range alpha.list() {
		if v := alpha.v[i]; i != r && (v > luDrop || v < -luDrop) {
			b.place(i)
			b.etaOf = append(b.etaOf, t)
			b.nextAt = append(b.nextAt, b.byPlace[i])
			b.byPlace[i] = int32(len(b.etaIdx))
			b.etaIdx = append(b.etaIdx, i)
			b.etaVal = append(b.etaVal, v)
		}
	}
	b.place(r)
	b.pivNext = append(b.pivNext, b.pivAt[r])
	b.pivAt[r] = t
	b.etaPos = append(b.etaPos, r)
	b.etaPiv = append(b.etaPiv, alpha.v[r])
	b.etaStart = append(b.etaStart, len(b.etaIdx))
}

// place lists place i in placed when its lists are empty yet.
func (b *basisInverse) place(i int) {
	if b.byPlace[i] < 0 && b.pivAt[i] < 0 {
		b.placed = append(b.placed, i)
	}
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
