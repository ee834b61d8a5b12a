package eval_test

import (
	"testing"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

// Seven-decimal figures, as a node's memoryBudgetGb may have: on gb-a (4 GiB of headroom) a
// keepWarm lane of keep GiB next to a lane of fine GiB with residency res.
func TestMemoryRuleIsExactOnDecimalFigures(t *testing.T) {
	tests := []struct {
		name                        string
		budget, headroom, keep, fin float64
		res                         model.Residency
		wantRule                    eval.Rule // "" for a valid plan
	}{
		{"a preferred lane fills the budget to the last of seven decimals", 100.3333333, 4, 56.1111111, 40.2222222, model.Preferred, ""},
		{"an auto lane fits next to the always lane to the last decimal", 100.3333333, 4, 56.1111111, 40.2222222, model.Auto, ""},
		{"one ten-millionth of a GiB less budget is over", 100.3333332, 4, 56.1111111, 40.2222222, model.Preferred, eval.RuleMemory},
		{"half a billionth of a GiB over is over: no tolerance hides it", 100.3333333, 4, 56.1111111, 40.2222222005, model.Preferred, eval.RuleMemory},
		{"the auto lane is over by the same ten-millionth", 100.3333332, 4, 56.1111111, 40.2222222, model.Auto, eval.RuleMemoryAuto},
		{"a headroom of 4.1 off 100.4333333 leaves exactly room for both", 100.4333333, 4.1, 56.1111111, 40.2222222, model.Preferred, ""},
		{"0.1 GiB and 0.2 GiB fill a 4.3 GiB budget less 4 of headroom despite float noise", 4.3, 4, 0.1, 0.2, model.Preferred, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := pooltest.New(
				pooltest.Settings(func(s *model.Settings) { s.HeadroomGb = tc.headroom }),
				pooltest.Node("gb-a", 128, pooltest.BudgetGb(tc.budget)),
				pooltest.Variant("keep", tc.keep, pooltest.On("gb-a")),
				pooltest.Variant("fine", tc.fin, pooltest.On("gb-a")),
			)
			a := model.Assignment{Lanes: []model.LaneChoice{
				{Variant: "keep", Nodes: []string{"gb-a"}, Residency: model.Always},
				{Variant: "fine", Nodes: []string{"gb-a"}, Residency: tc.res},
			}}
			rep := eval.Check(p, a)
			var rules []eval.Rule
			for _, v := range rep.Violations {
				rules = append(rules, v.Rule)
			}
			switch {
			case tc.wantRule == "" && !rep.Valid:
				t.Fatalf("plan refused: %v", rep.Violations)
			case tc.wantRule != "" && (len(rules) != 1 || rules[0] != tc.wantRule):
				t.Fatalf("violations %v, want one of rule %s", rep.Violations, tc.wantRule)
			}
		})
	}
}
