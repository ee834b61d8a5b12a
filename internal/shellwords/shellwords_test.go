package shellwords

import (
	"slices"
	"testing"
)

func TestACommandLineSplitsAsAShellSplitsIt(t *testing.T) {
	tests := []struct {
		name, line string
		want       []string
	}{
		{"spaces and tabs separate words", "poolsolve  plan\t--fleet f.json", []string{"poolsolve", "plan", "--fleet", "f.json"}},
		{"single quotes group and are dropped", "x --why 'two words' a'b c'd", []string{"x", "--why", "two words", "ab cd"}},
		{"a # starting a word begins a comment", "poolsolve catalog   # the pool", []string{"poolsolve", "catalog"}},
		{"a # inside a word or quotes is kept", "a#b '#c'", []string{"a#b", "#c"}},
		{"an empty quoted word is a word", "x ''", []string{"x", ""}},
		{"a blank line has no words", "   ", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Split(tc.line); !slices.Equal(got, tc.want) {
				t.Errorf("Split(%q) = %q, want %q", tc.line, got, tc.want)
			}
		})
	}
}
