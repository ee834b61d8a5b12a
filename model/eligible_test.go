package model_test

import (
	"reflect"
	"testing"

	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

func TestIneligibleNamesEveryRuleAPlacementBreaks(t *testing.T) {
	p := pooltest.New(
		pooltest.Node("a", 128, pooltest.Spark(), pooltest.Cordoned()),
		pooltest.Node("b", 128, pooltest.Spark()),
		pooltest.Node("c", 64, pooltest.Mac()),
		pooltest.Variant("h100", 40, pooltest.Archs("sm_90"), pooltest.On("a")),
		pooltest.Variant("tp", 100, pooltest.TP(2), pooltest.Platforms("linux-arm64"), pooltest.On("b", "c")),
		pooltest.Variant("fits", 20, pooltest.On("b")),
	)
	ix := p.Index()
	reasons := func(id string) []model.Reason {
		v := &p.Variants[ix.Variant[id]]
		return model.Ineligible(p, ix, v, v.Placements[0])
	}
	tests := []struct {
		name    string
		variant string
		want    []model.Rule
	}{
		{"a cordoned node with the wrong arch gives both reasons", "h100", []model.Rule{model.RuleUnavailable, model.RuleArch}},
		{"an unlinked pair on two platforms, too small on one, gives all three", "tp", []model.Rule{model.RulePlatform, model.RuleLink, model.RuleMemory}},
		{"an eligible placement gives none", "fits", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []model.Rule
			for _, r := range reasons(tc.variant) {
				got = append(got, r.Rule)
				if r.Text == "" {
					t.Errorf("%s: empty text", r.Rule)
				}
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("rules %v, want %v (%v)", got, tc.want, reasons(tc.variant))
			}
		})
	}
	if got := reasons("h100")[1].Text; got != "a has arch sm_121, needs sm_90" {
		t.Errorf("arch reason %q", got)
	}
}

func TestEligibleGivesIneligiblesFirstReason(t *testing.T) {
	for seed := uint64(1); seed <= 40; seed++ {
		p := pooltest.Random(seed, 6, 12)
		ix := p.Index()
		for vi := range p.Variants {
			v := &p.Variants[vi]
			for _, pl := range v.Placements {
				ok, why := model.Eligible(p, ix, v, pl)
				rs := model.Ineligible(p, ix, v, pl)
				if ok != (len(rs) == 0) || !ok && why != rs[0].Text {
					t.Fatalf("seed %d %s on %s: Eligible (%v, %q), Ineligible %v", seed, v.ID, pl.Key(), ok, why, rs)
				}
			}
		}
	}
}
