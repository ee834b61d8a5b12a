package jsonpos

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// reference is what Canonical must equal: encoding/json's decode with
// UseNumber and encode without HTML escaping.
func reference(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func TestCanonicalWritesWhatEncodingJSONWrites(t *testing.T) {
	for _, in := range []string{
		` { "b" : [1, 2.50, -0e3, true, null, {}], "a": {"z": "x\u00e9\n", "y": "<&>", "é": "\u2028"}, "": "" } `,
		`"tab\there"`, `[]`, `[[],[{}]]`, `{"\u0062": 1, "a": "\ud800"}`, "\"\xff\"", `12345678901234567890`,
	} {
		want, err := reference([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := Canonical([]byte(in))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("Canonical(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{`{"a": 1`, `{"a": 1, "a": 2}`, `1 2`, ``} {
		if got, err := Canonical([]byte(bad)); err == nil {
			t.Errorf("Canonical(%q) = %s, want an error", bad, got)
		}
	}
}

func FuzzCanonical(f *testing.F) {
	for _, s := range []string{`{"b": [1, "x\u00e9"], "a": {"c": null}}`, `"<\u2028>"`, `[1e3, -0.5, "\\"]`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := Canonical(data)
		if err != nil {
			return
		}
		want, rerr := reference(data)
		if rerr != nil {
			t.Fatalf("Canonical accepted %q, encoding/json refuses it: %v", data, rerr)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("Canonical(%q) = %s, want %s", data, got, want)
		}
	})
}

func TestCanonicalRefusesWhatDuplicatesRefusesWithItsWords(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for _, tc := range []struct {
		name, in string
		refused  bool
	}{
		{"a key repeated after others", `{"b":1,"a":2,"c":{"x":1},"a":3}`, true},
		{"a key repeated deep inside", `[{"k":[{"z":0,"y":1,"z":2}]}]`, true},
		{"a key written once escaped and once plain", `{"\u00e9":1,"é":2}`, true},
		{"two keys whose bad bytes decode alike", "{\"\xe1\":0,\"\xce\":0}", true},
		{"nesting as deep as allowed", deep(MaxDepth), false},
		{"nesting one level deeper", deep(MaxDepth + 1), true},
		{"equal keys in different objects", `{"a":{"a":1},"b":{"a":2}}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Canonical([]byte(tc.in))
			want := Duplicates([]byte(tc.in))
			if (err != nil) != tc.refused || fmt.Sprint(err) != fmt.Sprint(want) {
				t.Fatalf("Canonical: %v; want refused %v, as Duplicates words it: %v", err, tc.refused, want)
			}
			if _, err := Parse([]byte(tc.in), Options{}); (err != nil) != tc.refused {
				t.Fatalf("Parse: %v; want refused %v", err, tc.refused)
			}
			// Containers kept as spans are checked all the same.
			if _, err := Parse([]byte(tc.in), Options{Shallow: 1}); (err != nil) != tc.refused {
				t.Fatalf("Parse, shallow: %v; want refused %v", err, tc.refused)
			}
		})
	}
}
