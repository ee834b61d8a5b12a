package encode

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

func TestFigureUnits(t *testing.T) {
	tests := []struct {
		name      string
		x         float64
		scale     int64
		up        bool
		want      int64
		wantExact bool
		wantOK    bool
	}{
		{"seven decimals are whole at 10^7 units per GiB", 56.1111111, 1e7, true, 561111111, true, true},
		{"the decimal is read, not its binary neighbour, at a finer scale", 56.1111111, 1e9, false, 56111111100, true, true},
		{"a tenth rounds up to one whole GiB", 0.1, 1, true, 1, false, true},
		{"a tenth rounds down to nothing", 0.1, 1, false, 0, false, true},
		{"a negative figure rounds down away from zero", -0.5, 1, false, -1, false, true},
		{"a negative figure rounds up towards zero", -0.5, 1, true, 0, false, true},
		{"a whole figure stays whole at any scale", 96, 1000, false, 96000, true, true},
		{"a figure far below the unit rounds up to one unit", 1e-300, 1e18, true, 1, false, true},
		{"the smallest float rounds up to one unit", 5e-324, 1, true, 1, false, true},
		{"a scale that is not a power of ten works too", 2.5, 3, false, 7, false, true},
		{"a figure past the unit limit is refused, not wrapped", 1e300, 1, true, 0, false, false},
		{"zero is zero", 0, 1e7, true, 0, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, ok := readFigure(tc.x)
			if !ok {
				t.Fatalf("readFigure(%v) refused", tc.x)
			}
			u, exact, ok := f.units(tc.scale, tc.up)
			if ok != tc.wantOK || ok && (u != tc.want || exact != tc.wantExact) {
				t.Fatalf("units(%v, %d, up %v) = %d, exact %v, ok %v; want %d, %v, %v",
					tc.x, tc.scale, tc.up, u, exact, ok, tc.want, tc.wantExact, tc.wantOK)
			}
		})
	}
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, ok := readFigure(x); ok {
			t.Errorf("readFigure(%v) accepted a figure that is not a number", x)
		}
	}
}

// bothOnA is the hand plan of the issue: keep always and fine with the
// given residency, both on gb-a, each alias served by its lane.
func bothOnA(res model.Residency) model.Assignment {
	return model.Assignment{
		Lanes: []model.LaneChoice{
			{Variant: "keep", Nodes: []string{"gb-a"}, Residency: model.Always},
			{Variant: "fine", Nodes: []string{"gb-a"}, Residency: res},
		},
		Routes: []model.RouteChoice{
			{Source: "chat", Model: "keep", Variant: "keep"},
			{Source: "code", Model: "fine", Variant: "fine"},
		},
	}
}

// Memory is counted so that the encoding accepts a plan exactly when the
// evaluator finds it valid, whatever the decimals; only figures too fine
// to count under the cap are rounded, and then soundly (never a plan eval
// rejects) and with Exact false. Every plan of each pool is tried.
func TestMemoryFitsAsTheEvaluatorReadsIt(t *testing.T) {
	tests := []struct {
		name      string
		pool      *model.Pool
		wantScale int64
		wantExact bool
		// handPlan is bothOnA(preferred); wantHand whether it is valid.
		wantHand bool
	}{
		{
			name: "a keepWarm lane of 56.1111111 GiB and a preferred one of 40.2222222 fill 96.3333333 exactly",
			pool: pooltest.FineMemory(100.3333333, 56.1111111, 40.2222222), wantScale: 1e7, wantExact: true, wantHand: true,
		},
		{
			name: "one ten-millionth of a GiB less budget refuses the same pair",
			pool: pooltest.FineMemory(100.3333332, 56.1111111, 40.2222222), wantScale: 1e7, wantExact: true, wantHand: false,
		},
		{
			name: "float noise in the sum changes nothing: 60.1 and 36.2 fill 96.3",
			pool: pooltest.FineMemory(100.3, 60.1, 36.2), wantScale: 10, wantExact: true, wantHand: true,
		},
		{
			name: "whole GiB still count in whole GiB",
			pool: pooltest.FineMemory(100, 56, 40), wantScale: 1, wantExact: true, wantHand: true,
		},
		{
			name: "a budget far past the cap holds both lanes, counted exactly",
			pool: pooltest.FineMemory(1e300, 56.1111111, 40.2222222), wantScale: 1e7, wantExact: true, wantHand: true,
		},
		{
			name: "more than 2^50 GiB of draws on one domain are counted soundly and say so",
			pool: pooltest.FineMemory(1e300, 1e15, 1e15), wantScale: 1, wantExact: false, wantHand: true,
		},
		{
			name: "an infinite draw never fits, not even an infinite budget",
			pool: pooltest.FineMemory(math.Inf(1), 56, math.Inf(1)), wantScale: 1, wantExact: true, wantHand: false,
		},
		{
			name: "a negative draw counts as zero",
			pool: pooltest.FineMemory(60, 56, -5), wantScale: 1, wantExact: true, wantHand: true,
		},
		{
			name: "thirteen decimals on a 100 GiB domain still count exactly, just under the cap",
			pool: pooltest.FineMemory(100.3333333333333, 56.1111111111111, 40.2222222222222), wantScale: 1e13, wantExact: true, wantHand: true,
		},
		{
			name: "figures finer than the cap allows are rounded up and say so",
			pool: pooltest.FineMemory(100.33333333333333, 56.11111111111111, 40.22222222222222), wantScale: 1e13, wantExact: false, wantHand: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(tc.pool, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if e.Scale != tc.wantScale || e.Exact != tc.wantExact {
				t.Fatalf("scale %d, exact %v; want %d, %v", e.Scale, e.Exact, tc.wantScale, tc.wantExact)
			}
			for _, dm := range e.Domains {
				if dm.Budget > maxDomainUnits {
					t.Errorf("%s %s budget %d units, past the cap", dm.Node, dm.Domain, dm.Budget)
				}
			}
			if rep := eval.Check(tc.pool, bothOnA(model.Preferred)); rep.Valid != tc.wantHand {
				t.Fatalf("eval finds the hand plan valid = %v, want %v (%v)", rep.Valid, tc.wantHand, rep.Violations)
			}
			plans, all := enumerate(e, 3000)
			if !all {
				t.Fatal("pool too large to enumerate")
			}
			accepted := 0
			for _, a := range plans {
				lits, err := e.Lits(a)
				if err != nil {
					t.Fatalf("Lits(%+v): %v", a, err)
				}
				got, valid := solveWith(e, lits...), eval.Check(tc.pool, a).Valid
				if got {
					accepted++
				}
				switch {
				case got && !valid:
					t.Fatalf("the encoding accepts a plan eval rejects: %+v", a)
				case tc.wantExact && valid && !got:
					t.Fatalf("exact memory, yet the encoding refuses a valid plan: %+v", a)
				}
			}
			if accepted == 0 {
				t.Fatal("the encoding accepts no plan at all")
			}
		})
	}
}

// The memory rows of the linear mirror (the resident row, each auto
// lane's big-M row) stay below 2^53, where LP readers (CBC reads
// coefficients as doubles) are exact, even when a domain's draws come
// close to the cap: 13 decimals on a 100 GiB domain, with auto lanes.
func TestMemoryRowsStayBelowTwoToThe53(t *testing.T) {
	parts := []pooltest.Part{pooltest.Node("gb-a", 128, pooltest.BudgetGb(64.1234567890123))}
	var total float64
	for i := range 4 {
		gb := 20 + float64(i) + 0.1234567890123
		total += gb
		parts = append(parts, pooltest.Variant(fmt.Sprint("v", i), gb, pooltest.On("gb-a")))
	}
	p := pooltest.New(parts...)
	e, err := New(p, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if e.Scale != 1e13 || !e.Exact {
		t.Fatalf("scale %d, exact %v; want 10^13, exact", e.Scale, e.Exact)
	}
	if want := total * 1e13; want < maxDomainUnits/2 {
		t.Fatalf("the draws sum to %g units, too far below the cap %d to test it", want, int64(maxDomainUnits))
	}
	rows, auto := 0, 0
	for _, r := range e.Linear.Rows {
		if !strings.HasPrefix(r.Name, "memory") {
			continue
		}
		rows++
		if strings.HasPrefix(r.Name, "memory-auto") {
			auto++
		}
		for _, tm := range r.Terms {
			if tm.Coef >= 1<<53 || tm.Coef <= -(1<<53) {
				t.Fatalf("row %s: coefficient %d past 2^53", r.Name, tm.Coef)
			}
		}
		if r.RHS >= 1<<53 || r.RHS <= -(1<<53) {
			t.Fatalf("row %s: right-hand side %d past 2^53", r.Name, r.RHS)
		}
	}
	if rows == 0 || auto == 0 {
		t.Fatalf("%d memory rows, %d of them auto; want both", rows, auto)
	}
}

// On random small pools whose draws get up to nine decimals and whose plan
// budgets sit exactly on a sum of draws, or one billionth of a GiB either
// side of it, the encoding accepts a plan exactly when eval finds it valid.
func TestFineFiguresOnRandomPoolsAgreeWithEval(t *testing.T) {
	for pi, p := range smallPools(t) {
		t.Run(fmt.Sprint("pool ", pi), func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(pi), 99))
			byDomain := map[[2]string][]int64{} // draws in units of 1e-9 GiB
			for vi := range p.Variants {
				for pl := range p.Variants[vi].Placements {
					ds := p.Variants[vi].Placements[pl].Draws
					for di := range ds {
						places := 1 + r.IntN(9)
						step := int64(math.Pow10(9 - places))
						u := int64(ds[di].Gb)*1e9 + r.Int64N(1e9)/step*step
						ds[di].Gb = float64(u) / 1e9
						k := [2]string{ds[di].Node, ds[di].Domain}
						byDomain[k] = append(byDomain[k], u)
					}
				}
			}
			for ni := range p.Nodes {
				for di := range p.Nodes[ni].Domains {
					d := &p.Nodes[ni].Domains[di]
					var sum int64
					for _, u := range byDomain[[2]string{p.Nodes[ni].ID, d.ID}] {
						if r.IntN(2) == 0 {
							sum += u
						}
					}
					d.Budget.PlanGb = float64(sum+r.Int64N(3)-1) / 1e9
				}
			}
			e, err := New(p, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !e.Exact {
				t.Fatalf("nine decimals on small domains should count exactly; scale %d", e.Scale)
			}
			plans, all := enumerate(e, 3000)
			if !all {
				t.Skip("too many plans")
			}
			valid := 0
			for _, a := range plans {
				lits, err := e.Lits(a)
				if err != nil {
					t.Fatalf("Lits(%+v): %v", a, err)
				}
				got, ok := solveWith(e, lits...), eval.Check(p, a).Valid
				if got != ok {
					t.Fatalf("plan %+v: encoding accepts = %v, eval valid = %v (%v)", a, got, ok, eval.Check(p, a).Violations)
				}
				if ok {
					valid++
				}
			}
			t.Logf("%d plans, %d valid, scale %d", len(plans), valid, e.Scale)
		})
	}
}
