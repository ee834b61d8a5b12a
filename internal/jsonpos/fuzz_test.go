package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// FuzzParse checks Parse against encoding/json: it accepts exactly the
// valid documents (up to MaxDepth), decodes them to the same values, gives
// every value the span of its own text, and places every error at a
// position that agrees with Position.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		``, ` `, `null`, `{"a": [1, 2.5e-3, "x\u00e9"], "a": {"b": null}}`, `[true, false, {}]`,
		`{"a" 1}`, `{"a":tru}`, `[1,]`, `{} x`, `{} {}`, `"\xff"`, "{\n \"a\": [1,",
		strings.Repeat("[", MaxDepth+1), `1e999`, `-0`, `"\ud800"`,
	} {
		f.Add([]byte(s))
	}
	fleet := Options{Empty: "empty", Truncated: "truncated", DecoderOffsets: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data, Options{})
		dv, derr := Parse(data, fleet)
		if (err == nil) != (derr == nil) {
			t.Fatalf("the two placements disagree on validity: %v / %v", err, derr)
		}
		for _, e := range []error{err, derr} {
			if e == nil {
				continue
			}
			var se *SyntaxError
			if !errors.As(e, &se) {
				t.Fatalf("error %v is %T, want *SyntaxError", e, e)
			}
			if se.Path != "" && !strings.HasPrefix(se.Path, Root) {
				t.Fatalf("error %+v has a path that is not one", se)
			}
			if se.Offset < 0 || se.Offset > len(data) || se.Msg == "" {
				t.Fatalf("error %+v is outside the %d bytes or has no message", se, len(data))
			}
			if l, c := Position(data, se.Offset); l != se.Line || c != se.Col {
				t.Fatalf("error at %d says %d:%d, Position says %d:%d", se.Offset, se.Line, se.Col, l, c)
			}
		}
		dup := json.Valid(data) && hasDuplicateKey(data)
		// On any input, valid or not, the key scan must not panic.
		keysOK := CheckKeys(data, nil)
		_ = Duplicates(data)
		if json.Valid(data) && keysOK != (err == nil) {
			t.Fatalf("CheckKeys and Parse disagree on %q: %v", data, err)
		}
		if Check(data, nil) != (err == nil) {
			t.Fatalf("Check and Parse disagree on %q: %v", data, err)
		}
		// Canonical looks for repeated keys only once its sorted members
		// show one, RewriteTo before it writes: both refuse what Parse
		// refuses, with Duplicates' words.
		// A shallow tree refuses what a whole one refuses.
		if _, serr := Parse(data, Options{Shallow: 1}); (serr == nil) != (err == nil) {
			t.Fatalf("Parse, shallow (%v), and Parse (%v) disagree on %q", serr, err, data)
		}
		_, cerr := Canonical(data)
		werr := RewriteTo(io.Discard, data, struct{}{}, nil)
		if (cerr == nil) != (err == nil) || fmt.Sprint(cerr) != fmt.Sprint(werr) {
			t.Fatalf("Canonical (%v), RewriteTo (%v) and Parse (%v) disagree on %q", cerr, werr, err, data)
		}
		if err != nil {
			msg := err.(*SyntaxError).Msg
			isDup := strings.HasPrefix(msg, "duplicate key")
			if isDup != dup {
				t.Fatalf("Parse(%q) = %v, but a duplicate key is %v", data, err, dup)
			}
			if json.Valid(data) && !isDup && !strings.HasPrefix(msg, "nesting deeper") {
				t.Fatalf("Parse refused valid JSON %q: %v", data, err)
			}
			return
		}
		if dup {
			t.Fatalf("Parse accepted %q, which repeats a key", data)
		}
		if !json.Valid(data) {
			t.Fatalf("Parse accepted invalid JSON %q", data)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("encoding/json: %v", err)
		}
		if got := v.Any(true); !reflect.DeepEqual(got, want) {
			t.Fatalf("Any(true) = %#v, encoding/json reads %#v", got, want)
		}
		if !reflect.DeepEqual(v, dv) {
			t.Fatal("the trees differ between the two error placements")
		}
		if tv, err := parseTokens(data, Options{}); err != nil || !reflect.DeepEqual(v, tv) {
			t.Fatalf("the tree built from valid JSON differs from the one built from tokens (%v)", err)
		}
		checkSpans(t, data, v, 0, len(data))
	})
}

// checkSpans checks that v's span lies in [lo, hi], holds valid JSON that
// parses back to v, and contains its children's spans in order.
func checkSpans(t *testing.T, data []byte, v *Value, lo, hi int) {
	t.Helper()
	if v.Start < lo || v.End > hi || v.Start >= v.End {
		t.Fatalf("span [%d:%d] outside [%d:%d]", v.Start, v.End, lo, hi)
	}
	text := v.Bytes(data)
	again, err := Parse(text, Options{})
	if err != nil {
		t.Fatalf("the span %q of a value does not parse: %v", text, err)
	}
	if !reflect.DeepEqual(again.Any(true), v.Any(true)) || again.Kind != v.Kind {
		t.Fatalf("the span %q parses to another value", text)
	}
	if again.Describe() != v.Describe() {
		t.Fatalf("Describe differs for %q", text)
	}
	pos := v.Start + 1
	for _, e := range v.Elems {
		checkSpans(t, data, e, pos, v.End-1)
		pos = e.End
	}
	for _, m := range v.Members {
		checkSpans(t, data, m.Value, pos, v.End-1)
		pos = m.Value.End
	}
}

// hasDuplicateKey is the reference for Duplicates: json.Decoder's tokens,
// with a set of keys per open object.
func hasDuplicateKey(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type obj struct {
		keys  map[string]bool
		isKey bool
	}
	var stack []*obj
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *obj
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		isKey := top != nil && top.keys != nil && top.isKey
		if top != nil && top.keys != nil {
			top.isKey = !top.isKey
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, &obj{keys: map[string]bool{}, isKey: true})
			case '[':
				stack = append(stack, &obj{})
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].keys != nil {
					stack[len(stack)-1].isKey = true
				}
			}
			continue
		case string:
			if isKey {
				if top.keys[t] {
					return true
				}
				top.keys[t] = true
			}
		}
	}
}
