package printable

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/internal/deepcopy"
)

// String escapes what a terminal would act on: control characters (line
// breaks and tabs included), format characters such as the bidi
// overrides, anything else strconv.IsPrint refuses but the space, and
// bytes that are not UTF-8.
func String(s string) string { return escape(s, false) }

// Lines is String that keeps '\n', for text of several lines.
func Lines(s string) string { return escape(s, true) }

func escape(s string, keepNewlines bool) string {
	i := 0
	for i < len(s) && (' ' <= s[i] && s[i] < utf8.RuneSelf && s[i] != 0x7f || keepNewlines && s[i] == '\n') {
		i++
	}
	if i == len(s) {
		return s // plain ASCII: the common case costs no copy
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case r == ' ' || r == '\n' && keepNewlines || strconv.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\u202e', '\n'
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// Copy returns a deep copy of v with String applied to every string in
// it; v is not changed. Map keys stay as they are (two keys could escape
// alike, and a renderer looks things up by them), and so do unexported
// fields.
func Copy[T any](v T) T {
	return deepcopy.Map(v, String)
}
