package solver

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

// On pools small enough to enumerate, every single node or link loss
// re-planned on the one encoding proves the brute-force optimum of the
// pool the scenario leaves (its nodes down, its link gone, its broken
// pins dropped), and its plan passes eval there.
func TestEveryReplanProvesTheBruteForceOptimumOfWhatTheScenarioLeaves(t *testing.T) {
	for i, p := range bruteForcePools(t, 16) {
		t.Run(fmt.Sprint("pool ", i), func(t *testing.T) {
			base := solve(t, p, Options{Seed: 1})
			if base.Infeasible {
				t.Skip("no base plan")
			}
			w, err := NewWhatIf(p, base, 1, time.Now().Add(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			var scs []Scenario
			for _, n := range p.Nodes {
				if n.Unavailable == "" {
					scs = append(scs, Scenario{Nodes: []string{n.ID}})
				}
			}
			for _, l := range p.Links {
				scs = append(scs, Scenario{Links: []model.Link{l}})
			}
			for _, sc := range scs {
				r, err := w.Replan(context.Background(), sc, time.Now().Add(5*time.Second))
				if err != nil {
					t.Fatalf("%s: %v", sc.Name(), err)
				}
				best, _, feasible := pooltest.BruteForce(r.Pool)
				if r.Result.Infeasible || !feasible {
					t.Fatalf("%s: re-plan infeasible %v (%+v), brute force feasible %v", sc.Name(), r.Result.Infeasible, r.Result.Explanations, feasible)
				}
				if r.Result.Objective != best || !r.Proved() {
					t.Errorf("%s: re-plan %v (proved %v), brute force %v", sc.Name(), r.Result.Objective, r.Proved(), best)
				}
				if r.Result.Stop != StopProved {
					t.Errorf("%s: re-plan stopped for %q, want %q", sc.Name(), r.Result.Stop, StopProved)
				}
				if rep := eval.Check(r.Pool, r.Result.Assignment); !rep.Valid || rep.Objective != r.Result.Objective {
					t.Errorf("%s: eval valid %v objective %v (%v)", sc.Name(), rep.Valid, rep.Objective, rep.Violations)
				}
			}
		})
	}
}

// A re-plan under a scenario equals a fresh Solve of the pool it leaves,
// on pools too large to enumerate (levels 1-3, which both prove).
func TestReplansAgreeWithAFreshSolveOfThePoolTheScenarioLeaves(t *testing.T) {
	var p *model.Pool
	var base *Result
	for seed := uint64(12); base == nil || base.Infeasible; seed++ {
		p = pooltest.Random(seed, 6, 12)
		base = solve(t, p, Options{Seed: 1, TimeLimit: 5 * time.Second})
	}
	w, err := NewWhatIf(p, base, 1, time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range p.Nodes[:3] {
		sc := Scenario{Nodes: []string{n.ID}}
		r, err := w.Replan(context.Background(), sc, time.Now().Add(3*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		fresh := solve(t, r.Pool, Options{Seed: 1, TimeLimit: 5 * time.Second})
		for i := range 3 {
			if r.Result.Levels[i].Status == Optimal && fresh.Levels[i].Status == Optimal && r.Result.Objective[i] != fresh.Objective[i] {
				t.Errorf("%s: level %d re-plan %d, fresh solve %d", sc.Name(), i+1, r.Result.Objective[i], fresh.Objective[i])
			}
		}
	}
}

// The running example: pinned lanes fill s3, and the 40 GiB "big", an
// alternative to the plan's faster lane on s1, does not fit there as a
// resident lane. The answer names the domain and what holds it, not just
// "conflict"; as auto it fits, and its cold starts break the SLO.
func TestWhyNotNamesTheFullDomainAndTheSLO(t *testing.T) {
	p := pooltest.New(
		pooltest.Node("s1", 121.69, pooltest.Spark(), pooltest.BudgetGb(115.6)),
		pooltest.Node("s3", 121.69, pooltest.Spark(), pooltest.BudgetGb(115.6)),
		pooltest.Variant("fast", 100, pooltest.Serves("b"), pooltest.On("s1"), pooltest.Perf(850, 0)),
		pooltest.Variant("image", 70, pooltest.Serves("img"), pooltest.On("s3"), pooltest.DefaultResidency(model.Preferred)),
		pooltest.Variant("emb", 12, pooltest.Serves("e"), pooltest.On("s3")),
		pooltest.Variant("stt", 6, pooltest.Serves("s"), pooltest.On("s3")),
		pooltest.Variant("big", 40, pooltest.Serves("b"), pooltest.On("s3"), pooltest.Perf(1042, 0), pooltest.LoadMs(80000)),
		pooltest.External("cloud/b", 1500),
		pooltest.Alias("chat", 100, "cloud/b", "b"),
		pooltest.SLO("chat", 2000, 0),
		pooltest.Alias("images", 500, "img"),
		pooltest.Alias("embed", 5000, "e"),
		pooltest.Alias("speech", 500, "s"),
		pooltest.PinLane("emb", model.Always, "s3"),
		pooltest.PinLane("stt", model.Always, "s3"),
		pooltest.PinLane("image", model.Preferred, "s3"),
	)
	base := solve(t, p, Options{Seed: 1})
	w, err := NewWhatIf(p, base, 1, time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ans, err := w.WhyRoute(context.Background(), "chat", true, time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(ans.Options, func(o Option) bool { return o.Variant == "big" })
	if i < 0 {
		t.Fatalf("no option for big: %+v", ans.Options)
	}
	o := ans.Options[i]
	var texts []string
	for _, r := range o.Reasons {
		texts = append(texts, string(r.Rule)+": "+r.Text)
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{
		"memory: as always or preferred: needs 40 GiB on s3 unified:0; its plan budget 111.6 GiB holds 88 GiB resident: image 70 preferred pinned, emb 12 pinned, stt 6 pinned",
		"slo: as auto: expects 21042 ms first token (1042 ms + 25% cold x 80 s load), over the 2000 ms SLO",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("reasons lack %q:\n%s", want, all)
		}
	}
	if !o.Possible || o.Best == nil {
		t.Errorf("big on s3 fits as auto, so some plan takes it: possible %v, best %+v", o.Possible, o.Best)
	}
}

// Every eligibility rule a placement breaks is a reason, not the first
// only; and an option a pin rules out names the pin.
func TestWhyNotGivesEveryStaticReasonAndThePinThatRulesAnOptionOut(t *testing.T) {
	p := pooltest.New(
		pooltest.Node("mac", 32, pooltest.Mac(), pooltest.Cordoned()),
		pooltest.Node("gpu", 256, pooltest.GPU(80)),
		pooltest.Variant("cuda-on-mac", 40, pooltest.Serves("m"), pooltest.Archs("sm_90"), pooltest.On("mac")),
		pooltest.Variant("on-gpu", 60, pooltest.Serves("m"), pooltest.DeviceGb(60), pooltest.On("gpu")),
		pooltest.Variant("hog", 60, pooltest.Serves("h"), pooltest.DeviceGb(60), pooltest.On("gpu")),
		pooltest.Alias("a", 10, "m"),
		pooltest.Alias("hogs", 10, "h"),
		pooltest.PinLane("hog", model.Always, "gpu"),
	)
	base := solve(t, p, Options{Seed: 1})
	w, err := NewWhatIf(p, base, 1, time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	ans, err := w.WhyRoute(context.Background(), "a", false, time.Now().Add(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string][]model.Rule{}
	for _, o := range ans.Options {
		for _, r := range o.Reasons {
			rules[o.Variant] = append(rules[o.Variant], r.Rule)
		}
	}
	if got := rules["cuda-on-mac"]; !slices.Equal(got, []model.Rule{model.RuleUnavailable, model.RuleArch, model.RuleMemory}) {
		t.Errorf("cuda-on-mac reasons %v, want unavailable, arch and memory", got)
	}
	if got := rules["on-gpu"]; !slices.Contains(got, model.RuleMemory) {
		t.Errorf("on-gpu reasons %v, want the device memory the pinned hog holds", got)
	}
	for _, o := range ans.Options {
		if o.Variant == "on-gpu" && (o.Possible || !slices.Contains(o.Pins, "hog@gpu:always") ||
			!strings.Contains(o.Reasons[0].Text, "needs 60 GiB on gpu device:cuda:0; its plan budget 76 GiB holds 60 GiB resident: hog 60 pinned")) {
			t.Errorf("on-gpu: possible %v, pins %v, reasons %+v", o.Possible, o.Pins, o.Reasons)
		}
	}
}

// Level 4 of a re-plan is bounded by the level loop's LP on the
// scenario's relaxation (its fixes and kept pins assumed, the earlier
// levels frozen by assumption), by branch and cut from it, or by gini
// under assumptions: the bound must never pass the optimum a fresh solve
// of the pool the scenario leaves proves, with the same earlier levels.
func TestAScenarioLevel4BoundNeverPassesAFreshProof(t *testing.T) {
	compared, fromLP := 0, 0
	for seed := uint64(1); seed <= shortOr(8, 3); seed++ {
		p := pooltest.Random(seed, 8, 24)
		base := solve(t, p, Options{Seed: 1, TimeLimit: 5 * time.Second})
		if base.Infeasible {
			continue
		}
		w, err := NewWhatIf(p, base, 1, time.Now().Add(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range p.Nodes[:3] {
			sc := Scenario{Nodes: []string{n.ID}}
			r, err := w.Replan(context.Background(), sc, time.Now().Add(3*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			l4 := r.Result.Levels[3]
			if l4.BoundSource == BoundLP || l4.BoundSource == BoundBranchAndCut {
				fromLP++
			}
			fresh := solve(t, r.Pool, Options{Seed: 1, TimeLimit: 10 * time.Second})
			if !allOptimal(fresh) || [3]int64(fresh.Objective[:3]) != [3]int64(r.Result.Objective[:3]) {
				continue
			}
			compared++
			if l4.LowerBound > fresh.Objective[3] {
				t.Errorf("pool %d, %s: level 4 bounded at %d (%s), but a fresh solve proves %d", seed, sc.Name(), l4.LowerBound, l4.BoundSource, fresh.Objective[3])
			}
		}
	}
	t.Logf("%d scenarios compared with a fresh proof, %d bounded by the LP", compared, fromLP)
	if compared == 0 || fromLP == 0 {
		t.Errorf("%d scenarios compared, %d bounded by the LP: the test does not reach the rule", compared, fromLP)
	}
}

// Under a work budget a series of re-plans on one encoding is the same
// on every run: two encodings of the same pool, each asked the same
// scenarios in the same order with the same budgets, give the same
// plans, levels and work, with the clock (a minute away) cutting none.
func TestReplansUnderAWorkBudgetAreTheSameOnEveryRun(t *testing.T) {
	if testing.Short() {
		t.Skip("solves a 24-node pool and re-plans it twice")
	}
	p := pooltest.Random(1, 24, 60)
	base := solve(t, p, Options{Seed: 1, TimeLimit: 5 * time.Second})
	var scs []Scenario
	for _, n := range p.Nodes[:5] {
		scs = append(scs, Scenario{Nodes: []string{n.ID}})
	}
	tests := []struct {
		name string
		work Work
		// cuts: the budget leaves some re-plan unproved.
		cuts bool
	}{
		{"a budget too small for most proofs", 20_000, true},
		{"a budget of a tenth of a second's work", WorkPerSecond / 10, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var runs [2][]string
			proved := 0
			for run := range runs {
				w, err := NewWhatIf(p, base, 1, time.Now().Add(time.Minute))
				if err != nil {
					t.Fatal(err)
				}
				for _, sc := range scs {
					r, err := w.ReplanWork(context.Background(), sc, tt.work, time.Now().Add(time.Minute))
					if err != nil {
						t.Fatalf("%s: %v", sc.Name(), err)
					}
					if r.ClockCut {
						t.Fatalf("%s: the clock cut a re-plan a minute from its deadline", sc.Name())
					}
					if r.Proved() && run == 0 {
						proved++
					}
					runs[run] = append(runs[run], fmt.Sprintf("%s: timed out %v, %+v %v, work %d", sc.Name(), r.TimedOut, r.Result.Assignment, r.Result.Levels, r.Work))
				}
			}
			if tt.cuts && proved == len(scs) {
				t.Fatal("every re-plan proved: the budget cut nothing, so the test shows nothing")
			}
			for i := range scs {
				if runs[0][i] != runs[1][i] {
					t.Errorf("run 1 differs from run 0:\n%s\n%s", runs[0][i], runs[1][i])
				}
			}
		})
	}
}
