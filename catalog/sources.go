package catalog

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

func (b *builder) buildModels() {
	required := map[string]bool{}
	for _, k := range sortedKeys(b.cfg.Defaults) {
		required[b.cfg.Defaults[k]] = true
	}
	for id, mp := range b.policy.Models {
		if mp.Required {
			required[id] = true
		}
		if b.configModel(id) == nil {
			b.problem(b.policyFile(), fmt.Sprintf("models.%q", id), "names a model the config does not declare")
		}
	}
	for _, m := range b.cfg.Models {
		if m.ID == "" {
			continue
		}
		vs := sortedUniq(b.served[m.ID])
		pm := model.Model{ID: m.ID, Kind: m.Kind, Variants: vs, Required: required[m.ID]}
		pm.External = len(vs) == 0 && m.External() && m.Pool == nil
		if pm.External {
			pm.Perf = b.externalPerformance(m.ID)
		} else if len(vs) == 0 {
			b.note("model %s has no lane the pool can plan (its runtime is disabled, unknown or in maintenance)", m.ID)
		}
		b.pool.Models = append(b.pool.Models, pm)
	}
}

func (b *builder) externalPerformance(id string) model.Performance {
	if m := b.in.Metrics; m != nil {
		if bk := lloom.Bucket(m.Models, id); bk != nil && bk.Requests > 0 && bk.AvgFirstContentMs != nil && *bk.AvgFirstContentMs > 0 {
			p := model.Performance{FirstTokenMs: *bk.AvgFirstContentMs, Source: "metrics:" + id}
			if bk.AvgDurationMs != nil {
				p.TotalMs = *bk.AvgDurationMs
			}
			return p
		}
	}
	return model.Performance{FirstTokenMs: b.pool.Settings.ExternalFirstTokenMs, Source: "policy external.firstTokenMs"}
}

func (b *builder) policyFile() string {
	if s, ok := b.in.Sources["policy"]; ok && s.File != "" {
		return s.String()
	}
	return "pool.toml"
}

func (b *builder) isModel(id string) bool { return b.configModel(id) != nil }

// expandMembers turns a member list into model ids: nested aliases expand
// depth first, suspended members are skipped, repeats dropped.
func (b *builder) expandMembers(aliasID string, members, suspended []string) ([]string, error) {
	var out []string
	for _, m := range members {
		if slices.Contains(suspended, m) {
			continue
		}
		if _, isAlias := b.cfg.Aliases[m]; isAlias && !(b.isModel(m) && m == aliasID) {
			sub, err := b.cfg.ExpandAlias(m)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
			continue
		}
		out = append(out, m)
	}
	return uniq(out), nil
}

func (b *builder) buildAliases() {
	for _, id := range sortedKeys(b.cfg.Aliases) {
		a := b.cfg.Aliases[id]
		path := fmt.Sprintf("$.aliases[%q]", id)
		members, err := b.cfg.ExpandAlias(id)
		if err != nil {
			b.configProblem(path, "%v", err)
			continue
		}
		pa := model.Alias{ID: id, ActiveRoute: a.ActiveRoute}
		pa.Members = b.knownMembers(path+".members", members, a.OptionalMembers)
		pa.Optional = b.knownOnly(a.OptionalMembers)
		for _, name := range sortedKeys(a.RouteProfiles) {
			rp := a.RouteProfiles[name]
			ms, err := b.expandMembers(id, rp.Members, a.SuspendedMembers)
			if err != nil {
				b.configProblem(fmt.Sprintf("%s.routeProfiles[%q]", path, name), "%v", err)
				continue
			}
			pa.Routes = append(pa.Routes, model.Route{Name: name, Members: b.knownMembers(fmt.Sprintf("%s.routeProfiles[%q].members", path, name), ms, append(rp.OptionalMembers, a.OptionalMembers...))})
		}
		if slo, ok := b.policy.SLO[id]; ok {
			pa.SLO = &model.SLO{FirstTokenMs: slo.FirstTokenMs, TotalMs: slo.TotalMs}
		}
		b.pool.Aliases = append(b.pool.Aliases, pa)
	}
	for _, id := range sortedKeys(b.policy.SLO) {
		if _, ok := b.cfg.Aliases[id]; !ok {
			b.problem(b.policyFile(), fmt.Sprintf("slo.%q", id), "names an alias the config does not declare")
		}
	}
}

// knownMembers keeps members that are models; an unknown optional member is
// dropped quietly (LLooM allows it), any other unknown member is a problem.
func (b *builder) knownMembers(path string, members, optional []string) []string {
	var out []string
	for _, m := range members {
		switch {
		case b.isModel(m):
			out = append(out, m)
		case slices.Contains(optional, m):
		default:
			b.configProblem(path, "member %q is neither a model nor an alias (mark it optional if it comes and goes)", m)
		}
	}
	return out
}

func (b *builder) knownOnly(ids []string) []string {
	var out []string
	for _, id := range ids {
		if b.isModel(id) {
			out = append(out, id)
		}
	}
	return out
}

// buildDemand reads requests per alias and per directly requested model.
// Requested buckets (keyed by what the client asked for) are used when the
// metrics have them; otherwise each model's requests are split across the
// aliases that route to it first, in the proportions the recent request
// entries show, else evenly.
func (b *builder) buildDemand() {
	m := b.in.Metrics
	if m == nil {
		b.note("no metrics given: demand is zero, so latency weighs nothing and the plan only keeps coverage, fallbacks and churn")
		return
	}
	models, requested := b.demandBuckets(m)
	aliasDemand := map[string]float64{}
	aliasSource := map[string]string{}
	direct := map[string]float64{}
	if len(requested) > 0 {
		for _, bk := range requested {
			if _, ok := b.cfg.Aliases[bk.ID]; ok {
				aliasDemand[bk.ID] += float64(bk.Requests)
				aliasSource[bk.ID] = "requested"
			} else if b.isModel(bk.ID) {
				direct[bk.ID] += float64(bk.Requests)
			}
		}
	} else {
		primaryOf := map[string][]string{} // model -> aliases routed to it first
		for _, a := range b.pool.Aliases {
			if len(a.Members) > 0 {
				primaryOf[a.Members[0]] = append(primaryOf[a.Members[0]], a.ID)
			}
		}
		for _, bk := range models {
			if bk.Requests == 0 || !b.isModel(bk.ID) {
				continue
			}
			aliases := primaryOf[bk.ID]
			counts := map[string]float64{}
			total := 0.0
			for _, e := range m.Recent {
				if e.Model != bk.ID {
					continue
				}
				if slices.Contains(aliases, e.RequestedModel) || e.RequestedModel == bk.ID {
					counts[e.RequestedModel]++
					total++
				}
			}
			req := float64(bk.Requests)
			switch {
			case total > 0:
				for _, k := range sortedKeys(counts) {
					share := req * counts[k] / total
					if k == bk.ID {
						direct[k] += share
					} else {
						aliasDemand[k] += share
						aliasSource[k] = "split:recent"
					}
				}
			case len(aliases) > 0:
				for _, a := range aliases {
					aliasDemand[a] += req / float64(len(aliases))
					aliasSource[a] = "split:even"
				}
			default:
				direct[bk.ID] += req
			}
		}
	}
	for i := range b.pool.Aliases {
		a := &b.pool.Aliases[i]
		a.Demand = round3(aliasDemand[a.ID])
		a.DemandSource = aliasSource[a.ID]
	}
	for i := range b.pool.Models {
		b.pool.Models[i].DirectDemand = round3(direct[b.pool.Models[i].ID])
	}
}

func round3(x float64) float64 { return math.Round(x*1000) / 1000 }

// demandBuckets picks the metrics window the policy asks for: the whole
// snapshot or history totals for "all", else the last days of the history.
func (b *builder) demandBuckets(m *lloom.Metrics) (models, requested []lloom.MetricsBucket) {
	period := b.policy.Demand.Period
	days := map[string]int{"today": 1, "7d": 7, "30d": 30}[period]
	if days == 0 || len(m.Days) == 0 {
		if days > 0 {
			b.note("demand period %s asked for, but the metrics have no daily history: using all of it", period)
		}
		return m.Models, m.Requested
	}
	ds := append([]lloom.MetricsDay(nil), m.Days...)
	sort.Slice(ds, func(i, j int) bool { return ds[i].Date < ds[j].Date })
	if len(ds) > days {
		ds = ds[len(ds)-days:]
	}
	sum := func(get func(lloom.MetricsDay) []lloom.MetricsBucket) []lloom.MetricsBucket {
		acc := map[string]int64{}
		for _, d := range ds {
			for _, bk := range get(d) {
				acc[bk.ID] += bk.Requests
			}
		}
		var out []lloom.MetricsBucket
		for _, k := range sortedKeys(acc) {
			out = append(out, lloom.MetricsBucket{ID: k, Requests: acc[k]})
		}
		return out
	}
	return sum(func(d lloom.MetricsDay) []lloom.MetricsBucket { return d.Models }),
		sum(func(d lloom.MetricsDay) []lloom.MetricsBucket { return d.Requested })
}

// buildPins gathers pins from every source. Pins the config implies
// (keepWarm) give way to cordons and unreachable nodes, with a note: the
// operator asked for the node to go. Pins the operator states (pool.pins,
// --pin, --profile) are hard: if they cannot hold, the plan says why.
func (b *builder) buildPins() {
	ix := b.pool.Index()
	unavailable := func(v *model.Variant) string {
		for _, n := range v.Placements[0].Nodes {
			if i, ok := ix.Node[n]; ok && b.pool.Nodes[i].Unavailable != "" {
				return n + " is " + b.pool.Nodes[i].Unavailable
			}
		}
		return ""
	}
	for i := range b.pool.Variants {
		v := &b.pool.Variants[i]
		if v.Kind != model.Managed || v.DefaultResidency != model.Always {
			continue
		}
		label := fmt.Sprintf("keepWarm %s", v.ID)
		if why := unavailable(v); why != "" {
			b.note("%s cannot hold: %s; the lane stops", label, why)
			continue
		}
		b.pool.Pins = append(b.pool.Pins, model.Pin{Source: model.PinKeepWarm, Variant: v.ID, Residency: model.Always, Label: label})
	}
	for i, p := range b.policy.Pins {
		b.addPolicyPin(model.PinPolicy, b.policyFile(), fmt.Sprintf("pins[%d]", i), p)
	}
	for i, p := range b.in.ConfigPool.Pins {
		file, path := b.docAt("config", b.configFile(), fmt.Sprintf("$.pool.pins[%d]", i))
		b.addPolicyPin(model.PinPolicy, file, path, p)
	}
	for i, flag := range b.opts.Pins {
		rt, nodes, ok := strings.Cut(flag, "=")
		path := fmt.Sprintf("--pin[%d]", i)
		if !ok || rt == "" || nodes == "" {
			b.problem("", path, "expected RUNTIME=NODE[,NODE], got %q", flag)
			continue
		}
		b.addPolicyPin(model.PinFlag, "", path, fleet.Pin{Runtime: rt, Nodes: strings.Split(nodes, ",")})
	}
	if b.opts.Profile != "" {
		b.addProfilePins(b.opts.Profile)
	}
}

func (b *builder) addPolicyPin(src model.PinSource, file, path string, p fleet.Pin) {
	ix := b.pool.Index()
	if p.IsRoute() {
		b.addRoutePin(src, file, path, p.Alias, p.Route)
		return
	}
	vid, ok := b.variantOf[p.Runtime]
	if !ok {
		if _, known := ix.Variant[p.Runtime]; known {
			vid = p.Runtime
		} else {
			b.problem(file, path+".runtime", "names runtime %q, which the pool does not plan (known: %s)", p.Runtime, strings.Join(b.variantIDs(), ", "))
			return
		}
	}
	for _, n := range p.Nodes {
		if _, ok := ix.Node[n]; !ok {
			b.problem(file, path+".nodes", "names node %q, which is not in the pool", n)
			return
		}
	}
	label := fmt.Sprintf("pin %s", p.Runtime)
	if len(p.Nodes) > 0 {
		label += " -> " + strings.Join(p.Nodes, ",")
	}
	if p.Residency != "" {
		label += " residency " + string(p.Residency)
	}
	if src == model.PinFlag {
		label = "--pin " + p.Runtime + "=" + strings.Join(p.Nodes, ",")
	}
	nodes := append([]string(nil), p.Nodes...)
	sort.Strings(nodes)
	b.pool.Pins = append(b.pool.Pins, model.Pin{Source: src, Variant: vid, Nodes: nodes, Residency: p.Residency, Label: label})
}

func (b *builder) variantIDs() []string {
	var out []string
	for _, v := range b.pool.Variants {
		out = append(out, v.ID)
	}
	sort.Strings(out)
	return out
}

// addRoutePin pins alias to a route profile, or to a model or alias id as
// its only member, as LLooM fleet profiles do.
func (b *builder) addRoutePin(src model.PinSource, file, path, alias, route string) {
	var pa *model.Alias
	for i := range b.pool.Aliases {
		if b.pool.Aliases[i].ID == alias {
			pa = &b.pool.Aliases[i]
		}
	}
	if pa == nil {
		b.problem(file, path+".alias", "names alias %q, which the config does not declare", alias)
		return
	}
	pin := model.Pin{Source: src, Alias: alias, RouteName: route, Label: fmt.Sprintf("route %s -> %s", alias, route)}
	for _, r := range pa.Routes {
		if r.Name == route {
			pin.Route = r.Members
		}
	}
	if pin.Route == nil {
		switch {
		case b.isModel(route):
			pin.Route = []string{route}
		case b.cfg.Aliases[route].Members != nil:
			ms, err := b.cfg.ExpandAlias(route)
			if err != nil {
				b.problem(file, path+".route", "%v", err)
				return
			}
			pin.Route = b.knownOnly(ms)
		default:
			var names []string
			for _, r := range pa.Routes {
				names = append(names, r.Name)
			}
			b.problem(file, path+".route", "alias %s has no route profile %q (it has: %s) and no model or alias has that id", alias, route, strings.Join(names, ", "))
			return
		}
	}
	if src == model.PinProfile {
		pin.Label = fmt.Sprintf("profile %s: route %s -> %s", b.opts.Profile, alias, route)
	}
	b.pool.Pins = append(b.pool.Pins, pin)
}

func (b *builder) addProfilePins(name string) {
	prof, ok := b.in.Profiles[name]
	if !ok {
		b.problem("", "--profile", "no fleet profile %q (profiles: %s)", name, strings.Join(sortedKeys(b.in.Profiles), ", "))
		return
	}
	file := prof.File
	if file == "" {
		file = "profiles/" + name + ".json"
	}
	for _, alias := range sortedKeys(prof.Routes) {
		file, path := b.docAt("profiles/"+name, file, fmt.Sprintf("$.routes[%q]", alias))
		b.addRoutePin(model.PinProfile, file, path, alias, prof.Routes[alias])
	}
	ix := b.pool.Index()
	for _, rt := range sortedKeys(prof.Residency) {
		res := model.Residency(prof.Residency[rt])
		file, path := b.docAt("profiles/"+name, file, fmt.Sprintf("$.residency[%q]", rt))
		vid, ok := b.variantOf[rt]
		if !ok {
			b.problem(file, path, "names runtime %q, which the pool does not plan", rt)
			continue
		}
		v := &b.pool.Variants[ix.Variant[vid]]
		if !v.Actionable() {
			b.note("profile %s sets residency of %s, which LLooM does not manage: ignored", name, rt)
			continue
		}
		b.pool.Pins = append(b.pool.Pins, model.Pin{Source: model.PinProfile, Variant: vid, Residency: res, Label: fmt.Sprintf("profile %s: %s residency %s", name, rt, res)})
	}
}

// buildCurrent records what runs now: every configured lane (a managed
// auto lane counts: it is loaded on demand) unless its node status says an
// unmanaged lane is down, and each alias's first available member.
func (b *builder) buildCurrent() {
	running := map[string]bool{}
	for _, v := range b.pool.Variants {
		if v.Kind == model.Recipe {
			continue
		}
		status := b.laneStatus(v)
		if v.Kind == model.Unmanaged && (status == "stopped" || status == "exited" || status == "missing") {
			b.note("%s is %s now: not counted as running", v.ID, status)
			continue
		}
		running[v.ID] = true
		b.pool.Current.Lanes = append(b.pool.Current.Lanes, model.CurrentLane{
			Variant: v.ID, Nodes: append([]string(nil), v.Placements[0].Nodes...), Residency: v.DefaultResidency, Status: status,
		})
	}
	available := func(id string) bool {
		for _, m := range b.pool.Models {
			if m.ID != id {
				continue
			}
			if m.External {
				return true
			}
			for _, v := range m.Variants {
				if running[v] {
					return true
				}
			}
		}
		return false
	}
	for _, a := range b.pool.Aliases {
		cr := model.CurrentRoute{Alias: a.ID, Route: a.ActiveRoute}
		for _, m := range a.Members {
			if available(m) {
				cr.Primary = m
				break
			}
		}
		b.pool.Current.Routes = append(b.pool.Current.Routes, cr)
	}
}

// laneStatus summarises the node status rows of a lane: the first row
// found on its nodes, for the runtime or a member.
func (b *builder) laneStatus(v model.Variant) string {
	for _, n := range v.Placements[0].Nodes {
		st := b.in.Nodes[n].Status
		if st == nil {
			continue
		}
		for _, id := range []string{v.Runtime, strings.TrimPrefix(v.ID, "pool:")} {
			if row, ok := st.RuntimeManager.Runtimes[id]; ok && row.Status != "" {
				return row.Status
			}
		}
		for _, rid := range sortedKeys(b.variantOf) {
			if b.variantOf[rid] == v.ID {
				if row, ok := st.RuntimeManager.Runtimes[rid]; ok && row.Status != "" {
					return row.Status
				}
			}
		}
	}
	return ""
}
