package printable

import (
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStringEscapesWhatATerminalWouldActOn(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"plain ids stay as they are", "spark-node-01", "spark-node-01"},
		{"other scripts and symbols stay", "Qwen3 — 模型 ✓ é", "Qwen3 — 模型 ✓ é"},
		{"an OSC title sequence", "\x1b]0;PWNED\x07n01", `\x1b]0;PWNED\an01`},
		{"a colour sequence", "q\x1b[31mRED\x1b[0m", `q\x1b[31mRED\x1b[0m`},
		{"NUL and DEL", "a\x00b\x7fc", `a\x00b\x7fc`},
		{"a C1 CSI", "a\u009b2Jb", `a\u009b2Jb`},
		{"the bidi overrides and isolates", "n01\u202e10-edon \u2066x\u2069", `n01\u202e10-edon \u2066x\u2069`},
		{"a carriage return and a line break", "ok\rFAKE\nline", `ok\rFAKE\nline`},
		{"a byte that is not UTF-8", "a\xffb", `a\xffb`},
		{"a zero-width joiner", "a\u200db", `a\u200db`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := String(tc.in); got != tc.want {
				t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	if got := Lines("one\x1b[2J\ntwo\r"); got != "one\\x1b[2J\ntwo\\r" {
		t.Errorf("Lines = %q", got)
	}
}

func TestCopyEscapesEveryStringAndLeavesTheOriginal(t *testing.T) {
	type kind string
	type inner struct {
		ID   string
		Kind kind
		Tags []string
		Any  any
	}
	type doc struct {
		Name   string
		Inner  *inner
		List   []inner
		ByID   map[string]string
		Fixed  [2]string
		Count  int
		hidden string
	}
	in := doc{Name: "a\x1b", Inner: &inner{ID: "b\u202e", Kind: "c\x07", Tags: []string{"d\n"}, Any: "e\x00"},
		List: []inner{{ID: "f\r"}}, ByID: map[string]string{"k\x1b": "v\x1b"}, Fixed: [2]string{"g\x1b", "h"}, Count: 3, hidden: "i\x1b"}
	out := Copy(in)
	if out.Name != `a\x1b` || out.Inner.ID != `b\u202e` || out.Inner.Kind != `c\a` || out.Inner.Tags[0] != `d\n` ||
		out.Inner.Any != `e\x00` || out.List[0].ID != `f\r` || out.ByID["k\x1b"] != `v\x1b` || out.Fixed[0] != `g\x1b` || out.Count != 3 {
		t.Errorf("Copy = %+v, inner %+v", out, *out.Inner)
	}
	if out.hidden != "i\x1b" {
		t.Errorf("an unexported field changed: %q", out.hidden)
	}
	if in.Name != "a\x1b" || in.Inner.ID != "b\u202e" || in.List[0].ID != "f\r" || in.ByID["k\x1b"] != "v\x1b" {
		t.Errorf("Copy changed its argument: %+v", in)
	}
	var nilDoc *doc
	if Copy(nilDoc) != nil {
		t.Error("Copy of a nil pointer is not nil")
	}
}

// FuzzString: whatever the input, the output holds nothing a terminal
// acts on, and text that needs no escape comes back unchanged.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "spark-node-01", "\x1b]0;x\x07", "a\u202eb", "\xff\xfe", "模型\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, lines := range []bool{false, true} {
			out := escape(s, lines)
			if !utf8.ValidString(out) {
				t.Fatalf("escape(%q) = %q is not UTF-8", s, out)
			}
			for _, r := range out {
				if r == '\n' && lines {
					continue
				}
				if r != ' ' && !isPrint(r) {
					t.Fatalf("escape(%q, %v) = %q keeps %U", s, lines, out, r)
				}
			}
			if clean(s, lines) && out != s {
				t.Fatalf("escape(%q) = %q changed clean text", s, out)
			}
			if strings.Count(out, "\n") != map[bool]int{false: 0, true: strings.Count(s, "\n")}[lines] {
				t.Fatalf("escape(%q, %v) = %q moved line breaks", s, lines, out)
			}
		}
	})
}

func isPrint(r rune) bool { return strconv.IsPrint(r) }

// clean: s is UTF-8 and has nothing to escape.
func clean(s string, lines bool) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r != ' ' && !(lines && r == '\n') && !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}
