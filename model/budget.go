package model

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
)

// GiB is the number of bytes in the unit every *Gb field uses.
const GiB = 1 << 30

// DefaultReserveGb is LLooM's reserve when neither node nor policy sets one.
const DefaultReserveGb = 8

// BudgetInputs are the facts LLooM's admission formula reads for one
// memory domain. A nil pointer is "not set", which differs from zero.
type BudgetInputs struct {
	// Primary is true for the domain admission budgets (unified:0 or
	// system:0). Device domains take only the utilisation cap.
	Primary bool

	TelemetryTotalGb  *float64 // telemetry.memory.totalBytes / GiB
	ConfiguredTotalGb *float64 // cluster.nodes[N].resources.memoryGb
	ProfileTotalGb    *float64 // machine profile totalMemoryGb / domain capacityGb
	AvailableGb       *float64 // telemetry availableBytes, else resources.availableMemoryGb

	NodeBudgetGb    *float64 // resources.memoryBudgetGb
	PolicyBudgetGb  *float64 // runtimePolicy.memoryBudgetGb
	NodeMaxUtil     *float64 // resources.maxMemoryUtilization
	PolicyMaxUtil   *float64 // runtimePolicy.maxMemoryUtilization
	NodeReserveGb   *float64 // resources.reserveMemoryGb
	PolicyReserveGb *float64 // runtimePolicy.reserveMemoryGb

	HeadroomGb float64 // poolsolve's own margin, kept free on top
}

// Budget is the outcome of the formula for one domain.
type Budget struct {
	TotalGb     float64  `json:"totalGb"`
	TotalSource string   `json:"totalSource"` // telemetry, config, profile, unknown
	AvailableGb *float64 `json:"availableGb,omitempty"`
	// AdmitGb is what LLooM admission allows on the domain.
	AdmitGb float64 `json:"admitGb"`
	// Rule says which branch of the formula gave AdmitGb, with numbers.
	Rule       string  `json:"rule"`
	HeadroomGb float64 `json:"headroomGb"`
	// PlanGb = AdmitGb - HeadroomGb: what the planner may fill.
	PlanGb float64 `json:"planGb"`
}

// ComputeBudget applies LLooM's admission formula: the node's
// memoryBudgetGb, else the policy's, else total x maxMemoryUtilization
// (node before policy), else total - reserveMemoryGb (node, policy, 8).
// The total is telemetry before configured memoryGb before the profile.
// HeadroomGb is then kept free on top. This is the only place the formula
// lives: admission checks and planning both call it.
func ComputeBudget(in BudgetInputs) Budget {
	var b Budget
	switch {
	case in.TelemetryTotalGb != nil:
		b.TotalGb, b.TotalSource = *in.TelemetryTotalGb, "telemetry"
	case in.ConfiguredTotalGb != nil:
		b.TotalGb, b.TotalSource = *in.ConfiguredTotalGb, "config"
	case in.ProfileTotalGb != nil:
		b.TotalGb, b.TotalSource = *in.ProfileTotalGb, "profile"
	default:
		b.TotalGb, b.TotalSource = 0, "unknown"
	}
	b.AvailableGb = in.AvailableGb
	maxUtil := first(in.NodeMaxUtil, in.PolicyMaxUtil)
	switch {
	case in.Primary && in.NodeBudgetGb != nil:
		b.AdmitGb = math.Max(0, *in.NodeBudgetGb)
		b.Rule = fmt.Sprintf("node memoryBudgetGb %s", Gb(b.AdmitGb))
	case in.Primary && in.PolicyBudgetGb != nil:
		b.AdmitGb = math.Max(0, *in.PolicyBudgetGb)
		b.Rule = fmt.Sprintf("runtimePolicy memoryBudgetGb %s", Gb(b.AdmitGb))
	case maxUtil != nil:
		b.AdmitGb = math.Max(0, decimalMul(b.TotalGb, *maxUtil))
		b.Rule = fmt.Sprintf("total %s x maxMemoryUtilization %g", Gb(b.TotalGb), *maxUtil)
	case !in.Primary:
		b.AdmitGb = b.TotalGb
		b.Rule = fmt.Sprintf("device capacity %s", Gb(b.TotalGb))
	default:
		reserve := DefaultReserveGb * 1.0
		if r := first(in.NodeReserveGb, in.PolicyReserveGb); r != nil {
			reserve = *r
		}
		b.AdmitGb = math.Max(0, decimalSub(b.TotalGb, reserve))
		b.Rule = fmt.Sprintf("total %s - reserveMemoryGb %g", Gb(b.TotalGb), reserve)
	}
	b.HeadroomGb = math.Max(0, in.HeadroomGb)
	b.PlanGb = math.Max(0, decimalSub(b.AdmitGb, b.HeadroomGb))
	return b
}

// decimalSub and decimalMul work on the decimals their operands are
// written as and round once, so that a budget of 100.3333333 less a
// headroom of 4.1 is 96.2333333, the figure the planner reads memory
// against (docs/objective.md), and not 96.23333329999999.
func decimalSub(a, b float64) float64 {
	return decimalOp(a, b, a-b, (*big.Rat).Sub)
}

func decimalMul(a, b float64) float64 {
	return decimalOp(a, b, a*b, (*big.Rat).Mul)
}

func decimalOp(a, b, float float64, op func(z, x, y *big.Rat) *big.Rat) float64 {
	x, okx := new(big.Rat).SetString(strconv.FormatFloat(a, 'g', -1, 64))
	y, oky := new(big.Rat).SetString(strconv.FormatFloat(b, 'g', -1, 64))
	if !okx || !oky { // NaN or an infinity: float arithmetic says it
		return float
	}
	f, _ := op(new(big.Rat), x, y).Float64()
	return f
}

func first(ps ...*float64) *float64 {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

// Admission is LLooM's answer to "does this runtime fit now" on one domain.
type Admission struct {
	Allowed     bool    `json:"allowed"`
	ProjectedGb float64 `json:"projectedGb"`
	OverGb      float64 `json:"overGb"`
}

// Admit answers whether adding addsGb to a domain that has loadedGb of
// loaded runtimes fits the admission budget now. Like LLooM it projects
// max(actually used, loaded) + adds, where actually used is total minus
// available when telemetry reports it. Headroom is a planning margin and
// plays no part here.
func (b Budget) Admit(loadedGb, addsGb float64) Admission {
	used := loadedGb
	if b.AvailableGb != nil {
		used = math.Max(used, math.Max(0, b.TotalGb-*b.AvailableGb))
	}
	proj := used + addsGb
	over := math.Max(0, proj-b.AdmitGb)
	return Admission{Allowed: over <= 0, ProjectedGb: proj, OverGb: over}
}

// Holds answers the planning question: may lanes totalling gb sit on the
// domain together, keeping the headroom free. The tolerance absorbs the
// float noise of a sum; the memory rule itself is exact (HoldsAlone, and
// eval for sums).
func (b Budget) Holds(gb float64) bool { return gb <= b.PlanGb+1e-9 }

// HoldsAlone answers whether one draw fits the domain by itself, read as
// the memory rule reads figures (docs/objective.md): for a single figure
// the float order is the order of the decimals they are written as, a
// negative draw counts as zero, and a draw that is not a finite number
// never fits.
func (b Budget) HoldsAlone(gb float64) bool {
	if math.IsNaN(gb) || math.IsInf(gb, 1) {
		return false
	}
	return max(gb, 0) <= b.PlanGb
}

// Gb formats a GiB figure the way plans print it: at most one decimal.
func Gb(x float64) string {
	r := math.Round(x*10) / 10
	if r == math.Trunc(r) {
		return fmt.Sprintf("%.0f GiB", r)
	}
	return fmt.Sprintf("%.1f GiB", r)
}
