package encode

import (
	"fmt"
	"testing"

	"github.com/poolsolve/poolsolve/internal/pooltest"
)

// A budget of ticks ends gini's search at the same point on every run:
// two encodings of the same pool, asked the same calls, use the same
// ticks and give the same answers; a budget too small for the first
// model ends the call (0, every tick used), and a larger one then finds
// it in fewer ticks than it has.
func TestTryTicksEndsTheSearchAtTheSamePointOnEveryRun(t *testing.T) {
	p := pooltest.Random(1, 64, 250)
	tests := []struct {
		name   string
		budget int64
		want   int // 0: the budget ran out
	}{
		{"one tick, too few for a model", 1, 0},
		{"a thousand ticks", 1000, 1},
	}
	var runs [2]string
	for run := range runs {
		e, err := New(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		for _, tt := range tests {
			r, used := e.TryTicks(tt.budget, 0)
			if r != tt.want {
				t.Fatalf("run %d, %s: answer %d, want %d (%d ticks used)", run, tt.name, r, tt.want, used)
			}
			if r == 0 && used != tt.budget || r != 0 && used >= tt.budget {
				t.Errorf("run %d, %s: answer %d after %d of %d ticks", run, tt.name, r, used, tt.budget)
			}
			runs[run] += fmt.Sprintf("%s: %d after %d ticks; ", tt.name, r, used)
		}
		runs[run] += fmt.Sprint(e.Decode())
	}
	if runs[0] != runs[1] {
		t.Errorf("two runs differ:\n%s\n%s", runs[0], runs[1])
	}
}
