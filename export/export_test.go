package export_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-air/gini/z"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/export"
	"github.com/poolsolve/poolsolve/internal/golden"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

// smallPool is the golden instance: two nodes, a recipe that fits either,
// a fixed lane running now with a pin, an external fallback, an alias
// with an SLO that only the local lane meets, and a direct request.
func smallPool() *model.Pool {
	return pooltest.New(
		pooltest.Node("n1", 64), pooltest.Node("n2", 96),
		pooltest.Variant("big", 40, pooltest.Kind(model.Recipe), pooltest.On("n1"), pooltest.On("n2"),
			pooltest.Perf(800, 0), pooltest.LoadMs(20000)),
		pooltest.Variant("small", 16, pooltest.On("n2")),
		pooltest.External("cloud", 1500),
		pooltest.Alias("chat", 100, "big", "cloud"),
		pooltest.SLO("chat", 1200, 0),
		pooltest.Direct("small", 20),
		pooltest.Running("small", model.Auto, "n2"),
		pooltest.Routed("chat", "cloud"),
		pooltest.PinLane("small", ""),
	)
}

// conflicted pins two lanes that do not fit together on one node.
func conflicted() *model.Pool {
	return pooltest.New(
		pooltest.Node("n1", 64),
		pooltest.Variant("a", 40, pooltest.On("n1")),
		pooltest.Variant("b", 30, pooltest.On("n1")),
		pooltest.Alias("chat", 10, "a", "b"),
		pooltest.PinLane("a", model.Always, "n1"),
		pooltest.PinLane("b", model.Always, "n1"),
	)
}

func mustNew(t *testing.T, p *model.Pool, opts export.Options) *export.Instance {
	t.Helper()
	in, err := export.New(p, opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return in
}

func write(t *testing.T, in *export.Instance, f export.Format) string {
	t.Helper()
	var buf bytes.Buffer
	if err := in.Write(&buf, f); err != nil {
		t.Fatalf("Write(%s): %v", f, err)
	}
	return buf.String()
}

func TestGoldenFilesOfEachFormat(t *testing.T) {
	fix := func(l int, v int64) export.Fix { return export.Fix{Level: l, AtMost: v} }
	tests := []struct {
		name   string
		format export.Format
		opts   export.Options
	}{
		{"level 2 as OPB with level 1 fixed", export.OPB, export.Options{Level: 2, Fixes: []export.Fix{fix(1, 0)}}},
		{"the flattened objective as OPB", export.OPB, export.Options{Flatten: true}},
		{"level 4 as LP with levels 1 to 3 fixed", export.LP, export.Options{Level: 4, Fixes: []export.Fix{fix(1, 0), fix(2, 0), fix(3, 0)}}},
		{"level 3 as WCNF with levels 1 and 2 fixed", export.WCNF, export.Options{Level: 3, Fixes: []export.Fix{fix(1, 0), fix(2, 0)}}},
		{"the hard constraints as CNF", export.CNF, export.Options{}},
		{"the linear model as JSON flattened", export.JSON, export.Options{Flatten: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Source = "export_test.smallPool"
			got := write(t, mustNew(t, smallPool(), tc.opts), tc.format)
			golden.Check(t, strings.ReplaceAll(tc.name, " ", "-")+"."+string(tc.format)+".golden", []byte(got))
		})
	}
}

func TestEveryFormatIsDeterministic(t *testing.T) {
	pools := map[string]func() *model.Pool{
		"small":       smallPool,
		"random 7":    func() *model.Pool { return pooltest.Random(7, 4, 8) },
		"random 11":   func() *model.Pool { return pooltest.Random(11, 5, 10) },
		"conflicting": conflicted,
	}
	for name, mk := range pools {
		for _, f := range export.Formats {
			t.Run(name+" "+string(f), func(t *testing.T) {
				opts := export.Options{Flatten: f != export.CNF, Fixes: []export.Fix{{Level: 1, AtMost: 2}}}
				a := write(t, mustNew(t, mk(), opts), f)
				b := write(t, mustNew(t, mk(), opts), f)
				if a != b {
					t.Fatalf("two exports of the same pool differ")
				}
			})
		}
	}
}

// opbConstraint matches one OPB constraint line.
var opbConstraint = regexp.MustCompile(`^([+-]\d+ x\d+)( [+-]\d+ x\d+)* (>=|=) -?\d+ ;$`)

func checkOPB(t *testing.T, text string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	var nv, nc int
	if _, err := fmt.Sscanf(lines[0], "* #variable= %d #constraint= %d", &nv, &nc); err != nil {
		t.Fatalf("first line %q is not the OPB header", lines[0])
	}
	count, maxVar := 0, 0
	for _, l := range lines[1:] {
		switch {
		case strings.HasPrefix(l, "*"):
		case strings.HasPrefix(l, "min: "):
			if !strings.HasSuffix(l, " ;") {
				t.Errorf("objective line %q does not end with ;", l)
			}
		case opbConstraint.MatchString(l):
			count++
		default:
			t.Errorf("line %q is neither a comment, the objective, nor a >= / = constraint", l)
		}
		for _, m := range regexp.MustCompile(`x(\d+)`).FindAllStringSubmatch(l, -1) {
			if !strings.HasPrefix(l, "*") {
				v, _ := strconv.Atoi(m[1])
				maxVar = max(maxVar, v)
			}
		}
	}
	if count != nc || maxVar > nv {
		t.Errorf("header says %d variables and %d constraints; the file has %d constraints and uses x%d", nv, nc, count, maxVar)
	}
}

func checkDIMACS(t *testing.T, text string, weighted bool) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<24)
	var nv, nc int
	var top int64
	header := false
	clauses := 0
	for sc.Scan() {
		l := sc.Text()
		if strings.HasPrefix(l, "c") {
			if header {
				t.Fatalf("comment %q after the p line", l)
			}
			continue
		}
		if strings.HasPrefix(l, "p ") {
			var err error
			if weighted {
				_, err = fmt.Sscanf(l, "p wcnf %d %d %d", &nv, &nc, &top)
			} else {
				_, err = fmt.Sscanf(l, "p cnf %d %d", &nv, &nc)
			}
			if err != nil {
				t.Fatalf("p line %q: %v", l, err)
			}
			header = true
			continue
		}
		if !header {
			t.Fatalf("clause %q before the p line", l)
		}
		fs := strings.Fields(l)
		if len(fs) < 2 || fs[len(fs)-1] != "0" {
			t.Fatalf("clause %q is not 0-terminated or is empty", l)
		}
		if weighted {
			w, err := strconv.ParseInt(fs[0], 10, 64)
			if err != nil || w <= 0 || w > top {
				t.Fatalf("clause %q: weight must be in 1..top=%d", l, top)
			}
			fs = fs[1:]
		}
		for _, f := range fs[:len(fs)-1] {
			v, err := strconv.Atoi(f)
			if err != nil || v == 0 || abs(v) > nv {
				t.Fatalf("clause %q: literal %q out of 1..%d", l, f, nv)
			}
		}
		clauses++
	}
	if clauses != nc {
		t.Errorf("p line says %d clauses, the file has %d", nc, clauses)
	}
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

func checkLP(t *testing.T, text string, in *export.Instance) {
	t.Helper()
	var sections []string
	for _, l := range strings.Split(text, "\n") {
		switch l {
		case "Minimize", "Subject To", "Binary", "End":
			sections = append(sections, l)
		}
	}
	if strings.Join(sections, ",") != "Minimize,Subject To,Binary,End" {
		t.Errorf("sections %v, want Minimize, Subject To, Binary, End", sections)
	}
	_, bin, _ := strings.Cut(text, "\nBinary\n")
	declared := map[string]bool{}
	for _, f := range strings.Fields(strings.TrimSuffix(bin, "End\n")) {
		declared[f] = true
	}
	for _, x := range in.Vars() {
		if x.Linear && !declared[x.LP] {
			t.Errorf("%s (x%d) is not declared binary", x.LP, x.Var)
		}
		if x.Linear {
			if v, ok := in.VarByLP(x.LP); !ok || v != x.Var {
				t.Errorf("VarByLP(%q) = %d, %v; want %d", x.LP, v, ok, x.Var)
			}
		}
	}
}

func TestEveryFormatIsWellFormedAndInfeasibleInstancesStillWrite(t *testing.T) {
	pools := []struct {
		name     string
		pool     *model.Pool
		feasible export.Verdict
	}{
		{"the small pool", smallPool(), export.Feasible},
		{"a random pool", pooltest.Random(3, 4, 9), export.Feasible},
		{"pins that cannot hold together", conflicted(), export.Infeasible},
	}
	for _, pc := range pools {
		t.Run(pc.name, func(t *testing.T) {
			for _, opts := range []export.Options{{Flatten: true}, {Level: 4, Fixes: []export.Fix{{Level: 1, AtMost: 0}, {Level: 3, AtMost: 5}}}, {}} {
				in := mustNew(t, pc.pool, opts)
				checkOPB(t, write(t, in, export.OPB))
				checkLP(t, write(t, in, export.LP), in)
				checkDIMACS(t, write(t, in, export.WCNF), true)
				checkDIMACS(t, write(t, in, export.CNF), false)
				if js := write(t, in, export.JSON); !strings.HasPrefix(js, "{\n  \"schema\": \""+export.Schema+"\"") {
					t.Errorf("JSON starts %q", js[:min(60, len(js))])
				}
			}
			if got := mustNew(t, pc.pool, export.Options{}).Feasibility(10 * time.Second); got != pc.feasible {
				t.Errorf("Feasibility = %s, want %s", got, pc.feasible)
			}
		})
	}
}

func TestFixesAtAndBelowTheOptimumDecideFeasibility(t *testing.T) {
	// The small pool's lexicographic optimum is [0 0 0 210].
	fix := func(vs ...int64) []export.Fix {
		var out []export.Fix
		for i, v := range vs {
			if v >= 0 {
				out = append(out, export.Fix{Level: i + 1, AtMost: v})
			}
		}
		return out
	}
	tests := []struct {
		name  string
		fixes []export.Fix
		want  export.Verdict
	}{
		{"every level at its optimum", fix(0, 0, 0, 210), export.Feasible},
		{"level 4 one below its optimum", fix(0, 0, 0, 209), export.Infeasible},
		{"level 4 at zero with everything covered", fix(0, -1, -1, 0), export.Infeasible},
		{"level 4 at zero when sources may go uncovered", fix(-1, -1, -1, 0), export.Feasible},
		{"levels 1 and 3 at zero", fix(0, -1, 0), export.Feasible},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustNew(t, smallPool(), export.Options{Fixes: tc.fixes}).Feasibility(10 * time.Second); got != tc.want {
				t.Errorf("Feasibility = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestOptionsAreChecked(t *testing.T) {
	tests := []struct {
		name string
		opts export.Options
		want string
	}{
		{"a level above 4", export.Options{Level: 5}, "level 5"},
		{"a negative level", export.Options{Level: -1}, "level -1"},
		{"a level and flattening together", export.Options{Level: 2, Flatten: true}, "flattened"},
		{"a fix of level 0", export.Options{Fixes: []export.Fix{{Level: 0}}}, "fix of level 0"},
		{"a level fixed twice", export.Options{Fixes: []export.Fix{{Level: 2}, {Level: 2, AtMost: 1}}}, "fixed twice"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := export.New(smallPool(), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New = %v, want an error mentioning %q", err, tc.want)
			}
		})
	}
	if _, err := export.New(nil, export.Options{}); !errors.Is(err, export.ErrNilPool) {
		t.Errorf("New(nil) = %v, want ErrNilPool", err)
	}
	if _, err := export.ParseFormat("yaml"); err == nil {
		t.Errorf("ParseFormat(yaml) succeeded")
	}
	for _, f := range export.Formats {
		if g, err := export.ParseFormat(string(f)); err != nil || g != f {
			t.Errorf("ParseFormat(%s) = %s, %v", f, g, err)
		}
	}
}

// valuesOf maps a plan onto the instance's variables with the encoder's
// own intended values.
func valuesOf(t *testing.T, in *export.Instance, a model.Assignment) export.Values {
	t.Helper()
	vals, err := in.Enc.Values(a)
	if err != nil {
		t.Fatalf("Values: %v", err)
	}
	return func(v int) bool { return v < len(vals) && vals[v] }
}

// TestTheOptimalPlanSatisfiesEveryExportedRowAndClause checks the files'
// content without external tools: poolsolve's proved plan, mapped onto
// the variables, must satisfy every linear row (fixes at its own values
// and assumed pins included) and every hard clause, and its levels in the
// linear model must equal the evaluator's vector.
func TestTheOptimalPlanSatisfiesEveryExportedRowAndClause(t *testing.T) {
	pools := map[string]*model.Pool{
		"small":     smallPool(),
		"random 5":  pooltest.Random(5, 3, 6),
		"random 21": pooltest.Random(21, 4, 8),
	}
	for name, p := range pools {
		t.Run(name, func(t *testing.T) {
			res, err := solver.Solve(context.Background(), p, solver.Options{TimeLimit: 10 * time.Second, Seed: 1})
			if err != nil || res.Infeasible {
				t.Fatalf("Solve: %v (infeasible %v)", err, res != nil && res.Infeasible)
			}
			var fixes []export.Fix
			for i, v := range res.Objective {
				fixes = append(fixes, export.Fix{Level: i + 1, AtMost: v})
			}
			in := mustNew(t, p, export.Options{Flatten: true, Fixes: fixes})
			val := valuesOf(t, in, res.Assignment)
			for _, r := range in.Rows() {
				if !r.Holds(func(v z.Var) bool { return val(int(v)) }) {
					t.Errorf("row %s does not hold for the optimal plan", r.String())
				}
			}
			broken := 0
			in.Clauses(func(ls []z.Lit) {
				for _, m := range ls {
					if val(int(m.Var())) == m.IsPos() {
						return
					}
				}
				broken++
			})
			if broken > 0 {
				t.Errorf("%d hard clauses are false for the optimal plan", broken)
			}
			rep := eval.Check(p, res.Assignment)
			if got := in.Levels(val); got != rep.Objective {
				t.Errorf("linear levels %v, evaluator %v", got, rep.Objective)
			}
			w := in.Weights()
			var want int64
			for i := range w {
				want += w[i] * rep.Objective[i]
			}
			if got := in.Value(val); got != want {
				t.Errorf("flattened value %d, want %d from weights %v", got, want, w)
			}
		})
	}
}

func TestAssignmentDecodesWhatGiniFinds(t *testing.T) {
	for _, seed := range []uint64{2, 9, 14} {
		p := pooltest.Random(seed, 4, 8)
		in := mustNew(t, p, export.Options{})
		if in.Feasibility(10*time.Second) != export.Feasible {
			continue
		}
		val := func(v int) bool { return in.Enc.Value(z.Var(v).Pos()) }
		a := in.Assignment(val)
		want := in.Enc.Decode()
		if !equalAssignments(a, want) {
			t.Errorf("seed %d: Assignment = %+v, encoder decodes %+v", seed, a, want)
		}
		if rep := eval.Check(p, a); !rep.Valid {
			t.Errorf("seed %d: a model of the hard constraints decodes to an invalid plan: %v", seed, rep.Err())
		}
	}
}

func equalAssignments(a, b model.Assignment) bool {
	if len(a.Lanes) != len(b.Lanes) || len(a.Routes) != len(b.Routes) {
		return false
	}
	for i := range a.Lanes {
		x, y := a.Lanes[i], b.Lanes[i]
		if x.Variant != y.Variant || x.Residency != y.Residency || strings.Join(x.Nodes, "+") != strings.Join(y.Nodes, "+") {
			return false
		}
	}
	for i := range a.Routes {
		if a.Routes[i] != b.Routes[i] {
			return false
		}
	}
	return true
}

func TestLPNamesAreSafeAndUnique(t *testing.T) {
	p := pooltest.Random(31, 6, 14)
	in := mustNew(t, p, export.Options{Flatten: true})
	seen := map[string]int{}
	ok := regexp.MustCompile(`^[A-DF-Za-df-z_][A-Za-z0-9_]*$`)
	for _, x := range in.Vars() {
		if !x.Linear {
			continue
		}
		if !ok.MatchString(x.LP) || len(x.LP) > 255 {
			t.Errorf("x%d: LP name %q is not a safe CPLEX LP name", x.Var, x.LP)
		}
		if prev, dup := seen[x.LP]; dup {
			t.Errorf("x%d and x%d share the LP name %q", prev, x.Var, x.LP)
		}
		seen[x.LP] = x.Var
	}
}

func TestFlattenedWeightsPutEachLevelAboveEverythingBelow(t *testing.T) {
	in := mustNew(t, pooltest.Random(8, 4, 9), export.Options{Flatten: true})
	w := in.Weights()
	if w[3] != 1 {
		t.Fatalf("W4 = %d, want 1", w[3])
	}
	l := &in.Enc.Linear
	for i := 0; i < 3; i++ {
		var below int64
		for j := i + 1; j < 4; j++ {
			for _, t := range l.Objectives[j] {
				below += w[j] * abs64(t.Coef)
			}
		}
		if w[i] <= below {
			t.Errorf("W%d = %d does not outweigh the %d that levels below can swing", i+1, w[i], below)
		}
	}
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func TestFlatteningRefusesWeightsBeyondSixtyThreeBits(t *testing.T) {
	// Ten aliases of 1e16 requests each: level 4 alone spans about 1e18,
	// so the level-1 weight cannot be written.
	parts := []pooltest.Part{pooltest.Node("n1", 64), pooltest.Variant("v", 10, pooltest.On("n1")), pooltest.External("cloud", 1500)}
	for i := range 10 {
		id := fmt.Sprintf("a%d", i)
		parts = append(parts, pooltest.Alias(id, 1e16, "v", "cloud"), pooltest.SLO(id, 500, 0))
	}
	p := pooltest.New(parts...)
	if _, err := export.New(p, export.Options{Flatten: true}); !errors.Is(err, export.ErrOverflow) {
		t.Fatalf("New(flattened) = %v, want ErrOverflow", err)
	}
	in := mustNew(t, p, export.Options{Level: 4})
	checkOPB(t, write(t, in, export.OPB))
	checkDIMACS(t, write(t, in, export.WCNF), true)
}
