package lloom

import (
	"bytes"
	"encoding/json"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// LLooM's files are decoded in two steps so that every error can name its
// JSON path and position: the bytes become a jsonpos tree of values (which
// finds syntax errors with their offsets), and the tree is then copied into
// the Go types by decode.go, which knows the path of every value it visits.

// readInput reads an input file, less a byte order mark before the value.
func readInput(path string) ([]byte, error) { return ReadInput(path) }

// parseTree reads exactly one JSON value from data.
func parseTree(data []byte, file string) (*jsonpos.Value, error) {
	v, err := jsonpos.Parse(data, jsonpos.Options{})
	if err != nil {
		se := err.(*jsonpos.SyntaxError)
		return nil, &InputError{File: file, Line: se.Line, Col: se.Col, Path: se.Path, Msg: se.Msg}
	}
	return v, nil
}

// raw returns the value's bytes exactly as written, in a copy.
func raw(v *jsonpos.Value, data []byte) json.RawMessage {
	if v.Start < 0 || v.End > len(data) || v.Start >= v.End {
		return json.RawMessage("null")
	}
	return bytes.Clone(v.Bytes(data))
}
