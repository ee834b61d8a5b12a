package golden

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Updating reports whether golden files are to be rewritten.
func Updating() bool { return os.Getenv("UPDATE_GOLDEN") == "1" }

// Check compares got with testdata/name, or writes it there when Updating.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if Updating() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (UPDATE_GOLDEN=1 writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (UPDATE_GOLDEN=1 rewrites it; review the diff):\n%s", path, Diff(string(want), string(got)))
	}
}

// Diff shows up to 20 lines that differ, as want/have pairs with their
// line numbers.
func Diff(want, have string) string {
	w, h := strings.Split(want, "\n"), strings.Split(have, "\n")
	var out []string
	for i := 0; i < max(len(w), len(h)) && len(out) < 40; i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(h) {
			b = h[i]
		}
		if a != b {
			out = append(out, fmt.Sprintf("%4d want: %s", i+1, a), fmt.Sprintf("%4d have: %s", i+1, b))
		}
	}
	return strings.Join(out, "\n")
}
