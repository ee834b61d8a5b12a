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

func TestOneApartAgreesWithTheDistanceOnEveryShortString(t *testing.T) {
	// Every pair of strings of up to four letters over a three-letter
	// alphabet: the fast test and the table must agree.
	var all []string
	var grow func(s string)
	grow = func(s string) {
		all = append(all, s)
		if len(s) == 4 {
			return
		}
		for _, c := range "abc" {
			grow(s + string(c))
		}
	}
	grow("")
	for _, a := range all {
		for _, b := range all {
			if got, want := oneApart(a, b), Distance(a, b) == 1; got != want {
				t.Fatalf("oneApart(%q, %q) = %v, Distance says %d", a, b, got, Distance(a, b))
			}
		}
	}
}
