package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Kind is the JSON type of a Value.
type Kind uint8

// The JSON types.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

// Value is one JSON value and where its text is in the input.
type Value struct {
	Kind       Kind
	Start, End int      // byte offsets of the value's first byte and just past its last
	Bool       bool     // a Bool's value
	Text       string   // a String's contents, or a Number's literal as written
	Elems      []*Value // an Array's elements
	Members    []Member // an Object's members in document order
	// Shallow marks an array or object whose elements or members were
	// not read (Options.Shallow): parse its Bytes to look inside.
	Shallow bool
}

// Member is one member of an object.
type Member struct {
	Key   string
	Value *Value
}

// MaxDepth bounds nesting so that hostile input cannot exhaust the stack.
const MaxDepth = 512

// Options tune the messages Parse gives to the wording its callers have
// always used. The zero value is package lloom's wording.
type Options struct {
	// Empty is the message for input with no value at all; by default
	// "empty document: expected a JSON value".
	Empty string
	// Truncated is the message for input that ends inside a value; by
	// default "unexpected end of JSON input".
	Truncated string
	// DecoderOffsets places a syntax error one byte before the offset
	// json.Decoder reports for it. By default the error and its position
	// come from a check of the whole document instead, because the
	// decoder's token offsets are not all measured the same way (some
	// point at the bad byte, some past it, some count from the last
	// token). Package fleet has always used the decoder's.
	DecoderOffsets bool
	// Shallow, when above zero, keeps arrays and objects nested that many
	// levels deep or more as spans only: Kind, Start, End and Shallow
	// set, no Elems or Members. A reader that hands sub-documents on as
	// bytes (a fleet bundle) then does not pay for a tree of each.
	Shallow int
}

// SyntaxError is input that is not one JSON value, with the position of
// the problem: a byte offset and the 1-based line and column (in bytes)
// it falls on.
type SyntaxError struct {
	Offset    int
	Line, Col int
	Path      string // the duplicate member's, or the value's the document broke off in; "" at the top level
	Msg       string
}

func (e *SyntaxError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("%d:%d: %s: %s", e.Line, e.Col, e.Path, e.Msg)
	}
	return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg)
}

// Parse reads exactly one JSON value from data; anything but whitespace
// after it is an error, and so is an object key written twice (see
// Duplicates). Errors are *SyntaxError; nesting deeper than MaxDepth is
// one too.
func Parse(data []byte, opts Options) (*Value, error) {
	if json.Valid(data) {
		// The builder notes a repeated key; Duplicates, a second pass,
		// runs only then, to word it, or when containers were kept as
		// spans, whose keys the builder did not read.
		b := newBuilder(data, opts.Shallow)
		v, _, ok := b.value(skipBlank(data, 0), 0)
		if b.twice || b.spans || !ok {
			if err := Duplicates(data); err != nil {
				return nil, err
			}
		}
		if ok {
			return v, nil
		}
		// Too deep: the tokens say where.
	}
	return parseTokens(data, opts)
}

// parseTokens is Parse through json.Decoder's tokens, which place every
// syntax error; Parse uses it for documents that are not valid JSON.
func parseTokens(data []byte, opts Options) (*Value, error) {
	if opts.Empty == "" {
		opts.Empty = "empty document: expected a JSON value"
	}
	if opts.Truncated == "" {
		opts.Truncated = "unexpected end of JSON input"
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	p := &parser{dec: dec, data: data, opts: opts}
	v, err := p.value(0, Root)
	if err != nil {
		return nil, err
	}
	prev := int(dec.InputOffset())
	if _, err := dec.Token(); err != io.EOF {
		if err != nil {
			return nil, p.syntaxError(err, "")
		}
		return nil, p.errorAt(skipSpace(data, prev), "", "unexpected data after the top-level value")
	}
	if err := Duplicates(data); err != nil {
		return nil, err
	}
	return v, nil
}

type parser struct {
	dec  *json.Decoder
	data []byte
	opts Options
}

// value reads the value at path. An error names the path of the value
// or container the document broke off in, as the duplicate-key check
// does, so a truncated file says where it ends.
func (p *parser) value(depth int, path string) (*Value, error) {
	prev := int(p.dec.InputOffset())
	tok, err := p.dec.Token()
	if err != nil {
		if err == io.EOF && depth == 0 {
			return nil, p.errorAt(len(p.data), "", p.opts.Empty)
		}
		return nil, p.syntaxError(err, path)
	}
	v := &Value{Start: skipSpace(p.data, prev)}
	switch t := tok.(type) {
	case nil:
		v.Kind = Null
	case bool:
		v.Kind, v.Bool = Bool, t
	case json.Number:
		v.Kind, v.Text = Number, string(t)
	case string:
		v.Kind, v.Text = String, t
	case json.Delim:
		if depth >= MaxDepth {
			return nil, p.errorAt(v.Start, "", fmt.Sprintf("nesting deeper than %d levels", MaxDepth)) // a path as deep says nothing
		}
		switch t {
		case '{':
			v.Kind = Object
			for p.dec.More() {
				kt, err := p.dec.Token()
				if err != nil {
					return nil, p.syntaxError(err, path)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, p.errorAt(int(p.dec.InputOffset()), path, "expected an object key")
				}
				mv, err := p.value(depth+1, Field(path, k))
				if err != nil {
					return nil, err
				}
				v.Members = append(v.Members, Member{Key: k, Value: mv})
			}
		case '[':
			v.Kind = Array
			for p.dec.More() {
				ev, err := p.value(depth+1, Index(path, len(v.Elems)))
				if err != nil {
					return nil, err
				}
				v.Elems = append(v.Elems, ev)
			}
		default:
			return nil, p.errorAt(v.Start, path, fmt.Sprintf("unexpected %q", rune(t)))
		}
		// The closing delimiter.
		if _, err := p.dec.Token(); err != nil {
			return nil, p.syntaxError(err, path)
		}
	}
	v.End = int(p.dec.InputOffset())
	return v, nil
}

func (p *parser) syntaxError(err error, path string) error {
	var se *json.SyntaxError
	if !p.opts.DecoderOffsets {
		if uerr := json.Unmarshal(p.data, new(any)); errors.As(uerr, &se) {
			if se.Error() == "unexpected end of JSON input" {
				return p.errorAt(len(p.data), path, p.opts.Truncated)
			}
			return p.errorAt(int(se.Offset)-1, path, se.Error())
		}
	}
	switch {
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return p.errorAt(len(p.data), path, p.opts.Truncated)
	case errors.As(err, &se):
		off := int(se.Offset)
		if p.opts.DecoderOffsets {
			off--
		}
		return p.errorAt(off, path, se.Error())
	}
	return p.errorAt(len(p.data), path, err.Error())
}

func (p *parser) errorAt(off int, path, msg string) error {
	off = max(0, min(off, len(p.data)))
	if path == Root {
		path = "" // the top level needs no path
	}
	line, col := Position(p.data, off)
	return &SyntaxError{Offset: off, Line: line, Col: col, Path: path, Msg: msg}
}

// Position turns a byte offset in data into a 1-based line and column,
// counting bytes. Offsets outside data are clamped to it.
func Position(data []byte, off int) (line, col int) {
	off = max(0, min(off, len(data)))
	before := data[:off]
	return 1 + bytes.Count(before, []byte{'\n'}), off - bytes.LastIndexByte(before, '\n')
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
