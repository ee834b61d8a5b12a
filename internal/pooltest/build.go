package pooltest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/poolsolve/poolsolve/model"
)

// Part is one piece of a pool, applied by New in the order given.
type Part func(*builder)

// builder collects parts; New resolves what depends on other parts (draws
// need the nodes' domains, budgets need the final headroom).
type builder struct {
	nodes    []nodeSpec
	variants []model.Variant
	gpus     map[string]gpuSpec // variant id -> its per-GPU draw
	models   map[string]*model.Model
	order    []string // model ids in first-seen order
	pool     model.Pool
	late     []func(*model.Pool)
}

type nodeSpec struct {
	node       model.Node
	capacityGb float64
	deviceGb   float64
	devices    int // GPUs of deviceGb each; 0 means one (device:cuda:0)
	budgetGb   *float64
	primary    string // unified:0 or system:0
}

// New builds a pool from parts, derives what the parts imply (models named
// by variants, draws, budgets) and sorts it.
func New(parts ...Part) *model.Pool {
	b := &builder{models: map[string]*model.Model{}}
	b.pool.Settings = model.DefaultSettings()
	for _, part := range parts {
		part(b)
	}
	p := &b.pool
	for _, ns := range b.nodes {
		n := ns.node
		in := model.BudgetInputs{Primary: true, ConfiguredTotalGb: ptr(ns.capacityGb), NodeBudgetGb: ns.budgetGb, HeadroomGb: p.Settings.HeadroomGb}
		n.Domains = append(n.Domains, model.Domain{ID: ns.primary, Kind: strings.TrimSuffix(ns.primary, ":0"), Budget: model.ComputeBudget(in)})
		if ns.deviceGb > 0 {
			dev := model.BudgetInputs{ConfiguredTotalGb: ptr(ns.deviceGb), HeadroomGb: p.Settings.HeadroomGb}
			for i := range max(ns.devices, 1) {
				n.Domains = append(n.Domains, model.Domain{ID: fmt.Sprintf("device:cuda:%d", i), Kind: "device", Budget: model.ComputeBudget(dev)})
			}
		}
		p.Nodes = append(p.Nodes, n)
	}
	primary := map[string]string{}
	device := map[string]bool{}
	gpus := map[string]int{}
	for _, ns := range b.nodes {
		primary[ns.node.ID] = ns.primary
		device[ns.node.ID] = ns.deviceGb > 0
		if ns.deviceGb > 0 {
			gpus[ns.node.ID] = max(ns.devices, 1)
		}
	}
	for _, v := range b.variants {
		if g, ok := b.gpus[v.ID]; ok {
			v.Placements = g.expand(v, primary, gpus)
		}
		for i := range v.Placements {
			pl := &v.Placements[i]
			if pl.Draws != nil {
				continue
			}
			pl.Draws = []model.Draw{}
			for _, id := range pl.Nodes {
				dom := primary[id]
				if dom == "" {
					dom = "unified:0"
				}
				pl.Draws = append(pl.Draws, model.Draw{Node: id, Domain: dom, Gb: v.MemoryGb})
				if v.DeviceMemoryGb > 0 && device[id] {
					pl.Draws = append(pl.Draws, model.Draw{Node: id, Domain: DeviceDomain, Gb: v.DeviceMemoryGb})
				}
			}
		}
		if v.Req.NodeCount == 0 {
			v.Req.NodeCount = 1
			if len(v.Placements) > 0 {
				v.Req.NodeCount = len(v.Placements[0].Nodes)
			}
		}
		if v.Req.TensorParallel == 0 {
			v.Req.TensorParallel = v.Req.NodeCount
		}
		for _, m := range v.Models {
			mm := b.model(m)
			if !slices.Contains(mm.Variants, v.ID) {
				mm.Variants = append(mm.Variants, v.ID)
			}
		}
		p.Variants = append(p.Variants, v)
	}
	for _, id := range b.order {
		m := b.models[id]
		slices.Sort(m.Variants)
		p.Models = append(p.Models, *m)
	}
	for _, f := range b.late {
		f(p)
	}
	p.Sort()
	return p
}

// DeviceDomain is the device memory domain GPU nodes get (the first,
// where they have several).
const DeviceDomain = "device:cuda:0"

// gpuSpec is a variant's draw on k GPUs of each of its nodes, gb each.
type gpuSpec struct {
	k      int
	gb     float64
	choose bool // any k of the node's GPUs; else the first k
}

// expand gives v's placements their draws: the primary domain, then k
// GPUs per node, one placement per choice of them when choose is set.
func (g gpuSpec) expand(v model.Variant, primary map[string]string, gpus map[string]int) []model.Placement {
	var out []model.Placement
	for _, pl := range v.Placements {
		base := model.Placement{Nodes: pl.Nodes}
		for _, n := range pl.Nodes {
			base.Draws = append(base.Draws, model.Draw{Node: n, Domain: primary[n], Gb: v.MemoryGb})
		}
		var rec func(i int, cur model.Placement)
		rec = func(i int, cur model.Placement) {
			if i == len(pl.Nodes) {
				slices.Sort(cur.Devices)
				out = append(out, cur)
				return
			}
			n := pl.Nodes[i]
			if !g.choose || gpus[n] <= g.k {
				next := model.Placement{Nodes: cur.Nodes, Devices: slices.Clone(cur.Devices), Draws: slices.Clone(cur.Draws)}
				for d := range g.k {
					dom := fmt.Sprintf("device:cuda:%d", d)
					if d >= gpus[n] {
						dom = "device:missing"
					}
					next.Draws = append(next.Draws, model.Draw{Node: n, Domain: dom, Gb: g.gb})
				}
				rec(i+1, next)
				return
			}
			for _, set := range subsets(gpus[n], g.k) {
				next := model.Placement{Nodes: cur.Nodes, Devices: slices.Clone(cur.Devices), Draws: slices.Clone(cur.Draws)}
				for _, d := range set {
					dom := fmt.Sprintf("device:cuda:%d", d)
					next.Draws = append(next.Draws, model.Draw{Node: n, Domain: dom, Gb: g.gb})
					next.Devices = append(next.Devices, model.DeviceRef(n, dom))
				}
				rec(i+1, next)
			}
		}
		rec(0, base)
	}
	return out
}

// subsets lists the k-subsets of 0..n-1 in lexicographic order.
func subsets(n, k int) [][]int {
	var out [][]int
	var cur []int
	var rec func(from int)
	rec = func(from int) {
		if len(cur) == k {
			out = append(out, slices.Clone(cur))
			return
		}
		for i := from; i < n; i++ {
			cur = append(cur, i)
			rec(i + 1)
			cur = cur[:len(cur)-1]
		}
	}
	rec(0)
	return out
}

func ptr(x float64) *float64 { return &x }

func (b *builder) model(id string) *model.Model {
	if m, ok := b.models[id]; ok {
		return m
	}
	m := &model.Model{ID: id, Kind: "chat"}
	b.models[id] = m
	b.order = append(b.order, id)
	return m
}

// alias runs f on the alias once every part is in.
func (b *builder) alias(id string, f func(*model.Alias)) {
	b.late = append(b.late, func(p *model.Pool) {
		for i := range p.Aliases {
			if p.Aliases[i].ID == id {
				f(&p.Aliases[i])
				return
			}
		}
		panic(fmt.Sprintf("pooltest: no alias %q", id))
	})
}

// NodeOpt adjusts a node.
type NodeOpt func(*nodeSpec)

// Node is a machine with capacityGb of primary memory (unified:0 unless an
// option says otherwise) and no reported platform or arch.
func Node(id string, capacityGb float64, opts ...NodeOpt) Part {
	return func(b *builder) {
		ns := nodeSpec{node: model.Node{ID: id, Source: "test"}, capacityGb: capacityGb, primary: "unified:0"}
		for _, o := range opts {
			o(&ns)
		}
		b.nodes = append(b.nodes, ns)
	}
}

// Spark makes the node a DGX Spark (GB10): linux-arm64, sm_121, unified.
func Spark() NodeOpt {
	return func(ns *nodeSpec) {
		ns.node.Platform, ns.node.Archs, ns.primary = "linux-arm64", []string{"sm_121"}, "unified:0"
		ns.node.Accelerators = []string{"nvidia"}
	}
}

// Mac makes the node an Apple Silicon Mac: darwin-arm64, apple-metal, unified.
func Mac() NodeOpt {
	return func(ns *nodeSpec) {
		ns.node.Platform, ns.node.Archs, ns.primary = "darwin-arm64", []string{"apple-metal"}, "unified:0"
		ns.node.Accelerators = []string{"metal"}
	}
}

// GPU makes the node a linux-x64 GPU server: sm_90, system:0 plus a
// device:cuda:0 domain of deviceGb.
func GPU(deviceGb float64) NodeOpt {
	return func(ns *nodeSpec) {
		ns.node.Platform, ns.node.Archs, ns.primary = "linux-x64", []string{"sm_90"}, "system:0"
		ns.node.Accelerators = []string{"nvidia"}
		ns.deviceGb = deviceGb
	}
}

// GPUs makes the node a linux-x64 GPU server with n GPUs, each its own
// device domain (device:cuda:0 ...) of deviceGb.
func GPUs(n int, deviceGb float64) NodeOpt {
	return func(ns *nodeSpec) {
		GPU(deviceGb)(ns)
		ns.devices = n
	}
}

// PerGPU makes the variant draw gb on each of k GPUs of every node it
// runs on, any k of the node's GPUs (one placement per set, as a recipe
// the plan installs may take), beside its memory on the primary domain.
func PerGPU(k int, gb float64) VariantOpt {
	return func(v *variantSpec) { v.gpu = &gpuSpec{k: k, gb: gb, choose: true} }
}

// FirstGPUs is PerGPU on the node's first k GPUs only, as a configured
// runtime whose launch names no device uses them.
func FirstGPUs(k int, gb float64) VariantOpt {
	return func(v *variantSpec) { v.gpu = &gpuSpec{k: k, gb: gb} }
}

// Unavailable marks the node as carrying no lanes, for the given reason.
func Unavailable(reason string) NodeOpt { return func(ns *nodeSpec) { ns.node.Unavailable = reason } }

// Cordoned is Unavailable("cordoned").
func Cordoned() NodeOpt { return Unavailable("cordoned") }

// BudgetGb sets the node's memoryBudgetGb.
func BudgetGb(gb float64) NodeOpt { return func(ns *nodeSpec) { ns.budgetGb = ptr(gb) } }

// Commands lists installed commands (for recipe installability).
func Commands(cs ...string) NodeOpt {
	return func(ns *nodeSpec) { ns.node.Commands = append(ns.node.Commands, cs...) }
}

// Images lists local Docker images.
func Images(is ...string) NodeOpt {
	return func(ns *nodeSpec) { ns.node.Images = append(ns.node.Images, is...) }
}

// Cached lists weights already on the node.
func Cached(ws ...string) NodeOpt {
	return func(ns *nodeSpec) { ns.node.CachedWeights = append(ns.node.CachedWeights, ws...) }
}

// ModelRoot adds a weights folder with freeGb of disk.
func ModelRoot(path string, freeGb float64) NodeOpt {
	return func(ns *nodeSpec) {
		ns.node.ModelRoots = append(ns.node.ModelRoots, model.ModelRoot{Path: path, FreeGb: freeGb})
	}
}

// Link joins two nodes directly (order does not matter).
func Link(a, b string) Part {
	if b < a {
		a, b = b, a
	}
	return func(bd *builder) { bd.pool.Links = append(bd.pool.Links, model.Link{A: a, B: b, Source: "test"}) }
}

// VariantOpt adjusts a variant.
type VariantOpt func(*variantSpec)

// variantSpec is a variant being built, with what New derives later.
type variantSpec struct {
	model.Variant
	gpu *gpuSpec
}

// Variant is a managed runtime needing memGb per node. Without Serves it
// serves a model named like itself; without On it has no placement. Defaults:
// first token 1000 ms, load 30 s, default residency auto.
func Variant(id string, memGb float64, opts ...VariantOpt) Part {
	return func(b *builder) {
		v := variantSpec{Variant: model.Variant{
			ID: id, Kind: model.Managed, Runtime: id, MemoryGb: memGb, MemorySource: "test",
			Perf:       model.Performance{FirstTokenMs: 1000, Source: "default"},
			LoadTimeMs: 30000, DefaultResidency: model.Auto,
		}}
		for _, o := range opts {
			o(&v)
		}
		if len(v.Models) == 0 {
			v.Models = []string{id}
		}
		if v.gpu != nil {
			if b.gpus == nil {
				b.gpus = map[string]gpuSpec{}
			}
			b.gpus[id] = *v.gpu
		}
		b.variants = append(b.variants, v.Variant)
	}
}

// Serves names the models the variant's runtime serves.
func Serves(models ...string) VariantOpt {
	return func(v *variantSpec) { v.Models = append(v.Models, models...) }
}

// On adds a candidate placement on the given nodes (sorted). Fixed
// variants take one; recipes may take several.
func On(nodes ...string) VariantOpt {
	return func(v *variantSpec) {
		ns := slices.Clone(nodes)
		slices.Sort(ns)
		v.Placements = append(v.Placements, model.Placement{Nodes: ns})
	}
}

// Kind sets where the variant comes from.
func Kind(k model.VariantKind) VariantOpt { return func(v *variantSpec) { v.Kind = k } }

// TP sets the tensor-parallel size, which is also the node count.
func TP(n int) VariantOpt {
	return func(v *variantSpec) { v.Req.NodeCount, v.Req.TensorParallel = n, n }
}

// Perf sets first-token and total latency (0 total = unknown).
func Perf(firstTokenMs, totalMs float64) VariantOpt {
	return func(v *variantSpec) {
		v.Perf = model.Performance{FirstTokenMs: firstTokenMs, TotalMs: totalMs, Source: "benchmark:test"}
	}
}

// LoadMs sets the load time.
func LoadMs(ms float64) VariantOpt { return func(v *variantSpec) { v.LoadTimeMs = ms } }

// DefaultResidency sets what the config says today.
func DefaultResidency(r model.Residency) VariantOpt {
	return func(v *variantSpec) { v.DefaultResidency = r }
}

// DeviceGb sets device memory per node, drawn from device:cuda:0 where the
// node has it.
func DeviceGb(gb float64) VariantOpt { return func(v *variantSpec) { v.DeviceMemoryGb = gb } }

// Archs requires one of the compute archs.
func Archs(as ...string) VariantOpt {
	return func(v *variantSpec) { v.Req.ComputeArchs = append(v.Req.ComputeArchs, as...) }
}

// Platforms requires one of the platforms.
func Platforms(ps ...string) VariantOpt {
	return func(v *variantSpec) { v.Req.Platforms = append(v.Req.Platforms, ps...) }
}

// Needs sets a recipe's backend: commands it needs, or images (any one).
func Needs(commands, images []string) VariantOpt {
	return func(v *variantSpec) { v.Req.Commands, v.Req.Images = commands, images }
}

// Weights sets a recipe's weights and the disk they take.
func Weights(diskGb float64, ws ...string) VariantOpt {
	return func(v *variantSpec) { v.Req.Weights, v.Req.DiskGb = ws, diskGb }
}

// External is a cloud model; firstTokenMs 0 means "no metrics".
func External(id string, firstTokenMs float64) Part {
	return func(b *builder) {
		m := b.model(id)
		m.External, m.Kind = true, "external"
		m.Perf = model.Performance{FirstTokenMs: firstTokenMs, Source: "metrics"}
	}
}

// LocalModel declares a local model explicitly (one no variant serves, for
// instance).
func LocalModel(id string) Part { return func(b *builder) { b.model(id) } }

// Direct sets requests for a model by its own id.
func Direct(modelID string, demand float64) Part {
	return func(b *builder) { b.model(modelID).DirectDemand = demand }
}

// Required marks a model as one that must stay covered.
func Required(modelID string) Part { return func(b *builder) { b.model(modelID).Required = true } }

// Alias is a client-facing name with demand and ordered members.
func Alias(id string, demand float64, members ...string) Part {
	return func(b *builder) {
		b.pool.Aliases = append(b.pool.Aliases, model.Alias{ID: id, Members: slices.Clone(members), Demand: demand, DemandSource: "test"})
	}
}

// RouteProfile adds a named member list to an alias.
func RouteProfile(alias, name string, members ...string) Part {
	return func(b *builder) {
		b.alias(alias, func(a *model.Alias) {
			a.Routes = append(a.Routes, model.Route{Name: name, Members: slices.Clone(members)})
		})
	}
}

// SLO bounds an alias's latency; 0 leaves a bound unset.
func SLO(alias string, firstTokenMs, totalMs float64) Part {
	return func(b *builder) {
		b.alias(alias, func(a *model.Alias) { a.SLO = &model.SLO{FirstTokenMs: firstTokenMs, TotalMs: totalMs} })
	}
}

// Running says the variant runs now on nodes with residency r.
func Running(variant string, r model.Residency, nodes ...string) Part {
	return func(b *builder) {
		ns := slices.Clone(nodes)
		slices.Sort(ns)
		b.pool.Current.Lanes = append(b.pool.Current.Lanes, model.CurrentLane{Variant: variant, Nodes: ns, Residency: r, Status: "running"})
	}
}

// RunningOn says the variant runs now on one node's GPUs (domain ids,
// "device:cuda:1") with residency r.
func RunningOn(variant string, r model.Residency, node string, gpus ...string) Part {
	return func(b *builder) {
		var devs []string
		for _, g := range gpus {
			devs = append(devs, model.DeviceRef(node, g))
		}
		slices.Sort(devs)
		b.pool.Current.Lanes = append(b.pool.Current.Lanes, model.CurrentLane{Variant: variant, Nodes: []string{node}, Devices: devs, Residency: r, Status: "running"})
	}
}

// Routed says the alias serves primary first now.
func Routed(alias, primary string) Part {
	return func(b *builder) {
		b.pool.Current.Routes = append(b.pool.Current.Routes, model.CurrentRoute{Alias: alias, Primary: primary})
	}
}

// PinLane forces the variant placed, on nodes when given, with residency r
// when not empty.
func PinLane(variant string, r model.Residency, nodes ...string) Part {
	return func(b *builder) {
		ns := slices.Clone(nodes)
		slices.Sort(ns)
		label := variant
		if len(ns) > 0 {
			label += "@" + strings.Join(ns, "+")
		}
		if r != "" {
			label += ":" + string(r)
		}
		b.pool.Pins = append(b.pool.Pins, model.Pin{Source: model.PinFlag, Variant: variant, Nodes: ns, Residency: r, Label: label})
	}
}

// PinRoute forces the alias to serve from the first available member.
func PinRoute(alias string, members ...string) Part {
	return func(b *builder) {
		b.pool.Pins = append(b.pool.Pins, model.Pin{
			Source: model.PinFlag, Alias: alias, Route: slices.Clone(members),
			Label: alias + "=" + strings.Join(members, ","),
		})
	}
}

// Settings adjusts the settings; budgets use the final headroom.
func Settings(f func(*model.Settings)) Part { return func(b *builder) { f(&b.pool.Settings) } }

// FineMemory reproduces memory figures finer than the
// encoding's units: gb-a plans budget - 4 GiB of headroom; a keepWarm
// lane of keep GiB and a lane of fine GiB may only run there (gb-b,
// 32 - 8 - 4 = 20 GiB, is too small for either).
func FineMemory(budget, keep, fine float64) *model.Pool {
	return New(
		Node("gb-a", 128, BudgetGb(budget)),
		Node("gb-b", 32),
		Variant("keep", keep, On("gb-a"), On("gb-b"), Perf(500, 0)),
		Variant("fine", fine, On("gb-a"), On("gb-b"), Perf(500, 0)),
		PinLane("keep", model.Always),
		Alias("chat", 10, "keep"),
		Alias("code", 10, "fine"),
	)
}
