package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/poolsolve/poolsolve/lloom"
)

// A bundle is read as a tree of spans first: each value knows where its
// bytes are, so a sub-document (the config, a node's status) can be handed
// to lloom's parser as it was written, and the positions in lloom's errors
// can be moved back into the bundle.

type span struct {
	start, end int // byte offsets in the whole document
	obj        []spanMember
	arr        []*span
	kind       byte // one of '{', '[', 's' (string), 'n' (number), 'b', '0' (null)
	tok        any  // the scalar token
}

type spanMember struct {
	key string
	val *span
}

const maxSpanDepth = 512

// parseSpans reads exactly one JSON value.
func parseSpans(data []byte, file string) (*span, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &spanParser{dec: dec, data: data, file: file}
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

type spanParser struct {
	dec  *json.Decoder
	data []byte
	file string
}

func (p *spanParser) value(depth int) (*span, error) {
	prev := int(p.dec.InputOffset())
	tok, err := p.dec.Token()
	if err != nil {
		if err == io.EOF && depth == 0 {
			return nil, p.errorAt(len(p.data), "empty document: expected a JSON object")
		}
		return nil, p.syntaxError(err)
	}
	v := &span{start: skipSpace(p.data, prev), tok: tok}
	switch t := tok.(type) {
	case nil:
		v.kind = '0'
	case bool:
		v.kind = 'b'
	case json.Number:
		v.kind = 'n'
	case string:
		v.kind = 's'
	case json.Delim:
		if depth >= maxSpanDepth {
			return nil, p.errorAt(v.start, fmt.Sprintf("nesting deeper than %d levels", maxSpanDepth))
		}
		v.kind, v.tok = byte(t), nil
		for p.dec.More() {
			if t == '{' {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, p.syntaxError(err)
				}
				k, _ := kt.(string)
				mv, err := p.value(depth + 1)
				if err != nil {
					return nil, err
				}
				v.obj = append(v.obj, spanMember{key: k, val: mv})
				continue
			}
			ev, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			v.arr = append(v.arr, ev)
		}
		if _, err := p.dec.Token(); err != nil {
			return nil, p.syntaxError(err)
		}
	}
	v.end = int(p.dec.InputOffset())
	return v, nil
}

func (p *spanParser) syntaxError(err error) error {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return p.errorAt(int(se.Offset)-1, se.Error())
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return p.errorAt(len(p.data), "unexpected end of JSON input (is the file truncated?)")
	}
	return p.errorAt(len(p.data), err.Error())
}

func (p *spanParser) errorAt(off int, msg string) error {
	line, col := position(p.data, off)
	return &lloom.InputError{File: p.file, Line: line, Col: col, Msg: msg}
}

// get returns the last member named k, or nil.
func (v *span) get(k string) *span {
	if v == nil || v.kind != '{' {
		return nil
	}
	for i := len(v.obj) - 1; i >= 0; i-- {
		if v.obj[i].key == k {
			return v.obj[i].val
		}
	}
	return nil
}

// members returns the object's members, the last of duplicates winning,
// in document order.
func (v *span) members() []spanMember {
	var out []spanMember
	seen := map[string]int{}
	for _, m := range v.obj {
		if i, ok := seen[m.key]; ok {
			out[i] = m
			continue
		}
		seen[m.key] = len(out)
		out = append(out, m)
	}
	return out
}

func (v *span) bytes(data []byte) []byte { return data[v.start:v.end] }

// toAny converts the value for the strict tree decoder: numbers stay
// json.Number.
func (v *span) toAny() any {
	switch v.kind {
	case '{':
		m := make(map[string]any, len(v.obj))
		for _, mm := range v.obj {
			m[mm.key] = mm.val.toAny()
		}
		return m
	case '[':
		out := make([]any, len(v.arr))
		for i, e := range v.arr {
			out[i] = e.toAny()
		}
		return out
	}
	return v.tok
}

// describeSpan names a value for "expected X, got Y" messages.
func describeSpan(v *span) string {
	switch v.kind {
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return describe(v.tok)
}

// position turns a byte offset into a 1-based line and column.
func position(data []byte, off int) (line, col int) {
	off = max(0, min(off, len(data)))
	before := data[:off]
	return 1 + bytes.Count(before, []byte{'\n'}), off - bytes.LastIndexByte(before, '\n')
}

// offsetOf is position's inverse within data; ok is false when line and
// col do not fall inside data.
func offsetOf(data []byte, line, col int) (int, bool) {
	if line < 1 || col < 1 {
		return 0, false
	}
	off := 0
	for l := 1; l < line; l++ {
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			return 0, false
		}
		off += i + 1
	}
	off += col - 1
	return off, off <= len(data)
}

func skipSpace(data []byte, off int) int {
	for off < len(data) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off
}

// rebase moves an error about a sub-document into the document that holds
// it: the file becomes file, JSON paths gain the prefix at, and positions
// are moved from sub (which starts at byte base of whole) into whole.
// *lloom.InputError, lloom.Problems and *lloom.GatewayError are moved;
// other errors are wrapped as an InputError at the prefix.
func rebase(err error, file, at string, whole []byte, base int, sub []byte) error {
	if err == nil {
		return nil
	}
	move := func(e *lloom.InputError) *lloom.InputError {
		out := &lloom.InputError{File: file, Path: at + strings.TrimPrefix(e.Path, "$"), Msg: e.Msg}
		if e.Path == "" {
			out.Path = at
		}
		if off, ok := offsetOf(sub, e.Line, e.Col); ok && whole != nil {
			out.Line, out.Col = position(whole, base+off)
		}
		return out
	}
	var ie *lloom.InputError
	var probs lloom.Problems
	var ge *lloom.GatewayError
	switch {
	case errors.As(err, &probs):
		out := make(lloom.Problems, len(probs))
		for i, e := range probs {
			out[i] = move(e)
		}
		return out
	case errors.As(err, &ie):
		return move(ie)
	case errors.As(err, &ge):
		msg := "the gateway answered with an error instead of the document"
		if ge.Code != "" {
			msg += ": " + ge.Code
		}
		if ge.Message != "" {
			msg += ": " + ge.Message
		}
		return &lloom.InputError{File: file, Path: at, Msg: msg}
	}
	return &lloom.InputError{File: file, Path: at, Msg: err.Error()}
}
