// Package shellwords splits the one-line commands the docs and help show
// into words, as a POSIX shell would for them: spaces and tabs separate
// words, single quotes group, and a # that starts a word begins a
// comment. It knows nothing else of shell syntax (no double quotes,
// escapes or expansions), which those lines do not use.
package shellwords

import "strings"

// Split returns the words of one command line.
func Split(s string) []string {
	var words []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == '#' && !quoted && !inWord:
			return words
		case (r == ' ' || r == '\t') && !quoted:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
