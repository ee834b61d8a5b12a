package jsonpos

import (
	"errors"
	"strconv"
	"strings"
)

// A step is one part of a path: an object member, an array element, or
// the element of an array of objects whose "id" member is a given string.
type step struct {
	key   string
	index int // -1 unless an array element
	byID  bool
}

// parsePath reads a path as Field, Key and Index spell it (`$`,
// `.name`, `["key"]`, `[2]`), plus `[id="x"]`, which problems found on a
// decoded list use for the element whose id is x.
func parsePath(path string) ([]step, error) {
	rest, ok := strings.CutPrefix(path, Root)
	if !ok {
		return nil, errors.New("a path starts with $")
	}
	var steps []step
	for rest != "" {
		switch rest[0] {
		case '.':
			n := 1
			for n < len(rest) && rest[n] != '.' && rest[n] != '[' {
				n++
			}
			if !IsIdentifier(rest[1:n]) {
				return nil, errors.New("a name after a dot is an identifier")
			}
			steps, rest = append(steps, step{key: rest[1:n], index: -1}), rest[n:]
		case '[':
			s, tail, err := bracket(rest[1:])
			if err != nil {
				return nil, err
			}
			steps, rest = append(steps, s), tail
		default:
			return nil, errors.New("expected . or [ in a path")
		}
	}
	return steps, nil
}

// bracket reads what follows a '[' up to and past its ']'.
func bracket(s string) (step, string, error) {
	out := step{index: -1}
	if t, ok := strings.CutPrefix(s, "id="); ok {
		out.byID, s = true, t
	}
	if strings.HasPrefix(s, `"`) {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return out, "", err
		}
		out.key, _ = strconv.Unquote(q)
		s = s[len(q):]
	} else {
		if out.byID {
			return out, "", errors.New("id= takes a quoted string")
		}
		n := 0
		for n < len(s) && s[n] >= '0' && s[n] <= '9' {
			n++
		}
		i, err := strconv.Atoi(s[:n])
		if err != nil || n > 1 && s[0] == '0' {
			return out, "", errors.New("expected an index or a quoted key in brackets")
		}
		out.index, s = i, s[n:]
	}
	rest, ok := strings.CutPrefix(s, "]")
	if !ok {
		return out, "", errors.New("expected ] in a path")
	}
	return out, rest, nil
}

// Find returns the offset in data of the value at path (see parsePath),
// so that a problem found on decoded values can still name its line and
// column. When data lacks part of the path, the offset is that of the
// deepest value on it that data has, and exact is false. Each container
// on the path is read with its children only (Options.Shallow), so a
// large document costs no tree. An error means the path is not of the
// form above or data is not one JSON value.
func Find(data []byte, path string) (off int, exact bool, err error) {
	steps, err := parsePath(path)
	if err != nil {
		return 0, false, err
	}
	base := 0
	cur, err := Parse(data, Options{Shallow: 2})
	if err != nil {
		return 0, false, err
	}
	for _, s := range steps {
		next := cur.child(s)
		if next == nil {
			return base + cur.Start, false, nil
		}
		if next.Kind == Array || next.Kind == Object {
			// Read it again as a document of its own: its children, and
			// theirs for an id, are then at hand.
			sub, err := Parse(data[base+next.Start:base+next.End], Options{Shallow: 2})
			if err != nil {
				return 0, false, err // a part of a valid document is valid
			}
			base += next.Start
			next = sub
		}
		cur = next
	}
	return base + cur.Start, true, nil
}

// child is the value step s leads to from v, nil when there is none.
func (v *Value) child(s step) *Value {
	switch {
	case s.index >= 0:
		if v.Kind == Array && s.index < len(v.Elems) {
			return v.Elems[s.index]
		}
	case s.byID:
		if v.Kind != Array {
			return nil
		}
		for _, e := range v.Elems {
			if id := e.Get("id"); id != nil && id.Kind == String && id.Text == s.key {
				return e
			}
		}
	default:
		return v.Get(s.key)
	}
	return nil
}
