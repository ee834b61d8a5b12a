package catalog

import (
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

// maxPlacements caps the candidate placements of one recipe variant, so a
// TP8 recipe on a 512-node pool cannot blow up the catalog.
const maxPlacements = 4096

func (b *builder) buildVariants() {
	b.variantOf = map[string]string{}
	b.served = map[string][]string{}
	members := map[string]string{}
	for _, id := range slices.Sorted(maps.Keys(b.cfg.Runtimes)) {
		rt := b.cfg.Runtimes[id]
		if rt.Placement != nil && rt.Placement.Mode == lloom.ModeDistributed {
			for _, m := range rt.Placement.Members {
				if m.Runtime != "" && m.Runtime != id {
					members[m.Runtime] = id
				}
			}
		}
	}
	runtimeModels := map[string][]string{}
	b.forwarded = map[string]map[string]string{}
	for _, m := range b.cfg.Models {
		for _, t := range lloom.ModelTargets(m) {
			rid, via := t.Runtime, ""
			if rid == "" {
				rid, via = b.forwardedRuntime(m, t), t.Node
			}
			if rid == "" {
				continue
			}
			if g, ok := members[rid]; ok {
				rid = g
			}
			runtimeModels[rid] = append(runtimeModels[rid], m.ID)
			if via != "" {
				if b.forwarded[rid] == nil {
					b.forwarded[rid] = map[string]string{}
				}
				b.forwarded[rid][m.ID] = via
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(b.cfg.Runtimes)) {
		if g, ok := members[id]; ok {
			b.setVariantOf(id, g)
			continue
		}
		rt := b.cfg.Runtimes[id]
		if !rt.Enabled {
			b.note("runtime %s is not enabled: LLooM will not route to it, so it is not planned", id)
			continue
		}
		if rt.Maintenance != nil && rt.Maintenance.State != "" {
			b.note("runtime %s is in maintenance (%s): not planned", id, rt.Maintenance.State)
			continue
		}
		models := sortedUniq(runtimeModels[id])
		if len(models) == 0 {
			b.note("runtime %s serves no model: not planned", id)
			continue
		}
		b.addRuntimeVariant(id, rt, models)
	}
	b.addPoolVariants()
	b.addFederatedVariants()
}

// poolBlock returns the first pool block among models (sorted), if any.
func (b *builder) poolBlock(models []string) *lloom.ModelPool {
	for _, id := range models {
		if m := b.configModel(id); m != nil && m.Pool != nil {
			return m.Pool
		}
	}
	return nil
}

func (b *builder) configModel(id string) *lloom.Model {
	for i := range b.cfg.Models {
		if b.cfg.Models[i].ID == id {
			return &b.cfg.Models[i]
		}
	}
	return nil
}

func (b *builder) recipeByID(id string) *lloom.Recipe {
	for _, r := range b.in.Recipes {
		if r != nil && r.ID == id {
			return r
		}
	}
	return nil
}

func (b *builder) addRuntimeVariant(id string, rt lloom.Runtime, models []string) {
	pl := lloom.RuntimePlacement(rt, id, b.current)
	nodes := sortedUniq(pl.Nodes)
	if len(nodes) == 0 && pl.Node != "" {
		nodes = []string{pl.Node}
	}
	pool := b.poolBlock(models)
	if pool != nil && len(pool.Nodes) > 0 && len(nodes) == 0 {
		nodes = sortedUniq(pool.Nodes)
	}
	if len(nodes) == 0 {
		b.configProblem(fmt.Sprintf("$.runtimes[%q]", id), "runtime has no node: set node or placement, or cluster.nodeId")
		return
	}
	v := model.Variant{ID: id, Kind: model.Managed, Runtime: id, Models: models, Forwarded: b.forwardedOnly(id, models)}
	if rt.IsExternal() || (pool != nil && pool.Management == lloom.External) {
		v.Kind = model.Unmanaged
	}
	// Launch settings of the runtime and of its distributed members.
	args := append(append([]string(nil), rt.Args...), bootstrapCommand(rt)...)
	env := rt.Env
	create := bootstrapCreate(rt)
	for _, m := range pl.Members {
		if mr, ok := b.cfg.Runtimes[m.Runtime]; ok && m.Runtime != id {
			args = append(append(args, mr.Args...), bootstrapCommand(mr)...)
			create = append(create, bootstrapCreate(mr)...)
			env = mergeEnv(env, mr.Env)
		}
	}
	launch := lloom.InferFromLaunch(args, env, create)
	var recipe *lloom.Recipe
	if rt.Recipe != nil {
		recipe = b.recipeByID(rt.Recipe.ID)
	}
	v.Req = b.requirements(len(nodes), pool, recipe, launch, models, pl.Mode == lloom.ModeDistributed)
	if rt.Bootstrap != nil && rt.Bootstrap.Image != "" {
		v.Req.Images = []string{rt.Bootstrap.Image}
	}
	switch {
	case recipe != nil && recipe.Backend.ID != "":
		v.Req.Backend = recipe.Backend.ID
	case rt.Bootstrap != nil && rt.Bootstrap.Image != "":
		v.Req.Backend = "docker:" + imageName(rt.Bootstrap.Image)
	case rt.Command != "":
		v.Req.Backend = path.Base(rt.Command)
	case rt.Adapter != "":
		v.Req.Backend = rt.Adapter
	}

	estimates := b.cfg.RuntimeResourcesByNode(id, b.current)
	perNode := map[string]float64{}
	estSource := "estimate"
	for _, n := range nodes {
		perNode[n] = estimates[n].MemoryGb
	}
	if pool != nil && pool.MemoryGbPerNode != nil {
		for _, n := range nodes {
			if perNode[n] == 0 {
				perNode[n] = *pool.MemoryGbPerNode
			}
		}
		estSource = "estimate"
	}
	v.MemoryGb, v.MemorySource = b.raiseToRSS(id, pl, nodes, perNode, estSource)
	v.Placements = []model.Placement{b.placement(nodes, perNode)}
	devs := devicesPerNode(v.Req.TensorParallel, len(nodes))
	ests := []*lloom.ResourceEstimate{rt.ResourceEstimate}
	if recipe != nil {
		ests = append(ests, recipe.Requirements.ResourceEstimate)
	}
	v.Placements = b.drawNeeds(v.Placements[0], func(n string) []lloom.DomainNeed {
		return domainNeeds(ests, estimates[n].GPUMemoryGb, devs)
	}, devs, lloom.VisibleDevices(env, create), false)
	if rt.GPUMemoryGb != nil && *rt.GPUMemoryGb > 0 {
		v.DeviceMemoryGb = *rt.GPUMemoryGb
	}

	v.Perf = b.performance(models, recipeID(rt), nodes, v.Req.MaxSequences)
	v.LoadTimeMs = b.loadTime(id, pool, v.MemoryGb)
	v.DefaultResidency = model.Residency(lloom.RuntimeResidency(rt))
	if fixed, ok := v.FixedResidency(); ok {
		v.DefaultResidency = fixed
	}
	if rt.Policy != nil && rt.Policy.Priority != nil {
		v.Priority = int(*rt.Policy.Priority)
	} else if rt.Priority != nil {
		v.Priority = int(*rt.Priority)
	}
	b.addVariant(v)
}

func recipeID(rt lloom.Runtime) string {
	if rt.Recipe != nil {
		return rt.Recipe.ID
	}
	return ""
}

func bootstrapCommand(rt lloom.Runtime) []string {
	if rt.Bootstrap == nil {
		return nil
	}
	return rt.Bootstrap.Command
}

func bootstrapCreate(rt lloom.Runtime) []string {
	if rt.Bootstrap == nil {
		return nil
	}
	return rt.Bootstrap.CreateArgs
}

func mergeEnv(a, c map[string]string) map[string]string {
	if len(c) == 0 {
		return a
	}
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range c {
		if _, ok := out[k]; !ok {
			out[k] = v
		}
	}
	return out
}

// imageName drops registry digest and tag: vllm/vllm-openai@sha256:.. -> vllm/vllm-openai.
func imageName(s string) string {
	if i := strings.Index(s, "@"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndex(s, ":"); i > strings.LastIndex(s, "/") {
		s = s[:i]
	}
	return s
}

// requirements merges, in order of trust: the model pool block, the
// recipe's declared requirements, then what the launch settings imply.
func (b *builder) requirements(nodeCount int, pool *lloom.ModelPool, recipe *lloom.Recipe, launch lloom.Launch, models []string, distributed bool) model.Requirements {
	r := model.Requirements{NodeCount: nodeCount, Sources: map[string]string{}}
	set := func(field, source string) { r.Sources[field] = source }
	switch {
	case pool != nil && pool.TensorParallel != nil:
		r.TensorParallel = *pool.TensorParallel
		set("tensorParallel", "pool block")
	case recipe != nil && recipe.Requirements.TensorParallel != nil:
		r.TensorParallel = *recipe.Requirements.TensorParallel
		set("tensorParallel", "recipe")
	case launch.TensorParallel > 0:
		r.TensorParallel = launch.TensorParallel
		set("tensorParallel", "launch args")
	case distributed:
		r.TensorParallel = nodeCount
		set("tensorParallel", "one rank per member")
	default:
		r.TensorParallel = 1
		set("tensorParallel", "default")
	}
	switch {
	case pool != nil && len(pool.ComputeArchs) > 0:
		r.ComputeArchs = normArchs(pool.ComputeArchs)
		set("computeArchs", "pool block")
	case recipe != nil && len(recipe.Requirements.ComputeArchs) > 0:
		r.ComputeArchs = normArchs(recipe.Requirements.ComputeArchs)
		set("computeArchs", "recipe")
	case len(launch.ComputeArchs) > 0:
		r.ComputeArchs = normArchs(launch.ComputeArchs)
		set("computeArchs", "launch env")
	}
	switch {
	case pool != nil && len(pool.Platforms) > 0:
		r.Platforms = pool.Platforms
		set("platforms", "pool block")
	case recipe != nil && len(recipe.Requirements.Platforms) > 0:
		r.Platforms = recipe.Requirements.Platforms
		set("platforms", "recipe")
	}
	switch {
	case pool != nil && len(pool.Accelerators) > 0:
		r.Accelerators = pool.Accelerators
		set("accelerators", "pool block")
	case recipe != nil && len(recipe.Requirements.Accelerators) > 0:
		r.Accelerators = recipe.Requirements.Accelerators
		set("accelerators", "recipe")
	}
	switch {
	case pool != nil && pool.MaxSequences != nil:
		r.MaxSequences = *pool.MaxSequences
		set("maxSequences", "pool block")
	case launch.MaxSequences > 0:
		r.MaxSequences = launch.MaxSequences
		set("maxSequences", "launch args")
	}
	for _, id := range models {
		if m := b.configModel(id); m != nil && m.ContextWindow != nil && *m.ContextWindow > r.ContextWindow {
			r.ContextWindow = *m.ContextWindow
			set("contextWindow", "model")
		}
	}
	if r.ContextWindow == 0 && launch.ContextWindow > 0 {
		r.ContextWindow = launch.ContextWindow
		set("contextWindow", "launch args")
	}
	return r
}

func normArchs(in []string) []string {
	out := make([]string, 0, len(in))
	for _, a := range in {
		out = append(out, lloom.NormalizeArch(a))
	}
	return sortedUniq(out)
}

// raiseToRSS raises each node's memory to what the node status measured
// for the runtime (or its member on that node) when that is larger.
func (b *builder) raiseToRSS(id string, pl lloom.ResolvedPlacement, nodes []string, perNode map[string]float64, source string) (float64, string) {
	raised := false
	for _, n := range nodes {
		st := b.in.Nodes[n].Status
		if st == nil {
			continue
		}
		ids := []string{id}
		for _, m := range pl.Members {
			if m.Node == n && m.Runtime != "" {
				ids = append(ids, m.Runtime)
			}
		}
		for _, rid := range ids {
			row, ok := st.RuntimeManager.Runtimes[rid]
			if !ok || row.MemoryUsage == nil || row.MemoryUsage.ResidentBytes == nil {
				continue
			}
			rss := float64(*row.MemoryUsage.ResidentBytes) / model.GiB
			if rss > perNode[n]+1e-9 {
				b.note("%s on %s: measured RSS %s is above the %s estimate; planning with the RSS", id, n, model.Gb(rss), model.Gb(perNode[n]))
				perNode[n] = math.Ceil(rss*10) / 10
				raised = true
			}
		}
	}
	max := 0.0
	for _, n := range nodes {
		max = math.Max(max, perNode[n])
	}
	if max == 0 {
		b.note("%s declares no memory (memoryGb) and none was measured: planned as 0 GiB", id)
	}
	if raised {
		return max, "rss"
	}
	return max, source
}

// placement draws each node's memory from its primary domain.
func (b *builder) placement(nodes []string, perNode map[string]float64) model.Placement {
	p := model.Placement{Nodes: append([]string(nil), nodes...)}
	sort.Strings(p.Nodes)
	prim := b.primaryDomains()
	for _, n := range p.Nodes {
		dom, ok := prim[n]
		if !ok {
			dom = "system:0"
		}
		p.Draws = append(p.Draws, model.Draw{Node: n, Domain: dom, Gb: perNode[n]})
	}
	return p
}

// primaryDomains maps each node that has one to its primary domain's
// id, built again when nodes are added (a scan of the nodes for every
// placement took 1.4 s of 1024x4000's load).
func (b *builder) primaryDomains() map[string]string {
	if b.primary != nil && b.primaryOf == len(b.pool.Nodes) {
		return b.primary
	}
	b.primary, b.primaryOf = make(map[string]string, len(b.pool.Nodes)), len(b.pool.Nodes)
	for i := range b.pool.Nodes {
		if d := b.pool.Nodes[i].PrimaryDomain(); d != nil {
			b.primary[b.pool.Nodes[i].ID] = d.ID // the last node of an id with one
		}
	}
	return b.primary
}

func (b *builder) loadTime(id string, pool *lloom.ModelPool, memGb float64) float64 {
	if rp, ok := b.policy.Runtimes[id]; ok && rp.LoadTimeMs > 0 {
		return rp.LoadTimeMs
	}
	if pool != nil && pool.LoadTimeMs != nil && *pool.LoadTimeMs > 0 {
		return *pool.LoadTimeMs
	}
	return math.Round(memGb * b.policy.LoadSecondsPerGb * 1000)
}

func (b *builder) addVariant(v model.Variant) {
	for _, m := range v.Models {
		b.served[m] = append(b.served[m], v.ID)
	}
	if v.Runtime != "" {
		b.setVariantOf(v.Runtime, v.ID)
	}
	b.pool.Variants = append(b.pool.Variants, v)
}

// addPoolVariants declares unmanaged lanes for models whose pool block
// stands for a server LLooM does not know as a runtime.
func (b *builder) addPoolVariants() {
	for _, m := range b.cfg.Models {
		if m.Pool == nil || len(b.served[m.ID]) > 0 {
			continue
		}
		hasRuntime := false
		for _, t := range lloom.ModelTargets(m) {
			if t.Runtime != "" || t.RemoteRuntime != "" {
				hasRuntime = true
			}
		}
		if hasRuntime {
			continue // its runtime is disabled or unknown; already noted
		}
		if len(m.Pool.Nodes) == 0 {
			b.configProblem(fmt.Sprintf("$.models[id=%q].pool.nodes", m.ID), "expected the nodes the unmanaged lane runs on")
			continue
		}
		nodes := sortedUniq(m.Pool.Nodes)
		perNode := map[string]float64{}
		for _, n := range nodes {
			if m.Pool.MemoryGbPerNode != nil {
				perNode[n] = *m.Pool.MemoryGbPerNode
			}
		}
		v := model.Variant{ID: "pool:" + m.ID, Kind: model.Unmanaged, Models: []string{m.ID}}
		v.Req = b.requirements(len(nodes), m.Pool, nil, lloom.Launch{}, v.Models, len(nodes) > 1)
		v.MemoryGb, v.MemorySource = b.raiseToRSS(v.ID, lloom.ResolvedPlacement{}, nodes, perNode, "estimate")
		v.Placements = []model.Placement{b.placement(nodes, perNode)}
		v.Perf = b.performance(v.Models, "", nodes, v.Req.MaxSequences)
		v.LoadTimeMs = b.loadTime(v.ID, m.Pool, v.MemoryGb)
		v.DefaultResidency = model.Always
		b.addVariant(v)
	}
}

// forwardedRuntime is the runtime of this config that a federated target
// forwards to, or "" when the config does not declare it. LLooM routes a
// federated model to the peer's gateway, which serves it with the runtime
// named remoteRuntime (or, without one, with whatever serves the peer's
// model of that id); when the config declares that runtime, the proxy is
// one more name of its lane, not a lane of its own.
func (b *builder) forwardedRuntime(m lloom.Model, t lloom.ResolvedTarget) string {
	if t.Node == "" || t.RemoteRuntime == "" && !m.Federated {
		return ""
	}
	if t.RemoteRuntime != "" {
		if _, ok := b.cfg.Runtimes[t.RemoteRuntime]; ok {
			return t.RemoteRuntime
		}
		return ""
	}
	remote := b.configModel(t.UpstreamModel)
	if remote == nil || remote.Federated {
		return ""
	}
	var rts []string
	for _, rt := range lloom.ModelTargets(*remote) {
		if rt.Runtime != "" {
			rts = append(rts, rt.Runtime)
		}
	}
	if rts = sortedUniq(rts); len(rts) == 1 {
		return rts[0]
	}
	return ""
}

// forwardedOnly keeps the entries of the runtime's forwarded names that
// the lane serves; nil when there are none.
func (b *builder) forwardedOnly(runtime string, models []string) map[string]string {
	var out map[string]string
	for id, via := range b.forwarded[runtime] {
		if slices.Contains(models, id) {
			if out == nil {
				out = map[string]string{}
			}
			out[id] = via
		}
	}
	return out
}

// addFederatedVariants adds one variant per remote runtime of a federated
// node that this config does not declare: the lane another gateway owns.
func (b *builder) addFederatedVariants() {
	type key struct{ node, runtime string }
	byKey := map[key][]string{}
	for _, m := range b.cfg.Models {
		for _, t := range lloom.ModelTargets(m) {
			if t.RemoteRuntime == "" && !(m.Federated && t.Node != "") {
				continue
			}
			if t.Node == "" || t.Runtime != "" || b.forwardedRuntime(m, t) != "" {
				continue
			}
			rr := t.RemoteRuntime
			if rr == "" {
				rr = t.UpstreamModel
			}
			k := key{t.Node, rr}
			byKey[k] = append(byKey[k], m.ID)
		}
	}
	keys := make([]key, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].node != keys[j].node {
			return keys[i].node < keys[j].node
		}
		return keys[i].runtime < keys[j].runtime
	})
	for _, k := range keys {
		models := sortedUniq(byKey[k])
		pool := b.poolBlock(models)
		perNode := map[string]float64{k.node: 0}
		if pool != nil && pool.MemoryGbPerNode != nil {
			perNode[k.node] = *pool.MemoryGbPerNode
		}
		v := model.Variant{ID: "federated:" + k.node + "/" + k.runtime, Kind: model.Federated, Runtime: k.runtime, Models: models}
		v.Req = b.requirements(1, pool, nil, lloom.Launch{}, models, false)
		v.MemoryGb, v.MemorySource = perNode[k.node], "estimate"
		if v.MemoryGb == 0 {
			v.MemorySource = "unknown (the federated gateway admits it)"
		}
		v.Placements = []model.Placement{b.placement([]string{k.node}, perNode)}
		v.Perf = b.performance(models, "", []string{k.node}, v.Req.MaxSequences)
		v.LoadTimeMs = b.loadTime(v.ID, pool, v.MemoryGb)
		v.DefaultResidency = model.Always
		v.Runtime = ""
		b.addVariant(v)
	}
}

// addRecipeVariants adds bundled recipes as free variants, for models the
// config already knows (by gateway id or upstream model).
func (b *builder) addRecipeVariants() {
	for _, r := range b.in.Recipes {
		if r == nil {
			continue
		}
		for i, rm := range r.Models {
			gw := b.recipeGatewayModel(rm)
			if gw == "" {
				continue
			}
			name := rm.Runtime
			if name == "" {
				name = fmt.Sprint(i)
			}
			v := model.Variant{ID: "recipe:" + r.ID + "/" + name, Kind: model.Recipe, Models: []string{gw}}
			launch := rm.Launch()
			k := 1
			if c := r.Requirements.Cluster; c != nil {
				switch {
				case c.Nodes != nil:
					k = *c.Nodes
				case c.MinNodes != nil:
					k = *c.MinNodes
				}
			}
			if s := rm.Settings; s != nil && s.Placement != nil && s.Placement.Mode == lloom.ModeDistributed && len(s.Placement.Members) > 0 {
				k = len(s.Placement.Members)
			}
			if k < 1 {
				k = 1
			}
			v.Req = b.requirements(k, nil, r, launch, v.Models, k > 1)
			v.Req.Commands = r.Requirements.Commands
			v.Req.Backend = r.Backend.ID
			if s := rm.Settings; s != nil && s.Runtime != nil && s.Runtime.Bootstrap != nil && s.Runtime.Bootstrap.Image != "" {
				v.Req.Images = []string{s.Runtime.Bootstrap.Image}
			}
			if rm.Model != "" {
				v.Req.Weights = []string{rm.Model}
			}
			if r.Requirements.DiskGb != nil {
				v.Req.DiskGb = *r.Requirements.DiskGb
			}
			mem, src := recipeMemory(r, rm)
			v.MemoryGb, v.MemorySource = mem, src
			v.Placements = b.cliquePlacements(k, mem)
			devs := devicesPerNode(v.Req.TensorParallel, k)
			needs := domainNeeds([]*lloom.ResourceEstimate{r.Requirements.ResourceEstimate}, recipeGPU(rm), devs)
			var pls []model.Placement
			for _, pl := range v.Placements {
				pls = append(pls, b.drawNeeds(pl, func(string) []lloom.DomainNeed { return needs }, devs, nil, true)...)
			}
			v.Placements = pls
			v.Perf = b.performance(v.Models, r.ID, nil, v.Req.MaxSequences)
			v.LoadTimeMs = b.loadTime(v.ID, nil, mem)
			v.DefaultResidency = model.Auto
			if rm.Settings != nil && rm.Settings.Priority != nil {
				v.Priority = int(*rm.Settings.Priority)
			}
			if len(v.Placements) == 0 {
				b.note("recipe %s: no node or linked set of %d nodes in the pool", r.ID, k)
			}
			b.addVariant(v)
		}
	}
}

func (b *builder) recipeGatewayModel(rm lloom.RecipeModel) string {
	for _, id := range []string{rm.GatewayModel, rm.Model} {
		if id != "" && b.configModel(id) != nil {
			return id
		}
	}
	for _, m := range b.cfg.Models {
		if rm.Model != "" && (m.UpstreamModel == rm.Model || m.UpstreamModel == rm.UpstreamModel) {
			return m.ID
		}
	}
	return ""
}

func recipeMemory(r *lloom.Recipe, rm lloom.RecipeModel) (float64, string) {
	if s := rm.Settings; s != nil {
		if s.MemoryGb != nil {
			return *s.MemoryGb, "recipe settings.memoryGb"
		}
		if s.Placement != nil {
			for _, m := range s.Placement.Members {
				if m.Resources != nil && m.Resources.MemoryGb != nil {
					return *m.Resources.MemoryGb, "recipe member resources"
				}
			}
		}
	}
	if e := r.Requirements.ResourceEstimate; e != nil && e.MemoryGb != nil {
		return *e.MemoryGb, "recipe resourceEstimate"
	}
	if r.Requirements.MemoryGb != nil {
		return *r.Requirements.MemoryGb, "recipe requirements.memoryGb"
	}
	return 0, "unknown"
}

// cliquePlacements enumerates every k-clique of the link graph (every node
// for k = 1), in lexicographic order, up to maxPlacements.
func (b *builder) cliquePlacements(k int, mem float64) []model.Placement {
	g := b.linkGraph()
	ids, adj, nbr := g.ids, g.adj, g.nbr
	var out []model.Placement
	var cur []int
	var rec func(start int)
	rec = func(start int) {
		if len(out) >= maxPlacements {
			return
		}
		if len(cur) == k {
			nodes := make([]string, k)
			per := make(map[string]float64, k)
			for t, i := range cur {
				nodes[t] = ids[i]
				per[ids[i]] = mem
			}
			out = append(out, b.placement(nodes, per))
			return
		}
		// The next member is past start and linked to every member so
		// far: among the first member's neighbours, in order, once there
		// is one.
		next := func(yield func(int) bool) {
			for i := start; i < len(ids); i++ {
				if !yield(i) {
					return
				}
			}
		}
		if len(cur) > 0 {
			ns := nbr[cur[0]]
			ns = ns[sort.SearchInts(ns, start):]
			next = func(yield func(int) bool) {
				for _, i := range ns {
					if !yield(i) {
						return
					}
				}
			}
		}
		for i := range next {
			ok := true
			for _, c := range cur[min(1, len(cur)):] {
				if !adj[c][i] {
					ok = false
					break
				}
			}
			if ok {
				cur = append(cur, i)
				rec(i + 1)
				cur = cur[:len(cur)-1]
			}
		}
	}
	rec(0)
	if len(out) >= maxPlacements {
		b.note("a %d-node recipe has more than %d candidate placements; only the first %d are considered", k, maxPlacements, maxPlacements)
	}
	return out
}

// linkGraph is the pool's nodes by sorted id and their links, as a
// matrix (adj[i][j]: ids[i] and ids[j] are linked) and as sorted
// neighbour lists, built once for every recipe's placements: rebuilt for
// each, the matrix and the search over every node took 2 s of catalog's
// 2.7 s on 1024x4000.
type linkGraph struct {
	nodes, links int // the pool's counts it was built from
	ids          []string
	adj          [][]bool
	nbr          [][]int
}

func (b *builder) linkGraph() *linkGraph {
	if g := b.graph; g != nil && g.nodes == len(b.pool.Nodes) && g.links == len(b.pool.Links) {
		return g
	}
	g := &linkGraph{nodes: len(b.pool.Nodes), links: len(b.pool.Links), ids: make([]string, len(b.pool.Nodes))}
	for i, n := range b.pool.Nodes {
		g.ids[i] = n.ID
	}
	sort.Strings(g.ids)
	at := make(map[string]int, len(g.ids))
	for i, id := range g.ids {
		at[id] = i
	}
	g.adj = make([][]bool, len(g.ids))
	for i := range g.adj {
		g.adj[i] = make([]bool, len(g.ids))
	}
	for _, l := range b.pool.Links {
		a, okA := at[l.A]
		c, okB := at[l.B]
		if okA && okB {
			g.adj[a][c], g.adj[c][a] = true, true
		}
	}
	g.nbr = make([][]int, len(g.ids))
	for i, row := range g.adj {
		for j, linked := range row {
			if linked {
				g.nbr[i] = append(g.nbr[i], j)
			}
		}
	}
	b.graph = g
	return g
}

// performance takes live gateway metrics for the lane's models, else the
// best matching benchmark, else the policy default.
func (b *builder) performance(models []string, recipe string, nodes []string, maxSeqs int) model.Performance {
	if best := b.busiestBucket(models); best != nil {
		p := model.Performance{FirstTokenMs: *best.AvgFirstContentMs, Source: "metrics:" + best.ID}
		if best.AvgDurationMs != nil {
			p.TotalMs = *best.AvgDurationMs
		}
		if best.DecodeTokensPerSecond != nil {
			p.DecodeTokPerSec = *best.DecodeTokensPerSecond
		}
		return p
	}
	if p, ok := b.benchmarkPerformance(models, recipe, nodes, maxSeqs); ok {
		return p
	}
	return model.Performance{FirstTokenMs: b.pool.Settings.DefaultFirstTokenMs, Source: "default"}
}

// benchmarkPerformance picks the best matching benchmark result: same
// recipe or model, a machine with the lane's node count and platform, and
// the lowest concurrency within the lane's sequences (first-token latency
// of a lightly loaded lane, which is what level 4 weighs).
func (b *builder) benchmarkPerformance(models []string, recipe string, nodes []string, maxSeqs int) (model.Performance, bool) {
	upstream := map[string]bool{}
	for _, id := range models {
		upstream[id] = true
		if m := b.configModel(id); m != nil && m.UpstreamModel != "" {
			upstream[m.UpstreamModel] = true
		}
	}
	platform := ""
	for _, n := range b.pool.Nodes {
		if len(nodes) > 0 && n.ID == nodes[0] {
			platform = n.Platform
		}
	}
	type cand struct {
		suite, id   string
		conc        int
		ttft, decod float64
	}
	var cands []cand
	for _, s := range b.in.Benchmarks {
		if s == nil {
			continue
		}
		for _, r := range s.Results {
			if r.Ranking != nil && !*r.Ranking {
				continue
			}
			match := (recipe != "" && r.RecipeID == recipe) ||
				(r.GatewayModel != "" && slices.Contains(models, r.GatewayModel)) ||
				(r.GatewayModel == "" && upstream[r.Model])
			if !match || r.Metrics.TimeToFirstTokenMs == nil || *r.Metrics.TimeToFirstTokenMs <= 0 {
				continue
			}
			if r.Machine.NodeCount != nil && len(nodes) > 0 && *r.Machine.NodeCount != len(nodes) {
				continue
			}
			if r.Machine.PlatformID != "" && platform != "" && r.Machine.PlatformID != platform {
				continue
			}
			c := cand{suite: s.ID, id: r.ID, conc: 1, ttft: *r.Metrics.TimeToFirstTokenMs}
			if r.Workload != nil && r.Workload.Concurrency != nil {
				c.conc = *r.Workload.Concurrency
			}
			if maxSeqs > 0 && c.conc > maxSeqs {
				continue
			}
			if r.Metrics.GenerationTokPerSec != nil {
				c.decod = *r.Metrics.GenerationTokPerSec
			}
			cands = append(cands, c)
		}
	}
	if len(cands) == 0 {
		return model.Performance{}, false
	}
	sort.Slice(cands, func(i, j int) bool {
		a, c := cands[i], cands[j]
		if a.conc != c.conc {
			return a.conc < c.conc
		}
		if a.decod != c.decod {
			return a.decod > c.decod
		}
		return a.suite+"/"+a.id < c.suite+"/"+c.id
	})
	c := cands[0]
	return model.Performance{FirstTokenMs: c.ttft, DecodeTokPerSec: c.decod, Source: "benchmark:" + c.suite + "/" + c.id}, true
}
