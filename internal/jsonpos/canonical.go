package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
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
	if !json.Valid(data) {
		return nil, errors.New("not valid JSON")
	}
	if err := Duplicates(data); err != nil {
		return nil, err
	}
	c := canon[C]{data: data, out: make([]byte, 0, len(data)), r: r}
	i := c.value(skipBlank(data, 0), root)
	if skipBlank(data, i) != len(data) {
		return nil, errors.New("not one JSON value")
	}
	return c.out, nil
}

type canon[C any] struct {
	data []byte
	out  []byte
	r    Rewriter[C]
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
	d := c.data
	switch d[i] {
	case '{':
		var ms []member
		i = skipBlank(d, i+1)
		for d[i] != '}' {
			end := stringEnd(d, i)
			vs := skipBlank(d, skipBlank(d, end)+1) // past ':'
			ve := skipValue(d, vs)
			ms = append(ms, member{decodeString(d[i:end]), vs, ve})
			i = skipBlank(d, ve)
			if d[i] == ',' {
				i = skipBlank(d, i+1)
			}
		}
		slices.SortFunc(ms, func(a, b member) int { return strings.Compare(a.key, b.key) })
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
