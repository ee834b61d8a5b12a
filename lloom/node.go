package lloom

import (
	"encoding/json"
	"strings"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// NodeStatus is one node as `GET /gateway/node` reports it (the `node`
// object), and one entry of `/gateway/cluster`'s nodes. An unreachable
// node has Reachable false, Error set and no telemetry.
type NodeStatus struct {
	ID        string            `json:"id,omitempty"`
	Name      string            `json:"name,omitempty"`
	Local     bool              `json:"local,omitempty"`
	Reachable bool              `json:"reachable"`
	Error     Message           `json:"error,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	Resources NodeResources     `json:"resources"`
	System    *NodeSystem       `json:"system,omitempty"`
	Profile   *MachineProfile   `json:"profile,omitempty"`
	// Models are the models the node serves, in config form.
	Models         []Model        `json:"models,omitempty"`
	Telemetry      *Telemetry     `json:"telemetry,omitempty"`
	RuntimeManager RuntimeManager `json:"runtimeManager"`
	Identity       *NodeIdentity  `json:"identity,omitempty"`
	// Version is the LLooM release a gateway reports for itself, when it
	// does (0.2.3 does not); validate and plan check the config against it.
	Version string `json:"version,omitempty"`
	// Inventory is the node inventory of newer gateways (`?inventory=1`),
	// kept as written: package inventory defines its shape. Gateways that
	// predate it leave it empty.
	Inventory json.RawMessage `json:"inventory,omitempty"`

	// Set only in /gateway/cluster answers.
	RequiredByRuntime []string `json:"requiredByRuntime,omitempty"`
	Required          bool     `json:"required,omitempty"`
	// AvailabilityState is healthy, unavailable or optional-offline.
	AvailabilityState string `json:"availabilityState,omitempty"`
}

// NodeSystem is a node's operating-system facts.
type NodeSystem struct {
	Hostname      string   `json:"hostname,omitempty"`
	Platform      string   `json:"platform,omitempty"`
	Arch          string   `json:"arch,omitempty"`
	Release       string   `json:"release,omitempty"`
	UptimeSeconds *float64 `json:"uptimeSeconds,omitempty"`
}

// NodeIdentity is how the leader verified a remote node's claimed id.
type NodeIdentity struct {
	ConfiguredID string `json:"configuredId,omitempty"`
	ClaimedID    string `json:"claimedId,omitempty"`
	Verified     bool   `json:"verified"`
	Mismatch     bool   `json:"mismatch"`
}

// Telemetry is a node's live sample.
type Telemetry struct {
	SampledAt string           `json:"sampledAt,omitempty"`
	CPU       *CPUTelemetry    `json:"cpu,omitempty"`
	Memory    *MemoryTelemetry `json:"memory,omitempty"`
	// GPU is nil on hosts without NVIDIA GPUs.
	GPU *GPUTelemetry `json:"gpu,omitempty"`
}

// CPUTelemetry is the CPU part of a telemetry sample.
type CPUTelemetry struct {
	Utilization *float64 `json:"utilization,omitempty"`
	LogicalCpus *int     `json:"logicalCpus,omitempty"`
	Model       string   `json:"model,omitempty"`
}

// MemoryTelemetry is host memory in bytes. Source is linux-memavailable,
// macos-memory-pressure or os-freemem.
type MemoryTelemetry struct {
	UsedBytes           *int64   `json:"usedBytes,omitempty"`
	FreeBytes           *int64   `json:"freeBytes,omitempty"`
	AvailableBytes      *int64   `json:"availableBytes,omitempty"`
	TotalBytes          *int64   `json:"totalBytes,omitempty"`
	Utilization         *float64 `json:"utilization,omitempty"`
	PressureUtilization *float64 `json:"pressureUtilization,omitempty"`
	Source              string   `json:"source,omitempty"`
}

// GPUTelemetry is nvidia-smi's view; memory figures are MiB and are null on
// GB10, whose GPU uses system memory.
type GPUTelemetry struct {
	Vendor        string      `json:"vendor,omitempty"`
	Backend       string      `json:"backend,omitempty"`
	Devices       []GPUDevice `json:"devices,omitempty"`
	Utilization   *float64    `json:"utilization,omitempty"`
	MemoryUsedMb  *float64    `json:"memoryUsedMb,omitempty"`
	MemoryTotalMb *float64    `json:"memoryTotalMb,omitempty"`
}

// GPUDevice is one GPU of a telemetry sample.
type GPUDevice struct {
	Index         *int     `json:"index,omitempty"`
	Name          string   `json:"name,omitempty"`
	Utilization   *float64 `json:"utilization,omitempty"`
	MemoryUsedMb  *float64 `json:"memoryUsedMb,omitempty"`
	MemoryTotalMb *float64 `json:"memoryTotalMb,omitempty"`
}

// RuntimeManager is a node's `runtimeManager` block.
type RuntimeManager struct {
	Runtimes map[string]RuntimeStatus `json:"runtimes,omitempty"`
}

// RuntimeStatus is one runtime row of a node's runtime manager.
//
// HealthURL is a backend URL. It is kept so nothing is lost on read, but
// poolsolve must never emit it: output goes through NodeStatus.Redacted.
type RuntimeStatus struct {
	Enabled        bool       `json:"enabled,omitempty"`
	KeepWarm       bool       `json:"keepWarm,omitempty"`
	PreferredWarm  bool       `json:"preferredWarm,omitempty"`
	MaxConcurrency *int       `json:"maxConcurrency,omitempty"`
	Adapter        string     `json:"adapter,omitempty"`
	Management     string     `json:"management,omitempty"`
	Node           string     `json:"node,omitempty"`
	Placement      *Placement `json:"placement,omitempty"`
	Recipe         *RecipeRef `json:"recipe,omitempty"`
	HealthURL      string     `json:"healthUrl,omitempty"`

	// Healthy is nil when the gateway does not know.
	Healthy *bool `json:"healthy,omitempty"`
	// Status is idle, queued, starting, warming, running, external,
	// draining, stopping, stopped, exited, missing, unknown or unreachable.
	Status                  string       `json:"status,omitempty"`
	ActiveRequests          *int         `json:"activeRequests,omitempty"`
	QueuedRequests          *int         `json:"queuedRequests,omitempty"`
	AdmissionQueuedRequests *int         `json:"admissionQueuedRequests,omitempty"`
	LastRequestedAt         string       `json:"lastRequestedAt,omitempty"`
	LastIdleAt              string       `json:"lastIdleAt,omitempty"`
	StatusSince             string       `json:"statusSince,omitempty"`
	StartedAt               string       `json:"startedAt,omitempty"`
	MemoryUsage             *MemoryUsage `json:"memoryUsage,omitempty"`

	Remote          bool                  `json:"remote,omitempty"`
	Distributed     bool                  `json:"distributed,omitempty"`
	Members         []MemberStatus        `json:"members,omitempty"`
	ResourcesByNode map[string]NodeMemory `json:"resourcesByNode,omitempty"`
}

// Loaded is LLooM's isRuntimeLoaded: healthy, or in a state that holds
// memory (running, external, starting, draining, stopping).
func (r RuntimeStatus) Loaded() bool {
	if r.Healthy != nil && *r.Healthy {
		return true
	}
	return oneOf(r.Status, "running", "external", "starting", "draining", "stopping")
}

// Serves reports whether the row says the runtime serves now. A row
// that reports health is believed: healthy serves; a process LLooM
// launched that is not yet healthy ("starting", "warming") holds its
// memory and is counted too. "running" or "external" with healthy false
// does not serve: 0.2.3 keeps "running" from the last start of an
// external runtime whose upstream has since gone, and answers 500. A row
// without a health field (an older gateway, an agent) is taken at its
// status word.
func (r RuntimeStatus) Serves() bool {
	switch {
	case r.Healthy != nil && *r.Healthy:
		return true
	case oneOf(r.Status, "starting", "warming"):
		return true
	case r.Healthy == nil:
		return oneOf(r.Status, "running", "external")
	}
	return false
}

// ShowsHealthy reports whether the row shows the runtime up and passing
// its health check, the only reading that proves a multi-node lane's
// nodes can reach each other.
func (r RuntimeStatus) ShowsHealthy() bool {
	if r.Healthy != nil {
		return *r.Healthy
	}
	return oneOf(r.Status, "running", "external")
}

// Reading is the row's status as an operator reads it: the status word
// and, when the row reports it, the health ("running, unhealthy").
func (r RuntimeStatus) Reading() string {
	health := ""
	if r.Healthy != nil {
		health = "unhealthy"
		if *r.Healthy {
			health = "healthy"
		}
	}
	switch {
	case r.Status == "":
		return health
	case health == "" || health == "unhealthy" && oneOf(r.Status, "idle", "stopped", "exited", "missing", "failed"):
		// These are never healthy: "idle, unhealthy" says nothing more.
		return r.Status
	}
	return r.Status + ", " + health
}

// MemoryUsage is a runtime's measured memory (`?memoryUsage=1`).
type MemoryUsage struct {
	ResidentBytes    *int64   `json:"residentBytes,omitempty"`
	Source           string   `json:"source,omitempty"` // process-footprint or process-rss
	SampledAt        string   `json:"sampledAt,omitempty"`
	GroupID          string   `json:"groupId,omitempty"`
	SharedRuntimeIDs []string `json:"sharedRuntimeIds,omitempty"`
	LoadedModelIDs   []string `json:"loadedModelIds,omitempty"`
	ResidencyKnown   *bool    `json:"residencyKnown,omitempty"`
}

// MemberStatus is one member row of a distributed runtime's status.
type MemberStatus struct {
	Node    string `json:"node,omitempty"`
	Runtime string `json:"runtime,omitempty"`
	Role    string `json:"role,omitempty"`
	Order   *int   `json:"order,omitempty"`
	Status  string `json:"status,omitempty"`
	Healthy *bool  `json:"healthy,omitempty"`
}

// ClusterStatus is `GET /gateway/cluster`'s `cluster` object.
type ClusterStatus struct {
	Enabled    bool                  `json:"enabled"`
	ID         string                `json:"id,omitempty"`
	NodeID     string                `json:"nodeId,omitempty"`
	LeaderNode string                `json:"leaderNode,omitempty"`
	Nodes      map[string]NodeStatus `json:"nodes,omitempty"`
}

// gatewayError recognises the error envelope {"error": {...}}. A node's own
// `error` is a string next to its id, so only an object, or a string with
// no document around it, counts.
func gatewayError(tree *jsonpos.Value, file string) *GatewayError {
	e := tree.Get("error")
	if e == nil {
		return nil
	}
	switch {
	case e.Kind == jsonpos.Object:
		g := &GatewayError{File: file}
		if v := e.Get("message"); v != nil && v.Kind == jsonpos.String {
			g.Message = v.Text
		}
		if v := e.Get("type"); v != nil && v.Kind == jsonpos.String {
			g.Type = v.Text
		}
		if v := e.Get("code"); v != nil && (v.Kind == jsonpos.String || v.Kind == jsonpos.Number) {
			g.Code = v.Text
		}
		return g
	case e.Kind == jsonpos.String && tree.Get("id") == nil && tree.Get("node") == nil && tree.Get("cluster") == nil:
		return &GatewayError{File: file, Message: e.Text}
	}
	return nil
}

// ParseNodeStatus reads a `/gateway/node` answer: the `{ok, node}` envelope
// or the bare node object. A top-level `inventory` next to `node` is kept
// when the node has none of its own. An error envelope comes back as a
// *GatewayError.
func ParseNodeStatus(data []byte, file string) (*NodeStatus, error) {
	tree, err := parseTree(data, file)
	if err != nil {
		return nil, err
	}
	if g := gatewayError(tree, file); g != nil {
		return nil, g
	}
	var env struct {
		Node      *NodeStatus     `json:"node"`
		Inventory json.RawMessage `json:"inventory"`
	}
	if n := tree.Get("node"); n != nil && n.Kind == jsonpos.Object {
		if err := decodeTree(tree, data, file, &env); err != nil {
			return nil, err
		}
		if len(env.Node.Inventory) == 0 {
			env.Node.Inventory = env.Inventory
		}
		return env.Node, nil
	}
	if tree.Kind != jsonpos.Object || tree.Get("id") == nil {
		return nil, &InputError{File: file, Path: jsonpos.Root, Msg: "not a /gateway/node answer: expected {\"node\": {...}} or a node object with an id"}
	}
	ns := &NodeStatus{}
	if err := decodeTree(tree, data, file, ns); err != nil {
		return nil, err
	}
	return ns, nil
}

// LoadNodeStatus reads and parses a saved `/gateway/node` answer.
func LoadNodeStatus(path string) (*NodeStatus, error) {
	data, err := readInput(path)
	if err != nil {
		return nil, err
	}
	return ParseNodeStatus(data, path)
}

// ParseClusterStatus reads a `/gateway/cluster` answer: the `{ok, cluster}`
// envelope or the bare cluster object. An error envelope comes back as a
// *GatewayError.
func ParseClusterStatus(data []byte, file string) (*ClusterStatus, error) {
	tree, err := parseTree(data, file)
	if err != nil {
		return nil, err
	}
	if g := gatewayError(tree, file); g != nil {
		return nil, g
	}
	if c := tree.Get("cluster"); c != nil && c.Kind == jsonpos.Object {
		var env struct {
			Cluster *ClusterStatus `json:"cluster"`
		}
		if err := decodeTree(tree, data, file, &env); err != nil {
			return nil, err
		}
		return env.Cluster, nil
	}
	if n := tree.Get("nodes"); n == nil || n.Kind != jsonpos.Object {
		return nil, &InputError{File: file, Path: jsonpos.Root, Msg: "not a /gateway/cluster answer: expected {\"cluster\": {...}} or a cluster object with nodes"}
	}
	cs := &ClusterStatus{}
	if err := decodeTree(tree, data, file, cs); err != nil {
		return nil, err
	}
	return cs, nil
}

// LoadClusterStatus reads and parses a saved `/gateway/cluster` answer.
func LoadClusterStatus(path string) (*ClusterStatus, error) {
	data, err := readInput(path)
	if err != nil {
		return nil, err
	}
	return ParseClusterStatus(data, path)
}

// PeerError words the error a LLooM cluster answer gives a peer it could
// not read: 0.2.3 aborts a peer's /gateway/node after 5 s ("This
// operation was aborted") and words a failed connection as undici does
// ("fetch failed"). Other messages, and those already worded, are kept.
func PeerError(msg string) string {
	switch strings.TrimSpace(msg) {
	case "":
		return "the gateway reports it unreachable"
	case "This operation was aborted", "The operation was aborted.", "This operation was aborted.":
		return "the gateway got no answer from it within its 5s"
	case "fetch failed":
		return "the gateway could not connect to it"
	}
	return msg
}
