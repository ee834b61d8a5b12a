package model

import "fmt"

// Assignment is a plan's decisions, and nothing derived from them: which
// lanes run where with which residency, and what serves each demand source
// first. Solvers produce it; package eval checks it; package plan renders it.
type Assignment struct {
	Lanes  []LaneChoice  `json:"lanes"`  // sorted by Variant
	Routes []RouteChoice `json:"routes"` // sorted by Source
}

// LaneChoice places one variant.
type LaneChoice struct {
	Variant string   `json:"variant"`
	Nodes   []string `json:"nodes"`
	// Devices are the placement's device choice (Placement.Devices).
	Devices   []string  `json:"devices,omitempty"`
	Residency Residency `json:"residency"`
}

// Placement is the index of the variant's placement the lane takes, or -1.
func (v *Variant) Placement(nodes, devices []string) int {
	for k := range v.Placements {
		if v.Placements[k].On(nodes, devices) {
			return k
		}
	}
	return -1
}

// RouteChoice says what serves a demand source first. A source is an alias
// id, or "model:<id>" for a model requested directly by its own id. An
// empty Model means uncovered. Variant is the lane that serves a local
// model, empty for an external one.
type RouteChoice struct {
	Source  string `json:"source"`
	Model   string `json:"model,omitempty"`
	Variant string `json:"variant,omitempty"`
}

// DirectSource is the demand source name of a model requested directly.
func DirectSource(model string) string { return "model:" + model }

// Objective is the lexicographic objective vector, most important first:
// uncovered sources, external-first aliases, SLO violations, and
// demand-weighted latency plus churn in whole latency units.
type Objective [4]int64

// Less reports whether o is strictly better than p.
func (o Objective) Less(p Objective) bool {
	for i := range o {
		if o[i] != p[i] {
			return o[i] < p[i]
		}
	}
	return false
}

func (o Objective) String() string {
	return fmt.Sprintf("[%d %d %d %d]", o[0], o[1], o[2], o[3])
}

// LevelNames name the objective levels, 1-based in messages.
var LevelNames = [4]string{"coverage", "external-fallback", "slo", "latency+churn"}
