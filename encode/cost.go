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

func (c costs) cold(r model.Residency) float64 {
	switch r {
	case model.Preferred:
		return c.s.ColdFractionPreferred
	case model.Auto:
		return c.s.ColdFractionAuto
	}
	return 0
}

// firstToken is E_ft of a source served by v with residency r.
func (c costs) firstToken(v *model.Variant, r model.Residency) float64 {
	return v.Perf.FirstTokenMs + c.cold(r)*v.LoadTimeMs
}

// total is E_total; an unknown TotalMs judges a total SLO on E_ft.
func (c costs) total(v *model.Variant, r model.Residency) float64 {
	if v.Perf.TotalMs == 0 {
		return c.firstToken(v, r)
	}
	return v.Perf.TotalMs + c.cold(r)*v.LoadTimeMs
}

func (c costs) extFirstToken(m *model.Model) float64 {
	if m.Perf.FirstTokenMs == 0 {
		return c.s.ExternalFirstTokenMs
	}
	return m.Perf.FirstTokenMs
}

func (c costs) extTotal(m *model.Model) float64 {
	if m.Perf.TotalMs == 0 {
		return c.extFirstToken(m)
	}
	return m.Perf.TotalMs
}

// breaks reports whether expected latencies break an SLO.
func breaks(slo *model.SLO, ft, total float64) bool {
	if slo == nil {
		return false
	}
	return (slo.FirstTokenMs > 0 && ft > slo.FirstTokenMs) || (slo.TotalMs > 0 && total > slo.TotalMs)
}

// latency is a covered source's level-4 term.
func (c costs) latency(demand, ft float64) int64 { return units(demand * ft / c.unit) }

// start is the level-4 cost of a lane not running now on its node set.
func (c costs) start(v *model.Variant) int64 {
	return units(c.s.ChurnWeight*v.LoadTimeMs/c.unit) + c.h
}
