package lloom

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"
)

// LLooM's files are decoded in two steps so that every error can name its
// JSON path and position: the bytes become a small tree of values (which
// finds syntax errors with their offsets), and the tree is then copied into
// the Go types by decode.go, which knows the path of every value it visits.

type kind uint8

const (
	kindNull kind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

// value is one JSON value with its byte span in the input.
type value struct {
	kind       kind
	start, end int    // byte offsets of the value's first byte and just past its last
	b          bool   // kindBool
	s          string // kindString contents, or the kindNumber literal
	arr        []*value
	obj        []member // in document order; duplicates kept, the last one wins
}

type member struct {
	key string
	val *value
}

// get returns the last member named k, or nil.
func (v *value) get(k string) *value {
	if v == nil || v.kind != kindObject {
		return nil
	}
	for i := len(v.obj) - 1; i >= 0; i-- {
		if v.obj[i].key == k {
			return v.obj[i].val
		}
	}
	return nil
}

// maxDepth bounds nesting so hostile input cannot exhaust the stack.
const maxDepth = 512

type treeParser struct {
	dec  *json.Decoder
	data []byte
	file string
}

// parseTree reads exactly one JSON value from data.
func parseTree(data []byte, file string) (*value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &treeParser{dec: dec, data: data, file: file}
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	prev := int(dec.InputOffset())
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, p.syntaxError(err)
		}
		return nil, p.errorAt(skipSpace(data, prev), "unexpected data after the top-level value")
	}
	return v, nil
}

func (p *treeParser) value(depth int) (*value, error) {
	prev := int(p.dec.InputOffset())
	tok, err := p.dec.Token()
	if err != nil {
		if err == io.EOF && depth == 0 {
			return nil, p.errorAt(len(p.data), "empty document: expected a JSON value")
		}
		return nil, p.syntaxError(err)
	}
	v := &value{start: skipSpace(p.data, prev)}
	switch t := tok.(type) {
	case nil:
		v.kind = kindNull
	case bool:
		v.kind, v.b = kindBool, t
	case json.Number:
		v.kind, v.s = kindNumber, string(t)
	case string:
		v.kind, v.s = kindString, t
	case json.Delim:
		if depth >= maxDepth {
			return nil, p.errorAt(v.start, fmt.Sprintf("nesting deeper than %d levels", maxDepth))
		}
		switch t {
		case '{':
			v.kind = kindObject
			for p.dec.More() {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, p.syntaxError(err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, p.errorAt(int(p.dec.InputOffset()), "expected an object key")
				}
				mv, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				v.obj = append(v.obj, member{key: k, val: mv})
			}
		case '[':
			v.kind = kindArray
			for p.dec.More() {
				ev, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				v.arr = append(v.arr, ev)
			}
		default:
			return nil, p.errorAt(v.start, fmt.Sprintf("unexpected %q", rune(t)))
		}
		// The closing delimiter.
		if _, err := p.dec.Token(); err != nil {
			return nil, p.syntaxError(err)
		}
	}
	v.end = int(p.dec.InputOffset())
	return v, nil
}

func (p *treeParser) syntaxError(err error) error {
	// json.Decoder's token offsets are not all measured the same way, so the
	// position comes from a whole-document check, whose offsets are.
	var se *json.SyntaxError
	if uerr := json.Unmarshal(p.data, new(any)); errors.As(uerr, &se) {
		if se.Error() == "unexpected end of JSON input" {
			return p.errorAt(len(p.data), "unexpected end of JSON input")
		}
		return p.errorAt(int(se.Offset)-1, se.Error())
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return p.errorAt(len(p.data), "unexpected end of JSON input")
	}
	if errors.As(err, &se) {
		return p.errorAt(int(se.Offset), se.Error())
	}
	return p.errorAt(len(p.data), err.Error())
}

func (p *treeParser) errorAt(off int, msg string) error {
	line, col := position(p.data, off)
	return &InputError{File: p.file, Line: line, Col: col, Msg: msg}
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int) (line, col int) {
	off = max(0, min(off, len(data)))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = off - bytes.LastIndexByte(before, '\n')
	return line, col
}

// skipSpace skips the whitespace and separators json.Decoder leaves before
// a token, to find where the token starts.
func skipSpace(data []byte, off int) int {
	for off < len(data) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

// raw returns the value's bytes exactly as written.
func (v *value) raw(data []byte) json.RawMessage {
	if v.start < 0 || v.end > len(data) || v.start >= v.end {
		return json.RawMessage("null")
	}
	return bytes.Clone(data[v.start:v.end])
}

// toAny converts the value the way encoding/json does for an interface{}:
// numbers become float64 (or json.Number when they do not fit).
func (v *value) toAny() any {
	switch v.kind {
	case kindBool:
		return v.b
	case kindNumber:
		f, err := strconv.ParseFloat(v.s, 64)
		if err != nil {
			return json.Number(v.s)
		}
		return f
	case kindString:
		return v.s
	case kindArray:
		out := make([]any, len(v.arr))
		for i, e := range v.arr {
			out[i] = e.toAny()
		}
		return out
	case kindObject:
		out := make(map[string]any, len(v.obj))
		for _, m := range v.obj {
			out[m.key] = m.val.toAny()
		}
		return out
	}
	return nil
}

// describe names a value for "expected X, got Y" messages.
func describe(v *value) string {
	switch v.kind {
	case kindNull:
		return "null"
	case kindBool:
		return "boolean " + strconv.FormatBool(v.b)
	case kindNumber:
		return "number " + shorten(v.s)
	case kindString:
		return "string " + strconv.Quote(shorten(v.s))
	case kindArray:
		return "an array"
	case kindObject:
		return "an object"
	}
	return "a value"
}

func shorten(s string) string {
	const n = 40
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
