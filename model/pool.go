package model

import (
	"slices"
	"sort"
	"strings"
)

// Residency says how a placed lane holds its memory.
type Residency string

const (
	// Always is LLooM's keepWarm: resident, never evicted.
	Always Residency = "always"
	// Preferred is preferredWarm: resident while the budget allows,
	// evicted before Always lanes.
	Preferred Residency = "preferred"
	// Auto loads on demand and pays its load time on cold requests.
	Auto Residency = "auto"
)

// Residencies lists the residencies from strongest to weakest.
var Residencies = []Residency{Always, Preferred, Auto}

// Valid reports whether r is one of the three residencies.
func (r Residency) Valid() bool { return r == Always || r == Preferred || r == Auto }

// Resident reports whether the lane holds its memory all the time.
func (r Residency) Resident() bool { return r == Always || r == Preferred }

// VariantKind says where a variant comes from, and so what the pool may do
// with it.
type VariantKind string

const (
	// Managed runtimes are started and stopped by LLooM; fixed placement.
	Managed VariantKind = "managed"
	// Unmanaged lanes run by hand (LLooM management "external", or a model
	// pool block); the plan can only ask for a manual stop.
	Unmanaged VariantKind = "unmanaged"
	// Federated lanes belong to another gateway (a federated node).
	Federated VariantKind = "federated"
	// Recipe variants are bundled recipes that could be installed; free
	// placement (only with --consider-installs).
	Recipe VariantKind = "recipe"
)

// Pool is one planning problem: everything the planner needs and nothing
// it does not. Slices are sorted by ID so that iteration is deterministic.
type Pool struct {
	Nodes    []Node    `json:"nodes"`
	Links    []Link    `json:"links"`
	Variants []Variant `json:"variants"`
	Models   []Model   `json:"models"`
	Aliases  []Alias   `json:"aliases"`
	Pins     []Pin     `json:"pins,omitempty"`
	Current  Current   `json:"current"`
	Settings Settings  `json:"settings"`
	// Routing is how the LLooM release that runs the fleet routes an
	// alias; nil reads as the members reading.
	Routing *Routing `json:"routing,omitempty"`
}

// Routing names the reading an alias's members were built with.
type Routing struct {
	// Reading is "target" (LLooM 0.2.3: the target alone, no fallbacks)
	// or "members" (later releases: members in order, route profiles).
	Reading string `json:"reading"`
	Release string `json:"release"`
	// Basis says how the release was known, or that it was not.
	Basis string `json:"basis"`
}

// Reading values.
const (
	ReadTarget  = "target"
	ReadMembers = "members"
)

// TargetOnly reports whether aliases go to their target alone.
func (p *Pool) TargetOnly() bool { return p.Routing != nil && p.Routing.Reading == ReadTarget }

// Node is one machine of the pool.
type Node struct {
	ID           string   `json:"id"`
	Platform     string   `json:"platform,omitempty"` // platformId: linux-arm64, darwin-arm64, linux-x64
	Archs        []string `json:"archs,omitempty"`    // normalised compute archs: sm_121, apple-metal
	Accelerators []string `json:"accelerators,omitempty"`
	Domains      []Domain `json:"domains"`
	// Unavailable is empty for a node that may carry lanes, else why not
	// ("cordoned", "unreachable: ...").
	Unavailable string `json:"unavailable,omitempty"`
	// Source names where the node's facts came from: inventory, profile,
	// status, config.
	Source string `json:"source,omitempty"`

	Commands      []string    `json:"commands,omitempty"`
	Images        []string    `json:"images,omitempty"`
	CachedWeights []string    `json:"cachedWeights,omitempty"`
	ModelRoots    []ModelRoot `json:"modelRoots,omitempty"`
	// Federated nodes are whole gateways that own their admission; the
	// plan may propose lanes there but cannot act on them.
	Federated bool `json:"federated,omitempty"`
}

// ModelRoot is a folder where weights live, with its free disk.
type ModelRoot struct {
	Path   string  `json:"path"`
	FreeGb float64 `json:"freeGb"`
}

// Domain is one pool of memory that lanes draw from.
type Domain struct {
	ID     string `json:"id"`   // unified:0, system:0, device:cuda:0
	Kind   string `json:"kind"` // unified, system, device
	Budget Budget `json:"budget"`
}

// Link is a direct fabric connection between two nodes. A < B.
type Link struct {
	A      string `json:"a"`
	B      string `json:"b"`
	Source string `json:"source,omitempty"`
}

// Requirements are what a variant needs of every node it runs on.
type Requirements struct {
	NodeCount      int      `json:"nodeCount"`
	TensorParallel int      `json:"tensorParallel"`
	ComputeArchs   []string `json:"computeArchs,omitempty"`
	Platforms      []string `json:"platforms,omitempty"`
	Accelerators   []string `json:"accelerators,omitempty"`
	Backend        string   `json:"backend,omitempty"`
	ContextWindow  int      `json:"contextWindow,omitempty"`
	MaxSequences   int      `json:"maxSequences,omitempty"`
	// Commands and Images are the backend a recipe needs (any one image
	// or all commands); Weights the model repositories it loads.
	Commands []string `json:"commands,omitempty"`
	Images   []string `json:"images,omitempty"`
	Weights  []string `json:"weights,omitempty"`
	DiskGb   float64  `json:"diskGb,omitempty"`
	// Sources says, per field, where a value came from (recipe, launch
	// args, pool block, config).
	Sources map[string]string `json:"sources,omitempty"`
}

// Placement is one concrete place a lane can run: a node or a clique of
// linked nodes, and the memory it takes there.
type Placement struct {
	Nodes []string `json:"nodes"` // sorted
	// Devices are the device domains the lane was given where its nodes
	// have more interchangeable GPUs than it needs ("node/domain",
	// sorted); empty when there was no choice. Two placements on the same
	// nodes differ only by them.
	Devices []string `json:"devices,omitempty"`
	Draws   []Draw   `json:"draws"`
}

// Key is a stable text form of the placement: nodes joined by "+", then
// the devices in brackets when there are any (without the node when the
// placement has one node): "h100-01[device:cuda:3]".
func (p Placement) Key() string {
	return PlacementKey(p.Nodes, p.Devices)
}

// PlacementKey is Placement.Key of the given nodes and devices.
func PlacementKey(nodes, devices []string) string {
	s := strings.Join(nodes, "+")
	if len(devices) == 0 {
		return s
	}
	ds := make([]string, len(devices))
	for i, d := range devices {
		if len(nodes) == 1 {
			d = strings.TrimPrefix(d, nodes[0]+"/")
		}
		ds[i] = d
	}
	return s + "[" + strings.Join(ds, ",") + "]"
}

// DeviceRef names one device domain of one node as Placement.Devices does.
func DeviceRef(node, domain string) string { return node + "/" + domain }

// On reports whether the placement is on exactly these nodes and devices
// (in any order).
func (p Placement) On(nodes, devices []string) bool {
	return SameSet(p.Nodes, nodes) && SameSet(p.Devices, devices)
}

// SameSet reports whether a and b hold the same strings, in any order.
func SameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// Draw is memory a lane takes from one domain of one node.
type Draw struct {
	Node   string  `json:"node"`
	Domain string  `json:"domain"`
	Gb     float64 `json:"gb"`
}

// Performance is what a variant delivers. Zero means unknown.
type Performance struct {
	FirstTokenMs    float64 `json:"firstTokenMs"`
	TotalMs         float64 `json:"totalMs,omitempty"`
	DecodeTokPerSec float64 `json:"decodeTokPerSec,omitempty"`
	// Source: "metrics", "benchmark:<result id>", "default".
	Source string `json:"source"`
}

// Variant is one way to serve one or more models (models that share a
// runtime share one variant, and so one lane).
type Variant struct {
	ID      string      `json:"id"` // runtime id, or recipe:<recipe>/<runtime>
	Kind    VariantKind `json:"kind"`
	Runtime string      `json:"runtime,omitempty"`
	Models  []string    `json:"models"`
	// Forwarded are the models among Models that reach this lane through
	// a peer's gateway (federated proxy models), each with that peer:
	// other names of the same lane.
	Forwarded map[string]string `json:"forwarded,omitempty"`
	Req       Requirements      `json:"requirements"`

	MemoryGb       float64 `json:"memoryGb"` // per node
	MemorySource   string  `json:"memorySource"`
	DeviceMemoryGb float64 `json:"deviceMemoryGb,omitempty"`

	// Placements are the candidate placements, before eligibility.
	// Fixed variants (managed, unmanaged, federated) have exactly one.
	Placements []Placement `json:"placements"`

	Perf       Performance `json:"performance"`
	LoadTimeMs float64     `json:"loadTimeMs"`
	Priority   int         `json:"priority,omitempty"`
	// DefaultResidency is what the config says today (keepWarm,
	// preferredWarm, or neither).
	DefaultResidency Residency `json:"defaultResidency"`
}

// Actionable reports whether the pool can start and stop the lane itself.
// Unmanaged and federated lanes only get manual actions.
func (v *Variant) Actionable() bool { return v.Kind == Managed || v.Kind == Recipe }

// FixedResidency reports the residency the planner may not change, if any:
// lanes the pool does not manage hold their memory as long as they run.
func (v *Variant) FixedResidency() (Residency, bool) {
	if v.Kind == Unmanaged || v.Kind == Federated {
		return Always, true
	}
	return "", false
}

// Model is what a client asks for by id.
type Model struct {
	ID       string   `json:"id"`
	Kind     string   `json:"kind"`
	External bool     `json:"external,omitempty"` // cloud: no lane, always reachable
	Variants []string `json:"variants,omitempty"` // variant ids that serve it
	// DirectDemand is requests for the model by its own id (not through
	// an alias) in the demand window.
	DirectDemand float64 `json:"directDemand,omitempty"`
	// Required models must stay covered (level 1) even without demand:
	// config defaults name them, or the policy says so.
	Required bool `json:"required,omitempty"`
	// Perf is the external model's performance; local models take theirs
	// from the variant.
	Perf Performance `json:"performance,omitempty"`
}

// IsDemandSource reports whether the model's own id is a demand source,
// routed like an alias of one member: it is requested directly, or it must
// stay covered without demand. Its source name is DirectSource(m.ID).
func (m *Model) IsDemandSource() bool { return m.DirectDemand > 0 || m.Required }

// Alias is a name clients call with an ordered member list.
type Alias struct {
	ID string `json:"id"`
	// Members are model ids in order, nested aliases expanded and
	// suspended members removed.
	Members  []string `json:"members"`
	Optional []string `json:"optional,omitempty"`
	// Unread are the members the config names that the release's reading
	// never routes to (0.2.3: the fallbacks), in order.
	Unread       []string `json:"unread,omitempty"`
	Routes       []Route  `json:"routes,omitempty"`
	ActiveRoute  string   `json:"activeRoute,omitempty"`
	Demand       float64  `json:"demand"`
	DemandSource string   `json:"demandSource,omitempty"`
	SLO          *SLO     `json:"slo,omitempty"`
}

// Route is a named member list (a route profile), expanded like Members.
type Route struct {
	Name    string   `json:"name"`
	Members []string `json:"members"`
}

// Candidates returns every model that may serve the alias first, in a
// stable order: the members, then members of the route profiles.
func (a *Alias) Candidates() []string {
	seen := map[string]bool{}
	var out []string
	add := func(ms []string) {
		for _, m := range ms {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	add(a.Members)
	for _, r := range a.Routes {
		add(r.Members)
	}
	return out
}

// SLO bounds an alias's latency. Zero fields are unset.
type SLO struct {
	FirstTokenMs float64 `json:"firstTokenMs,omitempty"`
	TotalMs      float64 `json:"totalMs,omitempty"`
}

// PinSource names where a pin came from, for explanations.
type PinSource string

const (
	PinKeepWarm PinSource = "keepWarm"  // residency always
	PinPolicy   PinSource = "pool.pins" // pool.toml / config pool.pins
	PinFlag     PinSource = "--pin"
	PinProfile  PinSource = "--profile"
)

// Pin is a fixed decision. A lane pin says the variant runs (on Nodes, if
// given) and, if Residency is set, with that residency. A route pin says
// alias Alias serves from the first available member of Route.
type Pin struct {
	Source    PinSource `json:"source"`
	Variant   string    `json:"variant,omitempty"`
	Nodes     []string  `json:"nodes,omitempty"`
	Residency Residency `json:"residency,omitempty"`
	Alias     string    `json:"alias,omitempty"`
	RouteName string    `json:"routeName,omitempty"`
	Route     []string  `json:"route,omitempty"`
	// Label is the pin as the operator wrote it, for messages.
	Label string `json:"label"`
}

// Current is what runs now.
type Current struct {
	Lanes  []CurrentLane  `json:"lanes"`
	Routes []CurrentRoute `json:"routes"`
	// NotRunning are configured lanes whose gateways say they do not
	// serve (idle, stopped, unhealthy): a plan that keeps one starts it,
	// and none is stopped.
	NotRunning []CurrentLane `json:"notRunning,omitempty"`
}

// CurrentLane is a variant running now.
type CurrentLane struct {
	Variant string   `json:"variant"`
	Nodes   []string `json:"nodes"`
	// Devices are the lane's device choice, as Placement.Devices.
	Devices   []string  `json:"devices,omitempty"`
	Residency Residency `json:"residency"`
	// Status is what the node status rows say ("external, healthy",
	// "running, unhealthy"), LaneDeclared when no row says anything, or
	// LaneUnknown.
	Status string `json:"status,omitempty"`
}

// LaneDeclared is the status of a lane only the config shows: no node
// status row says whether it runs, so it counts as running, as the
// config declares, but proves nothing about the nodes it spans.
const LaneDeclared = "declared"

// LaneUnknown is the status of a lane on a node that could not be asked,
// when no reason is known; UnknownLane words it with the node and reason.
// Whether such a lane runs is not known, so a plan neither stops it nor
// asks the operator to.
const LaneUnknown = "unknown (node unreachable)"

// UnknownLane is the status of a lane whose node could not be read:
// "unknown (not read: spark-node-02: asked directly: no answer within 2s)".
func UnknownLane(node, reason string) string {
	if node == "" {
		return LaneUnknown
	}
	if reason == "" {
		reason = "unreachable"
	}
	return "unknown (not read: " + node + ": " + reason + ")"
}

// IsLaneUnknown reports whether status is one UnknownLane or LaneUnknown
// gives.
func IsLaneUnknown(status string) bool {
	return status == LaneUnknown || strings.HasPrefix(status, "unknown (not read: ")
}

// CurrentRoute is an alias's route now: the model it serves first.
type CurrentRoute struct {
	Alias   string `json:"alias"`
	Primary string `json:"primary"`
	Route   string `json:"route,omitempty"` // activeRoute name, if any
}

// Settings weigh the objective and bound the search.
type Settings struct {
	HeadroomGb float64 `json:"headroomGb"`
	// ColdFraction is the share of an alias's requests that meet a cold
	// lane, per residency; those requests pay the lane's load time.
	ColdFractionAuto      float64 `json:"coldFractionAuto"`
	ColdFractionPreferred float64 `json:"coldFractionPreferred"`
	// ChurnWeight multiplies the load time of lanes started or moved.
	ChurnWeight float64 `json:"churnWeight"`
	// HysteresisMs is charged once for every change from the current
	// state (lane started, stopped, moved, residency changed, alias
	// re-routed), so a change must pay for itself.
	HysteresisMs float64 `json:"hysteresisMs"`
	// LatencyUnitMs is the resolution of level 4: costs are counted in
	// whole units of this many request-milliseconds.
	LatencyUnitMs float64 `json:"latencyUnitMs"`
	// DefaultFirstTokenMs is assumed for lanes without metrics or
	// benchmarks; ExternalFirstTokenMs for external models without
	// metrics.
	DefaultFirstTokenMs  float64 `json:"defaultFirstTokenMs"`
	ExternalFirstTokenMs float64 `json:"externalFirstTokenMs"`
	// ExternalAllowed false forbids serving any alias first from an
	// external model.
	ExternalAllowed bool `json:"externalAllowed"`
}

// DefaultSettings are the documented defaults (docs/policy.md).
func DefaultSettings() Settings {
	return Settings{
		HeadroomGb:            4,
		ColdFractionAuto:      0.25,
		ColdFractionPreferred: 0.02,
		ChurnWeight:           1,
		HysteresisMs:          30000,
		LatencyUnitMs:         1000,
		DefaultFirstTokenMs:   1000,
		ExternalFirstTokenMs:  1500,
		ExternalAllowed:       true,
	}
}

// Lookups for a Pool. They index by ID; call Index once after building.

// PoolIndex maps IDs to positions in a Pool.
type PoolIndex struct {
	Node    map[string]int
	Variant map[string]int
	Model   map[string]int
	Alias   map[string]int
	linked  map[[2]string]bool
}

// Index builds the lookups of p.
func (p *Pool) Index() *PoolIndex {
	ix := &PoolIndex{
		Node:    map[string]int{},
		Variant: map[string]int{},
		Model:   map[string]int{},
		Alias:   map[string]int{},
		linked:  map[[2]string]bool{},
	}
	for i, n := range p.Nodes {
		ix.Node[n.ID] = i
	}
	for i, v := range p.Variants {
		ix.Variant[v.ID] = i
	}
	for i, m := range p.Models {
		ix.Model[m.ID] = i
	}
	for i, a := range p.Aliases {
		ix.Alias[a.ID] = i
	}
	for _, l := range p.Links {
		ix.linked[[2]string{l.A, l.B}] = true
		ix.linked[[2]string{l.B, l.A}] = true
	}
	return ix
}

// Linked reports whether a direct link joins nodes a and b.
func (ix *PoolIndex) Linked(a, b string) bool { return ix.linked[[2]string{a, b}] }

// Clique reports whether every pair of nodes is linked.
func (ix *PoolIndex) Clique(nodes []string) bool {
	for i := range nodes {
		for j := i + 1; j < len(nodes); j++ {
			if !ix.Linked(nodes[i], nodes[j]) {
				return false
			}
		}
	}
	return true
}

// Sort puts every slice of p in ID order; builders call it last.
func (p *Pool) Sort() {
	sort.Slice(p.Nodes, func(i, j int) bool { return p.Nodes[i].ID < p.Nodes[j].ID })
	sort.Slice(p.Variants, func(i, j int) bool { return p.Variants[i].ID < p.Variants[j].ID })
	sort.Slice(p.Models, func(i, j int) bool { return p.Models[i].ID < p.Models[j].ID })
	sort.Slice(p.Aliases, func(i, j int) bool { return p.Aliases[i].ID < p.Aliases[j].ID })
	sort.Slice(p.Links, func(i, j int) bool {
		if p.Links[i].A != p.Links[j].A {
			return p.Links[i].A < p.Links[j].A
		}
		return p.Links[i].B < p.Links[j].B
	})
	sort.Slice(p.Current.Lanes, func(i, j int) bool { return p.Current.Lanes[i].Variant < p.Current.Lanes[j].Variant })
	sort.Slice(p.Current.Routes, func(i, j int) bool { return p.Current.Routes[i].Alias < p.Current.Routes[j].Alias })
}

// MissingLinks lists the pairs of nodes that no direct link joins, as
// "a<->b", in the nodes' order.
func (ix *PoolIndex) MissingLinks(nodes []string) []string {
	var out []string
	for i := range nodes {
		for j := i + 1; j < len(nodes); j++ {
			if !ix.Linked(nodes[i], nodes[j]) {
				out = append(out, nodes[i]+"<->"+nodes[j])
			}
		}
	}
	return out
}

// EveryNodeAvailable is a shallow copy of p whose nodes are all available
// (none cordoned or unreachable): what a placement would need if a cordon
// were lifted, so that a cordon can be named as the only thing in a lane's
// way.
func (p *Pool) EveryNodeAvailable() *Pool {
	q := *p
	q.Nodes = slices.Clone(p.Nodes)
	for i := range q.Nodes {
		q.Nodes[i].Unavailable = ""
	}
	return &q
}
