package jsonpos

import (
	"testing"
)

func TestFindPlacesTheValueAPathNames(t *testing.T) {
	doc := []byte(`{
  "config": {
    "aliases": {"a1": {"members": ["x", "y"]}, "two words": 3},
    "models": [{"id": "m1"}, {"id": "m2", "pool": {"nodes": []}}]
  },
  "n": 4
}`)
	at := func(line, col int) [2]int { return [2]int{line, col} }
	for _, tc := range []struct {
		name, path string
		want       [2]int
		exact      bool
	}{
		{"the document itself", "$", at(1, 1), true},
		{"a member", "$.n", at(6, 8), true},
		{"a member of a member", "$.config.aliases", at(3, 16), true},
		{"a bracketed key", `$.config.aliases["a1"].members[1]`, at(3, 41), true},
		{"a key that is no identifier", `$.config.aliases["two words"]`, at(3, 61), true},
		{"an element found by its id", `$.config.models[id="m2"].pool.nodes`, at(4, 61), true},
		{"a missing member gives its parent", `$.config.aliases["a1"].optional`, at(3, 23), false},
		{"an index past the end gives the array", `$.config.aliases["a1"].members[5]`, at(3, 35), false},
		{"a step into a number gives the number", `$.n.x`, at(6, 8), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			off, exact, err := Find(doc, tc.path)
			if err != nil {
				t.Fatal(err)
			}
			line, col := Position(doc, off)
			if [2]int{line, col} != tc.want || exact != tc.exact {
				t.Errorf("Find(%s) = %d:%d exact %v, want %d:%d exact %v", tc.path, line, col, exact, tc.want[0], tc.want[1], tc.exact)
			}
		})
	}
	for _, bad := range []string{"", "config", "$.", "$..a", "$[", "$[01]", "$[1", `$["a]`, `$[id=1]`, "$.a b", "$x"} {
		if _, _, err := Find(doc, bad); err == nil {
			t.Errorf("Find(%q) took a path that is not one", bad)
		}
	}
	if _, _, err := Find([]byte(`{"a": `), "$.a"); err == nil {
		t.Error("Find in a truncated document gave no error")
	}
}

// FuzzFind: on any document and path Find does not panic, and on a valid
// document it lands where a walk of the whole tree does.
func FuzzFind(f *testing.F) {
	f.Add([]byte(`{"a": {"b": [1, {"id": "x", "c": [true]}]}, "d e": null}`), `$.a.b[1].c[0]`)
	f.Add([]byte(`{"a": {"b": [1, {"id": "x", "c": [true]}]}}`), `$.a.b[id="x"].c`)
	f.Add([]byte(`[[[[{"k": 1}]]]]`), `$[0][0][0][0].k`)
	f.Add([]byte(`{"d e": {"f": 2}}`), `$["d e"].g`)
	f.Fuzz(func(t *testing.T, data []byte, path string) {
		off, exact, err := Find(data, path)
		if err != nil {
			return
		}
		// A Finder that has already stepped through the document (its
		// containers cached) lands in the same place.
		warm := NewFinder(data)
		for _, p := range []string{"$", path, "$[0]", `$.a`} {
			warm.Find(p)
		}
		if woff, wexact, werr := warm.Find(path); werr != nil || woff != off || wexact != exact {
			t.Fatalf("Find(%q) = %d exact %v; a warm Finder says %d exact %v (%v)", path, off, exact, woff, wexact, werr)
		}
		for _, o := range []int{off, off + 1, len(data) / 2} {
			l1, c1 := Position(data, o)
			if l2, c2 := warm.Position(o); l1 != l2 || c1 != c2 {
				t.Fatalf("offset %d: Position says %d:%d, the Finder %d:%d", o, l1, c1, l2, c2)
			}
		}
		if off < 0 || off >= len(data) {
			t.Fatalf("Find(%q) = %d, outside the %d bytes", path, off, len(data))
		}
		tree, perr := Parse(data, Options{})
		if perr != nil {
			t.Fatalf("Find read a document Parse refuses: %v", perr)
		}
		steps, _ := parsePath(path)
		v, full := tree, true
		for _, s := range steps {
			next := refChild(v, s)
			if next == nil {
				full = false
				break
			}
			v = next
		}
		if v.Start != off || full != exact {
			t.Fatalf("Find(%q) = %d exact %v; the whole tree says %d exact %v", path, off, exact, v.Start, full)
		}
	})
}

// refChild is the step s from v on a whole tree, read the plain way: the
// oracle the indexed Finder is checked against.
func refChild(v *Value, s step) *Value {
	switch {
	case s.index >= 0:
		if v.Kind == Array && s.index < len(v.Elems) {
			return v.Elems[s.index]
		}
	case s.byID:
		if v.Kind != Array {
			return nil
		}
		for _, e := range v.Elems {
			if id := e.Get("id"); id != nil && id.Kind == String && id.Text == s.key {
				return e
			}
		}
	default:
		return v.Get(s.key)
	}
	return nil
}
