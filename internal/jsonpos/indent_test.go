package jsonpos

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestIndentWriterIndentsAsEncodingJSON: an IndentWriter fed in pieces of
// any size writes what json.Indent writes for the compacted document at
// that depth, which is what an Encoder with SetIndent writes for a
// json.RawMessage nested there.
func TestIndentWriterIndentsAsEncodingJSON(t *testing.T) {
	docs := []string{
		`{}`, `[]`, `1`, `"s"`, `null`,
		`{"a":[],"b":{},"c":[{}],"d":[[]],"e":{"f":{"g":[1,2,{"h":null}]}}}`,
		` { "a" : [ 1 , 2 ] , "b" : "x y\t" } `,
		`{"q":"a \"quoted\" \\ string, with: {braces} and [brackets]","u":"\u2028 \\\"","k\"ey":true}`,
		`[{"id":"conn-1","recent":[{"usage":{"input_tokens":3}}]},"\\",false]`,
	}
	for _, doc := range docs {
		for depth := range 3 {
			var compact, want bytes.Buffer
			if err := json.Compact(&compact, []byte(doc)); err != nil {
				t.Fatal(err)
			}
			if err := json.Indent(&want, compact.Bytes(), strings.Repeat("  ", depth), "  "); err != nil {
				t.Fatal(err)
			}
			for _, piece := range []int{1, 2, 3, 7, len(doc)} {
				var got bytes.Buffer
				iw := NewIndentWriter(&got, depth, "  ")
				for i := 0; i < len(doc); i += piece {
					iw.Write([]byte(doc[i:min(i+piece, len(doc))]))
				}
				if err := iw.Flush(); err != nil {
					t.Fatal(err)
				}
				if got.String() != want.String() {
					t.Errorf("%s at depth %d in pieces of %d:\n%s\nwant\n%s", doc, depth, piece, got.String(), want.String())
				}
			}
		}
	}
}

// TestRewriteToWritesWhatRewriteReturns: the streaming form gives the
// same bytes, and refuses what Rewrite refuses without writing.
func TestRewriteToWritesWhatRewriteReturns(t *testing.T) {
	var big strings.Builder
	big.WriteString(`{"list":[`)
	for i := range 20000 {
		if i > 0 {
			big.WriteString(",")
		}
		big.WriteString(`{"z":1,"a":"x \u00e9 y","m":[true,null,"s"]}`)
	}
	big.WriteString(`]}`)
	for _, doc := range []string{`{"b":1,"a":[2,{"d":"\u003c","c":null}]}`, big.String()} {
		want, err := Canonical([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := RewriteTo[struct{}](&got, []byte(doc), struct{}{}, nil); err != nil || !bytes.Equal(got.Bytes(), want) {
			t.Errorf("RewriteTo gave %d bytes (%v), Canonical %d", got.Len(), err, len(want))
		}
	}
	for _, bad := range []string{`{"a":1,"a":2}`, `{"a":`, `1 2`} {
		var got bytes.Buffer
		if err := RewriteTo[struct{}](&got, []byte(bad), struct{}{}, nil); err == nil || got.Len() != 0 {
			t.Errorf("%s: RewriteTo wrote %q, error %v; want an error and nothing written", bad, got.String(), err)
		}
	}
}

func TestCheckKeysCountingCountsTheTopLevelLists(t *testing.T) {
	ok, lens := CheckKeysCounting([]byte(`{"a": [1, [2, 3], {"x": [4, 5, 6]}, "7,8"], "b": [], "c": [ ], "d": {"e": [1, 2]}, "f": [{}]}`), nil)
	want := map[string]int{"a": 4, "b": 0, "c": 0, "f": 1}
	if !ok || len(lens) != len(want) {
		t.Fatalf("ok %v, lens %v; want %v", ok, lens, want)
	}
	for k, n := range want {
		if lens[k] != n {
			t.Errorf("%s: %d elements, want %d", k, lens[k], n)
		}
	}
	if ok, _ := CheckKeysCounting([]byte(`{"a": [1], "a": [2]}`), nil); ok {
		t.Error("a repeated key passed")
	}
}
