package plan

import (
	"slices"
	"time"

	"github.com/poolsolve/poolsolve/model"
)

// Schema names the JSON document WriteJSON writes. A change that breaks a
// reader of the document takes a new version.
const Schema = "poolsolve.plan/v1"

// Meta is what the caller knows about the run that the pool and the
// result do not say.
type Meta struct {
	// Fleet names the input the pool came from (a path or a fleet name).
	Fleet string
	// Solver is "exact" or "greedy"; empty takes the result's own.
	Solver string
	// Notes are the catalog's notes: figures assumed, pins dropped.
	Notes []string
	// Fallbacks are what the run fell back on, one line each: a greedy
	// plan after the exact solver ran out of time, inputs that were
	// missing and assumed.
	Fallbacks []string
	// Interrupted says a signal stopped the search: the plan is the best
	// found before it.
	Interrupted bool
	// NotSearched says the time limit ran out before the search could
	// start: the plan is the greedy start.
	NotSearched bool
	// TimeLimit is the time limit the search was given, as asked for
	// (not as measured, so that the plan stays the same bytes).
	TimeLimit time.Duration
	// WorkLimit, when set, is the work limit the search had instead of
	// a time limit (solver.Options.WorkLimit).
	WorkLimit int64
}

// Plan is a solve's plan as data: where lanes run, how each demand source
// routes, how good the plan is per objective level, what it changes from
// what runs now, and why. Every slice is sorted; Build is deterministic.
// It holds ids, numbers and reasons, never endpoints or keys.
type Plan struct {
	Schema    string   `json:"schema"`
	Fleet     string   `json:"fleet,omitempty"`
	Solver    string   `json:"solver,omitempty"`
	Fallbacks []string `json:"fallbacks,omitempty"`
	// Routing is how the LLooM release that runs the fleet routes an
	// alias, as the plan read it, and why that reading.
	Routing *model.Routing `json:"routing,omitempty"`
	// Interrupted is set when a signal (SIGINT, SIGTERM) stopped the
	// search: the plan is the best found by then, and each level's
	// status says what was proved.
	Interrupted bool `json:"interrupted,omitempty"`
	// Infeasible is set when the hard constraints admit no plan; the
	// plan then has no nodes' lanes, routes or changes, only Explanations.
	Infeasible bool `json:"infeasible"`
	// Search says how far the search got: nil when infeasible.
	Search *Search `json:"search,omitempty"`

	Objective *model.Objective `json:"objective,omitempty"` // nil when infeasible
	Levels    []Level          `json:"levels"`
	Nodes     []Node           `json:"nodes"`
	Routes    []Route          `json:"routes"`
	Changes   []Change         `json:"changes"`
	Summary   Summary          `json:"summary"`
	// Rollout orders the changes into steps that keep every memory
	// domain within LLooM's budget and aliases covered where memory
	// allows; nil when nothing changes.
	Rollout      *Rollout      `json:"rollout,omitempty"`
	Explanations []Explanation `json:"explanations,omitempty"`
	// Unknown are lanes configured on a node that could not be asked:
	// whether they run is unknown, so no change stops them.
	Unknown []UnknownLane `json:"unknown,omitempty"`
	// Now is every configured lane with the status the plan read for it
	// and whether it counts as running; by variant.
	Now   []NowLane `json:"now,omitempty"`
	Notes []string  `json:"notes,omitempty"`
}

// Search is how far the search got, for the plan's first lines: which
// levels are proved, why it ended, and what the bounds leave open.
type Search struct {
	// Stop is why the search ended: proved, deadline, not-searched (the
	// limit ran out before it started), interrupted or heuristic (the
	// greedy solver's plan).
	Stop string `json:"stop"`
	// TimeLimit is the limit the search had, as asked for ("5s").
	TimeLimit string `json:"timeLimit,omitempty"`
	// WorkLimit is the work limit the search had instead (--work-limit,
	// in solver.WorkUnit units).
	WorkLimit int64 `json:"workLimit,omitempty"`
	// Proved are the levels proved optimal.
	Proved []int `json:"proved"`
	// FirstOpen is the first level not proved optimal, 0 when all are:
	// the levels after it are minimised under its value, so only its
	// bound says what a longer search may gain.
	FirstOpen int `json:"firstOpen,omitempty"`
	// OpenValue and OpenBound are that level's value and the lower bound
	// proved for it: a longer search may bring the value down to the
	// bound, not below.
	OpenValue int64 `json:"openValue,omitempty"`
	OpenBound int64 `json:"openBound,omitempty"`
	// Uncovered and UncoveredProved split level 1: sources the plan
	// leaves uncovered, and how many of them every plan must leave
	// uncovered (level 1's lower bound).
	Uncovered       int64 `json:"uncovered"`
	UncoveredProved int64 `json:"uncoveredProved"`
}

// AllProved reports whether every level is proved optimal.
func (s *Search) AllProved() bool { return s != nil && s.FirstOpen == 0 }

// NowLane is a configured lane as the plan read it: the status its
// gateways report ("external, healthy", "running, unhealthy", "idle"),
// "declared" when none says anything, and whether it counts as running.
type NowLane struct {
	Variant string   `json:"variant"`
	Nodes   []string `json:"nodes"`
	Status  string   `json:"status"`
	Running bool     `json:"running"`
}

// HasChanges reports whether the plan changes anything that runs now. An
// infeasible plan changes nothing.
func (p *Plan) HasChanges() bool { return p != nil && len(p.Changes) > 0 }

// LosesCoverage reports whether a source served now is served by nothing
// in the plan.
func (p *Plan) LosesCoverage() bool {
	return p != nil && slices.ContainsFunc(p.Changes, func(c Change) bool { return c.Kind == Reroute && c.To == "" })
}

// Node is one machine: its state, its memory domains and the lanes the
// plan puts on it.
type Node struct {
	ID string `json:"id"`
	// Unavailable is why the node takes no lanes ("cordoned",
	// "unreachable: ..."), empty when it may.
	Unavailable string   `json:"unavailable,omitempty"`
	Federated   bool     `json:"federated,omitempty"`
	Domains     []Domain `json:"domains"`
	Lanes       []Lane   `json:"lanes"`
}

// Domain is one memory domain of a node, as the plan fills it.
type Domain struct {
	ID string `json:"id"`
	// PlanGb is what the planner may fill: AdmitGb - HeadroomGb.
	PlanGb     GiB    `json:"planGb"`
	AdmitGb    GiB    `json:"admitGb"`
	Rule       string `json:"rule"` // how admission arrived at AdmitGb
	HeadroomGb GiB    `json:"headroomGb"`
	// ResidentGb is drawn by always and preferred lanes, AlwaysGb by
	// always lanes alone; FreeGb = PlanGb - ResidentGb.
	ResidentGb GiB `json:"residentGb"`
	AlwaysGb   GiB `json:"alwaysGb"`
	FreeGb     GiB `json:"freeGb"`
	// LargestAuto is the auto lane with the largest draw here, which
	// must fit next to the always lanes; empty when there is none.
	LargestAuto   string `json:"largestAuto,omitempty"`
	LargestAutoGb GiB    `json:"largestAutoGb,omitempty"`
}

// Lane is a placed variant as seen from one of its nodes.
type Lane struct {
	Variant   string            `json:"variant"`
	Models    []string          `json:"models"`
	Residency model.Residency   `json:"residency"`
	Kind      model.VariantKind `json:"kind"`
	// Devices are the GPUs the plan chose for the lane where its nodes
	// have more than it needs ("node/domain", on every node of the lane).
	Devices []string `json:"devices,omitempty"`
	// Draws are the lane's draws on this node.
	Draws []Draw `json:"draws"`
	// With are the lane's other nodes, for a multi-node lane.
	With []string `json:"with,omitempty"`
	// Serves are the demand sources routed to the lane.
	Serves []string `json:"serves,omitempty"`
}

// Draw is memory a lane takes from one domain of the node it is listed on.
type Draw struct {
	Domain string `json:"domain"`
	Gb     GiB    `json:"gb"`
}

// Route is what serves one demand source first.
type Route struct {
	// Source is an alias id, or model:<id> for a model requested by its
	// own id.
	Source string  `json:"source"`
	Demand float64 `json:"demand"`
	// DemandSource says how an alias's demand was counted: requested
	// (buckets by the id asked for), split:history (the readings kept in
	// the demand history), split:recent (entries newer than the last
	// reading) or split:even (requests no entry shows), with each way's
	// requests when they differ; the plan's notes say it in words.
	DemandSource string `json:"demandSource,omitempty"`
	// Model is the served model, empty when the source is uncovered.
	Model    string `json:"model,omitempty"`
	External bool   `json:"external,omitempty"`
	// Variant is the lane serving a local model, with its nodes and
	// residency.
	Variant   string          `json:"variant,omitempty"`
	Nodes     []string        `json:"nodes,omitempty"`
	Residency model.Residency `json:"residency,omitempty"`
	// RouteName is the alias's route profile whose first available
	// member is Model, empty when none is.
	RouteName string `json:"routeName,omitempty"`
	// Fallbacks are the members after Model that are available in the
	// plan, in order.
	Fallbacks []string `json:"fallbacks,omitempty"`
	// FirstTokenMs and TotalMs are the expected latencies of
	// docs/objective.md (TotalMs is FirstTokenMs when the total is
	// unknown); zero when uncovered.
	FirstTokenMs Ms        `json:"firstTokenMs,omitempty"`
	TotalMs      Ms        `json:"totalMs,omitempty"`
	SLO          *SLO      `json:"slo,omitempty"`
	SLOStatus    SLOStatus `json:"sloStatus,omitempty"`
	// Reason says why an uncovered source is uncovered, when known.
	Reason string `json:"reason,omitempty"`
}

// Covered reports whether something serves the source.
func (r Route) Covered() bool { return r.Model != "" }

// SLO bounds an alias's expected latency; a zero field is unset.
type SLO struct {
	FirstTokenMs Ms `json:"firstTokenMs,omitempty"`
	TotalMs      Ms `json:"totalMs,omitempty"`
}

// SLOStatus says whether a covered alias keeps its SLO.
type SLOStatus string

const (
	SLOOK       SLOStatus = "ok"
	SLOViolated SLOStatus = "violated"
)

// Level is one objective level, as the solver reported it, with the unit
// it counts and its gap rounded. It copies solver.Level rather than
// embedding it because it is the poolsolve.plan/v1 schema
// (docs/plan-json.md): a field the solver adds must not reach the
// document unreviewed.
type Level struct {
	Index      int    `json:"level"` // 1..4
	Name       string `json:"name"`
	Value      int64  `json:"value"`
	Status     string `json:"status"` // optimal, bounded, heuristic
	LowerBound int64  `json:"lowerBound"`
	// The solver's BoundSource stays out: which prover closes a level
	// first (the LP or a PB worker beside it) depends on timing, and the
	// same input must give the same document.
	Gap float64 `json:"gap"`
	// Unit is what the value counts: "uncovered sources", "aliases
	// external first", "SLO violations", "units of 1 s" (level 4, in the
	// pool's latency unit).
	Unit string `json:"unit,omitempty"`
}

// Change is one difference between what runs now and the plan. Which
// fields are set depends on Kind; docs/plan-json.md has the table.
type Change struct {
	Kind ChangeKind `json:"kind"`
	// Subject is the variant, or the alias for a re-route.
	Subject string `json:"subject"`
	// LaneKind is the variant's kind, for lane changes.
	LaneKind model.VariantKind `json:"laneKind,omitempty"`
	// Nodes are where the lane runs (start, residency), ran (stop), or
	// goes (move).
	Nodes []string `json:"nodes,omitempty"`
	// Devices are the GPUs the plan chose for a started or moved lane
	// (Lane.Devices): its launch must see just these.
	Devices []string `json:"devices,omitempty"`
	// FromNodes are where a moved lane runs now.
	FromNodes []string `json:"fromNodes,omitempty"`
	// Residency is the lane's residency: planned for a start or move, as
	// it is now for a stop.
	Residency model.Residency `json:"residency,omitempty"`
	// From and To are residencies for a residency change, and served
	// models for a re-route (To empty: the alias becomes uncovered).
	From string `json:"from,omitempty"`
	To   string `json:"to,omitempty"`
	// FromRoute and ToRoute name the route profiles of a re-route.
	FromRoute string `json:"fromRoute,omitempty"`
	ToRoute   string `json:"toRoute,omitempty"`
	Reason    string `json:"reason,omitempty"`
}

// Manual reports whether the operator must make the change by hand.
func (c Change) Manual() bool { return c.Kind == ManualStop || c.Kind == ManualStart }

// UnknownLane is a lane the plan does not keep, on a node that could not
// be asked; Status says which node and why (model.UnknownLane).
type UnknownLane struct {
	Variant  string            `json:"variant"`
	LaneKind model.VariantKind `json:"laneKind,omitempty"`
	Nodes    []string          `json:"nodes"`
	Status   string            `json:"status"`
}

// Summary counts the changes by what they ask for.
type Summary struct {
	Start     int `json:"start"`
	Stop      int `json:"stop"`
	Move      int `json:"move"`
	Residency int `json:"residency"`
	Reroute   int `json:"reroute"`
	Manual    int `json:"manual"`
}

// Explanation says why something the operator asked for or expects
// cannot hold: a solver.Explanation whose text has been scrubbed of URLs
// and keys (scrub.go), in the document's own type for Level's reason.
type Explanation struct {
	Subject string   `json:"subject"` // alias, model:<id>, or pin label
	Reason  string   `json:"reason"`
	Pins    []string `json:"pins,omitempty"` // conflicting pins and cordons
}
