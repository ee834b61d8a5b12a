package catalog

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"

	"github.com/poolsolve/poolsolve/inventory"
	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

// nodeFacts gathers what each source says about one node.
type nodeFacts struct {
	id        string
	config    lloom.ClusterNode
	inConfig  bool
	profile   *lloom.MachineProfile
	inventory *inventory.Inventory
	status    *lloom.NodeStatus
}

func (b *builder) nodeIDs() []string {
	ids := map[string]bool{}
	for id := range b.cfg.Cluster.Nodes {
		ids[id] = true
	}
	for id := range b.in.Nodes {
		ids[id] = true
	}
	if len(ids) == 0 {
		id := b.current
		if id == "" {
			id = "local"
		}
		ids[id] = true
		b.note("config declares no cluster nodes: planning one node %q", id)
	}
	return slices.Sorted(maps.Keys(ids))
}

func (b *builder) facts(id string) nodeFacts {
	f := nodeFacts{id: id}
	f.config, f.inConfig = b.cfg.Cluster.Nodes[id]
	ni := b.in.Nodes[id]
	f.profile, f.inventory, f.status = ni.Profile, ni.Inventory, ni.Status
	if f.profile == nil && f.status != nil && f.status.Profile != nil {
		f.profile = f.status.Profile
	}
	if f.inventory == nil && f.status != nil && len(f.status.Inventory) > 0 {
		inv, err := inventory.Parse(f.status.Inventory, fmt.Sprintf("status of %s", id))
		if err != nil {
			b.note("%s: the inventory in its status is unreadable (%v); using its profile", id, err)
		} else {
			f.inventory = inv
		}
	}
	return f
}

func (b *builder) buildNodes() {
	cordons := map[string]string{}
	for _, c := range b.opts.Cordons {
		cordons[c] = "cordoned (--cordon)"
	}
	for _, c := range b.policy.Cordons {
		if _, ok := cordons[c]; !ok {
			cordons[c] = "cordoned (pool.toml cordons)"
		}
	}
	for _, c := range b.in.ConfigPool.Cordons {
		if _, ok := cordons[c]; !ok {
			cordons[c] = "cordoned (config pool.cordons)"
		}
	}
	ids := b.nodeIDs()
	for c := range cordons {
		if !slices.Contains(ids, c) {
			b.problem("", "--cordon", "cordon names node %q, which is not in the pool (nodes: %s)", c, strings.Join(ids, ", "))
		}
	}
	for id := range b.opts.Unreachable {
		if !slices.Contains(ids, id) {
			b.problem("", "unreachable", "node %q is not in the pool", id)
		}
	}
	for _, id := range ids {
		f := b.facts(id)
		n := model.Node{ID: id}
		b.describeHardware(&n, f)
		n.Domains = b.domains(&n, f)
		n.Federated = f.config.Proxy != nil && len(f.config.Proxy.Models) > 0
		switch {
		case cordons[id] != "":
			n.Unavailable = cordons[id]
		case b.opts.Unreachable[id] != "":
			n.Unavailable = "unreachable: " + b.opts.Unreachable[id]
		case f.status != nil && !f.status.Reachable && f.status.Telemetry == nil:
			n.Unavailable = "unreachable: " + lloom.PeerError(string(f.status.Error))
		}
		if inv := f.inventory; inv != nil {
			n.Commands = sortedUniq(inv.Commands)
			n.Images = sortedUniq(inv.DockerImages)
			for _, w := range inv.CachedWeights {
				n.CachedWeights = append(n.CachedWeights, w.Repo)
			}
			n.CachedWeights = sortedUniq(n.CachedWeights)
			for _, r := range inv.ModelRoots {
				n.ModelRoots = append(n.ModelRoots, model.ModelRoot{Path: r.Path, FreeGb: r.FreeGb})
			}
		}
		b.pool.Nodes = append(b.pool.Nodes, n)
	}
}

// describeHardware fills platform, archs and accelerators, preferring the
// inventory, then the machine profile, then the config's labels.
func (b *builder) describeHardware(n *model.Node, f nodeFacts) {
	var sources []string
	accel := append([]string(nil), f.config.Resources.Accelerators...)
	switch {
	case f.inventory != nil:
		sources = append(sources, "inventory")
		n.Platform = f.inventory.PlatformID
		for _, a := range f.inventory.ComputeArchs {
			n.Archs = append(n.Archs, lloom.NormalizeArch(a))
		}
		accel = append(accel, f.inventory.Accelerators...)
	case f.profile != nil:
		sources = append(sources, "profile")
		n.Platform = f.profile.PlatformID
		for _, d := range f.profile.Devices {
			if d.ComputeCapability != "" {
				n.Archs = append(n.Archs, lloom.NormalizeArch(string(d.ComputeCapability)))
			}
		}
		if f.profile.IsAppleSilicon {
			n.Archs = append(n.Archs, "apple-metal")
		}
		accel = append(accel, f.profile.Accelerators...)
	default:
		sources = append(sources, "config")
	}
	if n.Platform == "" && f.status != nil && f.status.System != nil {
		// The status's own OS facts, in Node.js names (LLooM's system block).
		if s := f.status.System; s.Platform != "" && s.Arch != "" {
			n.Platform = s.Platform + "-" + s.Arch
		}
	}
	if n.Platform == "" {
		n.Platform = platformFromLabel(f.config.Labels["architecture"])
	}
	// What the config says of accelerators is a claim about the hardware;
	// it holds only where nothing measured says otherwise: a GB10 is an
	// arm64 Linux host.
	gb10 := slices.Contains(accel, "gb10") && (n.Platform == "" || n.Platform == "linux-arm64")
	if len(n.Archs) == 0 {
		// A GB10 is sm_121 and Apple Silicon is apple-metal whatever the
		// source; other accelerators say nothing about the arch.
		switch {
		case gb10:
			n.Archs = []string{"sm_121"}
		case slices.Contains(accel, "metal") || slices.Contains(accel, "apple-gpu") || f.config.Labels["accelerator"] == "metal":
			n.Archs = []string{"apple-metal"}
		}
	}
	if n.Platform == "" && gb10 {
		n.Platform = "linux-arm64"
	}
	n.Archs = sortedUniq(n.Archs)
	n.Accelerators = sortedUniq(accel)
	if f.status != nil {
		sources = append(sources, "status")
	}
	n.Source = strings.Join(sources, "+")
}

// platformFromLabel maps LLooM's free-form architecture label to a
// platform id.
func platformFromLabel(s string) string {
	switch s {
	case "linux-amd64":
		return "linux-x64"
	case "darwin-arm64", "linux-arm64", "linux-x64", "win32-x64":
		return s
	}
	return ""
}

// domains lists the node's memory domains with their budgets. The first
// of unified:0 / system:0 is the primary domain admission budgets.
func (b *builder) domains(n *model.Node, f nodeFacts) []model.Domain {
	type dom struct {
		id, kind  string
		capacity  *float64
		available *float64
	}
	var doms []dom
	var hw []lloom.MemoryDomain
	switch {
	case f.inventory != nil && len(f.inventory.MemoryDomains) > 0:
		for _, d := range f.inventory.MemoryDomains {
			c := d.CapacityGb
			doms = append(doms, dom{d.ID, d.Kind, &c, d.AvailableGb})
			hw = append(hw, lloom.NormalizeDomain(lloom.MemoryDomain{ID: d.ID, Kind: d.Kind, Backend: d.Backend, DeviceIDs: d.DeviceIDs}))
		}
	case f.profile != nil:
		for _, d := range lloom.MemoryDomains(*f.profile) {
			doms = append(doms, dom{d.ID, d.Kind, d.CapacityGb, d.AvailableGb})
			hw = append(hw, d)
		}
	}
	if len(doms) == 0 {
		d := dom{id: "system:0", kind: "system"}
		if slices.Contains(n.Archs, "apple-metal") || slices.Contains(n.Accelerators, "gb10") && n.Platform == "linux-arm64" {
			d = dom{id: "unified:0", kind: "unified"}
		}
		doms = append(doms, d)
		hw = append(hw, lloom.MemoryDomain{ID: d.id, Kind: d.kind})
	}
	if b.hw == nil {
		b.hw = map[string][]lloom.MemoryDomain{}
	}
	b.hw[n.ID] = hw
	primary := ""
	for _, want := range []string{"unified:0", "system:0"} {
		for _, d := range doms {
			if d.id == want && primary == "" {
				primary = want
			}
		}
	}
	if primary == "" {
		primary = doms[0].id
	}
	res := f.config.Resources
	var pol lloom.RuntimePolicy
	if b.cfg.RuntimePolicy != nil {
		pol = *b.cfg.RuntimePolicy
	}
	out := make([]model.Domain, 0, len(doms))
	for _, d := range doms {
		in := model.BudgetInputs{
			ProfileTotalGb: d.capacity,
			AvailableGb:    d.available,
			PolicyMaxUtil:  pol.MaxMemoryUtilization,
			HeadroomGb:     b.policy.HeadroomGb,
		}
		if d.id == primary {
			in.Primary = true
			in.ConfiguredTotalGb = res.MemoryGb
			in.NodeBudgetGb, in.PolicyBudgetGb = res.MemoryBudgetGb, pol.MemoryBudgetGb
			in.NodeMaxUtil = res.MaxMemoryUtilization
			in.NodeReserveGb, in.PolicyReserveGb = res.ReserveMemoryGb, pol.ReserveMemoryGb
			if res.AvailableMemoryGb != nil {
				in.AvailableGb = res.AvailableMemoryGb
			}
			if t := telemetryMemory(f.status); t != nil {
				if t.TotalBytes != nil && *t.TotalBytes > 0 {
					gb := float64(*t.TotalBytes) / model.GiB
					in.TelemetryTotalGb = &gb
				}
				if t.AvailableBytes != nil && *t.AvailableBytes >= 0 {
					gb := float64(*t.AvailableBytes) / model.GiB
					in.AvailableGb = &gb
				}
			}
		}
		bud := model.ComputeBudget(in)
		if bud.TotalSource == "unknown" && in.Primary {
			b.note("%s: no memory total from telemetry, config or profile; it admits nothing", n.ID)
		}
		out = append(out, model.Domain{ID: d.id, Kind: d.kind, Budget: bud})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if (out[i].ID == primary) != (out[j].ID == primary) {
			return out[i].ID == primary
		}
		return out[i].ID < out[j].ID
	})
	return out
}

func telemetryMemory(s *lloom.NodeStatus) *lloom.MemoryTelemetry {
	if s == nil || s.Telemetry == nil {
		return nil
	}
	return s.Telemetry.Memory
}

// buildLinks takes links from every source of evidence LLooM has, where
// either side's observation is enough: the config's discovery links, a
// "direct" cluster topology (nodes whose fabric addresses share a subnet
// are cabled to each other, the shape `lloom cluster discover` writes for
// an NVIDIA Sync pair), and every node's inventory. Lanes that run across
// nodes add theirs later (linkRunningLanes).
func (b *builder) buildLinks() {
	b.links = map[[2]string]string{}
	local := b.current
	if d := b.cfg.Cluster.Discovery; d != nil {
		for _, l := range d.Links {
			from := l.NodeID
			if from == "" {
				from = local
			}
			b.addLink(from, l.PeerNodeID, "config discovery")
		}
	}
	if b.cfg.Cluster.Topology == "direct" {
		ids := slices.Sorted(maps.Keys(b.cfg.Cluster.Nodes))
		for i, a := range ids {
			for _, c := range ids[i+1:] {
				if sameFabricSubnet(b.cfg.Cluster.Nodes[a], b.cfg.Cluster.Nodes[c]) {
					b.addLink(a, c, "config topology direct")
				}
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.in.Nodes)) {
		if inv := b.in.Nodes[id].Inventory; inv != nil {
			for _, l := range inv.Links {
				b.addLink(id, l.PeerNodeID, "inventory of "+id)
			}
		}
	}
}

// addLink records the first source that shows a and c linked.
func (b *builder) addLink(a, c, source string) {
	if a == "" || c == "" || a == c {
		return
	}
	if a > c {
		a, c = c, a
	}
	if _, ok := b.links[[2]string{a, c}]; !ok {
		b.links[[2]string{a, c}] = source
	}
}

// fabricAddr is a node's fabric address as the config gives it:
// fabricAddress, else a backendHost in the NVIDIA Sync fabric range.
func fabricAddr(n lloom.ClusterNode) (netip.Addr, bool) {
	for _, s := range []string{n.FabricAddress, n.BackendHost} {
		if a, err := netip.ParseAddr(s); err == nil && a.Is4() && inventory.FabricRange.Contains(a) {
			return a, true
		}
	}
	return netip.Addr{}, false
}

// sameFabricSubnet reports whether two nodes' fabric addresses share a
// /24: NVIDIA Sync puts each cable on its own /24 (discovery's prefixlen),
// and a config keeps no prefix length, so /24 is assumed.
func sameFabricSubnet(x, y lloom.ClusterNode) bool {
	a, okA := fabricAddr(x)
	c, okC := fabricAddr(y)
	if !okA || !okC || a == c {
		return false
	}
	pa, _ := a.Prefix(24)
	return pa.Contains(c)
}

// linkRunningLanes adds the links a multi-node lane shows by running: a
// tensor-parallel lane cannot serve across nodes that are not cabled to
// each other, so a lane whose rows show it healthy on every one of its
// nodes is evidence. A lane the config only declares is not: a lane
// with no other evidence cannot be planned there (noteUnlinked says
// what is missing).
func (b *builder) linkRunningLanes() {
	for _, v := range b.pool.Variants {
		if v.Kind == model.Recipe || len(v.Placements) != 1 {
			continue
		}
		nodes := v.Placements[0].Nodes
		if len(nodes) < 2 || b.linked(nodes) {
			continue
		}
		if _, _, ok := b.unreachableAmong(nodes); ok {
			continue
		}
		if b.healthyOnAll(v) {
			b.linkAll(nodes, "running lane "+v.ID)
		}
	}
}

func (b *builder) linked(nodes []string) bool {
	for i, a := range nodes {
		for _, c := range nodes[i+1:] {
			x, y := a, c
			if x > y {
				x, y = y, x
			}
			if _, ok := b.links[[2]string{x, y}]; !ok {
				return false
			}
		}
	}
	return true
}

func (b *builder) linkAll(nodes []string, source string) {
	for i, a := range nodes {
		for _, c := range nodes[i+1:] {
			b.addLink(a, c, source)
		}
	}
}

// unreachableAmong returns the first of nodes that could not be read, and
// why.
func (b *builder) unreachableAmong(nodes []string) (string, string, bool) {
	for _, n := range nodes {
		if why, ok := b.opts.Unreachable[n]; ok {
			return n, why, true
		}
		if st := b.in.Nodes[n].Status; st != nil && !st.Reachable && st.Telemetry == nil {
			return n, lloom.PeerError(string(st.Error)), true
		}
	}
	return "", "", false
}

// laneRows are the status rows of a lane on node n: the runtime's own and
// its distributed members'.
func (b *builder) laneRows(v model.Variant, n string) []lloom.RuntimeStatus {
	st := b.in.Nodes[n].Status
	if st == nil {
		return nil
	}
	var rows []lloom.RuntimeStatus
	for _, id := range []string{v.Runtime, strings.TrimPrefix(v.ID, "pool:")} {
		if row, ok := st.RuntimeManager.Runtimes[id]; ok {
			rows = append(rows, row)
		}
	}
	for _, rid := range b.runtimesOfVariant(v.ID) {
		if row, ok := st.RuntimeManager.Runtimes[rid]; ok && (row.Node == "" || row.Node == n) {
			rows = append(rows, row)
		}
	}
	return rows
}

// setVariantOf records that runtime rid runs variant vid.
func (b *builder) setVariantOf(rid, vid string) {
	b.variantOf[rid] = vid
	b.runtimesOf = nil
}

// runtimesOfVariant lists the runtimes of variant vid, sorted: laneRows
// asks it for every lane, and sorting every runtime at each ask cost 3.9
// s of the catalog of 1024x4000.
func (b *builder) runtimesOfVariant(vid string) []string {
	if b.runtimesOf == nil {
		b.runtimesOf = map[string][]string{}
		for _, rid := range slices.Sorted(maps.Keys(b.variantOf)) {
			b.runtimesOf[b.variantOf[rid]] = append(b.runtimesOf[b.variantOf[rid]], rid)
		}
	}
	return b.runtimesOf[vid]
}

// healthyOnAll reports whether a status row on every node of the lane
// shows it healthy.
func (b *builder) healthyOnAll(v model.Variant) bool {
	for _, n := range v.Placements[0].Nodes {
		if !slices.ContainsFunc(b.laneRows(v, n), lloom.RuntimeStatus.ShowsHealthy) {
			return false
		}
	}
	return true
}

// missingEvidence names each source of link evidence that says nothing
// about nodes, for a note an operator can act on.
func (b *builder) missingEvidence(nodes []string) string {
	var out []string
	out = append(out, "no cluster.discovery.links entry joins them")
	switch {
	case b.cfg.Cluster.Topology != "direct":
		out = append(out, "cluster.topology is not \"direct\"")
	default:
		out = append(out, "their backendHost/fabricAddress share no 10.100.x fabric /24")
	}
	inv := false
	for _, n := range nodes {
		if b.in.Nodes[n].Inventory != nil {
			inv = true
		}
	}
	if inv {
		out = append(out, "no node inventory reports a fabric link between them")
	} else {
		out = append(out, "no node inventory (a gateway with ?inventory=1 or poolsolve serve reports fabric links)")
	}
	out = append(out, "no status row shows the lane healthy on all of them (a lane the config declares is no evidence)")
	return strings.Join(out, "; ")
}

// finishLinks puts the links found between known nodes into the pool.
func (b *builder) finishLinks() {
	known := map[string]bool{}
	for _, n := range b.pool.Nodes {
		known[n.ID] = true
	}
	for _, k := range sortedKeys2(b.links) {
		if !known[k[0]] || !known[k[1]] {
			continue // a discovered peer not yet added to the cluster
		}
		b.pool.Links = append(b.pool.Links, model.Link{A: k[0], B: k[1], Source: b.links[k]})
	}
}

func sortedKeys2(m map[[2]string]string) [][2]string {
	out := make([][2]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][0] != out[j][0] {
			return out[i][0] < out[j][0]
		}
		return out[i][1] < out[j][1]
	})
	return out
}
