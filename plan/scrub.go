package plan

import (
	"strings"
	"unicode"
)

// scrub blanks what looks like an endpoint or a key in free text (notes,
// reasons, rules) that other packages wrote: a plan carries ids, numbers
// and reasons only, and a reason that quotes a backend URL must not leak
// it into a plan that gets pasted into a ticket.
func scrub(s string) string {
	if !strings.Contains(s, "://") && !strings.Contains(s, "sk-") {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); {
		start := i == 0 || !isWord(rune(s[i-1]))
		switch {
		case start && hasPrefixFold(s[i:], "http://"), start && hasPrefixFold(s[i:], "https://"):
			out.WriteString("<url>")
			i += tokenEnd(s[i:])
		case start && strings.HasPrefix(s[i:], "sk-"):
			out.WriteString("<key>")
			i += tokenEnd(s[i:])
		default:
			out.WriteByte(s[i])
			i++
		}
	}
	return out.String()
}

func scrubAll(xs []string) []string {
	if len(xs) == 0 {
		return nil
	}
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = scrub(x)
	}
	return out
}

func isWord(r rune) bool { return r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r) }

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// tokenEnd is the length of the token at the start of s: up to white
// space, a quote or a closing bracket.
func tokenEnd(s string) int {
	if i := strings.IndexAny(s, " \t\r\n\"'`)]},;"); i >= 0 {
		return i
	}
	return len(s)
}
