package suggest

import "testing"

func TestOneEditFindsTheKeyMeantAndNothingFurther(t *testing.T) {
	known := []string{"cluster", "memoryGb", "node", "enabled", "id"}
	for _, tc := range []struct{ name, key, want string }{
		{"a letter dropped", "cluser", "cluster"},
		{"a letter changed in case", "memoryGB", "memoryGb"},
		{"the whole key in another case", "CLUSTER", "cluster"},
		{"two letters swapped", "enabeld", "enabled"},
		{"a letter added", "nodee", "node"},
		{"two edits away is no typo", "clstr", ""},
		{"a known key is no typo", "node", ""},
		{"a short key suggests nothing", "ix", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := OneEdit(tc.key, known); got != tc.want {
				t.Errorf("OneEdit(%q) = %q, want %q", tc.key, got, tc.want)
			}
		})
	}
}

func TestNearestSuggestsACommandForATypoOrAPrefix(t *testing.T) {
	cmds := []string{"plan", "resilience", "explain"}
	for _, tc := range []struct{ s, want string }{{"plna", "plan"}, {"res", "resilience"}, {"zzzz", ""}} {
		if got := Nearest(tc.s, cmds); got != tc.want {
			t.Errorf("Nearest(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
}
