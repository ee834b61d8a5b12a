package answer

import (
	"strings"
	"testing"
)

func TestTheSummarySaysWhichScenariosAnotherRunMayReadDifferently(t *testing.T) {
	tests := []struct {
		name string
		sum  Summary
		want string // "" when the line must not speak of it
	}{
		{"every scenario proved", Summary{Scenarios: 5, Proved: 5}, ""},
		{"two re-planned and not proved", Summary{Scenarios: 5, Proved: 3}, "The 2 re-planned but not proved are what the search found"},
		{"skipped scenarios are not counted as re-planned", Summary{Scenarios: 5, Proved: 3, Skipped: 2}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := summaryLine(&Report{Summary: tc.sum})
			if tc.want == "" && strings.Contains(got, "not proved are") || tc.want != "" && !strings.Contains(got, tc.want) {
				t.Errorf("summary %q; want it to say %q", got, tc.want)
			}
		})
	}
}
