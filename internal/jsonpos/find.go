package jsonpos

import (
	"errors"
	"sort"
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
	return NewFinder(data).Find(path)
}

// A Finder finds many paths in one document. Each container it steps
// through is read once and indexed by key and id, so finding n paths in a
// document of n values costs about n, not n squared.
type Finder struct {
	data  []byte
	nodes map[int]*container // by offset in data
	lines []int              // where each line starts, once asked
}

// container is one array or object read with its children only.
type container struct {
	v    *Value
	keys map[string]*Value // an object's members, the last of a repeated key
	ids  map[string]*Value // an array's objects by their "id", the first
}

// NewFinder is a Finder on data.
func NewFinder(data []byte) *Finder {
	return &Finder{data: data, nodes: map[int]*container{}}
}

// Find is the package's Find on the Finder's document.
func (f *Finder) Find(path string) (off int, exact bool, err error) {
	steps, err := parsePath(path)
	if err != nil {
		return 0, false, err
	}
	cur, err := f.at(0, len(f.data))
	if err != nil {
		return 0, false, err
	}
	base := 0
	for i, s := range steps {
		next := cur.child(s)
		if next == nil {
			return base + cur.v.Start, false, nil
		}
		if next.Kind != Array && next.Kind != Object {
			// A scalar has no children: the path ends here or misses.
			return base + next.Start, i == len(steps)-1, nil
		}
		// Read it as a document of its own: its children, and theirs
		// for an id, are then at hand.
		if cur, err = f.at(base+next.Start, base+next.End); err != nil {
			return 0, false, err // a part of a valid document is valid
		}
		base += next.Start
	}
	return base + cur.v.Start, true, nil
}

// Position is the line and column of offset off in the document.
func (f *Finder) Position(off int) (line, col int) {
	if f.lines == nil {
		f.lines = []int{0}
		for i, b := range f.data {
			if b == '\n' {
				f.lines = append(f.lines, i+1)
			}
		}
	}
	off = max(0, min(off, len(f.data)))
	i := sort.Search(len(f.lines), func(i int) bool { return f.lines[i] > off }) - 1
	return i + 1, off - f.lines[i] + 1
}

// at is the container (or the whole document) data[start:end], read once.
func (f *Finder) at(start, end int) (*container, error) {
	if c, ok := f.nodes[start]; ok {
		return c, nil
	}
	v, err := Parse(f.data[start:end], Options{Shallow: 2})
	if err != nil {
		return nil, err
	}
	c := &container{v: v}
	switch v.Kind {
	case Object:
		c.keys = make(map[string]*Value, len(v.Members))
		for _, m := range v.Members {
			c.keys[m.Key] = m.Value
		}
	case Array:
		c.ids = map[string]*Value{}
		for _, e := range v.Elems {
			if id := e.Get("id"); id != nil && id.Kind == String {
				if _, dup := c.ids[id.Text]; !dup {
					c.ids[id.Text] = e
				}
			}
		}
	}
	f.nodes[start] = c
	return c, nil
}

// child is the value step s leads to from c, nil when there is none.
func (c *container) child(s step) *Value {
	switch {
	case s.index >= 0:
		if c.v.Kind == Array && s.index < len(c.v.Elems) {
			return c.v.Elems[s.index]
		}
	case s.byID:
		return c.ids[s.key]
	default:
		return c.keys[s.key]
	}
	return nil
}
