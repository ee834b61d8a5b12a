package fleet

import (
	"bytes"
	"errors"
	"os"
	"strings"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
	"github.com/poolsolve/poolsolve/lloom"
)

// A bundle is read as a jsonpos tree first: each value knows where its
// bytes are, so a sub-document (the config, a node's status) can be handed
// to lloom's parser as it was written, and the positions in lloom's errors
// can be moved back into the bundle.

// spanOptions keep fleet's wording: a bundle is an object, and running out
// of input most likely means a truncated file.
var spanOptions = jsonpos.Options{
	Empty:          "empty document: expected a JSON object",
	Truncated:      "unexpected end of JSON input (is the file truncated?)",
	DecoderOffsets: true,
}

// parseShallow reads a bundle or a cluster answer: three levels are
// enough to find every document in it, which is handed on as bytes, so
// deeper containers stay spans (a large metrics answer costs no tree).
func parseShallow(data []byte, file string) (*jsonpos.Value, error) {
	opts := spanOptions
	opts.Shallow = 3
	v, err := jsonpos.Parse(data, opts)
	if err != nil {
		se := err.(*jsonpos.SyntaxError)
		return nil, &lloom.InputError{File: file, Line: se.Line, Col: se.Col, Path: se.Path, Msg: se.Msg}
	}
	return v, nil
}

// parseSpans reads exactly one JSON value.
func parseSpans(data []byte, file string) (*jsonpos.Value, error) {
	v, err := jsonpos.Parse(data, spanOptions)
	if err != nil {
		se := err.(*jsonpos.SyntaxError)
		return nil, &lloom.InputError{File: file, Line: se.Line, Col: se.Col, Path: se.Path, Msg: se.Msg}
	}
	return v, nil
}

// offsetOf is jsonpos.Position's inverse within data; ok is false when
// line and col do not fall inside data.
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
			out.Line, out.Col = jsonpos.Position(whole, base+off)
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

// Locate gives each problem found on decoded values, which has a JSON
// path but no line yet, the line and column of that path in its file,
// read again: in a bundle of a dozen documents a path alone is hard to
// find. Where the file lacks part of the path (a member that is
// missing), the position is that of the deepest value it has. Problems
// in what is not a regular JSON file (a gateway answer, pool.toml's
// keys) are left as they are.
func Locate(ps lloom.Problems) {
	// One Finder a file: thousands of problems in one file read it once.
	files := map[string]*jsonpos.Finder{}
	for _, p := range ps {
		if p.Line > 0 || p.File == "" || !strings.HasPrefix(p.Path, jsonpos.Root) {
			continue
		}
		f, seen := files[p.File]
		if !seen {
			// Only a regular file can be read twice (not a pipe).
			if st, err := os.Stat(p.File); err == nil && st.Mode().IsRegular() {
				if data, err := readFile(p.File); err == nil {
					f = jsonpos.NewFinder(data)
				}
			}
			files[p.File] = f
		}
		if f == nil {
			continue
		}
		if off, _, err := f.Find(p.Path); err == nil {
			p.Line, p.Col = f.Position(off)
		}
	}
}
