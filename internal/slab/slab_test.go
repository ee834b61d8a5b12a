package slab

import "testing"

func TestPiecesDoNotOverlapAndAppendingPastOneCopies(t *testing.T) {
	var s Slab[int]
	var pieces [][]int
	for n := range 3000 {
		p := s.Make(n % 40)
		if len(p) != 0 || cap(p) != n%40 {
			t.Fatalf("Make(%d): len %d cap %d", n%40, len(p), cap(p))
		}
		for k := range cap(p) {
			p = append(p, n*100+k)
		}
		pieces = append(pieces, p)
	}
	// A full piece grown by one must not write into the next piece.
	grown := append(pieces[1], -1)
	if &grown[0] == &pieces[1][0] {
		t.Fatal("appending past a piece's capacity did not copy")
	}
	for n, p := range pieces {
		for k, v := range p {
			if v != n*100+k {
				t.Fatalf("piece %d[%d] = %d, want %d: pieces overlap", n, k, v, n*100+k)
			}
		}
	}
}

func TestALargePieceGetsAnArrayOfItsOwn(t *testing.T) {
	var s Slab[byte]
	s.Make(8)
	large := s.Make(Size/4 + 1)
	if cap(large) != Size/4+1 {
		t.Fatalf("large piece: cap %d, want %d", cap(large), Size/4+1)
	}
	// The slab's array still has room for small pieces after it.
	if left := cap(s.buf) - len(s.buf); left != Size-8 {
		t.Fatalf("after a large piece the slab has %d left, want %d", left, Size-8)
	}
}

func TestAChunkSizesTheArrays(t *testing.T) {
	s := Slab[int]{Chunk: 64}
	s.Make(10)
	if cap(s.buf) != 64 {
		t.Fatalf("array of %d elements, want 64", cap(s.buf))
	}
	if p := s.Make(17); cap(p) != 17 || cap(s.buf) != 64 {
		t.Fatalf("a piece over a quarter of the chunk: cap %d, array %d", cap(p), cap(s.buf))
	}
}
