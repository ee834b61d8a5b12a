package lloom

import (
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"
)

// This file restates the small pieces of LLooM's config semantics that
// poolsolve must agree with (src/cluster.mjs, src/runtime-policy.mjs,
// src/alias-resolution.mjs), so callers never re-derive them.

// ResolvedTarget is one normalised model target (LLooM's modelTargets).
type ResolvedTarget struct {
	ID            string
	Node          string // "" when the target is not bound to a node
	Backend       string
	Runtime       string
	RemoteRuntime string
	UpstreamModel string
	Weight        int // 1..100
}

// ModelTargets normalises a model's targets exactly as LLooM's
// modelTargets: each target gets an id (default "<node>-<i+1>", or
// "target-<i+1>" without a node), an upstream model (the target's, else the
// model's, else the model id) and a weight floor(w) clamped to 1..100.
// Without targets a model with a backend has one target "default"; a model
// with neither has none.
func ModelTargets(m Model) []ResolvedTarget {
	upstream := m.UpstreamModel
	if upstream == "" {
		upstream = m.ID
	}
	if len(m.Targets) == 0 {
		if m.Backend == "" {
			return nil
		}
		return []ResolvedTarget{{ID: "default", Backend: m.Backend, Runtime: m.Runtime, UpstreamModel: upstream, Weight: 1}}
	}
	out := make([]ResolvedTarget, len(m.Targets))
	for i, t := range m.Targets {
		r := ResolvedTarget{
			ID:            t.ID,
			Node:          t.Node,
			Backend:       t.Backend,
			Runtime:       t.Runtime,
			RemoteRuntime: t.RemoteRuntime,
			UpstreamModel: t.UpstreamModel,
			Weight:        targetWeight(t.Weight),
		}
		if r.ID == "" {
			node := t.Node
			if node == "" {
				node = "target"
			}
			r.ID = fmt.Sprintf("%s-%d", node, i+1)
		}
		if r.UpstreamModel == "" {
			r.UpstreamModel = upstream
		}
		out[i] = r
	}
	return out
}

// targetWeight is Math.min(100, Math.max(1, Math.floor(Number(w) || 1))).
func targetWeight(w *float64) int {
	if w == nil || *w == 0 || math.IsNaN(*w) {
		return 1
	}
	return int(math.Min(100, math.Max(1, math.Floor(*w))))
}

// External reports whether the model has no local lane: none of its targets
// names a runtime or a remote runtime (a cloud model, for example).
func (m Model) External() bool {
	for _, t := range ModelTargets(m) {
		if t.Runtime != "" || t.RemoteRuntime != "" {
			return false
		}
	}
	return true
}

// ResolvedPlacement is where a runtime runs (LLooM's runtimePlacement).
type ResolvedPlacement struct {
	Mode string // local, pinned, replicated or distributed (or whatever the file says)
	// Node is the host of a non-distributed runtime; "" if it is local and
	// the current node is unknown.
	Node string
	// Nodes are the distinct nodes the runtime occupies.
	Nodes []string
	// Members are the distributed members in file order. A non-distributed
	// runtime has one member: itself on Node, role "runtime", order 0.
	Members []ResolvedMember
}

// ResolvedMember is one member of a placement.
type ResolvedMember struct {
	Node        string
	Runtime     string
	Role        string // default "worker"
	Order       int    // default: the member's index
	MemoryGb    *float64
	GPUMemoryGb *float64
}

// RuntimePlacement resolves a runtime's placement: mode is placement.mode,
// else "pinned" when the runtime has a node, else "local". A distributed
// runtime occupies its members' nodes; any other runtime runs on
// runtime.node, else placement.node, else currentNodeID. id is the
// runtime's own id.
func RuntimePlacement(rt Runtime, id, currentNodeID string) ResolvedPlacement {
	var pl Placement
	if rt.Placement != nil {
		pl = *rt.Placement
	}
	mode := pl.Mode
	if mode == "" {
		mode = ModeLocal
		if rt.Node != "" {
			mode = ModePinned
		}
	}
	if mode == ModeDistributed {
		out := ResolvedPlacement{Mode: mode}
		for i, m := range pl.Members {
			rm := ResolvedMember{Node: m.Node, Runtime: m.Runtime, Role: m.Role, Order: i}
			if rm.Role == "" {
				rm.Role = "worker"
			}
			if m.Order != nil {
				rm.Order = *m.Order
			}
			if m.Resources != nil {
				rm.MemoryGb, rm.GPUMemoryGb = m.Resources.MemoryGb, m.Resources.GPUMemoryGb
			}
			out.Members = append(out.Members, rm)
			if m.Node != "" && !slices.Contains(out.Nodes, m.Node) {
				out.Nodes = append(out.Nodes, m.Node)
			}
		}
		return out
	}
	node := rt.Node
	if node == "" {
		node = pl.Node
	}
	if node == "" {
		node = currentNodeID
	}
	out := ResolvedPlacement{Mode: mode, Node: node}
	if node != "" {
		out.Nodes = []string{node}
	}
	self := ResolvedMember{Node: node, Runtime: id, Role: "runtime", GPUMemoryGb: runtimeGPUMemoryGb(rt)}
	if mem, ok := RuntimeMemoryGb(rt); ok {
		self.MemoryGb = &mem
	}
	out.Members = []ResolvedMember{self}
	return out
}

// RuntimeMemoryGb is the memory admission charges for a runtime: memoryGb,
// else resources.memoryGb, else resourceEstimate.memoryGb, else
// estimatedMemoryGb. declared is false when none is set (LLooM then
// charges 0).
func RuntimeMemoryGb(rt Runtime) (gb float64, declared bool) {
	for _, p := range []*float64{
		rt.MemoryGb,
		resourcesMemory(rt.Resources),
		estimateMemory(rt.ResourceEstimate),
		rt.EstimatedMemoryGb,
	} {
		if p != nil && !math.IsNaN(*p) && !math.IsInf(*p, 0) {
			return *p, true
		}
	}
	return 0, false
}

func resourcesMemory(r *MemoryResources) *float64 {
	if r == nil {
		return nil
	}
	return r.MemoryGb
}

func estimateMemory(e *ResourceEstimate) *float64 {
	if e == nil {
		return nil
	}
	return e.MemoryGb
}

func runtimeGPUMemoryGb(rt Runtime) *float64 {
	if rt.GPUMemoryGb != nil {
		return rt.GPUMemoryGb
	}
	if rt.Resources != nil {
		return rt.Resources.GPUMemoryGb
	}
	return nil
}

// NodeMemory is memory a runtime holds on one node.
type NodeMemory struct {
	MemoryGb    float64 `json:"memoryGb"`
	GPUMemoryGb float64 `json:"gpuMemoryGb"`
}

// RuntimeResourcesByNode is LLooM's runtimeResourcesByNode: the memory the
// runtime id holds on each node. A distributed runtime charges each member
// node the member's resources, else the member runtime's memory. Negative
// or missing figures count 0. The result is empty when the runtime is
// unknown or has no node.
func (c *Config) RuntimeResourcesByNode(id, currentNodeID string) map[string]NodeMemory {
	out := map[string]NodeMemory{}
	rt, ok := c.Runtimes[id]
	if !ok {
		return out
	}
	pl := RuntimePlacement(rt, id, currentNodeID)
	if pl.Mode != ModeDistributed {
		if pl.Node != "" {
			mem, _ := RuntimeMemoryGb(Runtime{MemoryGb: rt.MemoryGb, Resources: rt.Resources})
			out[pl.Node] = NodeMemory{MemoryGb: nonNegative(&mem), GPUMemoryGb: nonNegative(runtimeGPUMemoryGb(rt))}
		}
		return out
	}
	for _, m := range pl.Members {
		if m.Node == "" {
			continue
		}
		member := c.Runtimes[m.Runtime]
		mem, gpu := m.MemoryGb, m.GPUMemoryGb
		if mem == nil {
			mem = member.MemoryGb
			if mem == nil {
				mem = resourcesMemory(member.Resources)
			}
		}
		if gpu == nil {
			gpu = runtimeGPUMemoryGb(member)
		}
		nm := out[m.Node]
		nm.MemoryGb += nonNegative(mem)
		nm.GPUMemoryGb += nonNegative(gpu)
		out[m.Node] = nm
	}
	return out
}

func nonNegative(p *float64) float64 {
	if p == nil || !(*p >= 0) || math.IsInf(*p, 0) {
		return 0
	}
	return *p
}

// IsPlaceholder reports whether s holds an unexpanded `${ENV}` reference.
func IsPlaceholder(s string) bool { return placeholderRE.MatchString(s) }

var placeholderRE = regexp.MustCompile(`\$\{[A-Za-z_][A-Za-z0-9_]*\}`)

// CurrentNodeID picks the node this config describes, in LLooM's order
// minus the environment: override (say, the nodeId a gateway reported),
// then cluster.nodeId unless it is an unexpanded placeholder, then the only
// configured node. It returns "" when none applies.
func (c *Config) CurrentNodeID(override string) string {
	if override != "" {
		return override
	}
	if id := c.Cluster.NodeID; id != "" && !IsPlaceholder(id) {
		return id
	}
	if len(c.Cluster.Nodes) == 1 {
		for id := range c.Cluster.Nodes {
			return id
		}
	}
	return ""
}

// LocalNodeID picks the node a gateway started with this config on this
// host takes itself for, in LLooM's order: $LLOOM_NODE_ID, then
// cluster.nodeId with its `${ENV}` references expanded (an unset variable
// is empty). It returns "" when neither gives an id: LLooM then takes the
// host name. c may be nil.
func (c *Config) LocalNodeID(getenv func(string) string) string {
	if id := getenv("LLOOM_NODE_ID"); id != "" {
		return id
	}
	if c == nil {
		return ""
	}
	return placeholderRE.ReplaceAllStringFunc(c.Cluster.NodeID, func(m string) string {
		return getenv(m[2 : len(m)-1])
	})
}

// ExpandAlias returns the model ids an alias routes to, depth first through
// nested aliases, without repeats and skipping suspended members. As in
// LLooM, an alias that lists a model of its own name resolves that model.
// Ids that are neither models nor aliases are returned as they are. It fails
// on an unknown alias or a cycle.
func (c *Config) ExpandAlias(id string) ([]string, error) {
	return c.expandAlias(id, nil, false)
}

// AliasExpander is ExpandAlias for a caller that expands many aliases of
// a config it no longer changes: the set of model ids is built once.
func (c *Config) AliasExpander() func(id string) ([]string, error) {
	models := c.modelSet()
	return func(id string) ([]string, error) { return c.expandAliasIn(models, id, nil, false) }
}

// expandAlias expands id; when members is non-nil it replaces the alias's
// own members (to expand a route profile).
func (c *Config) expandAlias(id string, members []string, includeSuspended bool) ([]string, error) {
	return c.expandAliasIn(c.modelSet(), id, members, includeSuspended)
}

func (c *Config) modelSet() map[string]bool {
	models := make(map[string]bool, len(c.Models))
	for _, m := range c.Models {
		models[m.ID] = true
	}
	return models
}

// expandAliasIn is expandAlias with the set of model ids given: a caller
// that expands every alias builds it once, not once an alias (256x1000's
// config validated in 0.55 s of its 1.4 s load so).
func (c *Config) expandAliasIn(models map[string]bool, id string, members []string, includeSuspended bool) ([]string, error) {
	if _, ok := c.Aliases[id]; !ok {
		return nil, fmt.Errorf("unknown alias %q", id)
	}
	var leaves []string
	seen := map[string]bool{}
	var expand func(id string, path []string, override []string) error
	visit := func(member string, path []string) error {
		if _, isAlias := c.Aliases[member]; !isAlias || models[member] && member == path[len(path)-1] {
			if !seen[member] {
				seen[member] = true
				leaves = append(leaves, member)
			}
			return nil
		}
		return expand(member, path, nil)
	}
	expand = func(id string, path []string, override []string) error {
		if slices.Contains(path, id) {
			return fmt.Errorf("alias cycle: %s", strings.Join(append(slices.Clone(path), id), " -> "))
		}
		a := c.Aliases[id]
		list, suspended := a.Members, a.SuspendedMembers
		if override != nil {
			list, suspended = override, nil
		}
		path = append(slices.Clone(path), id)
		skip := map[string]bool{}
		if !includeSuspended {
			skip = setOf(suspended)
		}
		for _, m := range uniqueStrings(list) {
			if skip[m] {
				continue
			}
			if err := visit(m, path); err != nil {
				return err
			}
		}
		return nil
	}
	if err := expand(id, nil, members); err != nil {
		return nil, err
	}
	return leaves, nil
}

// slug is LLooM's slug(): lower case, runs of other characters become "-".
func slug(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-' {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	out := strings.Trim(b.String(), "-")
	if out == "" {
		return "node"
	}
	return out
}

// FederatedBackendID is the backend LLooM creates for a federated node.
func FederatedBackendID(nodeID string) string { return "lloom-node-" + slug(nodeID) }

// MaterializeFederated applies LLooM's materializeFederatedNodes to cfg in
// place: for every cluster node with an enabled proxy, advertised models and
// an endpoint (or proxy.baseUrl), it adds the backend "lloom-node-<slug>"
// (unless one of that id exists) and one model per advertised model, with
// id `as`, else "<namespace>/<remote id>" (namespace defaults to the node
// id; namespace false means the bare remote id), federated:true and a single
// target {id: targetId or node, node, backend, remoteRuntime, upstreamModel:
// remote id, weight}. A model id that already exists gains the target
// instead, and loses its own backend and runtime. Nodes are visited in
// sorted id order, so the result is deterministic. Calling it twice changes
// nothing more.
func MaterializeFederated(cfg *Config) {
	for _, nodeID := range slices.Sorted(maps.Keys(cfg.Cluster.Nodes)) {
		node := cfg.Cluster.Nodes[nodeID]
		proxy := node.Proxy
		if proxy == nil || proxy.Enabled != nil && !*proxy.Enabled || len(proxy.Models) == 0 {
			continue
		}
		if node.Endpoint == "" && proxy.BaseURL == "" {
			continue
		}
		backendID := proxy.Backend
		if backendID == "" {
			backendID = FederatedBackendID(nodeID)
		}
		if _, ok := cfg.Backends[backendID]; !ok {
			b := Backend{Type: "openai", BaseURL: proxy.BaseURL, APIKeyEnv: node.APIKeyEnv, TimeoutMs: proxy.TimeoutMs}
			if b.BaseURL == "" {
				b.BaseURL = strings.TrimRight(node.Endpoint, "/") + "/v1"
			}
			if b.APIKeyEnv == "" {
				b.APIKeyEnv = cfg.Cluster.APIKeyEnv
			}
			if b.TimeoutMs == nil {
				b.TimeoutMs = ptr(1800000.0)
			}
			if cfg.Backends == nil {
				cfg.Backends = map[string]Backend{}
			}
			cfg.Backends[backendID] = b
		}
		namespace := nodeID
		if ns := proxy.Namespace; ns != nil {
			namespace = ns.Name
			if ns.Bare {
				namespace = ""
			}
		}
		namespace = strings.TrimRight(namespace, "/")
		for _, pm := range proxy.Models {
			remoteID := pm.ID
			if remoteID == "" {
				remoteID = pm.Model
			}
			if remoteID == "" {
				continue
			}
			modelID := pm.As
			if modelID == "" {
				modelID = remoteID
				if namespace != "" {
					modelID = namespace + "/" + remoteID
				}
			}
			target := Target{ID: pm.TargetID, Node: nodeID, Backend: backendID, RemoteRuntime: pm.RemoteRuntime, UpstreamModel: remoteID, Weight: pm.Weight}
			if target.ID == "" {
				target.ID = nodeID
			}
			if target.Weight == nil {
				target.Weight = ptr(1.0)
			}
			if i := slices.IndexFunc(cfg.Models, func(m Model) bool { return m.ID == modelID }); i >= 0 {
				existing := &cfg.Models[i]
				targets := ModelTargets(*existing)
				if !slices.ContainsFunc(targets, func(t ResolvedTarget) bool { return t.ID == target.ID && t.Node == nodeID }) {
					// Like LLooM, the existing targets are rewritten in their normalised form.
					existing.Targets = existing.Targets[:0:0]
					for _, t := range targets {
						existing.Targets = append(existing.Targets, Target{
							ID: t.ID, Node: t.Node, Backend: t.Backend, Runtime: t.Runtime,
							RemoteRuntime: t.RemoteRuntime, UpstreamModel: t.UpstreamModel, Weight: ptr(float64(t.Weight)),
						})
					}
					existing.Targets = append(existing.Targets, target)
				}
				existing.Backend, existing.Runtime = "", ""
				continue
			}
			name := pm.Name
			if name == "" {
				name = remoteID[strings.LastIndex(remoteID, "/")+1:]
			}
			kind := pm.Kind
			if kind == "" {
				kind = KindChat
			}
			cfg.Models = append(cfg.Models, Model{
				ID:              modelID,
				Name:            name,
				Kind:            kind,
				UpstreamModel:   remoteID,
				ContextWindow:   pm.ContextWindow,
				MaxOutputTokens: pm.MaxOutputTokens,
				Targets:         []Target{target},
				Federated:       true,
			})
		}
	}
}
