package lloom

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const gateway = "testdata/lloom-gateway-0.2.3/"

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.FromSlash(path))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func loadConfig(t testing.TB, path string) *Config {
	t.Helper()
	cfg, err := ParseConfig(readFile(t, path), filepath.Base(path))
	if err != nil {
		t.Fatalf("ParseConfig(%s): %v", path, err)
	}
	return cfg
}

func parseConfigString(t testing.TB, s string) *Config {
	t.Helper()
	cfg, err := ParseConfig([]byte(s), "config.json")
	if err != nil {
		t.Fatalf("ParseConfig: %v", err)
	}
	return cfg
}

// problemLines returns the lines of a Validate error, or nil.
func problemLines(t testing.TB, err error) []string {
	t.Helper()
	if err == nil {
		return nil
	}
	var ps Problems
	if !errors.As(err, &ps) {
		t.Fatalf("error %T is not a Problems: %v", err, err)
	}
	var lines []string
	for _, p := range ps {
		lines = append(lines, p.Error())
	}
	return lines
}

// wantProblems checks that every wanted line is among the problems, and
// that nothing else is when exact is set.
func wantProblems(t testing.TB, err error, want []string, exact bool) {
	t.Helper()
	got := problemLines(t, err)
	for _, w := range want {
		found := false
		for _, g := range got {
			if g == w {
				found = true
			}
		}
		if !found {
			t.Errorf("missing problem\n  %s\ngot:\n  %s", w, strings.Join(got, "\n  "))
		}
	}
	if exact && len(got) != len(want) {
		t.Errorf("got %d problems, want %d:\n  %s", len(got), len(want), strings.Join(got, "\n  "))
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func check(t *testing.T, name string, got, want any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", name, got, want)
	}
}
