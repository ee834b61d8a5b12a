package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Duplicates finds the first object key written twice in one object (as
// decoded: "\u00e9" and "é" are one key) and
// returns it as a *SyntaxError at the second key, with the member's JSON
// path and the first key's line and column. encoding/json keeps the last
// of two equal keys silently, which once dropped a node's report from a
// bundle; every JSON reader calls this. It assumes data is valid JSON
// (callers check syntax with their own wording) and returns nil for input
// that is not, without panicking.
func Duplicates(data []byte) error {
	s := scanner{data: data}
	return s.scan(nil)
}

// Check reports whether data is one valid JSON value, no deeper than
// MaxDepth, without duplicate keys, and with every key accepted by keyOK
// (nil accepts all). It allocates little, so a large document can be
// vetted before a fast decode; a false answer sends the caller to Parse,
// whose errors carry positions.
func Check(data []byte, keyOK func(key []byte) bool) bool {
	if !json.Valid(data) {
		return false
	}
	s := scanner{data: data}
	return s.scan(keyOK) == nil
}

// CheckKeys is Check without the syntax check, for data a validating
// decoder reads next (encoding/json checks the whole input before it
// decodes): on invalid JSON its answer means nothing, and it does not
// panic.
func CheckKeys(data []byte, keyOK func(key []byte) bool) bool {
	s := scanner{data: data}
	return s.scan(keyOK) == nil
}

// CheckKeysCounting is CheckKeys that also counts the elements of every
// array that is a member of the top-level object, by key (a key written
// twice makes ok false), so that a decoder can size its slices once
// instead of growing them: growing a 55,000-entry recent[] costs several
// times its final size in copies.
func CheckKeysCounting(data []byte, keyOK func(key []byte) bool) (ok bool, lens map[string]int) {
	s := scanner{data: data, lens: map[string]int{}}
	if s.scan(keyOK) != nil {
		return false, nil
	}
	return true, s.lens
}

// smallObject is how many keys are compared one by one before an object
// gets a map.
const smallObject = 32

type frame struct {
	object bool
	index  int      // an array's current element
	key    []byte   // an object's current key (decoded)
	keys   [][]byte // keys so far, for small objects
	offs   []int    // where each of keys starts
	set    map[string]int
}

type scanner struct {
	data  []byte
	stack []frame
	depth int
	// lens, when not nil, gets the element count of each array that is
	// a member of the top-level object.
	lens map[string]int
}

var errRejected = errors.New("key rejected")

func (s *scanner) scan(keyOK func([]byte) bool) error {
	data := s.data
	for i := 0; i < len(data); {
		switch data[i] {
		case '{', '[':
			if s.depth >= MaxDepth {
				return s.errorAt(i, "", fmt.Sprintf("nesting deeper than %d levels", MaxDepth))
			}
			s.push(data[i] == '{')
			i++
		case '}', ']':
			if s.lens != nil && data[i] == ']' && s.depth == 2 && s.stack[0].object && !s.stack[1].object {
				n := s.stack[1].index + 1
				if j := lastNonBlank(data, i); j >= 0 && data[j] == '[' {
					n = 0
				}
				s.lens[string(s.stack[0].key)] = n
			}
			if s.depth > 0 {
				s.depth--
			}
			i++
		case ',':
			if s.depth > 0 && !s.stack[s.depth-1].object {
				s.stack[s.depth-1].index++
			}
			i++
		case '"':
			end := stringEnd(data, i)
			if end < 0 {
				return nil
			}
			j := end
			for j < len(data) && (data[j] == ' ' || data[j] == '\t' || data[j] == '\r' || data[j] == '\n') {
				j++
			}
			if j < len(data) && data[j] == ':' && s.depth > 0 && s.stack[s.depth-1].object {
				key, ok := unquote(data[i:end])
				if !ok {
					return nil
				}
				if keyOK != nil && !keyOK(key) {
					return errRejected
				}
				if err := s.member(key, i); err != nil {
					return err
				}
			}
			i = end
		default:
			i++
		}
	}
	return nil
}

func (s *scanner) push(object bool) {
	if s.depth == len(s.stack) {
		s.stack = append(s.stack, frame{})
	}
	f := &s.stack[s.depth]
	f.object, f.index, f.key = object, 0, nil
	f.keys, f.offs = f.keys[:0], f.offs[:0]
	if f.set != nil {
		clear(f.set)
	}
	s.depth++
}

// member records key (starting at off) in the innermost object.
func (s *scanner) member(key []byte, off int) error {
	f := &s.stack[s.depth-1]
	f.key = key
	first := -1
	if f.set != nil {
		if o, ok := f.set[string(key)]; ok {
			first = o
		} else {
			f.set[string(key)] = off
		}
	} else {
		for i, k := range f.keys {
			if bytes.Equal(k, key) {
				first = f.offs[i]
				break
			}
		}
		if first < 0 {
			f.keys, f.offs = append(f.keys, key), append(f.offs, off)
			if len(f.keys) > smallObject {
				f.set = make(map[string]int, 2*smallObject)
				for i, k := range f.keys {
					f.set[string(k)] = f.offs[i]
				}
			}
		}
	}
	if first < 0 {
		return nil
	}
	line, col := Position(s.data, first)
	return s.errorAt(off, s.path(), fmt.Sprintf("duplicate key %q (first at line %d, column %d)", key, line, col))
}

// path is the JSON path of the innermost object's current member.
func (s *scanner) path() string {
	p := Root
	for i := range s.depth {
		f := &s.stack[i]
		if f.object {
			p = Field(p, string(f.key))
		} else {
			p = Index(p, f.index)
		}
	}
	return p
}

func (s *scanner) errorAt(off int, path, msg string) error {
	line, col := Position(s.data, off)
	return &SyntaxError{Offset: off, Line: line, Col: col, Path: path, Msg: msg}
}

// lastNonBlank is the offset of the last byte before i that is not JSON
// white space, or -1.
func lastNonBlank(data []byte, i int) int {
	for i--; i >= 0; i-- {
		if c := data[i]; c != ' ' && c != '\t' && c != '\r' && c != '\n' {
			return i
		}
	}
	return -1
}

// stringEnd returns the offset just past the string starting at i, or -1
// when it does not end.
func stringEnd(data []byte, i int) int {
	for j := i + 1; j < len(data); j++ {
		switch data[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}

// unquote decodes a quoted key; plain keys are returned without a copy.
// A key that is not valid UTF-8 is decoded as encoding/json decodes it,
// each bad byte a U+FFFD: two keys that decode alike are one key to
// every reader, and so a duplicate.
func unquote(q []byte) ([]byte, bool) {
	body := q[1 : len(q)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return body, true
	}
	var k string
	if json.Unmarshal(q, &k) != nil {
		return nil, false
	}
	return []byte(k), true
}
