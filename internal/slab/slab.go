package slab

// Slab cuts pieces from arrays of Size elements. The zero Slab is ready
// to use. It is not safe for concurrent use.
type Slab[T any] struct {
	buf []T
}

// Size is how many elements each array holds. A piece larger than a
// quarter of it gets an array of its own, so that little is left unused.
const Size = 16 << 10

// Make returns a slice of length 0 and capacity n. Appending past n
// copies, as with make, and never reaches another piece.
func (s *Slab[T]) Make(n int) []T {
	if n > Size/4 {
		return make([]T, 0, n)
	}
	if cap(s.buf)-len(s.buf) < n {
		s.buf = make([]T, 0, Size)
	}
	k := len(s.buf)
	s.buf = s.buf[:k+n]
	return s.buf[k : k : k+n]
}
