// Package suggest finds the name an operator most likely meant: the
// "did you mean" of flags, commands and keys.
package suggest

import "strings"

// Nearest is the candidate closest to s in edits, if it is close enough to
// be a typo (at most a third of its length, at least one edit) or s is a
// prefix of it.
func Nearest(s string, candidates []string) string {
	best, bestD := "", 0
	for _, cand := range candidates {
		if len(cand) < 2 {
			continue
		}
		d := Distance(s, cand)
		if strings.HasPrefix(cand, s) && len(s) >= 2 {
			d = min(d, 1)
		}
		if best == "" || d < bestD {
			best, bestD = cand, d
		}
	}
	if best == "" || bestD > max(1, len(best)/3) {
		return ""
	}
	return best
}

// OneEdit is the candidate one edit from s (a letter added, dropped,
// changed or two swapped, or a change of case alone), "" when none or s is
// one of them: the strict test for a misspelt key in a file, where a key
// two edits away may well be meant.
func OneEdit(s string, candidates []string) string {
	best := ""
	for _, cand := range candidates {
		if cand == s {
			return ""
		}
		if best == "" && len(cand) >= 3 && (strings.EqualFold(cand, s) || oneApart(s, cand)) {
			best = cand
		}
	}
	return best
}

// oneApart reports whether Distance(a, b) is 1, in one pass and without
// a table: the keys of a file are checked against every field name, and
// most are nowhere near.
func oneApart(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	switch len(b) - len(a) {
	case 0:
		i := 0
		for i < len(a) && a[i] == b[i] {
			i++
		}
		if i == len(a) {
			return false // equal
		}
		if a[i+1:] == b[i+1:] {
			return true // one changed
		}
		return i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:] // two swapped
	case 1:
		i := 0
		for i < len(a) && a[i] == b[i] {
			i++
		}
		return a[i:] == b[i+1:] // one added
	}
	return false
}

// Distance counts the insertions, deletions, substitutions and swaps of
// neighbours that turn a into b (optimal string alignment, by bytes):
// "plna" is one edit from "plan".
func Distance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
