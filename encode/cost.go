package encode

import (
	"math"

	"github.com/poolsolve/poolsolve/model"
)

// costs holds the settings-derived numbers of docs/objective.md level 3
// and 4, computed once so every coefficient uses the same arithmetic.
type costs struct {
	s    model.Settings
	unit float64 // latency unit in ms; non-positive settings count in ms
	h    int64   // hysteresis units charged per change
}

func newCosts(s model.Settings) costs {
	c := costs{s: s, unit: s.LatencyUnitMs}
	if c.unit <= 0 {
		c.unit = 1
	}
	c.h = units(s.HysteresisMs / c.unit)
	return c
}

// units rounds half away from zero, as the contract says (math.Round).
func units(x float64) int64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return int64(math.Round(x))
}

// firstToken is E_ft of a source served by v with residency r.
func (c costs) firstToken(v *model.Variant, r model.Residency) float64 {
	ft, _ := c.s.Expected(v, r)
	return ft
}

func (c costs) extFirstToken(m *model.Model) float64 {
	ft, _ := c.s.ExpectedExternal(m)
	return ft
}

// latency is a covered source's level-4 term.
func (c costs) latency(demand, ft float64) int64 { return units(demand * ft / c.unit) }

// start is the level-4 cost of a lane not running now on its node set.
func (c costs) start(v *model.Variant) int64 {
	return units(c.s.ChurnWeight*v.LoadTimeMs/c.unit) + c.h
}
