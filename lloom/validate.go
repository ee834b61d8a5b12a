package lloom

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// Validate checks the rules LLooM enforces when it loads a config, plus
// the pool block's own rules, and returns every problem found (a Problems)
// or nil. It judges the config as LLooM would run it: models that
// MaterializeFederated would add count as declared. Paths point into the
// file as written.
//
// When the current node is unknown (cluster.nodeId is a placeholder and
// there are several nodes), the checks that depend on it are skipped:
// "every non-local node has an endpoint" and node references in a config
// without cluster nodes.
func (c *Config) Validate() error {
	v := &configValidator{cfg: c, p: &problems{file: c.File}, current: c.CurrentNodeID("")}
	v.federated()
	v.cluster()
	v.runtimes()
	v.models()
	v.aliases()
	v.policy()
	return v.p.err()
}

type configValidator struct {
	cfg       *Config
	p         *problems
	current   string
	modelByID map[string]Model           // including federated ones
	kindsOf   map[string]map[string]bool // each alias's model kinds; nil while expanding it
	backends  map[string]bool            // including federated ones
}

func (v *configValidator) federated() {
	view := &Config{Cluster: v.cfg.Cluster, Backends: map[string]Backend{}, Models: slices.Clone(v.cfg.Models)}
	for id, b := range v.cfg.Backends {
		view.Backends[id] = b
	}
	MaterializeFederated(view)
	v.modelByID = map[string]Model{}
	for _, m := range view.Models {
		if _, dup := v.modelByID[m.ID]; !dup {
			v.modelByID[m.ID] = m
		}
	}
	v.backends = map[string]bool{}
	for id := range view.Backends {
		v.backends[id] = true
	}
}

// nodeKnown is LLooM's clusterNodes() lookup: the declared nodes, or only
// the local node when none are declared.
func (v *configValidator) nodeKnown(id string) bool {
	if len(v.cfg.Cluster.Nodes) == 0 {
		return v.current == "" || id == v.current
	}
	_, ok := v.cfg.Cluster.Nodes[id]
	return ok
}

func (v *configValidator) node(path, id string) {
	if id != "" && !IsPlaceholder(id) && !v.nodeKnown(id) {
		v.p.add(path, "node %q is not declared in cluster.nodes", id)
	}
}

func (v *configValidator) cluster() {
	cl := v.cfg.Cluster
	path := jsonpos.Field(jsonpos.Root, "cluster")
	if len(cl.Nodes) > 0 {
		v.node(jsonpos.Field(path, "nodeId"), cl.NodeID)
		v.node(jsonpos.Field(path, "leaderNode"), cl.LeaderNode)
		v.node(jsonpos.Field(path, "fleetHeadNode"), cl.FleetHeadNode)
	}
	for _, id := range slices.Sorted(maps.Keys(cl.Nodes)) {
		n := cl.Nodes[id]
		np := jsonpos.Key(jsonpos.Field(path, "nodes"), id)
		if n.Endpoint == "" && v.current != "" && id != v.current {
			v.p.add(jsonpos.Field(np, "endpoint"), "missing: every node other than the local one (%s) needs an endpoint", v.current)
		}
		rp := jsonpos.Field(np, "resources")
		r := n.Resources
		nonNegativeGb(v.p, jsonpos.Field(rp, "memoryGb"), r.MemoryGb)
		nonNegativeGb(v.p, jsonpos.Field(rp, "reserveMemoryGb"), r.ReserveMemoryGb)
		nonNegativeGb(v.p, jsonpos.Field(rp, "memoryBudgetGb"), r.MemoryBudgetGb)
		nonNegativeGb(v.p, jsonpos.Field(rp, "availableMemoryGb"), r.AvailableMemoryGb)
		nonNegativeGb(v.p, jsonpos.Field(rp, "gpuMemoryGb"), r.GPUMemoryGb)
		if u := r.MaxMemoryUtilization; u != nil && !(*u > 0 && *u <= 1) {
			v.p.add(jsonpos.Field(rp, "maxMemoryUtilization"), "expected a number > 0 and <= 1, got %s", num(*u))
		}
		if n.Proxy != nil {
			for i, m := range n.Proxy.Models {
				if m.ID == "" && m.Model == "" {
					v.p.add(jsonpos.Index(jsonpos.Field(jsonpos.Field(np, "proxy"), "models"), i), "missing id: a proxy model needs id or model")
				}
			}
		}
	}
}

func (v *configValidator) runtimes() {
	rts := v.cfg.Runtimes
	groupOf := map[string]string{} // member runtime -> distributed runtime
	for _, id := range slices.Sorted(maps.Keys(rts)) {
		rt := rts[id]
		path := jsonpos.Key(jsonpos.Field(jsonpos.Root, "runtimes"), id)
		nonNegativeGb(v.p, jsonpos.Field(path, "memoryGb"), rt.MemoryGb)
		nonNegativeGb(v.p, jsonpos.Field(path, "gpuMemoryGb"), rt.GPUMemoryGb)
		nonNegativeGb(v.p, jsonpos.Field(path, "estimatedMemoryGb"), rt.EstimatedMemoryGb)
		if rt.Resources != nil {
			nonNegativeGb(v.p, jsonpos.Field(jsonpos.Field(path, "resources"), "memoryGb"), rt.Resources.MemoryGb)
			nonNegativeGb(v.p, jsonpos.Field(jsonpos.Field(path, "resources"), "gpuMemoryGb"), rt.Resources.GPUMemoryGb)
		}
		if rt.ResourceEstimate != nil {
			nonNegativeGb(v.p, jsonpos.Field(jsonpos.Field(path, "resourceEstimate"), "memoryGb"), rt.ResourceEstimate.MemoryGb)
		}
		if rt.KeepWarm && rt.PreferredWarm {
			v.p.add(path, "keepWarm and preferredWarm are both set; a runtime is either pinned (keepWarm) or preferred")
		}
		if !oneOf(rt.Management, "", Managed, External) {
			v.p.add(jsonpos.Field(path, "management"), "expected managed or external, got %q", rt.Management)
		}
		if m := rt.Maintenance; m != nil && !oneOf(m.State, "suspended", "resuming") {
			v.p.add(jsonpos.Field(jsonpos.Field(path, "maintenance"), "state"), "expected suspended or resuming, got %q", m.State)
		}

		pl := RuntimePlacement(rt, id, v.current)
		pp := jsonpos.Field(path, "placement")
		if !oneOf(pl.Mode, ModeLocal, ModePinned, ModeReplicated, ModeDistributed) {
			v.p.add(jsonpos.Field(pp, "mode"), "expected local, pinned, replicated or distributed, got %q", pl.Mode)
		}
		if pl.Mode != ModeDistributed {
			if pl.Mode == ModeReplicated && rt.Node == "" && (rt.Placement == nil || rt.Placement.Node == "") {
				v.p.add(path, "a replicated runtime needs a materialised node (one runtime per node)")
			}
			if rt.Node != "" {
				v.node(jsonpos.Field(path, "node"), rt.Node)
			} else if rt.Placement != nil && rt.Placement.Node != "" {
				v.node(jsonpos.Field(pp, "node"), rt.Placement.Node)
			}
			continue
		}
		v.node(jsonpos.Field(path, "node"), rt.Node)
		members := rt.Placement.Members
		if len(members) == 0 {
			v.p.add(jsonpos.Field(pp, "members"), "a distributed runtime needs at least one member")
		}
		seen := map[string]bool{}
		for i, m := range members {
			mp := jsonpos.Index(jsonpos.Field(pp, "members"), i)
			nonNegativeMember(v.p, mp, m.Resources)
			if m.Node == "" {
				v.p.add(jsonpos.Field(mp, "node"), "missing: every distributed member needs a node")
			} else {
				v.node(jsonpos.Field(mp, "node"), m.Node)
			}
			switch child, ok := rts[m.Runtime]; {
			case m.Runtime == "":
				v.p.add(jsonpos.Field(mp, "runtime"), "missing: every distributed member needs a runtime")
				continue
			case m.Runtime == id:
				v.p.add(jsonpos.Field(mp, "runtime"), "runtime %q cannot be a member of itself", id)
				continue
			case !ok:
				v.p.add(jsonpos.Field(mp, "runtime"), "unknown runtime %q", m.Runtime)
				continue
			case child.Placement != nil && child.Placement.Mode == ModeDistributed:
				v.p.add(jsonpos.Field(mp, "runtime"), "member %q is itself distributed; distributed runtimes do not nest", m.Runtime)
			case child.Node != "" && m.Node != "" && child.Node != m.Node:
				v.p.add(jsonpos.Field(mp, "node"), "member runtime %q runs on %q, not %q", m.Runtime, child.Node, m.Node)
			}
			if seen[m.Runtime] {
				v.p.add(jsonpos.Field(mp, "runtime"), "duplicate member %q", m.Runtime)
			}
			seen[m.Runtime] = true
			if other, ok := groupOf[m.Runtime]; ok && other != id {
				v.p.add(jsonpos.Field(mp, "runtime"), "member %q already belongs to distributed runtime %q", m.Runtime, other)
			} else {
				groupOf[m.Runtime] = id
			}
		}
	}
}

func (v *configValidator) models() {
	rts := v.cfg.Runtimes
	seen := map[string]bool{}
	for i, m := range v.cfg.Models {
		path := jsonpos.Index(jsonpos.Field(jsonpos.Root, "models"), i)
		switch {
		case m.ID == "":
			v.p.add(jsonpos.Field(path, "id"), "missing")
		case seen[m.ID]:
			v.p.add(jsonpos.Field(path, "id"), "duplicate model id %q", m.ID)
		}
		seen[m.ID] = true
		if m.Runtime != "" {
			if _, ok := rts[m.Runtime]; !ok {
				v.p.add(jsonpos.Field(path, "runtime"), "unknown runtime %q", m.Runtime)
			}
		}
		if len(m.Targets) == 0 {
			switch {
			case m.Backend == "":
				v.p.add(path, "missing backend or targets")
			case !v.backends[m.Backend]:
				v.p.add(jsonpos.Field(path, "backend"), "unknown backend %q", m.Backend)
			}
		}
		// Only explicit targets here: the single-backend form was checked
		// above, at its own path.
		for j, t := range ModelTargets(Model{ID: m.ID, Targets: m.Targets, UpstreamModel: m.UpstreamModel}) {
			tp := jsonpos.Index(jsonpos.Field(path, "targets"), j)
			switch {
			case t.Backend == "":
				v.p.add(jsonpos.Field(tp, "backend"), "missing")
			case !v.backends[t.Backend]:
				v.p.add(jsonpos.Field(tp, "backend"), "unknown backend %q", t.Backend)
			}
			rt, rtOK := rts[t.Runtime]
			if t.Runtime != "" && !rtOK {
				v.p.add(jsonpos.Field(tp, "runtime"), "unknown runtime %q", t.Runtime)
			}
			if t.Node != "" {
				v.node(jsonpos.Field(tp, "node"), t.Node)
				if rtOK && !IsPlaceholder(t.Node) {
					if pl := RuntimePlacement(rt, t.Runtime, v.current); pl.Node != "" || len(pl.Nodes) > 0 {
						if !slices.Contains(pl.Nodes, t.Node) {
							v.p.add(jsonpos.Field(tp, "node"), "node %q is not where runtime %q runs (%s)", t.Node, t.Runtime, strings.Join(pl.Nodes, ", "))
						}
					}
				}
			}
		}
		if m.Pool != nil {
			v.pool(jsonpos.Field(path, "pool"), m.Pool)
		}
	}
}

func (v *configValidator) pool(path string, p *ModelPool) {
	for i, n := range p.Nodes {
		v.node(jsonpos.Index(jsonpos.Field(path, "nodes"), i), n)
	}
	atLeastOne(v.p, jsonpos.Field(path, "tensorParallel"), p.TensorParallel)
	atLeastOne(v.p, jsonpos.Field(path, "maxSequences"), p.MaxSequences)
	nonNegativeGb(v.p, jsonpos.Field(path, "memoryGbPerNode"), p.MemoryGbPerNode)
	nonNegativeGb(v.p, jsonpos.Field(path, "loadTimeMs"), p.LoadTimeMs)
	computeArchs(v.p, jsonpos.Field(path, "computeArchs"), p.ComputeArchs)
	if !oneOf(p.Management, "", Managed, External) {
		v.p.add(jsonpos.Field(path, "management"), "expected managed or external, got %q", p.Management)
	}
}

func (v *configValidator) known(id string) bool {
	_, model := v.modelByID[id]
	_, alias := v.cfg.Aliases[id]
	return model || alias
}

func (v *configValidator) aliases() {
	for _, id := range slices.Sorted(maps.Keys(v.cfg.Aliases)) {
		a := v.cfg.Aliases[id]
		path := jsonpos.Key(jsonpos.Field(jsonpos.Root, "aliases"), id)
		mp := jsonpos.Field(path, "members")
		if len(a.Members) == 0 {
			v.p.add(mp, "an alias needs at least one member")
		}
		// Sets, not list scans: one alias may list many thousand members.
		first, members, optional := firstIndex(a.Members), setOf(a.Members), setOf(a.OptionalMembers)
		for i, m := range a.Members {
			switch {
			case strings.TrimSpace(m) == "":
				v.p.add(jsonpos.Index(mp, i), "empty member id")
			case first[m] < i:
				v.p.add(jsonpos.Index(mp, i), "duplicate member %q", m)
			case !v.known(m) && !optional[m]:
				v.p.add(jsonpos.Index(mp, i), "unknown model or alias %q", m)
			}
		}
		for i, m := range a.OptionalMembers {
			if !members[m] {
				v.p.add(jsonpos.Index(jsonpos.Field(path, "optionalMembers"), i), "optional member %q is not one of members", m)
			}
		}
		for i, m := range a.SuspendedMembers {
			if !members[m] {
				v.p.add(jsonpos.Index(jsonpos.Field(path, "suspendedMembers"), i), "suspended member %q is not one of members", m)
			}
		}
		if !oneOf(a.Strategy, "", "ordered", "fastest") {
			v.p.add(jsonpos.Field(path, "strategy"), "expected ordered or fastest, got %q", a.Strategy)
		}
		if !oneOf(a.PerformanceMetric, "", "completion", "first-token") {
			v.p.add(jsonpos.Field(path, "performanceMetric"), "expected completion or first-token, got %q", a.PerformanceMetric)
		}
		v.routeProfiles(path, id, a)
		if kinds := v.kinds(id, nil); len(kinds) > 1 {
			v.p.add(mp, "members mix model kinds %s", strings.Join(kinds, ", "))
		}
	}
	v.aliasCycles()
}

func (v *configValidator) routeProfiles(path, id string, a Alias) {
	rp := jsonpos.Field(path, "routeProfiles")
	if a.RouteProfiles == nil {
		if a.ActiveRoute != "" {
			v.p.add(jsonpos.Field(path, "activeRoute"), "activeRoute %q needs routeProfiles", a.ActiveRoute)
		}
		return
	}
	if len(a.RouteProfiles) == 0 {
		v.p.add(rp, "routeProfiles must not be empty")
	}
	active, ok := a.RouteProfiles[a.ActiveRoute]
	switch {
	case a.ActiveRoute == "":
		v.p.add(jsonpos.Field(path, "activeRoute"), "missing: an alias with routeProfiles must name its active route")
	case !ok:
		v.p.add(jsonpos.Field(path, "activeRoute"), "%q is not one of the alias's route profiles (%s)", a.ActiveRoute, strings.Join(slices.Sorted(maps.Keys(a.RouteProfiles)), ", "))
	case !slices.Equal(a.Members, active.Members):
		v.p.add(jsonpos.Field(path, "members"), "members must equal those of the active route profile %q", a.ActiveRoute)
	}
	for _, name := range slices.Sorted(maps.Keys(a.RouteProfiles)) {
		prof := a.RouteProfiles[name]
		pp := jsonpos.Field(jsonpos.Key(rp, name), "members")
		if len(prof.Members) == 0 {
			v.p.add(pp, "a route profile needs at least one member")
		}
		first := firstIndex(prof.Members)
		for i, m := range prof.Members {
			switch {
			case first[m] < i:
				v.p.add(jsonpos.Index(pp, i), "duplicate member %q", m)
			case !v.known(m):
				v.p.add(jsonpos.Index(pp, i), "unknown model or alias %q", m)
			}
		}
		if kinds := v.kinds(id, prof.Members); len(kinds) > 1 {
			v.p.add(pp, "members mix model kinds %s", strings.Join(kinds, ", "))
		}
	}
}

// kinds lists the distinct model kinds an alias (or one of its route
// profiles) expands to; cycles are reported elsewhere. Each alias's kinds
// are worked out once, so nested aliases cost their number, not its
// square.
func (v *configValidator) kinds(id string, members []string) []string {
	if members == nil {
		members = v.cfg.Aliases[id].Members
	}
	set, ok := v.memberKinds(id, members)
	if !ok {
		return nil
	}
	kinds := make([]string, 0, len(set))
	for k := range set {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	return kinds
}

// memberKinds is the union of the kinds members of alias id expand to;
// false when the expansion meets a cycle. A member with the alias's own
// name is the model of that name, as LLooM reads it.
func (v *configValidator) memberKinds(id string, members []string) (map[string]bool, bool) {
	out := map[string]bool{}
	for _, m := range members {
		_, isModel := v.modelByID[m]
		if _, isAlias := v.cfg.Aliases[m]; isAlias && !(m == id && isModel) {
			if m == id {
				return nil, false // the alias itself: a cycle
			}
			sub, ok := v.aliasKinds(m)
			if !ok {
				return nil, false
			}
			for k := range sub {
				out[k] = true
			}
			continue
		}
		if isModel {
			out[v.modelByID[m].Kind] = true
		}
	}
	return out, true
}

// aliasKinds is memberKinds of an alias's own members, remembered.
func (v *configValidator) aliasKinds(id string) (map[string]bool, bool) {
	if v.kindsOf == nil {
		v.kindsOf = map[string]map[string]bool{}
	}
	if set, done := v.kindsOf[id]; done {
		return set, set != nil
	}
	v.kindsOf[id] = nil // on the way: meeting it again is a cycle
	set, ok := v.memberKinds(id, v.cfg.Aliases[id].Members)
	if !ok {
		return nil, false
	}
	v.kindsOf[id] = set
	return set, true
}

// aliasCycles reports each cycle of nested aliases once, at the alias with
// the smallest id on it.
func (v *configValidator) aliasCycles() {
	aliases := v.cfg.Aliases
	const (
		unvisited = iota
		active
		done
	)
	state := map[string]int{}
	var stack []string
	reported := map[string]bool{}
	var visit func(id string)
	visit = func(id string) {
		state[id] = active
		stack = append(stack, id)
		for _, m := range uniqueStrings(aliases[id].Members) {
			if _, isAlias := aliases[m]; !isAlias {
				continue
			}
			if _, isModel := v.modelByID[m]; isModel && m == id {
				continue // a same-name member is the model, not the alias
			}
			switch state[m] {
			case unvisited:
				visit(m)
			case active:
				cycle := slices.Clone(stack[slices.Index(stack, m):])
				start := slices.Index(cycle, slices.Min(cycle))
				cycle = append(cycle[start:], cycle[:start]...)
				text := strings.Join(append(cycle, cycle[0]), " -> ")
				if !reported[text] {
					reported[text] = true
					v.p.add(jsonpos.Field(jsonpos.Key(jsonpos.Field(jsonpos.Root, "aliases"), cycle[0]), "members"), "alias cycle: %s", text)
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = done
	}
	for _, id := range slices.Sorted(maps.Keys(aliases)) {
		if state[id] == unvisited {
			visit(id)
		}
	}
}

func (v *configValidator) policy() {
	pol := v.cfg.RuntimePolicy
	if pol == nil {
		return
	}
	path := jsonpos.Field(jsonpos.Root, "runtimePolicy")
	if u := pol.MaxMemoryUtilization; u != nil && !(*u > 0 && *u < 1) {
		v.p.add(jsonpos.Field(path, "maxMemoryUtilization"), "expected a number > 0 and < 1, got %s", num(*u))
	}
	positive(v.p, jsonpos.Field(path, "reserveMemoryGb"), pol.ReserveMemoryGb)
	positive(v.p, jsonpos.Field(path, "memoryBudgetGb"), pol.MemoryBudgetGb)
	nonNegativeGb(v.p, jsonpos.Field(path, "preferredWarmIdleMs"), pol.PreferredWarmIdleMs)
	if ms := pol.MemorySafety; ms != nil {
		sp := jsonpos.Field(path, "memorySafety")
		if !oneOf(ms.Mode, "", "enforce", "yolo") {
			v.p.add(jsonpos.Field(sp, "mode"), "expected enforce or yolo, got %q", ms.Mode)
		}
		positive(v.p, jsonpos.Field(sp, "minAvailableMemoryGb"), ms.MinAvailableMemoryGb)
		if u := ms.MaxMemoryUtilization; u != nil && !(*u > 0 && *u < 1) {
			v.p.add(jsonpos.Field(sp, "maxMemoryUtilization"), "expected a number > 0 and < 1, got %s", num(*u))
		}
		if ms := ms.PollIntervalMs; ms != nil && !(*ms >= 50 && *ms <= 1000) {
			v.p.add(jsonpos.Field(sp, "pollIntervalMs"), "expected a number from 50 to 1000, got %s", num(*ms))
		}
	}
}

// Shared value checks.

func nonNegativeGb(p *problems, path string, f *float64) {
	if f != nil && !(*f >= 0 && !math.IsInf(*f, 1)) {
		p.add(path, "expected a number >= 0, got %s", num(*f))
	}
}

func positive(p *problems, path string, f *float64) {
	if f != nil && !(*f > 0 && !math.IsInf(*f, 1)) {
		p.add(path, "expected a number > 0, got %s", num(*f))
	}
}

func atLeastOne(p *problems, path string, n *int) {
	if n != nil && *n < 1 {
		p.add(path, "expected an integer >= 1, got %d", *n)
	}
}

func nonNegativeMember(p *problems, path string, r *MemoryResources) {
	if r == nil {
		return
	}
	nonNegativeGb(p, jsonpos.Field(jsonpos.Field(path, "resources"), "memoryGb"), r.MemoryGb)
	nonNegativeGb(p, jsonpos.Field(jsonpos.Field(path, "resources"), "gpuMemoryGb"), r.GPUMemoryGb)
}

func computeArchs(p *problems, path string, archs []string) {
	for i, a := range archs {
		if NormalizeArch(a) == "" {
			p.add(jsonpos.Index(path, i), "unknown compute arch %q (expected e.g. sm_121, 12.1a or apple-metal)", a)
		}
	}
}

func oneOf(s string, allowed ...string) bool { return slices.Contains(allowed, s) }

func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
