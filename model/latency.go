package model

// The expected-latency rule of docs/objective.md, written once for the
// encoder, the plan renderer and local search. Package eval keeps its
// own copy on purpose: it re-checks the others.

// ColdFraction is the share of requests that meet a lane of residency r
// cold: none for always, the settings' fractions for preferred and auto.
func (s Settings) ColdFraction(r Residency) float64 {
	switch r {
	case Preferred:
		return s.ColdFractionPreferred
	case Auto:
		return s.ColdFractionAuto
	}
	return 0
}

// Expected is the expected first-token and total latency, in ms, of a
// source served by v with residency r: the lane's figures plus the cold
// share of its load time. An unknown TotalMs (0) is judged on the first
// token.
func (s Settings) Expected(v *Variant, r Residency) (ft, total float64) {
	cold := s.ColdFraction(r) * v.LoadTimeMs
	ft = v.Perf.FirstTokenMs + cold
	total = ft
	if v.Perf.TotalMs != 0 {
		total = v.Perf.TotalMs + cold
	}
	return ft, total
}

// ExpectedExternal is Expected for a source served by the external model
// m: its figures, or ExternalFirstTokenMs when it has none.
func (s Settings) ExpectedExternal(m *Model) (ft, total float64) {
	ft = m.Perf.FirstTokenMs
	if ft == 0 {
		ft = s.ExternalFirstTokenMs
	}
	total = m.Perf.TotalMs
	if total == 0 {
		total = ft
	}
	return ft, total
}

// Breaks reports whether expected latencies break the SLO (nil breaks
// nothing).
func (slo *SLO) Breaks(ft, total float64) bool {
	if slo == nil {
		return false
	}
	return (slo.FirstTokenMs > 0 && ft > slo.FirstTokenMs) || (slo.TotalMs > 0 && total > slo.TotalMs)
}
