package catalog

import (
	"fmt"
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
	return sortedKeys(ids)
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
			reason := string(f.status.Error)
			if reason == "" {
				reason = "gateway reports it unreachable"
			}
			n.Unavailable = "unreachable: " + reason
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
	if n.Platform == "" {
		n.Platform = platformFromLabel(f.config.Labels["architecture"])
	}
	if len(n.Archs) == 0 {
		// A GB10 is sm_121 and Apple Silicon is apple-metal whatever the
		// source; other accelerators say nothing about the arch.
		switch {
		case slices.Contains(accel, "gb10"):
			n.Archs = []string{"sm_121"}
		case slices.Contains(accel, "metal") || slices.Contains(accel, "apple-gpu") || f.config.Labels["accelerator"] == "metal":
			n.Archs = []string{"apple-metal"}
		}
	}
	if n.Platform == "" && slices.Contains(accel, "gb10") {
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
	switch {
	case f.inventory != nil && len(f.inventory.MemoryDomains) > 0:
		for _, d := range f.inventory.MemoryDomains {
			c := d.CapacityGb
			doms = append(doms, dom{d.ID, d.Kind, &c, d.AvailableGb})
		}
	case f.profile != nil:
		for _, d := range lloom.MemoryDomains(*f.profile) {
			doms = append(doms, dom{d.ID, d.Kind, d.CapacityGb, d.AvailableGb})
		}
	}
	if len(doms) == 0 {
		d := dom{id: "system:0", kind: "system"}
		if slices.Contains(n.Archs, "apple-metal") || slices.Contains(n.Accelerators, "gb10") {
			d = dom{id: "unified:0", kind: "unified"}
		}
		doms = append(doms, d)
	}
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

// buildLinks takes links from the config's discovery and from every
// node's inventory; either side's observation is enough.
func (b *builder) buildLinks() {
	seen := map[[2]string]string{}
	add := func(a, c, source string) {
		if a == "" || c == "" || a == c {
			return
		}
		if a > c {
			a, c = c, a
		}
		if _, ok := seen[[2]string{a, c}]; !ok {
			seen[[2]string{a, c}] = source
		}
	}
	local := b.current
	if d := b.cfg.Cluster.Discovery; d != nil {
		for _, l := range d.Links {
			from := l.NodeID
			if from == "" {
				from = local
			}
			add(from, l.PeerNodeID, "config discovery")
		}
	}
	for _, id := range sortedKeys(b.in.Nodes) {
		if inv := b.in.Nodes[id].Inventory; inv != nil {
			for _, l := range inv.Links {
				add(id, l.PeerNodeID, "inventory of "+id)
			}
		}
	}
	known := map[string]bool{}
	for _, n := range b.pool.Nodes {
		known[n.ID] = true
	}
	for k, src := range seen {
		if !known[k[0]] || !known[k[1]] {
			continue // a discovered peer not yet added to the cluster
		}
		b.pool.Links = append(b.pool.Links, model.Link{A: k[0], B: k[1], Source: src})
	}
}
