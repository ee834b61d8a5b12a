package lloom

import (
	"encoding/json"
	"reflect"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// Config is the part of LLooM's config.json that poolsolve reads. Other keys
// (server, security, logging, community, clientCatalog, ...) are ignored.
//
// ParseConfig keeps the file as written apart from LLooM's own load-time
// rewrites of legacy spellings (alias target/fallbacks, runtime
// managed:false and evictable:false, model kind defaulting to chat).
// `${ENV}` placeholders are kept verbatim and never expanded. Federated
// models are not materialised; call MaterializeFederated for that.
type Config struct {
	// File is the name ParseConfig was given; Validate reports it.
	File string `json:"-"`
	// Typos are the keys LLooM ignores that are one edit from one it
	// reads ("cluser", "memoryGB"): warnings, since LLooM starts anyway.
	Typos Problems `json:"-"`

	Cluster       Cluster            `json:"cluster"`
	Runtimes      map[string]Runtime `json:"runtimes,omitempty"`
	Backends      map[string]Backend `json:"backends,omitempty"`
	Models        []Model            `json:"models,omitempty"`
	Aliases       map[string]Alias   `json:"aliases,omitempty"`
	RuntimePolicy *RuntimePolicy     `json:"runtimePolicy,omitempty"`
	Fleet         *Fleet             `json:"fleet,omitempty"`
	Defaults      map[string]string  `json:"defaults,omitempty"`
}

// Cluster is the `cluster` block.
type Cluster struct {
	ID            string                 `json:"id,omitempty"`
	NodeID        string                 `json:"nodeId,omitempty"`
	LeaderNode    string                 `json:"leaderNode,omitempty"`
	APIKeyEnv     string                 `json:"apiKeyEnv,omitempty"`
	FleetHeadNode string                 `json:"fleetHeadNode,omitempty"`
	Provider      string                 `json:"provider,omitempty"`
	Topology      string                 `json:"topology,omitempty"`
	Discovery     *Discovery             `json:"discovery,omitempty"`
	Nodes         map[string]ClusterNode `json:"nodes,omitempty"`
}

// Discovery is `cluster.discovery`, what NVIDIA Sync discovery observed from
// the local node. Links are only what that node saw; they do not prove a
// complete ring.
type Discovery struct {
	Provider string                    `json:"provider,omitempty"`
	Evidence string                    `json:"evidence,omitempty"`
	Verified *bool                     `json:"verified,omitempty"`
	Links    []Link                    `json:"links,omitempty"`
	Nodes    map[string]DiscoveredNode `json:"nodes,omitempty"`
}

// Link is one observed fabric link between two nodes.
type Link struct {
	NodeID         string `json:"nodeId,omitempty"`
	PeerNodeID     string `json:"peerNodeId,omitempty"`
	LocalInterface string `json:"localInterface,omitempty"`
	LocalAddress   string `json:"localAddress,omitempty"`
	PeerAddress    string `json:"peerAddress,omitempty"`
	Prefixlen      *int   `json:"prefixlen,omitempty"`
}

// DiscoveredNode is one entry of `cluster.discovery.nodes`; peers that are
// not yet configured stay here until `cluster add-node`.
type DiscoveredNode struct {
	ID              string `json:"id,omitempty"`
	Local           bool   `json:"local,omitempty"`
	BackendHost     string `json:"backendHost,omitempty"`
	FabricInterface string `json:"fabricInterface,omitempty"`
	SSHAlias        string `json:"sshAlias,omitempty"`
	SSHUser         string `json:"sshUser,omitempty"`
	Rails           []Rail `json:"rails,omitempty"`
}

// Rail is one fabric interface pair towards a discovered peer.
type Rail struct {
	Interface      string `json:"interface,omitempty"`
	LocalInterface string `json:"localInterface,omitempty"`
	LocalAddress   string `json:"localAddress,omitempty"`
	PeerAddress    string `json:"peerAddress,omitempty"`
	Prefixlen      *int   `json:"prefixlen,omitempty"`
}

// ClusterNode is one entry of `cluster.nodes`. A node's own `apiKey` is not
// read: poolsolve never needs a credential value.
type ClusterNode struct {
	Name            string            `json:"name,omitempty"`
	Endpoint        string            `json:"endpoint,omitempty"`
	BackendHost     string            `json:"backendHost,omitempty"`
	FabricAddress   string            `json:"fabricAddress,omitempty"`
	FabricInterface string            `json:"fabricInterface,omitempty"`
	APIKeyEnv       string            `json:"apiKeyEnv,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
	Resources       NodeResources     `json:"resources"`
	Proxy           *Proxy            `json:"proxy,omitempty"`
}

// NodeResources are a node's declared capacity and per-node admission
// overrides (lloom-domain.md §6). Nil means "not set", which differs from 0.
type NodeResources struct {
	MemoryGb             *float64 `json:"memoryGb,omitempty"`
	Accelerators         []string `json:"accelerators,omitempty"`
	MaxMemoryUtilization *float64 `json:"maxMemoryUtilization,omitempty"`
	ReserveMemoryGb      *float64 `json:"reserveMemoryGb,omitempty"`
	MemoryBudgetGb       *float64 `json:"memoryBudgetGb,omitempty"`
	AvailableMemoryGb    *float64 `json:"availableMemoryGb,omitempty"`
	GPUMemoryGb          *float64 `json:"gpuMemoryGb,omitempty"`
}

// Proxy is a node's `proxy` block: the models another LLooM gateway serves
// and this one routes to (federation, lloom-domain.md §12).
type Proxy struct {
	Enabled   *bool        `json:"enabled,omitempty"`
	Namespace *Namespace   `json:"namespace,omitempty"`
	Backend   string       `json:"backend,omitempty"`
	BaseURL   string       `json:"baseUrl,omitempty"`
	TimeoutMs *float64     `json:"timeoutMs,omitempty"`
	Models    []ProxyModel `json:"models,omitempty"`
}

// Namespace is `proxy.namespace`: a prefix for federated model ids, or
// false (Bare) for bare ids. A nil *Namespace means the node id.
type Namespace struct {
	Name string
	Bare bool
}

func (n *Namespace) decodeJSON(d *decoder, v *jsonpos.Value, path string) {
	switch {
	case v.Kind == jsonpos.String:
		*n = Namespace{Name: v.Text}
	case v.Kind == jsonpos.Bool && !v.Bool:
		*n = Namespace{Bare: true}
	default:
		d.expected(v, path, "a string or false")
	}
}

// MarshalJSON writes a Bare namespace back as false.
func (n Namespace) MarshalJSON() ([]byte, error) {
	if n.Bare {
		return []byte("false"), nil
	}
	return json.Marshal(n.Name)
}

// ProxyModel is one model a federated node advertises. LLooM also accepts a
// bare string, read as {"id": string}.
type ProxyModel struct {
	ID              string   `json:"id,omitempty"`
	Model           string   `json:"model,omitempty"`
	As              string   `json:"as,omitempty"`
	TargetID        string   `json:"targetId,omitempty"`
	Weight          *float64 `json:"weight,omitempty"`
	Kind            string   `json:"kind,omitempty"`
	RemoteRuntime   string   `json:"remoteRuntime,omitempty"`
	Name            string   `json:"name,omitempty"`
	ContextWindow   *int     `json:"contextWindow,omitempty"`
	MaxOutputTokens *int     `json:"maxOutputTokens,omitempty"`
}

type proxyModelFields ProxyModel

func (m *ProxyModel) decodeJSON(d *decoder, v *jsonpos.Value, path string) {
	if v.Kind == jsonpos.String {
		*m = ProxyModel{ID: v.Text}
		return
	}
	d.decodeStruct(v, path, reflect.ValueOf((*proxyModelFields)(m)).Elem())
}

// Management values.
const (
	Managed  = "managed"
	External = "external"
)

// Placement modes.
const (
	ModeLocal       = "local"
	ModePinned      = "pinned"
	ModeReplicated  = "replicated"
	ModeDistributed = "distributed"
)

// Runtime is one entry of `runtimes`: one serving process or container, a
// "lane" (lloom-domain.md §3).
type Runtime struct {
	Enabled bool   `json:"enabled,omitempty"`
	Adapter string `json:"adapter,omitempty"`
	// Management is "managed" or "external"; empty means managed. The legacy
	// `managed: false` is rewritten to "external".
	Management string `json:"management,omitempty"`
	// Managed is the legacy spelling of Management, kept as read.
	Managed *bool `json:"managed,omitempty"`

	Command          string     `json:"command,omitempty"`
	Args             []string   `json:"args,omitempty"`
	Env              Env        `json:"env,omitempty"`
	Port             *int       `json:"port,omitempty"`
	HealthURL        string     `json:"healthUrl,omitempty"`
	StartupTimeoutMs *float64   `json:"startupTimeoutMs,omitempty"`
	ContainerName    string     `json:"containerName,omitempty"`
	Bootstrap        *Bootstrap `json:"bootstrap,omitempty"`

	MaxConcurrency    *int              `json:"maxConcurrency,omitempty"`
	MemoryGb          *float64          `json:"memoryGb,omitempty"`
	GPUMemoryGb       *float64          `json:"gpuMemoryGb,omitempty"`
	Resources         *MemoryResources  `json:"resources,omitempty"`
	ResourceEstimate  *ResourceEstimate `json:"resourceEstimate,omitempty"`
	EstimatedMemoryGb *float64          `json:"estimatedMemoryGb,omitempty"`

	// KeepWarm is residency "always". The legacy `evictable: false` (on the
	// runtime or in policy) also sets it, as LLooM does at load.
	KeepWarm      bool            `json:"keepWarm,omitempty"`
	PreferredWarm bool            `json:"preferredWarm,omitempty"`
	Policy        *EvictionPolicy `json:"policy,omitempty"`
	Priority      *float64        `json:"priority,omitempty"`
	Evictable     *bool           `json:"evictable,omitempty"`

	Recipe      *RecipeRef   `json:"recipe,omitempty"`
	Node        string       `json:"node,omitempty"`
	Placement   *Placement   `json:"placement,omitempty"`
	Maintenance *Maintenance `json:"maintenance,omitempty"`
}

func (r *Runtime) normalize() {
	if r.Management == "" && r.Managed != nil && !*r.Managed {
		r.Management = External
	}
	if r.Evictable != nil && !*r.Evictable || r.Policy != nil && r.Policy.Evictable != nil && !*r.Policy.Evictable {
		r.KeepWarm = true
	}
}

// IsExternal reports whether LLooM only adopts and monitors the runtime and
// never starts or stops it.
func (r Runtime) IsExternal() bool { return r.Management == External }

// EvictionPolicy is a runtime's `policy` block: its eviction priority and
// the legacy evictable flag.
type EvictionPolicy struct {
	Priority  *float64 `json:"priority,omitempty"`
	Evictable *bool    `json:"evictable,omitempty"`
}

// MemoryResources is a `resources` block of a runtime or placement member.
type MemoryResources struct {
	MemoryGb    *float64 `json:"memoryGb,omitempty"`
	GPUMemoryGb *float64 `json:"gpuMemoryGb,omitempty"`
}

// ResourceEstimate is a runtime's or recipe's `resourceEstimate`.
type ResourceEstimate struct {
	MemoryGb      *float64         `json:"memoryGb,omitempty"`
	ReserveGb     *float64         `json:"reserveGb,omitempty"`
	ContextWindow *int             `json:"contextWindow,omitempty"`
	Source        string           `json:"source,omitempty"`
	Confidence    string           `json:"confidence,omitempty"`
	Domains       []EstimateDomain `json:"domains,omitempty"`
}

// EstimateDomain is one memory-domain requirement of a resource estimate.
type EstimateDomain struct {
	ID       string   `json:"id,omitempty"`
	Kind     string   `json:"kind,omitempty"`
	Backend  string   `json:"backend,omitempty"`
	MemoryGb *float64 `json:"memoryGb,omitempty"`
	// RequiredGb is read before MemoryGb, as LLooM does.
	RequiredGb *float64 `json:"requiredGb,omitempty"`
	DeviceIDs  []string `json:"deviceIds,omitempty"`
	// Name and Type stand in for an absent ID and Kind, as in LLooM.
	Name string `json:"name,omitempty"`
	Type string `json:"type,omitempty"`
}

// RecipeRef names the recipe a runtime was materialised from.
type RecipeRef struct {
	ID      string  `json:"id,omitempty"`
	Version Version `json:"version,omitempty"`
	Source  string  `json:"source,omitempty"`
}

// Bootstrap is a Docker launch: `docker create <createArgs> <image> <command>`.
type Bootstrap struct {
	Adapter    string   `json:"adapter,omitempty"`
	Image      string   `json:"image,omitempty"`
	CreateArgs []string `json:"createArgs,omitempty"`
	Command    []string `json:"command,omitempty"`
}

// Placement is a runtime's `placement` block as written.
type Placement struct {
	Mode    string            `json:"mode,omitempty"`
	Node    string            `json:"node,omitempty"`
	Nodes   []string          `json:"nodes,omitempty"`
	Members []PlacementMember `json:"members,omitempty"`
}

// PlacementMember is one member of a distributed runtime: an ordinary
// runtime pinned to a node.
type PlacementMember struct {
	Node      string           `json:"node,omitempty"`
	Runtime   string           `json:"runtime,omitempty"`
	Role      string           `json:"role,omitempty"`
	Order     *int             `json:"order,omitempty"`
	Resources *MemoryResources `json:"resources,omitempty"`
}

// Maintenance is a runtime's maintenance record.
type Maintenance struct {
	State          string `json:"state,omitempty"`
	RequestedModel string `json:"requestedModel,omitempty"`
	Since          string `json:"since,omitempty"`
	OperationID    string `json:"operationId,omitempty"`
}

// Backend is one entry of `backends`: an OpenAI-compatible upstream.
// BaseURL, APIKey and HealthURL must not reach poolsolve's output; see
// Config.Redacted.
type Backend struct {
	Type      string   `json:"type,omitempty"`
	BaseURL   string   `json:"baseUrl,omitempty"`
	APIKey    string   `json:"apiKey,omitempty"`
	APIKeyEnv string   `json:"apiKeyEnv,omitempty"`
	TimeoutMs *float64 `json:"timeoutMs,omitempty"`
	HealthURL string   `json:"healthUrl,omitempty"`
}

// Model is one entry of `models` (also used for the models a node reports).
type Model struct {
	ID              string   `json:"id,omitempty"`
	Name            string   `json:"name,omitempty"`
	Kind            string   `json:"kind,omitempty"`
	Backend         string   `json:"backend,omitempty"`
	Runtime         string   `json:"runtime,omitempty"`
	Targets         []Target `json:"targets,omitempty"`
	UpstreamModel   string   `json:"upstreamModel,omitempty"`
	ContextWindow   *int     `json:"contextWindow,omitempty"`
	MaxOutputTokens *int     `json:"maxOutputTokens,omitempty"`
	Tags            []string `json:"tags,omitempty"`
	Federated       bool     `json:"federated,omitempty"`
	Advertise       *bool    `json:"advertise,omitempty"`
	// Pool is poolsolve's extension block (docs/lloom-inputs.md); LLooM
	// ignores it.
	Pool *ModelPool `json:"pool,omitempty"`
}

// KindChat is the model kind LLooM assumes when `kind` is absent.
const KindChat = "chat"

func (m *Model) normalize() {
	if m.Kind == "" {
		m.Kind = KindChat
	}
}

// Target is one entry of a model's `targets`, as written. See ModelTargets
// for the normalised form.
type Target struct {
	ID            string   `json:"id,omitempty"`
	Node          string   `json:"node,omitempty"`
	Backend       string   `json:"backend,omitempty"`
	Runtime       string   `json:"runtime,omitempty"`
	RemoteRuntime string   `json:"remoteRuntime,omitempty"`
	UpstreamModel string   `json:"upstreamModel,omitempty"`
	Weight        *float64 `json:"weight,omitempty"`
}

// ModelPool is the `pool` block poolsolve adds to a model. It declares a
// lane LLooM does not launch itself (for example a tensor-parallel server
// started by hand), so the planner knows its shape.
type ModelPool struct {
	Nodes           []string `json:"nodes,omitempty"`
	TensorParallel  *int     `json:"tensorParallel,omitempty"`
	ComputeArchs    []string `json:"computeArchs,omitempty"`
	Platforms       []string `json:"platforms,omitempty"`
	Accelerators    []string `json:"accelerators,omitempty"`
	MemoryGbPerNode *float64 `json:"memoryGbPerNode,omitempty"`
	MaxSequences    *int     `json:"maxSequences,omitempty"`
	LoadTimeMs      *float64 `json:"loadTimeMs,omitempty"`
	Management      string   `json:"management,omitempty"`
}

// Alias is one entry of `aliases`, always in the members form: the legacy
// `target` + `fallbacks` + `optionalFallbacks` (also inside route profiles)
// is rewritten on read, as LLooM does at load.
type Alias struct {
	Members          []string                `json:"members,omitempty"`
	OptionalMembers  []string                `json:"optionalMembers,omitempty"`
	SuspendedMembers []string                `json:"suspendedMembers,omitempty"`
	RouteProfiles    map[string]RouteProfile `json:"routeProfiles,omitempty"`
	ActiveRoute      string                  `json:"activeRoute,omitempty"`
	Strategy         string                  `json:"strategy,omitempty"`
	// PerformanceMetric is "completion" or "first-token" for strategy "fastest".
	PerformanceMetric string `json:"performanceMetric,omitempty"`
	Advertise         *bool  `json:"advertise,omitempty"`
	Description       string `json:"description,omitempty"`
	// Direct is set when the alias was written as a bare id string; its only
	// member is that id.
	Direct bool `json:"-"`
	// Target is the alias's `target` as written (a bare id string is one):
	// all that LLooM 0.2.3 routes by. Empty for the members form. It is
	// written back next to members, which later releases read instead.
	Target string `json:"target,omitempty"`
}

// RouteProfile is a named alternative member list of an alias.
type RouteProfile struct {
	Members         []string `json:"members,omitempty"`
	OptionalMembers []string `json:"optionalMembers,omitempty"`
}

// memberSet is what LLooM's normalizeMemberSet reads: the members form and
// the legacy form side by side.
type memberSet struct {
	Members           *[]string `json:"members"`
	OptionalMembers   *[]string `json:"optionalMembers"`
	Target            string    `json:"target"`
	Fallbacks         []string  `json:"fallbacks"`
	OptionalFallbacks *[]string `json:"optionalFallbacks"`
}

func (s memberSet) members() (members, optional []string) {
	if s.Members != nil {
		members = *s.Members
	} else {
		for _, m := range append([]string{s.Target}, s.Fallbacks...) {
			if m != "" {
				members = append(members, m)
			}
		}
	}
	switch {
	case s.OptionalMembers != nil:
		optional = *s.OptionalMembers
	case s.OptionalFallbacks != nil:
		optional = *s.OptionalFallbacks
	}
	return members, optional
}

type aliasWire struct {
	SuspendedMembers  []string                `json:"suspendedMembers"`
	RouteProfiles     map[string]RouteProfile `json:"routeProfiles"`
	ActiveRoute       string                  `json:"activeRoute"`
	Strategy          string                  `json:"strategy"`
	PerformanceMetric string                  `json:"performanceMetric"`
	Advertise         *bool                   `json:"advertise"`
	Description       string                  `json:"description"`
}

func (a *Alias) decodeJSON(d *decoder, v *jsonpos.Value, path string) {
	switch v.Kind {
	case jsonpos.String:
		*a = Alias{Members: []string{v.Text}, Direct: true, Target: v.Text}
	case jsonpos.Object:
		var set memberSet
		d.decodeStruct(v, path, reflect.ValueOf(&set).Elem())
		var w aliasWire
		d.decodeStruct(v, path, reflect.ValueOf(&w).Elem())
		members, optional := set.members()
		*a = Alias{
			Members:           members,
			OptionalMembers:   optional,
			SuspendedMembers:  w.SuspendedMembers,
			RouteProfiles:     w.RouteProfiles,
			ActiveRoute:       w.ActiveRoute,
			Strategy:          w.Strategy,
			PerformanceMetric: w.PerformanceMetric,
			Advertise:         w.Advertise,
			Description:       w.Description,
			Target:            set.Target,
		}
	default:
		d.expected(v, path, "a model id or an alias object")
	}
}

// MarshalJSON writes a Direct alias back as its bare id.
func (a Alias) MarshalJSON() ([]byte, error) {
	if a.Direct && len(a.Members) == 1 {
		return json.Marshal(a.Members[0])
	}
	type plain Alias
	return json.Marshal(plain(a))
}

func (p *RouteProfile) decodeJSON(d *decoder, v *jsonpos.Value, path string) {
	var set memberSet
	d.decodeStruct(v, path, reflect.ValueOf(&set).Elem())
	p.Members, p.OptionalMembers = set.members()
}

// RuntimePolicy is the top-level `runtimePolicy` block (admission).
type RuntimePolicy struct {
	Enabled               *bool         `json:"enabled,omitempty"`
	AutoEvict             *bool         `json:"autoEvict,omitempty"`
	MaxMemoryUtilization  *float64      `json:"maxMemoryUtilization,omitempty"`
	ReserveMemoryGb       *float64      `json:"reserveMemoryGb,omitempty"`
	MemoryBudgetGb        *float64      `json:"memoryBudgetGb,omitempty"`
	ProtectActiveRequests *bool         `json:"protectActiveRequests,omitempty"`
	AdmissionWaitMs       *float64      `json:"admissionWaitMs,omitempty"`
	PreferredWarmIdleMs   *float64      `json:"preferredWarmIdleMs,omitempty"`
	MemorySafety          *MemorySafety `json:"memorySafety,omitempty"`
}

// MemorySafety is `runtimePolicy.memorySafety`, the live load guard.
type MemorySafety struct {
	Mode                 string   `json:"mode,omitempty"`
	MinAvailableMemoryGb *float64 `json:"minAvailableMemoryGb,omitempty"`
	MaxMemoryUtilization *float64 `json:"maxMemoryUtilization,omitempty"`
	PollIntervalMs       *float64 `json:"pollIntervalMs,omitempty"`
}

// Fleet is the `fleet` block; ActiveProfile names the fleet profile last
// applied.
type Fleet struct {
	ActiveProfile string `json:"activeProfile,omitempty"`
}

// ParseConfig reads a LLooM config.json. file names the input in errors.
func ParseConfig(data []byte, file string) (*Config, error) {
	cfg := &Config{}
	if _, err := decodeDocument(data, file, cfg); err != nil {
		return nil, err
	}
	cfg.File = file
	return cfg, nil
}

func (c *Config) keepTypos(p Problems) { c.Typos = p }

// LoadConfig reads and parses the config.json at path.
func LoadConfig(path string) (*Config, error) {
	data, err := readInput(path)
	if err != nil {
		return nil, err
	}
	return ParseConfig(data, path)
}
