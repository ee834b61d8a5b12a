package slab

// Slab cuts pieces from arrays of Chunk elements, Size when Chunk is 0.
// The zero Slab is ready to use. It is not safe for concurrent use.
type Slab[T any] struct {
	// Chunk, set before the first Make, sizes the arrays for a builder
	// that knows it needs fewer elements than Size in all.
	Chunk int
	buf   []T
}

// Size is how many elements each array holds by default. A piece larger
// than a quarter of an array gets one of its own, so that little is left
// unused.
const Size = 16 << 10

// Make returns a slice of length 0 and capacity n. Appending past n
// copies, as with make, and never reaches another piece.
func (s *Slab[T]) Make(n int) []T {
	size := s.Chunk
	if size <= 0 {
		size = Size
	}
	if n > size/4 {
		return make([]T, 0, n)
	}
	if cap(s.buf)-len(s.buf) < n {
		s.buf = make([]T, 0, size)
	}
	k := len(s.buf)
	s.buf = s.buf[:k+n]
	return s.buf[k : k : k+n]
}
