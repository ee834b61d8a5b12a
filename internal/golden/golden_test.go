package golden

import (
	"strings"
	"testing"
)

func TestDiffNamesOnlyTheLinesThatDiffer(t *testing.T) {
	got := Diff("a\nb\nc", "a\nB\nc\nd")
	want := "   2 want: b\n   2 have: B\n   4 want: \n   4 have: d"
	if got != want {
		t.Errorf("Diff =\n%s\nwant\n%s", got, want)
	}
}

func TestDiffOfEqualTextsIsEmpty(t *testing.T) {
	if d := Diff("x\ny\n", "x\ny\n"); d != "" {
		t.Errorf("Diff of equal texts = %q", d)
	}
}

// recorder is a testing.TB that keeps the failure instead of failing.
type recorder struct {
	testing.TB
	msg string
}

func (r *recorder) Helper()                   {}
func (r *recorder) Errorf(f string, a ...any) { r.msg = f }
func (r *recorder) Fatalf(f string, a ...any) { r.msg = f }

func TestCheckFailsOnADifferentFileAndPassesOnTheSame(t *testing.T) {
	t.Setenv("UPDATE_GOLDEN", "")
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("UPDATE_GOLDEN", "1")
	Check(t, "x.golden", []byte("one\n"))
	t.Setenv("UPDATE_GOLDEN", "")
	same := &recorder{TB: t}
	Check(same, "x.golden", []byte("one\n"))
	if same.msg != "" {
		t.Errorf("equal output failed: %s", same.msg)
	}
	other := &recorder{TB: t}
	Check(other, "x.golden", []byte("two\n"))
	if !strings.Contains(other.msg, "differs from the golden file") {
		t.Errorf("different output gave %q", other.msg)
	}
}
