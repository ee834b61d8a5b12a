package model

import (
	"math"
	"strconv"
	"testing"
)

func f(x float64) *float64 { return &x }

func TestComputeBudget(t *testing.T) {
	tests := []struct {
		name     string
		in       BudgetInputs
		admit    float64
		plan     float64
		source   string
		ruleHint string
	}{
		{
			name:  "a GB10 with telemetry and a 0.95 policy admits 115.6 GiB and plans 111.6 with 4 of headroom",
			in:    BudgetInputs{Primary: true, TelemetryTotalGb: f(121.69), ConfiguredTotalGb: f(128), PolicyMaxUtil: f(0.95), HeadroomGb: 4},
			admit: 121.69 * 0.95, plan: 121.69*0.95 - 4, source: "telemetry",
			ruleHint: "total 121.7 GiB x maxMemoryUtilization 0.95",
		},
		{
			name:  "without telemetry the configured memoryGb is the total",
			in:    BudgetInputs{Primary: true, ConfiguredTotalGb: f(128), ProfileTotalGb: f(121.7), PolicyMaxUtil: f(0.95)},
			admit: 121.6, plan: 121.6, source: "config",
		},
		{
			name:  "the machine profile total is used only when nothing else says",
			in:    BudgetInputs{Primary: true, ProfileTotalGb: f(96)},
			admit: 88, plan: 88, source: "profile",
		},
		{
			name:  "a node memoryBudgetGb beats the policy budget and utilisation",
			in:    BudgetInputs{Primary: true, TelemetryTotalGb: f(121.69), NodeBudgetGb: f(118), PolicyBudgetGb: f(100), PolicyMaxUtil: f(0.9)},
			admit: 118, plan: 118, source: "telemetry", ruleHint: "node memoryBudgetGb",
		},
		{
			name:  "a policy memoryBudgetGb beats utilisation",
			in:    BudgetInputs{Primary: true, TelemetryTotalGb: f(121.69), PolicyBudgetGb: f(100), PolicyMaxUtil: f(0.9)},
			admit: 100, plan: 100, source: "telemetry", ruleHint: "runtimePolicy memoryBudgetGb",
		},
		{
			name:  "a node maxMemoryUtilization beats the policy one",
			in:    BudgetInputs{Primary: true, TelemetryTotalGb: f(100), NodeMaxUtil: f(0.5), PolicyMaxUtil: f(0.9)},
			admit: 50, plan: 50, source: "telemetry",
		},
		{
			name:  "without utilisation the default reserve of 8 GiB is taken off the total",
			in:    BudgetInputs{Primary: true, TelemetryTotalGb: f(121.69)},
			admit: 113.69, plan: 113.69, source: "telemetry", ruleHint: "reserveMemoryGb 8",
		},
		{
			name:  "a node reserve beats the policy reserve",
			in:    BudgetInputs{Primary: true, TelemetryTotalGb: f(64), NodeReserveGb: f(2), PolicyReserveGb: f(12)},
			admit: 62, plan: 62, source: "telemetry",
		},
		{
			name:  "a reserve larger than the total leaves nothing, never a negative budget",
			in:    BudgetInputs{Primary: true, TelemetryTotalGb: f(4), HeadroomGb: 4},
			admit: 0, plan: 0, source: "telemetry",
		},
		{
			name:  "an unknown total admits nothing",
			in:    BudgetInputs{Primary: true},
			admit: 0, plan: 0, source: "unknown",
		},
		{
			name:  "a device domain ignores node budgets and reserves but keeps the utilisation cap",
			in:    BudgetInputs{ProfileTotalGb: f(80), NodeBudgetGb: f(10), NodeReserveGb: f(8), PolicyMaxUtil: f(0.9), HeadroomGb: 2},
			admit: 72, plan: 70, source: "profile",
		},
		{
			name:  "a device domain without a cap admits its whole capacity",
			in:    BudgetInputs{ProfileTotalGb: f(80)},
			admit: 80, plan: 80, source: "profile",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := ComputeBudget(tc.in)
			if math.Abs(b.AdmitGb-tc.admit) > 1e-9 || math.Abs(b.PlanGb-tc.plan) > 1e-9 {
				t.Fatalf("admit, plan = %v, %v; want %v, %v (rule %q)", b.AdmitGb, b.PlanGb, tc.admit, tc.plan, b.Rule)
			}
			if b.TotalSource != tc.source {
				t.Errorf("total source = %q, want %q", b.TotalSource, tc.source)
			}
			if tc.ruleHint != "" && !contains(b.Rule, tc.ruleHint) {
				t.Errorf("rule = %q, want it to mention %q", b.Rule, tc.ruleHint)
			}
		})
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

func TestAdmitAndHolds(t *testing.T) {
	b := ComputeBudget(BudgetInputs{Primary: true, TelemetryTotalGb: f(121.69), AvailableGb: f(34.9), PolicyMaxUtil: f(0.95), HeadroomGb: 4})
	tests := []struct {
		name            string
		loaded, adds    float64
		allowed         bool
		wantProjectedGb float64
	}{
		{"memory the OS reports in use counts when it exceeds the loaded runtimes", 40, 40, false, 121.69 - 34.9 + 40},
		{"a small runtime fits next to what is in use", 40, 20, true, 121.69 - 34.9 + 20},
		{"loaded runtimes count when they exceed what the OS reports", 100, 10, true, 110},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := b.Admit(tc.loaded, tc.adds)
			if a.Allowed != tc.allowed || math.Abs(a.ProjectedGb-tc.wantProjectedGb) > 1e-9 {
				t.Fatalf("Admit(%v, %v) = %+v; want allowed %v projected %v", tc.loaded, tc.adds, a, tc.allowed, tc.wantProjectedGb)
			}
		})
	}
	if !b.Holds(111.6) || b.Holds(111.7) {
		t.Errorf("Holds around the 111.6 GiB plan budget is wrong: plan %v", b.PlanGb)
	}
}

func TestGbFormatsForOperators(t *testing.T) {
	for in, want := range map[float64]string{115.6055: "115.6 GiB", 4: "4 GiB", 111.6055: "111.6 GiB", 0.04: "0 GiB"} {
		if got := Gb(in); got != want {
			t.Errorf("Gb(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestComputeBudgetKeepsDecimalFigures(t *testing.T) {
	tests := []struct {
		name        string
		in          BudgetInputs
		admit, plan string // as strconv writes them
	}{
		{
			name:  "a headroom taken off a budget with seven decimals leaves the decimal difference",
			in:    BudgetInputs{Primary: true, NodeBudgetGb: f(100.3333333), HeadroomGb: 4.1},
			admit: "100.3333333", plan: "96.2333333",
		},
		{
			name:  "a small headroom off a fine budget leaves no float noise either",
			in:    BudgetInputs{Primary: true, NodeBudgetGb: f(100.3333333), HeadroomGb: 0.3},
			admit: "100.3333333", plan: "100.0333333",
		},
		{
			name:  "a utilisation cap multiplies the decimals, not their binary neighbours",
			in:    BudgetInputs{Primary: true, TelemetryTotalGb: f(64.1), PolicyMaxUtil: f(0.7), HeadroomGb: 4},
			admit: "44.87", plan: "40.87",
		},
		{
			name:  "a reserve is taken off the total as decimals",
			in:    BudgetInputs{Primary: true, TelemetryTotalGb: f(121.69), NodeReserveGb: f(8.1), HeadroomGb: 0.3},
			admit: "113.59", plan: "113.29",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := ComputeBudget(tc.in)
			admit, plan := strconv.FormatFloat(b.AdmitGb, 'f', -1, 64), strconv.FormatFloat(b.PlanGb, 'f', -1, 64)
			if admit != tc.admit || plan != tc.plan {
				t.Fatalf("admit, plan = %s, %s; want %s, %s", admit, plan, tc.admit, tc.plan)
			}
		})
	}
}

func TestHoldsAloneReadsOneDrawAsTheMemoryRuleDoes(t *testing.T) {
	b := ComputeBudget(BudgetInputs{Primary: true, NodeBudgetGb: f(100.3333333), HeadroomGb: 4})
	tests := []struct {
		name string
		gb   float64
		want bool
	}{
		{"a draw of exactly the plan budget fits", 96.3333333, true},
		{"a draw half a billionth of a GiB over does not: no tolerance", 96.3333333005, false},
		{"a negative draw counts as zero", -5, true},
		{"a NaN draw never fits", math.NaN(), false},
		{"an infinite draw never fits", math.Inf(1), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := b.HoldsAlone(tc.gb); got != tc.want {
				t.Fatalf("HoldsAlone(%v) = %v, want %v (plan %v)", tc.gb, got, tc.want, b.PlanGb)
			}
		})
	}
}
