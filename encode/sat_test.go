package encode

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/go-air/gini/z"
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
			if r == 0 && used != tt.budget || r != 0 && used > tt.budget {
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

// The budget ends each call at the same tick even when the search is cut
// short call after call and what it learns carries over: a descent on
// level 4 with budgets too small to answer, then one large enough, reads
// the same on every run. Run beside a CPU-bound process, it fails without
// TryTicks holding GOMAXPROCS at 1 (the pause then misses ticks).
func TestTryTicksCutCallAfterCallReadsTheSameOnEveryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("encodes a 24-node pool three times")
	}
	p := pooltest.Random(1, 24, 60)
	var runs [3]string
	for run := range runs {
		e, err := New(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, used := e.TryTicks(1000, 0)
		if r != 1 {
			t.Fatalf("run %d: no first plan in %d ticks", run, used)
		}
		obj, _ := e.Objective(e.Decode())
		for i := range 40 {
			lits, ok := e.L4Bound(obj[3]-1-e.Offset(3), 1, true, 1<<22)
			if !ok {
				t.Fatalf("run %d: no level-4 bound", run)
			}
			budget := int64(5 + i%7)
			if i == 39 {
				budget = 400
			}
			r, used = e.TryTicks(budget, 0, lits)
			if r == 1 {
				obj, _ = e.Objective(e.Decode())
			}
			runs[run] += fmt.Sprintf("%d after %d ticks, %v; ", r, used, obj)
		}
	}
	for i := 1; i < len(runs); i++ {
		if runs[i] != runs[0] {
			k := 0
			for k < len(runs[i]) && k < len(runs[0]) && runs[i][k] == runs[0][k] {
				k++
			}
			t.Errorf("run %d differs from run 0 from byte %d:\n%s\n%s", i, k, runs[i][k:], runs[0][k:])
		}
	}
}

// TryTicks needs gini's control channel, which gini does not export; a
// gini whose layout moved would silently bound calls by the clock only.
func TestTickBudgetReachesGinisControlChannel(t *testing.T) {
	e, err := New(pooltest.Random(1, 3, 5), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tickBudget(e.sat); !ok {
		t.Fatal("gini's control channel (Gini.xo.control.cStopOrPause) is not where TryTicks looks for it")
	}
	if r, used := e.TryTicks(10, 0); r != 1 || used < 0 || used >= 10 {
		t.Errorf("a 3-node pool: answer %d after %d ticks, want a plan within 10", r, used)
	}
}

// An encoding without gini (NoSAT) is the same encoding: the same
// variables with the same names, the same clause log and the same linear
// rows; only its search answers nothing.
func TestAnEncodingWithoutGiniIsTheSameEncoding(t *testing.T) {
	for _, sz := range [][2]int{{3, 8}, {8, 20}, {24, 60}} {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			p := pooltest.Random(uint64(sz[0]), sz[0], sz[1])
			with, err := New(p, Options{LinearMemory: true})
			if err != nil {
				t.Fatal(err)
			}
			without, err := New(p, Options{LinearMemory: true, NoSAT: true})
			if err != nil {
				t.Fatal(err)
			}
			if with.MaxVar() != without.MaxVar() || with.Log.Len() != without.Log.Len() {
				t.Fatalf("%d variables and %d clauses with gini, %d and %d without", with.MaxVar(), with.Log.Len(), without.MaxVar(), without.Log.Len())
			}
			for i := range with.Log.Len() {
				if !reflect.DeepEqual(with.Log.Clause(i), without.Log.Clause(i)) {
					t.Fatalf("clause %d: %v with gini, %v without", i, with.Log.Clause(i), without.Log.Clause(i))
				}
			}
			if with.NumVars() != without.NumVars() || !reflect.DeepEqual(with.Linear, without.Linear) {
				t.Fatal("the variables or the linear rows differ")
			}
			for v := range with.NumVars() {
				if a, b := with.Info(z.Var(v)), without.Info(z.Var(v)); !reflect.DeepEqual(a, b) || with.VarName(z.Var(v)) != without.VarName(z.Var(v)) {
					t.Fatalf("variable %d is %+v with gini, %+v without", v, a, b)
				}
			}
			if r := without.TryUnder(time.Second, without.AssumptionLits()); r != 0 {
				t.Errorf("TryUnder without gini answered %d, want 0", r)
			}
			if r, used := without.TryTicks(100, time.Second); r != 0 || used != 0 {
				t.Errorf("TryTicks without gini answered %d after %d ticks, want 0 after 0", r, used)
			}
		})
	}
}
