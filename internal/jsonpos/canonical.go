package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Canonical rewrites one JSON value compactly with object keys sorted,
// numbers as written and no HTML escaping: byte for byte what
// encoding/json writes for the value decoded with UseNumber, without
// building the value. A large document costs about its own size. Input
// with a syntax error or a repeated key is refused.
func Canonical(data []byte) ([]byte, error) {
	return Rewrite[struct{}](data, struct{}{}, nil)
}

// A Rewriter changes the strings of a document as Rewrite writes it. C is
// what it needs to know about where a value sits.
type Rewriter[C any] interface {
	// Member is the context of the value of member key in an object
	// whose own context is parent. Array elements share their array's.
	Member(parent C, key string) C
	// String rewrites a string value.
	String(c C, s string) string
	// Strings rewrites an array whose elements are all strings, at once
	// (an argument list).
	Strings(c C, ss []string) []string
}

// Rewrite is Canonical with every string value passed through r (nil
// changes nothing); root is the document's own context.
func Rewrite[C any](data []byte, root C, r Rewriter[C]) ([]byte, error) {
	c, err := newCanon(data, r, len(data), false)
	if err != nil {
		return nil, err
	}
	if err := c.run(root); err != nil {
		return nil, err
	}
	if c.recheck {
		if err := Duplicates(data); err != nil {
			return nil, err
		}
	}
	return c.out, nil
}

// RewriteTo is Rewrite writing to w as it goes, so that a large document
// is never held twice. Nothing is written when data is refused; an error
// of w ends the rewrite and is returned.
func RewriteTo[C any](w io.Writer, data []byte, root C, r Rewriter[C]) error {
	c, err := newCanon(data, r, 2*flushAt, true)
	if err != nil {
		return err
	}
	c.w = w
	if err := c.run(root); err != nil {
		return err
	}
	c.flush()
	return c.err
}

// flushAt is how much output RewriteTo gathers before it writes.
const flushAt = 64 << 10

// newCanon checks data for a repeated key (and too deep a nesting) first
// when streaming, since nothing may be written for a refused document;
// otherwise the sorted members show a repeat, and Duplicates, a second
// pass, runs only then.
func newCanon[C any](data []byte, r Rewriter[C], size int, streaming bool) (*canon[C], error) {
	if !json.Valid(data) {
		return nil, errors.New("not valid JSON")
	}
	if streaming {
		if err := Duplicates(data); err != nil {
			return nil, err
		}
	}
	return &canon[C]{data: data, out: make([]byte, 0, size), r: r, keys: map[string]string{}}, nil
}

func (c *canon[C]) run(root C) error {
	i := c.value(skipBlank(c.data, 0), root)
	if skipBlank(c.data, i) != len(c.data) {
		return errors.New("not one JSON value")
	}
	return nil
}

// flush writes what RewriteTo has gathered.
func (c *canon[C]) flush() {
	if c.w == nil || len(c.out) == 0 {
		return
	}
	if c.err == nil {
		_, c.err = c.w.Write(c.out)
	}
	c.out = c.out[:0]
}

type canon[C any] struct {
	data []byte
	out  []byte
	r    Rewriter[C]
	// members holds each open object's members, by depth, reused from
	// one object to the next.
	members [][]member
	depth   int
	// keys are the object keys met so far, so that a key written in
	// every entry of a long list is decoded once (at most maxKeys).
	keys map[string]string
	// recheck is set when an object has a key twice, as decoded, or
	// the nesting is as deep as Duplicates refuses; nest is the
	// current nesting.
	recheck bool
	nest    int
	// w, for RewriteTo, takes out whenever it passes flushAt; err is its
	// first error.
	w   io.Writer
	err error
}

// maxKeys bounds canon.keys: a document keyed by ids has as many keys as
// entries.
const maxKeys = 4096

// key decodes the quoted key q, from canon.keys when it was met before.
func (c *canon[C]) key(q []byte) string {
	if k, ok := c.keys[string(q)]; ok {
		return k
	}
	k := decodeString(q)
	if len(c.keys) < maxKeys {
		c.keys[string(q)] = k
	}
	return k
}

type member struct {
	key        string
	start, end int // the value
}

func skipBlank(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}

// value writes the value starting at i and returns the offset after it.
// data is valid JSON, so the scan needs no checks.
func (c *canon[C]) value(i int, ctx C) int {
	if c.w != nil && len(c.out) >= flushAt {
		c.flush()
	}
	d := c.data
	if d[i] == '{' || d[i] == '[' {
		// As deep as Duplicates refuses: it runs at the end and says so.
		if c.nest >= MaxDepth {
			c.recheck = true
		}
		c.nest++
		defer func() { c.nest-- }()
	}
	switch d[i] {
	case '{':
		if c.depth == len(c.members) {
			c.members = append(c.members, nil)
		}
		ms := c.members[c.depth][:0]
		c.depth++
		defer func() {
			c.depth--
			clear(ms) // the keys, for the collector
			c.members[c.depth] = ms[:0]
		}()
		i = skipBlank(d, i+1)
		for d[i] != '}' {
			end := stringEnd(d, i)
			vs := skipBlank(d, skipBlank(d, end)+1) // past ':'
			ve := skipValue(d, vs)
			ms = append(ms, member{c.key(d[i:end]), vs, ve})
			i = skipBlank(d, ve)
			if d[i] == ',' {
				i = skipBlank(d, i+1)
			}
		}
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
		for n := 1; n < len(ms) && !c.recheck; n++ {
			c.recheck = ms[n].key == ms[n-1].key
		}
		c.out = append(c.out, '{')
		for n, m := range ms {
			if n > 0 {
				c.out = append(c.out, ',')
			}
			c.writeString(m.key)
			c.out = append(c.out, ':')
			if c.r != nil {
				c.value(m.start, c.r.Member(ctx, m.key))
			} else {
				c.value(m.start, ctx)
			}
		}
		c.out = append(c.out, '}')
		return i + 1
	case '[':
		if c.r != nil {
			if end, ok := c.stringArray(i, ctx); ok {
				return end
			}
		}
		c.out = append(c.out, '[')
		i = skipBlank(d, i+1)
		for n := 0; d[i] != ']'; n++ {
			if n > 0 {
				c.out = append(c.out, ',')
			}
			i = skipBlank(d, c.value(i, ctx))
			if d[i] == ',' {
				i = skipBlank(d, i+1)
			}
		}
		c.out = append(c.out, ']')
		return i + 1
	case '"':
		end := stringEnd(d, i)
		raw := d[i:end]
		switch {
		case c.r != nil:
			c.writeString(c.r.String(ctx, decodeString(raw)))
		case plainString(raw):
			c.out = append(c.out, raw...)
		default:
			c.writeString(decodeString(raw))
		}
		return end
	}
	// A number or a literal, written as it is.
	end := i
	for end < len(d) && !strings.ContainsRune(" \t\r\n,]}", rune(d[end])) {
		end++
	}
	c.out = append(c.out, d[i:end]...)
	return end
}

// skipValue returns the offset just past the value starting at i.
func skipValue(d []byte, i int) int {
	switch d[i] {
	case '"':
		return stringEnd(d, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(d); j++ {
			switch d[j] {
			case '"':
				j = stringEnd(d, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return len(d)
	}
	end := i
	for end < len(d) && !strings.ContainsRune(" \t\r\n,]}", rune(d[end])) {
		end++
	}
	return end
}

// plainString reports whether a quoted string is already as encoding/json
// writes it: no escapes, no control characters, valid UTF-8 without the
// two line separators it escapes.
func plainString(q []byte) bool {
	body := q[1 : len(q)-1]
	for _, b := range body {
		if b < 0x20 || b == '\\' {
			return false
		}
	}
	return utf8.Valid(body) && !bytes.Contains(body, []byte("\u2028")) && !bytes.Contains(body, []byte("\u2029"))
}

// stringArray writes the array at i through Strings when every element
// is a string; ok is false, with nothing written, otherwise.
func (c *canon[C]) stringArray(i int, ctx C) (end int, ok bool) {
	d := c.data
	var ss []string
	i = skipBlank(d, i+1)
	for d[i] != ']' {
		if d[i] != '"' {
			return 0, false
		}
		e := stringEnd(d, i)
		ss = append(ss, decodeString(d[i:e]))
		i = skipBlank(d, e)
		if d[i] == ',' {
			i = skipBlank(d, i+1)
		}
	}
	if len(ss) == 0 {
		return 0, false
	}
	c.out = append(c.out, '[')
	for n, s := range c.r.Strings(ctx, ss) {
		if n > 0 {
			c.out = append(c.out, ',')
		}
		c.writeString(s)
	}
	c.out = append(c.out, ']')
	return i + 1, true
}

func (c *canon[C]) writeString(s string) {
	if plainText(s) {
		c.out = append(append(append(c.out, '"'), s...), '"')
		return
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	c.out = append(c.out, bytes.TrimSuffix(b.Bytes(), []byte("\n"))...)
}

// decodeString decodes a quoted string as encoding/json does: bad UTF-8
// becomes U+FFFD.
func decodeString(q []byte) string {
	if plainString(q) {
		return string(q[1 : len(q)-1])
	}
	var s string
	json.Unmarshal(q, &s)
	return s
}

// plainText reports whether encoding/json writes s between quotes as it
// is (see plainString).
func plainText(s string) bool {
	for i := 0; i < len(s); i++ {
		if b := s[i]; b < 0x20 || b == '\\' || b == '"' {
			return false
		}
	}
	return utf8.ValidString(s) && !strings.Contains(s, "\u2028") && !strings.Contains(s, "\u2029")
}
