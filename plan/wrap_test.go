package plan

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzWrapTextKeepsWordsAndWidth: wrapping never loses, adds or reorders
// a word, and a line longer than its limit holds one word (or a figure
// with its unit), which cannot be broken.
func FuzzWrapTextKeepsWordsAndWidth(f *testing.F) {
	f.Add("does not fit: spark-node-03 unified:0 needs 70 GiB next to 68 GiB resident; plan budget 111.6 GiB", 30, 60)
	f.Add("a-very-long-word-that-cannot-break short words", 5, 10)
	f.Add("", 0, 0)
	f.Add("  spaced   out\twords\n", 3, 80)
	f.Fuzz(func(t *testing.T, text string, first, rest int) {
		if !utf8.ValidString(text) || first < -5 || rest < -5 || first > 300 || rest > 300 {
			t.Skip()
		}
		lines := wrapText(text, first, rest)
		if len(lines) == 0 {
			t.Fatal("no lines")
		}
		if first <= 0 && rest <= 0 {
			if len(lines) != 1 || lines[0] != text {
				t.Fatalf("no width, but the text changed: %q", lines)
			}
			return
		}
		if got, want := strings.Fields(strings.Join(lines, " ")), strings.Fields(text); !slices.Equal(got, want) && !(len(want) == 0 && len(got) == 0) {
			t.Fatalf("words changed:\n got %q\nwant %q", got, want)
		}
		if len(lines) == 1 && lines[0] == text {
			return // it fitted as it was
		}
		for i, l := range lines {
			limit := rest
			if i == 0 {
				limit = first
			}
			if utf8.RuneCountInString(l) > max(limit, 1) && len(unitWords(l)) > 1 {
				t.Fatalf("line %d %q is over its limit %d and could break", i, l, limit)
			}
		}
	})
}
