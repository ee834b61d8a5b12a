package jsonpos

// build makes the tree of a document already known to be valid JSON
// without json.Decoder's tokens, which cost an allocation each: most
// documents are sound, and a large one (a metrics answer inside a bundle)
// took seconds and gigabytes through the tokens. ok is false when the
// document nests deeper than MaxDepth; Parse then words that error.
type builder struct {
	data    []byte
	shallow int
}

func (b *builder) value(i, depth int) (v *Value, end int, ok bool) {
	d := b.data
	v = &Value{Start: i}
	switch c := d[i]; c {
	case '{', '[':
		if depth >= MaxDepth {
			return nil, 0, false
		}
		if b.shallow > 0 && depth >= b.shallow {
			v.Kind, v.Shallow = Array, true
			if c == '{' {
				v.Kind = Object
			}
			v.End = skipValue(d, i)
			return v, v.End, true
		}
		i = skipBlank(d, i+1)
		if c == '{' {
			v.Kind = Object
			for d[i] != '}' {
				kend := stringEnd(d, i)
				key := decodeString(d[i:kend])
				i = skipBlank(d, skipBlank(d, kend)+1) // past ':'
				mv, vend, ok := b.value(i, depth+1)
				if !ok {
					return nil, 0, false
				}
				v.Members = append(v.Members, Member{Key: key, Value: mv})
				i = skipBlank(d, vend)
				if d[i] == ',' {
					i = skipBlank(d, i+1)
				}
			}
		} else {
			v.Kind = Array
			for d[i] != ']' {
				ev, vend, ok := b.value(i, depth+1)
				if !ok {
					return nil, 0, false
				}
				v.Elems = append(v.Elems, ev)
				i = skipBlank(d, vend)
				if d[i] == ',' {
					i = skipBlank(d, i+1)
				}
			}
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
