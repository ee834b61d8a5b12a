package encode

import (
	"fmt"
	"testing"

	"github.com/poolsolve/poolsolve/internal/pooltest"
)

var benchSizes = [][2]int{{3, 10}, {8, 20}, {24, 60}}

// BenchmarkEncode builds the hard constraints and objective terms.
func BenchmarkEncode(b *testing.B) {
	for _, sz := range benchSizes {
		p := pooltest.Random(1, sz[0], sz[1])
		b.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(b *testing.B) {
			var e *Encoding
			for b.Loop() {
				e, _ = New(p, Options{})
			}
			b.ReportMetric(float64(e.MaxVar()), "vars")
			b.ReportMetric(float64(e.Log.Len()), "clauses")
			b.ReportMetric(float64(len(e.Linear.Rows)), "rows")
		})
	}
}

// BenchmarkL4Bound builds one exact level-4 bound at half the largest sum,
// three ways: the lane-MDD over at-most-one groups (what the solver uses),
// a plain term-BDD over the linear mirror's terms, and (counted, not
// built) a k-bounded generalized totalizer over the same terms.
func BenchmarkL4Bound(b *testing.B) {
	for _, sz := range benchSizes {
		p := pooltest.Random(1, sz[0], sz[1])
		e0, _ := New(p, Options{})
		k := e0.L4MaxSum() / 2
		b.Run(fmt.Sprintf("mdd/%dx%d", sz[0], sz[1]), func(b *testing.B) {
			var nodes, clauses int
			for b.Loop() {
				e, _ := New(p, Options{})
				e.L4Bound(k, 1, true, 0)
				nodes, clauses = e.BoundSize()
			}
			b.ReportMetric(float64(nodes), "nodes")
			b.ReportMetric(float64(clauses), "clauses")
		})
		if sz[0] > 8 {
			continue // the alternatives take 10-30 s here; see doc.go for their sizes
		}
		b.Run(fmt.Sprintf("term-bdd/%dx%d", sz[0], sz[1]), func(b *testing.B) {
			var m *mdd
			for b.Loop() {
				e, _ := New(p, Options{})
				var gs []Group
				for _, t := range e.Linear.Objectives[3] {
					gs = append(gs, Group{Branches: []Branch{{t.Var.Pos(), t.Coef}}})
				}
				m = newMDD(e.cnf, "bdd", gs)
				m.limit = 2_000_000
				func() {
					defer func() { recover() }()
					m.Root(k - e.Linear.Offsets[3])
				}()
			}
			b.ReportMetric(float64(m.Nodes), "nodes")
			b.ReportMetric(float64(m.Clauses), "clauses")
		})
		b.Run(fmt.Sprintf("gte-count/%dx%d", sz[0], sz[1]), func(b *testing.B) {
			var outs, clauses int
			for b.Loop() {
				var ws []int64
				for _, t := range e0.Linear.Objectives[3] {
					ws = append(ws, t.Coef)
				}
				outs, clauses = gteSize(ws, k-e0.Linear.Offsets[3])
			}
			b.ReportMetric(float64(outs), "outputs")
			b.ReportMetric(float64(clauses), "clauses")
		})
	}
}

// gteSize counts a k-bounded generalized totalizer over ws: one output
// per distinct partial sum (capped at k+1) in each tree node, one clause
// per pair of child outputs.
func gteSize(ws []int64, k int64) (outs, clauses int) {
	var rec func(ws []int64) map[int64]bool
	rec = func(ws []int64) map[int64]bool {
		if len(ws) == 1 {
			return map[int64]bool{min(ws[0], k+1): true}
		}
		l, r := rec(ws[:len(ws)/2]), rec(ws[len(ws)/2:])
		out := map[int64]bool{}
		for a := range l {
			out[a] = true
			clauses++
		}
		for c := range r {
			out[c] = true
			clauses++
			for a := range l {
				out[min(a+c, k+1)] = true
				clauses++
			}
		}
		outs += len(out)
		return out
	}
	if len(ws) > 0 {
		rec(ws)
	}
	return outs, clauses
}
