package encode

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

// enumerate lists every plan over the encoding's own lanes and routes: per
// variant nothing or one lane with one residency, per source uncovered or
// one route. It stops at limit plans and reports whether it got them all.
func enumerate(e *Encoding, limit int) ([]model.Assignment, bool) {
	type laneOpt struct {
		lane int
		res  model.Residency
	}
	var vopts [][]*laneOpt
	for vi := range e.Pool.Variants {
		opts := []*laneOpt{nil}
		for _, li := range e.Variants[vi].Lanes {
			for ri, rho := range model.Residencies {
				if e.Variants[vi].Res[ri] != e.F() {
					opts = append(opts, &laneOpt{li, rho})
				}
			}
		}
		vopts = append(vopts, opts)
	}
	total := 1
	for _, o := range vopts {
		total *= len(o)
		if total > limit {
			return nil, false
		}
	}
	for _, s := range e.Sources {
		total *= len(s.Routes) + 1
		if total > limit {
			return nil, false
		}
	}
	var out []model.Assignment
	for code := range total {
		a := model.Assignment{Lanes: []model.LaneChoice{}, Routes: []model.RouteChoice{}}
		for vi, opts := range vopts {
			o := opts[code%len(opts)]
			code /= len(opts)
			if o != nil {
				a.Lanes = append(a.Lanes, model.LaneChoice{Variant: e.Pool.Variants[vi].ID, Nodes: e.Lanes[o.lane].Nodes, Residency: o.res})
			}
		}
		for _, s := range e.Sources {
			d := code % (len(s.Routes) + 1)
			code /= len(s.Routes) + 1
			rc := model.RouteChoice{Source: s.ID}
			if d > 0 {
				r := s.Routes[d-1]
				rc.Model = r.Model
				if r.Variant >= 0 {
					rc.Variant = e.Pool.Variants[r.Variant].ID
				}
			}
			a.Routes = append(a.Routes, rc)
		}
		out = append(out, a)
	}
	return out, true
}

func assumptions(e *Encoding) []z.Lit {
	var out []z.Lit
	for _, a := range e.Assumptions {
		out = append(out, a.Lit)
	}
	return out
}

func solveWith(e *Encoding, ms ...z.Lit) bool {
	e.sat.Assume(assumptions(e)...)
	e.sat.Assume(ms...)
	return e.sat.Solve() == 1
}

// smallPools are pools small enough to enumerate every plan.
func smallPools(t *testing.T) []*model.Pool {
	t.Helper()
	var out []*model.Pool
	for seed := uint64(1); len(out) < 16 && seed < 400; seed++ {
		p := pooltest.Random(seed, 2+int(seed%2), 3)
		e, err := New(p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := enumerate(e, 3000); ok {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatal("no random pool is small enough to enumerate")
	}
	return out
}

// The encoding is complete and its intended values are a witness: the
// solver accepts a plan's decisions exactly when the plan's intended
// values satisfy every clause, exactly when the independent evaluator
// finds the plan valid; the plan's values then satisfy every row of the
// linear mirror, the encoding's objective equals eval's, and each level's
// bound literal holds at the plan's value and fails one below.
func TestEncodingAcceptsAPlanIffItsValuesSatisfyEveryClause(t *testing.T) {
	for pi, p := range smallPools(t) {
		t.Run(fmt.Sprint("pool ", pi), func(t *testing.T) {
			e, _ := New(p, Options{})
			plans, _ := enumerate(e, 3000)
			valid := 0
			for _, a := range plans {
				vals, err := e.Values(a)
				if err != nil {
					t.Fatalf("Values(%+v): %v", a, err)
				}
				lits, _ := e.Lits(a)
				ok := len(e.Unsatisfied(vals)) == 0
				if got := solveWith(e, lits...); got != ok {
					t.Fatalf("plan %+v: SAT = %v, but intended values satisfy every clause = %v (%v)", a, got, ok, e.Unsatisfied(vals))
				}
				rep := eval.Check(p, a)
				if rep.Valid != ok {
					t.Fatalf("plan %+v: encoding accepts = %v, eval valid = %v (%v)", a, ok, rep.Valid, rep.Violations)
				}
				if !ok {
					continue
				}
				valid++
				obj, _ := e.Objective(a)
				if obj != rep.Objective {
					t.Fatalf("plan %+v: encoding objective %v, eval %v (%+v)", a, obj, rep.Objective, rep.Terms)
				}
				for _, r := range e.Linear.Rows {
					if !r.Holds(func(v z.Var) bool { return vals[v] }) {
						t.Fatalf("plan %+v: linear row %s fails at the plan's values", a, r.String())
					}
				}
				if gb := e.GroupBound(obj[0], obj[1]); gb > obj[3] {
					t.Fatalf("plan %+v: group bound %d above its level 4 value %d", a, gb, obj[3])
				}
				for lvl := range 3 {
					if !solveWith(e, append(lits, e.LevelBound(lvl, obj[lvl]))...) {
						t.Fatalf("plan %+v: level %d bound %d fails at the plan's own value", a, lvl+1, obj[lvl])
					}
					if solveWith(e, append(lits, e.LevelBound(lvl, obj[lvl]-1))...) {
						t.Fatalf("plan %+v: level %d bound %d holds below the plan's value", a, lvl+1, obj[lvl]-1)
					}
				}
			}
			if valid == 0 && solveWith(e) {
				t.Fatal("no plan is valid, yet the pins and cordons are SAT")
			}
		})
	}
}

// The level-4 bound is exact at resolution 1: for every valid plan,
// SAT(plan ∧ L4 <= K) iff the plan's level-4 value is at most K, at K =
// value and value-1 of a sample of plans. At a coarser resolution the
// rounded-up bound admits only plans within K and the rounded-down one
// refuses only plans above K. All bounds share one diagram per resolution.
func TestLevel4BoundAcceptsExactlyThePlansThatFit(t *testing.T) {
	for pi, p := range smallPools(t) {
		t.Run(fmt.Sprint("pool ", pi), func(t *testing.T) {
			e, _ := New(p, Options{})
			plans, _ := enumerate(e, 3000)
			type pv struct {
				lits []z.Lit
				v    int64
			}
			var valid []pv
			for _, a := range plans {
				vals, _ := e.Values(a)
				if len(e.Unsatisfied(vals)) != 0 {
					continue
				}
				lits, _ := e.Lits(a)
				obj, _ := e.Objective(a)
				valid = append(valid, pv{lits, obj[3]})
			}
			// A handful of bounds, each checked against every valid plan.
			bounds := map[int64]bool{}
			for i := 0; i < len(valid); i += max(1, len(valid)/6) {
				bounds[valid[i].v] = true
				bounds[valid[i].v-1] = true
			}
			for k := range bounds {
				for _, delta := range []int64{1, 3} {
					for _, restrict := range []bool{true, false} {
						b, ok := e.L4Bound(k, delta, restrict, 0)
						if !ok {
							t.Fatal("uncapped bound refused")
						}
						for _, x := range valid {
							got := solveWith(e, append(slices.Clone(x.lits), b...)...)
							switch {
							case delta == 1 && got != (x.v <= k):
								t.Fatalf("K=%d, plan value %d: SAT = %v, want %v", k, x.v, got, x.v <= k)
							case restrict && got && x.v > k:
								t.Fatalf("K=%d/%d: restriction admits a plan of value %d", k, delta, x.v)
							case !restrict && !got && x.v <= k:
								t.Fatalf("K=%d/%d: relaxation refuses a plan of value %d", k, delta, x.v)
							}
						}
					}
				}
			}
		})
	}
}

func TestNewStopsAtItsDeadline(t *testing.T) {
	p := pooltest.Random(1, 64, 250)
	if _, err := New(p, Options{Deadline: time.Now().Add(-time.Millisecond)}); !errors.Is(err, ErrDeadline) {
		t.Fatalf("past deadline: err %v, want ErrDeadline", err)
	}
	start := time.Now()
	_, err := New(p, Options{Deadline: start.Add(2 * time.Millisecond)})
	if el := time.Since(start); err != nil && !errors.Is(err, ErrDeadline) || el > 500*time.Millisecond {
		t.Fatalf("short deadline: err %v after %v", err, el)
	}
	if _, err := New(p, Options{Deadline: time.Now().Add(time.Minute)}); err != nil {
		t.Fatalf("ample deadline: %v", err)
	}
}

func TestNewStopsWhenItsStopSaysSo(t *testing.T) {
	p := pooltest.Random(1, 64, 250)
	asked := 0
	_, err := New(p, Options{Stop: func() bool { asked++; return asked > 3 }})
	if !errors.Is(err, ErrDeadline) || asked != 4 {
		t.Fatalf("err %v after %d questions; want ErrDeadline at the fourth", err, asked)
	}
	e, err := New(p, Options{Stop: func() bool { return false }})
	if err != nil {
		t.Fatalf("a stop that never says so: %v", err)
	}
	if e.cnf.stopFn != nil {
		t.Error("the encoding keeps its stop function after New")
	}
}
