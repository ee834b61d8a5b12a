package lp

// svec is a dense vector with a list of the places that may be nonzero,
// so that the simplex touches the nonzeros of its vectors, not all m
// places (hypersparse solves; Hall and McKinnon 2005).
type svec struct {
	v    []float64
	idx  []int
	mark []uint32 // mark[i] == gen: i is on idx
	gen  uint32
	// full: the list is not kept; every place may be nonzero.
	full bool
}

func newSvec(m int) *svec {
	return &svec{v: make([]float64, m), mark: make([]uint32, m), gen: 1}
}

// clear zeroes the vector and empties its list.
func (x *svec) clear() {
	if x.full {
		clear(x.v)
	} else {
		for _, i := range x.idx {
			x.v[i] = 0
		}
	}
	x.idx = x.idx[:0]
	x.full = false
	x.next()
}

// next starts a new list without zeroing (the caller zeroed its places).
func (x *svec) next() {
	x.idx = x.idx[:0]
	if x.gen++; x.gen == 0 {
		clear(x.mark)
		x.gen = 1
	}
}

// add puts place i on the list.
func (x *svec) add(i int) {
	if x.full || x.mark[i] == x.gen {
		return
	}
	x.mark[i] = x.gen
	x.idx = append(x.idx, i)
}

// set writes v at place i and lists it.
func (x *svec) set(i int, v float64) {
	x.v[i] = v
	x.add(i)
}

// dense marks every place as possibly nonzero.
func (x *svec) dense() {
	x.full = true
	x.idx = x.idx[:0]
}

// list returns the places that may be nonzero, listing a full vector's
// nonzeros first.
func (x *svec) list() []int {
	if x.full {
		x.full = false
		x.next()
		for i, v := range x.v {
			if v != 0 {
				x.add(i)
			}
		}
	}
	return x.idx
}

// moveTo copies x into dst (cleared first) and clears x.
func (x *svec) moveTo(dst *svec) {
	dst.clear()
	for _, i := range x.list() {
		if v := x.v[i]; v != 0 {
			dst.set(i, v)
			x.v[i] = 0
		}
	}
	x.next()
}
