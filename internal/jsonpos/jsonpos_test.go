package jsonpos

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseKeepsOffsetsAndMemberOrder(t *testing.T) {
	data := []byte(" {\"b\": [1, true, null],\n \"a\": \"x\\u00e9\", \"c\": -2.5e3}\n")
	v, err := Parse(data, Options{})
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if v.Kind != Object || v.Start != 1 || v.End != len(data)-1 {
		t.Fatalf("root = kind %d [%d:%d], want an object spanning [1:%d]", v.Kind, v.Start, v.End, len(data)-1)
	}
	var keys []string
	for _, m := range v.Members {
		keys = append(keys, m.Key)
	}
	if want := []string{"b", "a", "c"}; !reflect.DeepEqual(keys, want) {
		t.Errorf("member keys = %q, want %q (document order)", keys, want)
	}
	for _, tc := range []struct {
		v    *Value
		text string
	}{
		{v.Members[0].Value, "[1, true, null]"},
		{v.Members[0].Value.Elems[0], "1"},
		{v.Members[0].Value.Elems[1], "true"},
		{v.Members[0].Value.Elems[2], "null"},
		{v.Members[1].Value, `"x\u00e9"`},
		{v.Members[2].Value, "-2.5e3"},
	} {
		if got := string(tc.v.Bytes(data)); got != tc.text {
			t.Errorf("Bytes = %q, want %q", got, tc.text)
		}
	}
	if got := v.Get("a"); got == nil || got.Kind != String || got.Text != "xé" {
		t.Errorf(`Get("a") = %+v, want the string "xé"`, got)
	}
	if got := v.Get("c"); got == nil || got.Kind != Number || got.Text != "-2.5e3" {
		t.Errorf(`Get("c") = %+v, want the number -2.5e3`, got)
	}
	if v.Get("d") != nil || v.Members[0].Value.Get("a") != nil || (*Value)(nil).Get("a") != nil {
		t.Error("Get of a missing key, on an array or on nil should be nil")
	}
	if d := v.Distinct(); len(d) != 3 || d[0].Key != "b" || d[2].Key != "c" {
		t.Errorf("Distinct = %+v, want b, a, c", d)
	}
}

func TestDuplicateKeysAreErrorsNamingBothPlaces(t *testing.T) {
	for _, tc := range []struct {
		in, want string
	}{
		{"{\"nodes\": {\n  \"spark-node-03\": {},\n  \"spark-node-03\": {}}}",
			`3:3: $.nodes["spark-node-03"]: duplicate key "spark-node-03" (first at line 2, column 3)`},
		{`[{"a": 1}, {"a": 2, "b": [0, {"x": 1, "x": 2}]}]`,
			`1:39: $[1].b[1].x: duplicate key "x" (first at line 1, column 31)`},
		// Escapes are decoded before keys are compared.
		{`{"\u0061": 1, "a": 2}`, `1:15: $.a: duplicate key "a" (first at line 1, column 2)`},
		// Past smallObject keys the comparison moves to a map.
		{`{"k0":0,"k1":0,"k2":0,"k3":0,"k4":0,"k5":0,"k6":0,"k7":0,"k8":0,"k9":0,"k10":0,"k11":0,"k12":0,"k13":0,"k14":0,"k15":0,"k16":0,"k17":0,"k3":1}`,
			`1:136: $.k3: duplicate key "k3" (first at line 1, column 23)`},
	} {
		_, err := Parse([]byte(tc.in), Options{})
		if err == nil || err.Error() != tc.want {
			t.Errorf("Parse(%s) = %v, want %s", tc.in, err, tc.want)
		}
		if err := Duplicates([]byte(tc.in)); err == nil || err.Error() != tc.want {
			t.Errorf("Duplicates(%s) = %v, want %s", tc.in, err, tc.want)
		}
		if Check([]byte(tc.in), nil) {
			t.Errorf("Check(%s) = true, want false", tc.in)
		}
	}
	// The same key in sibling objects, or as a value, is no duplicate.
	for _, ok := range []string{`[{"a":1},{"a":2}]`, `{"a":{"a":"a"},"b":"a"}`, `{"a":1,"A":2}`} {
		if _, err := Parse([]byte(ok), Options{}); err != nil {
			t.Errorf("Parse(%s) = %v", ok, err)
		}
		if !Check([]byte(ok), nil) {
			t.Errorf("Check(%s) = false", ok)
		}
	}
}

func TestCheckAsksAboutEveryKey(t *testing.T) {
	var seen []string
	ok := Check([]byte(`{"a": [{"b": "c:"}], "d\"": 1}`), func(k []byte) bool { seen = append(seen, string(k)); return true })
	if !ok || !reflect.DeepEqual(seen, []string{"a", "b", `d"`}) {
		t.Errorf("Check = %v, keys %q; want true, a b d\"", ok, seen)
	}
	if Check([]byte(`{"a": {"B": 1}}`), func(k []byte) bool { return string(k) != "B" }) {
		t.Error("Check accepted a key keyOK refused")
	}
	if Check([]byte(`{"a": 1`), nil) || Check([]byte(strings.Repeat("[", MaxDepth+1)+strings.Repeat("]", MaxDepth+1)), nil) {
		t.Error("Check accepted invalid or too deep JSON")
	}
}

func TestAnyDecodesLikeEncodingJSON(t *testing.T) {
	data := []byte(`{"n": 1.5, "big": 1e400, "s": "x", "l": [null, false], "o": {"k": 2}}`)
	v, err := Parse(data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"n": 1.5, "big": json.Number("1e400"), "s": "x", "l": []any{nil, false}, "o": map[string]any{"k": 2.0}}
	if got := v.Any(false); !reflect.DeepEqual(got, want) {
		t.Errorf("Any(false) = %#v,\n           want %#v", got, want)
	}
	var std any
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	if err := dec.Decode(&std); err != nil {
		t.Fatal(err)
	}
	if got := v.Any(true); !reflect.DeepEqual(got, std) {
		t.Errorf("Any(true) = %#v,\n          want %#v (json.Decoder with UseNumber)", got, std)
	}
}

func TestParseErrorsHaveLineAndColumn(t *testing.T) {
	fleet := Options{Empty: "empty document: expected a JSON object", Truncated: "unexpected end of JSON input (is the file truncated?)", DecoderOffsets: true}
	tests := []struct {
		name string
		in   string
		opts Options
		want string
	}{
		{"an empty document", " \n ", Options{}, "2:2: empty document: expected a JSON value"},
		{"an empty document in the caller's words", "", fleet, "1:1: empty document: expected a JSON object"},
		{"a truncated document", "{\n  \"a\": [1,", Options{}, "2:11: $.a[1]: unexpected end of JSON input"},
		{"a truncated document in the caller's words", "{\n  \"a\": [1,", fleet, "2:11: $.a[1]: unexpected end of JSON input (is the file truncated?)"},
		{"a bad token, placed by the whole-document check", "{\"a\" 1}", Options{}, "1:6: $.a: invalid character '1' after object key"},
		{"a bad token, placed by the decoder", "{\"a\" 1}", fleet, "1:5: $.a: invalid character '1' after object key"},
		{"a bad literal", "[\n tru ]", Options{}, "2:5: $[0]: invalid character ' ' in literal true (expecting 'e')"},
		{"a second value", "{} \n [1]", Options{}, "2:2: unexpected data after the top-level value"},
		{"a second value, for the decoder too", "{} \n [1]", fleet, "2:2: unexpected data after the top-level value"},
		{"garbage after the value", "{} }", Options{}, "1:4: invalid character '}' after top-level value"},
		{"nesting past the limit", strings.Repeat("[", MaxDepth+1), Options{}, "1:513: nesting deeper than 512 levels"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Parse([]byte(tc.in), tc.opts)
			if err == nil {
				t.Fatalf("Parse(%q) = %+v, want error %q", tc.in, v, tc.want)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error is %T, want *SyntaxError", err)
			}
			if err.Error() != tc.want {
				t.Errorf("Parse(%q) error = %q, want %q", tc.in, err, tc.want)
			}
			if l, c := Position([]byte(tc.in), se.Offset); l != se.Line || c != se.Col {
				t.Errorf("Position(%d) = %d:%d, error says %d:%d", se.Offset, l, c, se.Line, se.Col)
			}
		})
	}
}

func TestParseAcceptsNestingUpToTheLimit(t *testing.T) {
	in := strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth)
	if _, err := Parse([]byte(in), Options{}); err != nil {
		t.Errorf("Parse(%d levels) = %v", MaxDepth, err)
	}
}

func TestPositionCountsBytesFromOne(t *testing.T) {
	data := []byte("ab\ncé\n")
	for _, tc := range []struct{ off, line, col int }{
		{-5, 1, 1}, {0, 1, 1}, {2, 1, 3}, {3, 2, 1}, {5, 2, 3}, {6, 2, 4}, {7, 3, 1}, {99, 3, 1},
	} {
		if l, c := Position(data, tc.off); l != tc.line || c != tc.col {
			t.Errorf("Position(%d) = %d:%d, want %d:%d", tc.off, l, c, tc.line, tc.col)
		}
	}
}

func TestPathsSpellIdentifiersWithADot(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{Field(Root, "runtimes"), "$.runtimes"},
		{Field("$.a", "_x$9"), "$.a._x$9"},
		{Field(Root, "b c"), `$["b c"]`},
		{Field(Root, "9lives"), `$["9lives"]`},
		{Field(Root, ""), `$[""]`},
		{Field(Root, "é"), `$["é"]`},
		{Field(Root, `q"`), `$["q\""]`},
		{Key("$.runtimes", "qwen"), `$.runtimes["qwen"]`},
		{Index(Field(Root, "models"), 3), "$.models[3]"},
		{Index(Key(Root, "a"), 0), `$["a"][0]`},
	} {
		if tc.got != tc.want {
			t.Errorf("path = %s, want %s", tc.got, tc.want)
		}
	}
}

func TestDescribeNamesValuesForMessages(t *testing.T) {
	long := strings.Repeat("a", 39) + "éé"
	for _, tc := range []struct {
		in   string
		want string
	}{
		{`null`, "null"},
		{`true`, "boolean true"},
		{`-1.5e3`, "number -1.5e3"},
		{`12345678901234567890123456789012345678901234567890`, "number 1234567890123456789012345678901234567890…"},
		{`"x\ny"`, `string "x\ny"`},
		{`"` + long + `"`, `string "` + strings.Repeat("a", 39) + `…"`},
		{`[]`, "an array"},
		{`{}`, "an object"},
	} {
		v, err := Parse([]byte(tc.in), Options{})
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Describe(); got != tc.want {
			t.Errorf("(%s).Describe() = %s, want %s", tc.in, got, tc.want)
		}
		if got := Describe(v.Any(true)); got != tc.want {
			t.Errorf("Describe(%s with UseNumber) = %s, want %s", tc.in, got, tc.want)
		}
	}
	for _, tc := range []struct {
		in   any
		want string
	}{
		{1.5, "number 1.5"},
		{int64(3), "a value"},
		{struct{}{}, "a value"},
	} {
		if got := Describe(tc.in); got != tc.want {
			t.Errorf("Describe(%#v) = %s, want %s", tc.in, got, tc.want)
		}
	}
}

func TestShallowKeepsDeepContainersAsSpans(t *testing.T) {
	data := []byte(`{"a": {"b": [1, {"c": 2}], "s": "x"}, "n": 3}`)
	v, err := Parse(data, Options{Shallow: 2})
	if err != nil {
		t.Fatal(err)
	}
	a := v.Get("a")
	b := a.Get("b")
	if a.Shallow || b == nil || !b.Shallow || b.Kind != Array || b.Elems != nil || string(b.Bytes(data)) != `[1, {"c": 2}]` {
		t.Fatalf("a = %+v, b = %+v; want a read and b kept as the span of its array", a, b)
	}
	if s := a.Get("s"); s == nil || s.Text != "x" {
		t.Errorf("a scalar at the limit lost its text: %+v", s)
	}
	full, _ := Parse(b.Bytes(data), Options{})
	if len(full.Elems) != 2 {
		t.Errorf("the span does not parse back: %+v", full)
	}
}
