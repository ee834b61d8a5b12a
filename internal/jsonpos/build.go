package jsonpos

import "github.com/poolsolve/poolsolve/internal/slab"

// build makes the tree of a document already known to be valid JSON
// without json.Decoder's tokens, which cost an allocation each: most
// documents are sound, and a large one (a metrics answer inside a bundle)
// took seconds and gigabytes through the tokens. ok is false when the
// document nests deeper than MaxDepth; Parse then words that error.
//
// Values, members and elements are cut from slabs, and an object's
// members gathered on a scratch list per depth first, so that each list
// is allocated once at its size; keys met before are not decoded again.
// A 256-node bundle's documents are mostly small objects of repeated
// keys.
type builder struct {
	data    []byte
	shallow int

	vals    []Value // the current chunk of values
	chunk   int     // how many values a chunk holds
	members slab.Slab[Member]
	elems   slab.Slab[*Value]
	// scratch holds, per depth, the members or elements of the
	// container being read there.
	mscratch [][]Member
	escratch [][]*Value
	keys     map[string]string
	// twice is set when an object has a key twice, as decoded; Parse
	// then asks Duplicates, which words the error.
	twice bool
	// spans is set when a container was kept as a span (shallow): the
	// builder did not see its keys, so Duplicates must.
	spans bool
	seen  map[string]bool // scratch for large objects
}

// newBuilder sizes the slabs by the document: most documents a bundle
// hands on are a few kilobytes, a value or element takes at least two
// bytes of text (`1,`) and a member five (`"":1,`).
func newBuilder(data []byte, shallow int) *builder {
	atMost := func(n int) int { return min(max(n, 16), slab.Size) }
	b := &builder{data: data, shallow: shallow, chunk: min(atMost(len(data)/8), 256)}
	b.members.Chunk, b.elems.Chunk = atMost(len(data)/5), atMost(len(data)/2)
	return b
}

func (b *builder) newValue(start int) *Value {
	if len(b.vals) == cap(b.vals) {
		b.vals = make([]Value, 0, b.chunk)
	}
	b.vals = append(b.vals, Value{Start: start})
	return &b.vals[len(b.vals)-1]
}

// key decodes the quoted key q, from b.keys when it was met before.
func (b *builder) key(q []byte) string {
	if k, ok := b.keys[string(q)]; ok {
		return k
	}
	k := decodeString(q)
	if b.keys == nil {
		b.keys = map[string]string{}
	}
	if len(b.keys) < maxKeys {
		b.keys[string(q)] = k
	}
	return k
}

// repeats reports whether two of ms have the same key.
func (b *builder) repeats(ms []Member) bool {
	if len(ms) <= smallObject {
		for i := 1; i < len(ms); i++ {
			for j := range i {
				if ms[i].Key == ms[j].Key {
					return true
				}
			}
		}
		return false
	}
	if b.seen == nil {
		b.seen = map[string]bool{}
	}
	defer clear(b.seen)
	for _, m := range ms {
		if b.seen[m.Key] {
			return true
		}
		b.seen[m.Key] = true
	}
	return false
}

func (b *builder) value(i, depth int) (v *Value, end int, ok bool) {
	d := b.data
	v = b.newValue(i)
	switch c := d[i]; c {
	case '{', '[':
		if depth >= MaxDepth {
			return nil, 0, false
		}
		if b.shallow > 0 && depth >= b.shallow {
			v.Kind, v.Shallow = Array, true
			b.spans = true
			if c == '{' {
				v.Kind = Object
			}
			v.End = skipValue(d, i)
			return v, v.End, true
		}
		i = skipBlank(d, i+1)
		if c == '{' {
			v.Kind = Object
			for len(b.mscratch) <= depth {
				b.mscratch = append(b.mscratch, nil)
			}
			ms := b.mscratch[depth][:0]
			for d[i] != '}' {
				kend := stringEnd(d, i)
				key := b.key(d[i:kend])
				i = skipBlank(d, skipBlank(d, kend)+1) // past ':'
				mv, vend, ok := b.value(i, depth+1)
				if !ok {
					return nil, 0, false
				}
				ms = append(ms, Member{Key: key, Value: mv})
				i = skipBlank(d, vend)
				if d[i] == ',' {
					i = skipBlank(d, i+1)
				}
			}
			if len(ms) > 0 {
				v.Members = append(b.members.Make(len(ms)), ms...)
				if !b.twice && b.repeats(ms) {
					b.twice = true
				}
			}
			clear(ms) // the scratch must not keep the tree alive
			b.mscratch[depth] = ms[:0]
		} else {
			v.Kind = Array
			for len(b.escratch) <= depth {
				b.escratch = append(b.escratch, nil)
			}
			es := b.escratch[depth][:0]
			for d[i] != ']' {
				ev, vend, ok := b.value(i, depth+1)
				if !ok {
					return nil, 0, false
				}
				es = append(es, ev)
				i = skipBlank(d, vend)
				if d[i] == ',' {
					i = skipBlank(d, i+1)
				}
			}
			if len(es) > 0 {
				v.Elems = append(b.elems.Make(len(es)), es...)
			}
			clear(es)
			b.escratch[depth] = es[:0]
		}
		v.End = i + 1
	case '"':
		v.Kind, v.End = String, stringEnd(d, i)
		v.Text = decodeString(d[i:v.End])
	case 't', 'f':
		v.Kind, v.Bool = Bool, c == 't'
		v.End = skipValue(d, i)
	case 'n':
		v.Kind, v.End = Null, skipValue(d, i)
	default:
		v.Kind, v.End = Number, skipValue(d, i)
		v.Text = string(d[i:v.End])
	}
	return v, v.End, true
}
