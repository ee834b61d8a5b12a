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

// reading is one gateway's metrics read for demand: the model buckets of
// the policy's window, and the gateway's demand history before and after
// this reading is added to it.
type reading struct {
	models, requested []lloom.MetricsBucket
	// before is nil when the history knows nothing of this gateway.
	before, after *fleet.NodeHistory
	rec           fleet.Recorded
}

// readingOf reads d once: the history recorded on a copy, so that the
// inputs stay as given and reading the same answer twice adds nothing.
func (b *builder) readingOf(d metricsDoc) reading {
	r := reading{}
	r.models, r.requested = b.demandBuckets(d.m)
	if len(r.requested) > 0 {
		return r
	}
	m := *d.m
	m.Models = r.models
	allTime := b.policy.Demand.Period == "all" && (m.Period == "" || m.Period == "all")
	if d.node != "" && allTime {
		r.before = b.in.DemandHistory.Node(d.node).Clone()
	} else if d.node != "" && b.in.DemandHistory.Node(d.node) != nil {
		b.note("demand of %s: the demand history counts all time, not the %s window the policy asks for: not used", d.node, b.policy.Demand.Period)
	}
	r.after = r.before.Clone()
	if r.after == nil {
		r.after = &fleet.NodeHistory{}
	}
	m.Period = "" // the window is already taken
	r.rec = r.after.Record(&m)
	if len(r.rec.StartedOver) > 0 && r.before != nil {
		b.note("demand of %s: the counts of %s went down since the last reading (a restart without metrics persistence): their history starts over", d.node, strings.Join(r.rec.StartedOver, ", "))
	}
	return r
}

// gatewayTarget reports whether a model target sends its requests to the
// LLooM gateway of its node (a federated proxy model), where they are
// counted again under the target's upstream model id.
func (b *builder) gatewayTarget(t lloom.ResolvedTarget) bool {
	node, ok := b.cfg.Cluster.Nodes[t.Node]
	if t.Node == "" || !ok {
		return false
	}
	if node.Proxy != nil && node.Proxy.Backend != "" && t.Backend == node.Proxy.Backend {
		return true
	}
	return t.Backend == lloom.FederatedBackendID(t.Node)
}

// forwardedOf is what gateway d sent on to peer gateways: by peer, and by
// the id the peer records them under. A model with one target forwards
// every request it answered; with several, the recent entries counted by
// target node say which went where, and the requests no entry showed are
// shared by target weight, as LLooM picks among equally loaded targets.
func (b *builder) forwardedOf(r reading, words map[string]string) map[string]map[string]float64 {
	out := map[string]map[string]float64{}
	add := func(peer, id string, n float64) {
		if n <= 0 {
			return
		}
		if out[peer] == nil {
			out[peer] = map[string]float64{}
		}
		out[peer][id] += n
	}
	for _, bk := range r.models {
		cm := b.configModel(bk.ID)
		if cm == nil {
			continue
		}
		targets := lloom.ModelTargets(*cm)
		if len(targets) == 1 {
			if t := targets[0]; b.gatewayTarget(t) {
				add(t.Node, t.UpstreamModel, served(bk))
			}
			continue
		}
		mh := r.after.Models[bk.ID]
		if mh == nil {
			continue
		}
		weights := 0
		for _, t := range targets {
			weights += t.Weight
		}
		done := map[string]bool{}
		for _, t := range targets {
			if !b.gatewayTarget(t) || done[t.Node] {
				continue
			}
			done[t.Node] = true
			add(t.Node, t.UpstreamModel, mh.Targets[t.Node])
			if mh.Uncounted > 0 && weights > 0 {
				add(t.Node, t.UpstreamModel, mh.Uncounted*float64(t.Weight)/float64(weights))
				words[bk.ID] = "shared by target weight"
			}
		}
	}
	return out
}

// resolvedModel is the model a requested id is answered by: an alias's
// first member, else the id itself.
func (b *builder) resolvedModel(id string) string {
	for _, a := range b.pool.Aliases {
		if a.ID == id && len(a.Members) > 0 {
			return a.Members[0]
		}
	}
	return id
}

// demandPart is what one gateway's metrics say of demand: requests by the
// id the client asked for (an alias or a model), each by how it was found.
type demandPart struct {
	asked map[string]map[string]float64
	// duplicates are requests for a model a peer (or the gateway itself)
	// forwarded here that had nothing left to take off: the two gateways'
	// counts cover different windows.
	duplicates float64
}

func (p *demandPart) add(id, how string, n float64) {
	if n <= 0 {
		return
	}
	if p.asked[id] == nil {
		p.asked[id] = map[string]float64{}
	}
	p.asked[id][how] += n
}

// buildDemand reads requests per alias and per directly requested model.
// Every LLooM gateway counts what it answered, so a cluster's demand is
// the sum over its nodes' metrics (or the one document given for the
// fleet), less what one gateway forwarded to another, which the peer
// counts again. Within one gateway, requested buckets (keyed by what the
// client asked for) are used when it has them; otherwise a model's
// requests are split by the recent entries the readings counted (the
// demand history), and what no entry showed is split evenly over the
// aliases routed to the model first. Failed requests are not demand
// (docs/gateway.md says how).
func (b *builder) buildDemand() {
	docs := b.metricsDocs()
	if len(docs) == 0 {
		b.note("no metrics given: demand is zero, so latency weighs nothing and the plan only keeps coverage, fallbacks and churn")
		return
	}
	if docs[len(docs)-1].node != "" {
		// Each gateway counts only its own requests: one not read leaves
		// its share out, which the plan must say.
		for _, id := range slices.Sorted(maps.Keys(b.in.Nodes)) {
			if b.in.Nodes[id].Metrics != nil {
				continue
			}
			if node, why, ok := b.unreachableAmong([]string{id}); ok {
				b.note("demand: %s was not read (%s): the requests its gateway took are left out", node, why)
			}
		}
	}
	readings := make([]reading, len(docs))
	forwarded := map[string]map[string]float64{} // peer -> requested id there -> requests
	forwarders := map[string]map[string][]string{}
	weighted := map[string]string{}
	for i, d := range docs {
		readings[i] = b.readingOf(d)
		if d.node == "" {
			continue // the fleet's one document: no peer to take them off
		}
		for peer, ids := range b.forwardedOf(readings[i], weighted) {
			for id, n := range ids {
				if forwarded[peer] == nil {
					forwarded[peer], forwarders[peer] = map[string]float64{}, map[string][]string{}
				}
				forwarded[peer][id] += n
				forwarders[peer][id] = append(forwarders[peer][id], d.node)
			}
		}
	}
	for _, id := range slices.Sorted(maps.Keys(weighted)) {
		b.note("demand: the requests for %s that no recent entry showed are %s between the gateways it forwards to", id, weighted[id])
	}
	aliasDemand := map[string]float64{}
	direct := map[string]float64{}
	hows := map[string]map[string]float64{} // alias -> how -> requests
	var from []string
	for i, d := range docs {
		part := b.demandOf(d, readings[i], forwarded[d.node])
		if d.node != "" {
			from = append(from, d.node)
		}
		for id, byHow := range part.asked {
			for how, n := range byHow {
				if _, ok := b.cfg.Aliases[id]; ok {
					aliasDemand[id] += n
					if hows[id] == nil {
						hows[id] = map[string]float64{}
					}
					hows[id][how] += n
				} else {
					direct[id] += n
				}
			}
		}
		if part.duplicates > 0 {
			b.note("demand: %s of the requests forwarded to %s are more than it counted (the gateways' counts began at different times, e.g. one restarted without metrics persistence): nothing more to take off", fmtNum(part.duplicates), d.node)
		}
	}
	for _, peer := range slices.Sorted(maps.Keys(forwarded)) {
		for _, id := range slices.Sorted(maps.Keys(forwarded[peer])) {
			if b.in.Nodes[peer].Metrics == nil {
				continue
			}
			by := slices.Compact(slices.Sorted(slices.Values(forwarders[peer][id])))
			b.note("demand: %s requests %s forwarded to %s arrive there as requests for %s: counted once, where the client asked", fmtNum(forwarded[peer][id]), strings.Join(by, ", "), peer, id)
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
// with its requests when they differ ("split:history 50 + split:even 5").
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
		"split:recent":  "counted from the recent requests",
		"split:history": "counted from the recent requests of each reading (the demand history)",
		"split:even":    "split evenly over the aliases routed to the model, as no recent entry showed who asked (more than 50 requests between two readings, or requests before a restart: read more often with --demand-history)",
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

// demandOf reads one gateway's metrics. in are the requests peers (or the
// gateway itself) forwarded here, by the id they arrive as: they are
// taken off that id, first from what the recent entries counted, then
// from what they did not show.
func (b *builder) demandOf(d metricsDoc, r reading, in map[string]float64) demandPart {
	part := demandPart{asked: map[string]map[string]float64{}}
	byModel := map[string]map[string]float64{} // model -> id asked -> forwarded here
	for _, id := range slices.Sorted(maps.Keys(in)) {
		m := b.resolvedModel(id)
		if byModel[m] == nil {
			byModel[m] = map[string]float64{}
		}
		byModel[m][id] += in[id]
	}
	if len(r.requested) > 0 {
		for _, bk := range r.requested {
			if _, ok := b.cfg.Aliases[bk.ID]; ok || b.isModel(bk.ID) {
				n := served(bk)
				cut := math.Min(n, in[bk.ID])
				part.duplicates += in[bk.ID] - cut
				part.add(bk.ID, "requested", n-cut)
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
	counted := "split:recent"
	if r.before != nil {
		counted = "split:history"
	}
	for _, bk := range r.models {
		mh := r.after.Models[bk.ID]
		if served(bk) == 0 || mh == nil || !b.isModel(bk.ID) {
			continue
		}
		uncounted := mh.Uncounted
		shares := map[string]float64{}
		for id, n := range mh.Requested {
			if _, ok := b.cfg.Aliases[id]; ok || id == bk.ID {
				shares[id] += n
			} else {
				uncounted += n // asked by an id the config no longer routes here
			}
		}
		for _, id := range slices.Sorted(maps.Keys(byModel[bk.ID])) {
			fin := byModel[bk.ID][id]
			cut := math.Min(fin, shares[id])
			shares[id] -= cut
			fin -= cut
			cut = math.Min(fin, uncounted)
			uncounted -= cut
			part.duplicates += fin - cut
		}
		for _, id := range slices.Sorted(maps.Keys(shares)) {
			part.add(id, counted, shares[id])
		}
		if aliases := primaryOf[bk.ID]; len(aliases) > 0 {
			for _, a := range aliases {
				part.add(a, "split:even", uncounted/float64(len(aliases)))
			}
		} else {
			part.add(bk.ID, "split:even", uncounted)
		}
	}
	return part
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
		b.addPolicyPin(ix, model.PinPolicy, b.policyFile(), fmt.Sprintf("pins[%d]", i), p)
	}
	for i, p := range b.in.ConfigPool.Pins {
		file, path := b.docAt("config", b.configFile(), fmt.Sprintf("$.pool.pins[%d]", i))
		b.addPolicyPin(ix, model.PinPolicy, file, path, p)
	}
	for i, flag := range b.opts.Pins {
		rt, nodes, ok := strings.Cut(flag, "=")
		path := fmt.Sprintf("--pin[%d]", i)
		if !ok || rt == "" || nodes == "" {
			b.problem("", path, "expected RUNTIME=NODE[,NODE], got %q", flag)
			continue
		}
		b.addPolicyPin(ix, model.PinFlag, "", path, fleet.Pin{Runtime: rt, Nodes: strings.Split(nodes, ",")})
	}
	if b.opts.Profile != "" {
		b.addProfilePins(b.opts.Profile)
	}
}

// addPolicyPin adds one pin, checked against ix, the pool's index, which
// adding pins leaves as it is: built once for all of them, not once for
// each (1024x4000's policy pins took 0.23 s so).
func (b *builder) addPolicyPin(ix *model.PoolIndex, src model.PinSource, file, path string, p fleet.Pin) {
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

// buildCurrent records what runs now, as the node status rows read it
// (laneReading): a lane counts as running when its gateways say it
// serves, or when no row says anything (offline, the config is all there
// is); a lane they say does not serve is kept apart, so that a plan
// starts it and never stops it. Each alias's first available member.
func (b *builder) buildCurrent() {
	running := map[string]bool{}
	for _, v := range b.pool.Variants {
		if v.Kind == model.Recipe {
			continue
		}
		status, serves := b.laneReading(v)
		if !serves && v.Kind == model.Managed && v.DefaultResidency == model.Auto && onDemand(status) {
			// LLooM loads an auto lane on its first request: resting idle
			// is how it runs.
			status, serves = status+", loaded on demand", true
		}
		if node, why, ok := b.unreachableAmong(v.Placements[0].Nodes); ok {
			status, serves = model.UnknownLane(node, why), true
		}
		lane := model.CurrentLane{
			Variant: v.ID, Nodes: append([]string(nil), v.Placements[0].Nodes...), Residency: v.DefaultResidency, Status: status,
		}
		if !serves {
			b.pool.Current.NotRunning = append(b.pool.Current.NotRunning, lane)
			continue
		}
		running[v.ID] = true
		b.pool.Current.Lanes = append(b.pool.Current.Lanes, lane)
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

// onDemand reports whether every node's reading is a resting managed
// runtime (idle or stopped), not a failed or unhealthy one.
func onDemand(status string) bool {
	for _, part := range strings.Split(status, "; ") {
		if _, read, ok := strings.Cut(part, ": "); ok {
			part = read
		}
		if part != "idle" && !strings.HasPrefix(part, "stopped") {
			return false
		}
	}
	return true
}

// laneReading reads a lane's node status rows as LLooM does
// (lloom.RuntimeStatus.Serves): it serves when every node that reports a
// row for it says so. The status says what was read, per node when the
// nodes differ; a lane no node reports is model.LaneDeclared.
func (b *builder) laneReading(v model.Variant) (status string, serves bool) {
	serves = true
	var per, reads []string
	for _, n := range v.Placements[0].Nodes {
		read, nodeServes := "", false
		for _, row := range b.laneRows(v, n) {
			if row.Status == "" && row.Healthy == nil {
				continue
			}
			if read == "" || row.Serves() && !nodeServes {
				read = row.Reading()
			}
			nodeServes = nodeServes || row.Serves()
		}
		if read != "" && !nodeServes {
			serves = false
		}
		if read == "" {
			continue
		}
		per, reads = append(per, n+": "+read), append(reads, read)
	}
	switch {
	case len(per) == 0:
		return model.LaneDeclared, true
	case len(per) == len(v.Placements[0].Nodes) && len(slices.Compact(slices.Clone(reads))) == 1:
		return reads[0], serves
	}
	return strings.Join(per, "; "), serves
}
