package catalog

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

func (b *builder) buildModels() {
	required := map[string]bool{}
	for _, k := range slices.Sorted(maps.Keys(b.cfg.Defaults)) {
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
	if bk := b.busiestBucket([]string{id}); bk != nil {
		p := model.Performance{FirstTokenMs: *bk.AvgFirstContentMs, Source: "metrics:" + id}
		if bk.AvgDurationMs != nil {
			p.TotalMs = *bk.AvgDurationMs
		}
		return p
	}
	return model.Performance{FirstTokenMs: b.pool.Settings.ExternalFirstTokenMs, Source: "policy external.firstTokenMs"}
}

// busiestBucket is the model bucket with the most requests and a measured
// first token among the models, over every gateway's metrics.
func (b *builder) busiestBucket(models []string) *lloom.MetricsBucket {
	var best *lloom.MetricsBucket
	for _, d := range b.metricsDocs() {
		for _, id := range models {
			bk := lloom.Bucket(d.m.Models, id)
			if bk == nil || bk.Requests == 0 || bk.AvgFirstContentMs == nil || *bk.AvgFirstContentMs <= 0 {
				continue
			}
			if best == nil || bk.Requests > best.Requests {
				best = bk
			}
		}
	}
	return best
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
			sub, err := b.expandAlias(m)
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
	targetOnly := b.opts.Routing.Reading == lloom.ReadTarget
	for _, id := range slices.Sorted(maps.Keys(b.cfg.Aliases)) {
		a := b.cfg.Aliases[id]
		path := fmt.Sprintf("$.aliases[%q]", id)
		members, err := b.expandAlias(id)
		if err != nil {
			b.configProblem(path, "%v", err)
			continue
		}
		pa := model.Alias{ID: id, ActiveRoute: a.ActiveRoute}
		if targetOnly {
			// The release resolves alias.target to a model and nothing
			// else: no fallbacks, optional members or route profiles.
			var only []string
			if b.isModel(a.Target) {
				only = []string{a.Target}
			}
			for _, m := range members {
				if !slices.Contains(only, m) && b.isModel(m) {
					pa.Unread = append(pa.Unread, m)
				}
			}
			pa.Members, pa.ActiveRoute = only, ""
			if slo, ok := b.policy.SLO[id]; ok {
				pa.SLO = &model.SLO{FirstTokenMs: slo.FirstTokenMs, TotalMs: slo.TotalMs}
			}
			b.pool.Aliases = append(b.pool.Aliases, pa)
			continue
		}
		pa.Members = b.knownMembers(path+".members", members, a.OptionalMembers)
		pa.Optional = b.knownOnly(a.OptionalMembers)
		for _, name := range slices.Sorted(maps.Keys(a.RouteProfiles)) {
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
	for _, id := range slices.Sorted(maps.Keys(b.policy.SLO)) {
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

// metricsDoc is one gateway's metrics: the fleet's (node "") or one
// node's own.
type metricsDoc struct {
	node string
	m    *lloom.Metrics
}

// metricsDocs are the fleet's metrics, else each node's, by node id.
func (b *builder) metricsDocs() []metricsDoc {
	if b.docs != nil {
		return *b.docs // asked once a variant: the inputs do not change
	}
	var out []metricsDoc
	if b.in.Metrics != nil {
		out = append(out, metricsDoc{"", b.in.Metrics})
	}
	for _, id := range slices.Sorted(maps.Keys(b.in.Nodes)) {
		if m := b.in.Nodes[id].Metrics; m != nil {
			out = append(out, metricsDoc{id, m})
		}
	}
	b.docs = &out
	return out
}

// demandPart is what one gateway's metrics say of demand.
type demandPart struct {
	alias, direct map[string]float64
	// how says, per alias, how its share was found: "requested",
	// "split:recent", "split:history" or "split:even".
	how map[string]string
	// forwarded are requests this gateway sent on to a peer gateway, by
	// peer and model: the peer counts them again.
	forwarded map[string]map[string]float64
}

// buildDemand reads requests per alias and per directly requested model.
// Every LLooM gateway counts what it answered, so a cluster's demand is
// the sum over its nodes' metrics (or the one document given for the
// fleet). Within one gateway, requested buckets (keyed by what the client
// asked for) are used when it has them; otherwise each model's requests
// are split across the aliases that route to it first, in the
// proportions its recent request entries show, else those of the demand
// history, else evenly. Failed requests are not demand; requests a gateway
// forwarded to a peer count once (docs/gateway.md says how).
func (b *builder) buildDemand() {
	docs := b.metricsDocs()
	if len(docs) == 0 {
		b.note("no metrics given: demand is zero, so latency weighs nothing and the plan only keeps coverage, fallbacks and churn")
		return
	}
	aliasDemand := map[string]float64{}
	direct := map[string]float64{}
	hows := map[string]map[string]float64{} // alias -> how -> requests
	forwarded := map[string]map[string]float64{}
	var from []string
	for _, d := range docs {
		part := b.demandOf(d)
		if d.node != "" {
			from = append(from, d.node)
		}
		for k, v := range part.alias {
			aliasDemand[k] += v
			if hows[k] == nil {
				hows[k] = map[string]float64{}
			}
			hows[k][part.how[k]] += v
		}
		for k, v := range part.direct {
			direct[k] += v
		}
		for peer, ms := range part.forwarded {
			if forwarded[peer] == nil {
				forwarded[peer] = map[string]float64{}
			}
			for m, v := range ms {
				forwarded[peer][m] += v
			}
		}
	}
	// A forwarded request reaches the peer as a request for the model by
	// its own id: take it off the peer's direct demand.
	for _, peer := range slices.Sorted(maps.Keys(forwarded)) {
		for _, m := range slices.Sorted(maps.Keys(forwarded[peer])) {
			if b.in.Nodes[peer].Metrics == nil {
				continue
			}
			peerPart := b.demandOf(metricsDoc{peer, b.in.Nodes[peer].Metrics})
			cut := math.Min(forwarded[peer][m], peerPart.direct[m])
			if cut > 0 {
				direct[m] -= cut
				b.note("demand: %s requests for %s that a gateway forwarded to %s are counted once, where the client asked", fmtNum(cut), m, peer)
			}
		}
	}
	src := "the metrics"
	if len(from) > 0 {
		src = "the metrics of " + strings.Join(from, ", ")
	}
	for i := range b.pool.Aliases {
		a := &b.pool.Aliases[i]
		a.Demand = round3(aliasDemand[a.ID])
		a.DemandSource = howText(hows[a.ID])
		if a.Demand > 0 {
			b.note("demand %s: %s requests from %s, %s", a.ID, fmtNum(a.Demand), src, howWords(hows[a.ID]))
		}
	}
	for i := range b.pool.Models {
		b.pool.Models[i].DirectDemand = round3(math.Max(0, direct[b.pool.Models[i].ID]))
	}
}

// howText names how an alias's demand was found: one way, or each way
// with its requests when gateways differ ("split:recent 9 + split:even 4").
func howText(h map[string]float64) string {
	ks := slices.Sorted(maps.Keys(h))
	switch len(ks) {
	case 0:
		return ""
	case 1:
		return ks[0]
	}
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = k + " " + fmtNum(h[k])
	}
	return strings.Join(parts, " + ")
}

// howWords says howText in words for the plan's notes.
func howWords(h map[string]float64) string {
	words := map[string]string{
		"requested":     "counted by requested id",
		"split:recent":  "split by the recent requests",
		"split:history": "split by the demand history (the gateway's recent requests are gone, e.g. after a restart)",
		"split:even":    "split evenly (neither recent requests nor a demand history show the split: give --demand-history)",
	}
	ks := slices.Sorted(maps.Keys(h))
	if len(ks) == 1 {
		return words[ks[0]]
	}
	parts := make([]string, len(ks))
	for i, k := range ks {
		parts[i] = fmtNum(h[k]) + " " + words[k]
	}
	return strings.Join(parts, "; ")
}

func fmtNum(x float64) string {
	return strconv.FormatFloat(round3(x), 'f', -1, 64)
}

// served is a bucket's requests that were answered: LLooM counts every
// request that did not end 2xx/3xx in errors.
func served(bk lloom.MetricsBucket) float64 {
	return math.Max(0, float64(bk.Requests-bk.Errors))
}

// failed reports whether an entry is a request the gateway failed (5xx):
// not demand.
func failed(e lloom.MetricsEntry) bool { return e.Status != nil && *e.Status >= 500 }

// demandOf reads one gateway's metrics.
func (b *builder) demandOf(d metricsDoc) demandPart {
	part := demandPart{alias: map[string]float64{}, direct: map[string]float64{}, how: map[string]string{}, forwarded: map[string]map[string]float64{}}
	m := d.m
	models, requested := b.demandBuckets(m)
	if len(requested) > 0 {
		for _, bk := range requested {
			if _, ok := b.cfg.Aliases[bk.ID]; ok {
				part.alias[bk.ID] += served(bk)
				part.how[bk.ID] = "requested"
			} else if b.isModel(bk.ID) {
				part.direct[bk.ID] += served(bk)
			}
		}
		return part
	}
	primaryOf := map[string][]string{} // model -> aliases routed to it first
	for _, a := range b.pool.Aliases {
		if len(a.Members) > 0 {
			primaryOf[a.Members[0]] = append(primaryOf[a.Members[0]], a.ID)
		}
	}
	for _, bk := range models {
		req := served(bk)
		if req == 0 || !b.isModel(bk.ID) {
			continue
		}
		aliases := primaryOf[bk.ID]
		counts := map[string]float64{}
		total := 0.0
		fwd := map[string]float64{}
		for _, e := range m.Recent {
			if e.Model != bk.ID || failed(e) {
				continue
			}
			if slices.Contains(aliases, e.RequestedModel) || e.RequestedModel == bk.ID {
				counts[e.RequestedModel]++
				total++
				if d.node != "" && e.Node != "" && e.Node != d.node && b.isClusterNode(e.Node) {
					fwd[e.Node]++
				}
			}
		}
		how := "split:recent"
		if total == 0 && d.node != "" {
			if h := b.in.DemandHistory.Split(d.node, bk.ID); len(h) > 0 {
				for k, n := range h {
					if slices.Contains(aliases, k) || k == bk.ID {
						counts[k] += n
						total += n
					}
				}
				how = "split:history"
			}
		}
		for peer, n := range fwd {
			if part.forwarded[peer] == nil {
				part.forwarded[peer] = map[string]float64{}
			}
			part.forwarded[peer][bk.ID] += req * n / total
		}
		switch {
		case total > 0:
			for _, k := range slices.Sorted(maps.Keys(counts)) {
				share := req * counts[k] / total
				if k == bk.ID {
					part.direct[k] += share
				} else {
					part.alias[k] += share
					part.how[k] = how
				}
			}
		case len(aliases) > 0:
			for _, a := range aliases {
				part.alias[a] += req / float64(len(aliases))
				part.how[a] = "split:even"
			}
		default:
			part.direct[bk.ID] += req
		}
	}
	return part
}

func (b *builder) isClusterNode(id string) bool {
	_, ok := b.cfg.Cluster.Nodes[id]
	return ok
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
		for _, k := range slices.Sorted(maps.Keys(acc)) {
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
			ms, err := b.expandAlias(route)
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
		b.problem("", "--profile", "no fleet profile %q (profiles: %s)", name, strings.Join(slices.Sorted(maps.Keys(b.in.Profiles)), ", "))
		return
	}
	file := prof.File
	if file == "" {
		file = "profiles/" + name + ".json"
	}
	for _, alias := range slices.Sorted(maps.Keys(prof.Routes)) {
		file, path := b.docAt("profiles/"+name, file, fmt.Sprintf("$.routes[%q]", alias))
		b.addRoutePin(model.PinProfile, file, path, alias, prof.Routes[alias])
	}
	ix := b.pool.Index()
	for _, rt := range slices.Sorted(maps.Keys(prof.Residency)) {
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
		if b.unreachableAmong(v.Placements[0].Nodes) {
			status = model.LaneUnknown
		}
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
		// The node's own runtimes, not every runtime of the pool:
		// this runs once a lane.
		for _, rid := range slices.Sorted(maps.Keys(st.RuntimeManager.Runtimes)) {
			if row := st.RuntimeManager.Runtimes[rid]; b.variantOf[rid] == v.ID && row.Status != "" {
				return row.Status
			}
		}
	}
	return ""
}
