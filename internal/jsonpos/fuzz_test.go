package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
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
			if se.Offset < 0 || se.Offset > len(data) || se.Msg == "" {
				t.Fatalf("error %+v is outside the %d bytes or has no message", se, len(data))
			}
			if l, c := Position(data, se.Offset); l != se.Line || c != se.Col {
				t.Fatalf("error at %d says %d:%d, Position says %d:%d", se.Offset, se.Line, se.Col, l, c)
			}
		}
		if err != nil {
			if json.Valid(data) && !strings.HasPrefix(err.(*SyntaxError).Msg, "nesting deeper") {
				t.Fatalf("Parse refused valid JSON %q: %v", data, err)
			}
			return
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
