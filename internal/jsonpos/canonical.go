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
	if !json.Valid(data) {
		return nil, errors.New("not valid JSON")
	}
	if err := Duplicates(data); err != nil {
		return nil, err
	}
	c := canon{data: data, out: make([]byte, 0, len(data))}
	i := c.value(skipBlank(data, 0))
	if skipBlank(data, i) != len(data) {
		return nil, errors.New("not one JSON value")
	}
	return c.out, nil
}

type canon struct {
	data []byte
	out  []byte
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
func (c *canon) value(i int) int {
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
			c.value(m.start)
		}
		c.out = append(c.out, '}')
		return i + 1
	case '[':
		c.out = append(c.out, '[')
		i = skipBlank(d, i+1)
		for n := 0; d[i] != ']'; n++ {
			if n > 0 {
				c.out = append(c.out, ',')
			}
			i = skipBlank(d, c.value(i))
			if d[i] == ',' {
				i = skipBlank(d, i+1)
			}
		}
		c.out = append(c.out, ']')
		return i + 1
	case '"':
		end := stringEnd(d, i)
		raw := d[i:end]
		if plainString(raw) {
			c.out = append(c.out, raw...)
		} else {
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

func (c *canon) writeString(s string) {
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
