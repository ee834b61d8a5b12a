package lp

import (
	"bufio"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// readLP reads the CPLEX LP subset the solver's relaxation dump writes:
// a columns comment, one objective line, one line per row, one bounds
// line per column.
func readLP(t *testing.T, path string) *Problem {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	col := map[string]int{}
	p := &Problem{}
	terms := func(fields []string) ([]int, []float64) {
		var idx []int
		var val []float64
		for k := 0; k+1 < len(fields); k += 2 {
			v, err := strconv.ParseFloat(fields[k], 64)
			j, ok := col[fields[k+1]]
			if err != nil || !ok {
				t.Fatalf("%s: term %q %q", path, fields[k], fields[k+1])
			}
			idx, val = append(idx, j), append(val, v)
		}
		return idx, val
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		fs := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, `\ columns`):
			for _, name := range fs[2:] {
				col[name] = len(p.Cost)
				p.Cost, p.Lo, p.Hi = append(p.Cost, 0), append(p.Lo, 0), append(p.Hi, 1)
			}
		case strings.HasPrefix(line, "obj:"):
			idx, val := terms(fs[1:])
			for k, j := range idx {
				p.Cost[j] += val[k]
			}
		case len(fs) >= 4 && strings.HasPrefix(fs[0], "r") && strings.HasSuffix(fs[0], ":"):
			op, rhs := fs[len(fs)-2], fs[len(fs)-1]
			b, err := strconv.ParseFloat(rhs, 64)
			if err != nil {
				t.Fatalf("%s: %q", path, line)
			}
			r := Row{Lo: math.Inf(-1), Hi: math.Inf(1)}
			r.Idx, r.Val = terms(fs[1 : len(fs)-2])
			switch op {
			case "<=":
				r.Hi = b
			case ">=":
				r.Lo = b
			case "=":
				r.Lo, r.Hi = b, b
			default:
				t.Fatalf("%s: %q", path, line)
			}
			p.Rows = append(p.Rows, r)
		case len(fs) == 5 && fs[1] == "<=" && fs[3] == "<=":
			j, ok := col[fs[2]]
			lo, err1 := strconv.ParseFloat(fs[0], 64)
			hi, err2 := strconv.ParseFloat(fs[4], 64)
			if !ok || err1 != nil || err2 != nil {
				t.Fatalf("%s: %q", path, line)
			}
			p.Lo[j], p.Hi[j] = lo, hi
		}
	}
	if err := sc.Err(); err != nil || len(p.Rows) == 0 {
		t.Fatalf("%s: %v, %d rows", path, err, len(p.Rows))
	}
	return p
}

// The project's own level-4 models: the answer is optimal, feasible,
// and certified by its duals (their Lagrangian bound on the true data
// meets the objective), with the LP optimum the cut loop reports.
func TestTheLevel4ModelsOfTheBenchmarkFleetsSolveToACertifiedOptimum(t *testing.T) {
	cases := []struct {
		name, file string
		rows       int
		optimum    float64 // c·x, without the constant
	}{
		{"24x60's level 4", "testdata/level4-24x60.lp", 291, 8783.07719},
		{"64x250's level 4", "testdata/level4-64x250.lp", 1731, 50036.6033},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := readLP(t, c.file)
			if len(p.Rows) != c.rows {
				t.Fatalf("%d rows, want %d", len(p.Rows), c.rows)
			}
			s, st := solve(t, p)
			if st != Optimal || !feasible(p, s, 1e-6) {
				t.Fatalf("status %v, feasible %v", st, feasible(p, s, 1e-6))
			}
			obj, b := objective(p, s), dualBound(p, s.Duals())
			if math.Abs(obj-c.optimum) > 1e-8*(1+c.optimum) {
				t.Fatalf("objective %.9g, want %.9g", obj, c.optimum)
			}
			if gap := (obj - b) / (1 + math.Abs(obj)); gap > 1e-8 || gap < -1e-8 {
				t.Fatalf("objective %.9g, dual bound %.9g: relative gap %.3g", obj, b, gap)
			}
		})
	}
}
