package benchmarks

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// obj and arr build JSON documents; encoding/json writes map keys sorted,
// so the output is deterministic.
type (
	obj = map[string]any
	arr = []any
)

func strs(s []string) arr {
	out := make(arr, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// Generate writes the fleet bundle (schema poolsolve.fleet/v1) that sp
// describes: LLooM's config with runtimes, models, aliases and backends,
// a status, inventory and machine profile per node, metrics with
// per-alias requests, benchmarks, recipes, fleet profiles and a policy.
// The same spec always gives the same bytes.
//
// Generate never names a real host or credential: endpoints and backend
// URLs use the reserved .invalid domain and keys are environment names.
func Generate(sp Spec) ([]byte, error) {
	if err := sp.Validate(); err != nil {
		return nil, err
	}
	g := &gen{sp: sp, rng: rand.New(rand.NewPCG(sp.Seed, 0x9e3779b97f4a7c15))}
	g.makeNodes()
	g.makeLinks()
	if err := g.makeLanes(); err != nil {
		return nil, err
	}
	g.sizes()
	g.residency()
	g.recipes()
	g.makeAliases()
	g.demand()
	g.policyFacts()
	data, err := json.MarshalIndent(g.bundle(), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("benchmarks: %w", err)
	}
	return append(data, '\n'), nil
}

type node struct {
	id        string
	hw        hwKind
	macGb     float64
	budget    float64 // plan budget of the primary domain, GiB
	federated bool    // a Mac that is its own gateway (proxy)
	cordoned  bool
	down      bool // unreachable
	peers     []string
	group     int // index of its link clique, -1 when unlinked
	diskFree  float64
	load      float64   // GiB of configured lanes
	held      float64   // GiB that must stay resident (keepWarm and pins)
	gpuHeld   []float64 // the same, per GPU of an H100 box
	lanes     []*lane
	cached    []string
}

type laneKind int

const (
	kindManaged laneKind = iota
	kindDistributed
	kindPoolBlock
	kindExternalSingle
	kindFederated
)

type lane struct {
	id      string // runtime id (member runtimes are <id>-rank<i>)
	kind    laneKind
	m       *mdl
	nodes   []*node
	memGb   float64 // per node; on an H100 box, GPU memory over its GPUs
	tp      int
	gpu     int  // an H100 box's GPU of a one-GPU lane; -1 for all eight
	keep    bool // keepWarm
	pref    bool // preferredWarm
	pinned  bool // a policy pin holds it on its node, always
	stopped bool // unmanaged lane that is down now
	port    int
}

type mdl struct {
	id, kind, upstream, family string
	hw                         hwKind
	lanes                      []*lane
	federated                  bool
	ttft, total, decode        float64 // measured; ttft 0 means no metrics
	recipes                    int
	required                   bool
	direct                     float64 // requests by its own id
}

type recipe struct {
	id, backend, image, command string
	m                           *mdl
	hw                          hwKind
	k, tp                       int
	memGb, diskGb               float64 // memGb: GPU memory over its GPUs, when gpus
	gpus                        bool    // from a lane on an H100 box's GPUs
	ttft, decode                float64 // benchmark result, 0 when none
}

type alias struct {
	id       string
	members  []string
	optional []string
	routes   bool // local-first and cloud route profiles
	demand   float64
	slo      float64
	pinned   bool
}

type gen struct {
	sp       Spec
	rng      *rand.Rand
	nodeList []*node
	groups   [][]*node // link cliques (or ring pairs), per hardware kind
	laneList []*lane
	models   []*mdl
	clouds   map[string][]string // kind -> cloud model ids
	recs     []*recipe
	aliases  []*alias
	port     int
}

// --- nodes and links ---

func (g *gen) makeNodes() {
	n := g.sp.Nodes
	var kinds []hwKind
	switch g.sp.Mix {
	case MixSpark:
		kinds = repeat(hwSpark, n)
	case MixH100:
		kinds = repeat(hwH100, n)
	case MixMac:
		kinds = repeat(hwMac, n)
	default:
		h := max(1, n/4)
		mac := max(1, n/4)
		kinds = append(append(repeat(hwSpark, n-h-mac), repeat(hwH100, h)...), repeat(hwMac, mac)...)
	}
	count := map[hwKind]int{}
	macs := 0
	for _, k := range kinds {
		count[k]++
		nd := &node{id: fmt.Sprintf("%s-%03d", k.prefix(), count[k]), hw: k, group: -1}
		if k == hwMac {
			nd.macGb = macSizesGb[g.rng.IntN(len(macSizesGb))]
			// Every third Mac is a gateway of its own, federated into the
			// fleet, when federated lanes are asked for.
			nd.federated = g.sp.Kinds.Federated > 0 && macs%3 == 1
			macs++
		}
		nd.budget = planBudget(k, nd.macGb)
		if k == hwH100 {
			nd.gpuHeld = make([]float64, h100GPUs)
		}
		nd.diskFree = []float64{40, 120, 400, 900}[g.rng.IntN(4)]
		g.nodeList = append(g.nodeList, nd)
	}
	if len(g.usable()) == 0 {
		// Too few nodes for a federated Mac to leave room: keep them all.
		for _, nd := range g.nodeList {
			nd.federated = false
		}
	}
}

func repeat[T any](x T, n int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = x
	}
	return out
}

// usable are the nodes that carry configured lanes: not federated.
func (g *gen) usable() []*node {
	var out []*node
	for _, n := range g.nodeList {
		if !n.federated {
			out = append(out, n)
		}
	}
	return out
}

func (g *gen) makeLinks() {
	byKind := map[hwKind][]*node{}
	for _, n := range g.usable() {
		byKind[n.hw] = append(byKind[n.hw], n)
	}
	link := func(a, b *node) {
		if a == b || slices.Contains(a.peers, b.id) {
			return
		}
		a.peers = append(a.peers, b.id)
		b.peers = append(b.peers, a.id)
	}
	for _, k := range []hwKind{hwSpark, hwH100, hwMac} {
		ns := byKind[k]
		switch t := g.sp.Topology; t {
		case TopoPairs, TopoClique4, TopoClique8:
			size := t.cliqueSize()
			for i := 0; i+1 < len(ns); i += size {
				c := ns[i:min(i+size, len(ns))]
				for a := range c {
					for b := a + 1; b < len(c); b++ {
						link(c[a], c[b])
					}
					c[a].group = len(g.groups)
				}
				g.groups = append(g.groups, c)
			}
		case TopoRing:
			for i := 0; i+1 < len(ns); i++ {
				link(ns[i], ns[i+1])
				g.groups = append(g.groups, []*node{ns[i], ns[i+1]})
				ns[i].group = len(g.groups) - 1
			}
			if len(ns) > 2 {
				link(ns[len(ns)-1], ns[0])
				g.groups = append(g.groups, []*node{ns[len(ns)-1], ns[0]})
			}
		}
	}
}

// --- lanes and models ---

func (g *gen) nextPort() int {
	g.port++
	return 8200 + g.port%800
}

// lanes decides every configured lane: its kind, nodes and model.
func (g *gen) makeLanes() error {
	v := g.sp.Variants
	var fedNodes []*node
	for _, n := range g.nodeList {
		if n.federated {
			fedNodes = append(fedNodes, n)
		}
	}
	fed := 0
	if len(fedNodes) > 0 {
		fed = int(math.Round(float64(v) * g.sp.Kinds.Federated))
	}
	unm := int(math.Round(float64(v) * g.sp.Kinds.Unmanaged))
	rec := int(math.Round(float64(v) * g.sp.Kinds.Recipe))
	man := v - fed - unm - rec
	if man < 1 {
		return fmt.Errorf("benchmarks: %d variants leave no managed runtime with kinds %+v", v, g.sp.Kinds)
	}
	g.recs = make([]*recipe, rec) // filled by recipes()
	usable := g.usable()

	for i := 0; i < unm; i++ {
		g.unmanagedLane(i, usable)
	}
	// Managed runtimes go round the usable nodes in a shuffled order, so
	// every node carries about as many.
	order := slices.Clone(usable)
	g.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	for i := 0; i < man; i++ {
		n := order[i%len(order)]
		l := &lane{kind: kindManaged, nodes: []*node{n}, tp: 1, port: g.nextPort()}
		if n.hw == hwH100 && g.rng.IntN(3) == 0 {
			l.tp = 8 // tensor parallel across the box's GPUs
		}
		// Some runtimes are a second replica of a model that runs
		// elsewhere already.
		if m := g.replicaOf(n); m != nil && g.rng.Float64() < 0.15 {
			l.m = m
			l.id = fmt.Sprintf("%s-r%d", shortID(m.id), len(m.lanes)+1)
		} else {
			l.m = g.newModel(g.localKind(), n.hw, false)
			l.id = shortID(l.m.id)
		}
		g.attach(l)
	}
	for i := 0; i < fed; i++ {
		n := fedNodes[i%len(fedNodes)]
		m := g.newModel(g.localKind(), hwMac, true)
		l := &lane{id: "mtplx-" + shortID(m.id), kind: kindFederated, m: m, nodes: []*node{n}, tp: 1}
		g.attach(l)
	}
	return nil
}

// unmanagedLane is a lane run by hand: tensor parallel over a linked
// clique when the topology has one, else a single-node server.
func (g *gen) unmanagedLane(i int, usable []*node) {
	var cands [][]*node
	for _, c := range g.groups {
		if len(c) >= 2 {
			cands = append(cands, c)
		}
	}
	l := &lane{port: 8889}
	if len(cands) > 0 && g.rng.Float64() < 0.8 {
		c := cands[g.rng.IntN(len(cands))]
		widths := []int{2}
		for _, w := range []int{4, 8} {
			if len(c) >= w {
				widths = append(widths, w)
			}
		}
		k := widths[g.rng.IntN(len(widths))]
		start := g.rng.IntN(len(c) - k + 1)
		l.nodes = slices.Clone(c[start : start+k])
		l.tp = k
		l.kind = kindDistributed
		if i%2 == 1 {
			l.kind = kindPoolBlock
		}
		l.m = g.newModel("chat", l.nodes[0].hw, false)
	} else {
		n := usable[g.rng.IntN(len(usable))]
		l.nodes, l.tp, l.kind = []*node{n}, 1, kindExternalSingle
		l.m = g.newModel(g.localKind(), n.hw, false)
	}
	l.id = shortID(l.m.id) + "-tp" + fmt.Sprint(l.tp)
	l.stopped = g.rng.IntN(10) == 0
	g.attach(l)
}

func (g *gen) attach(l *lane) {
	l.m.lanes = append(l.m.lanes, l)
	for _, n := range l.nodes {
		n.lanes = append(n.lanes, l)
		n.cached = append(n.cached, l.m.upstream)
	}
	g.laneList = append(g.laneList, l)
}

// replicaOf picks a model built for n's hardware that does not run on n.
func (g *gen) replicaOf(n *node) *mdl {
	var cands []*mdl
	for _, m := range g.models {
		if m.hw != n.hw || m.federated || len(m.lanes) == 0 || m.lanes[0].kind != kindManaged {
			continue
		}
		here := false
		for _, l := range m.lanes {
			here = here || slices.Contains(l.nodes, n)
		}
		if !here {
			cands = append(cands, m)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	return cands[g.rng.IntN(len(cands))]
}

var kindPrefix = map[string]string{
	"chat": "chat", "embedding": "embed", "audio_transcription": "stt", "audio_speech": "tts", "image": "image",
}

func (g *gen) localKind() string {
	x := g.rng.Float64()
	switch {
	case x < 0.70:
		return "chat"
	case x < 0.85:
		return "embedding"
	case x < 0.91:
		return "audio_transcription"
	case x < 0.96:
		return "audio_speech"
	}
	return "image"
}

var families = map[string][]string{
	"chat":                {"qwen3.8-flash", "qwen3.6-27b", "llama-4-scout", "gemma-3-27b", "mistral-small-3.2", "deepseek-v4-flash", "gpt-oss-120b", "phi-5"},
	"embedding":           {"qwen3-embedding-4b", "bge-m3", "nomic-embed-v2"},
	"audio_transcription": {"whisper-large-v3-turbo", "parakeet-tdt"},
	"audio_speech":        {"qwen3-tts-1.7b", "kokoro-82m"},
	"image":               {"qwen-image-2.1", "flux.2-dev"},
}

func (g *gen) newModel(kind string, hw hwKind, federated bool) *mdl {
	fams := families[kind]
	fam := fams[g.rng.IntN(len(fams))]
	m := &mdl{kind: kind, family: fam, hw: hw, federated: federated}
	m.id = fmt.Sprintf("%s-%03d", fam, len(g.models)+1)
	m.upstream = "org/" + m.id
	if g.rng.Float64() < 0.85 {
		switch kind {
		case "chat":
			m.ttft = 250 + g.rng.Float64()*1250
			m.total = m.ttft + 3000 + g.rng.Float64()*17000
			m.decode = 15 + g.rng.Float64()*60
		case "embedding":
			m.ttft = 30 + g.rng.Float64()*170
		case "image":
			m.ttft = 1500 + g.rng.Float64()*4500
		default:
			m.ttft = 150 + g.rng.Float64()*750
		}
		m.ttft = math.Round(m.ttft)
		m.total = math.Round(math.Max(m.total, m.ttft*1.2))
		m.decode = round1(m.decode)
	}
	g.models = append(g.models, m)
	return m
}

// shortID is a model id turned into a runtime id.
func shortID(id string) string {
	id = id[strings.LastIndex(id, "/")+1:]
	return strings.NewReplacer(".", "", ":", "-").Replace(id)
}

// --- memory ---

// baseSize draws a lane's memory per node, in GiB, before the node's
// load is scaled to the tight or loose target.
func (g *gen) baseSize(l *lane) float64 {
	r := g.rng.Float64()
	switch {
	case l.tp > 1 && l.kind != kindManaged:
		return 60 + math.Round(r*48) // a big model split over the clique
	case l.tp == 8:
		return 320 + math.Round(r*200) // a 400B-class model over eight H100s
	}
	switch l.m.kind {
	case "embedding":
		return 4 + math.Round(r*8)
	case "audio_transcription", "audio_speech":
		return 4 + math.Round(r*6)
	case "image":
		return 20 + math.Round(r*50)
	}
	return 8 + math.Round(r*72)
}

// sizes gives every lane its memory, then scales each node's managed
// chat lanes so that its configured load is about 1.3 (tight) or 0.6
// (loose) of its plan budget. A lane never exceeds 90% of the budget of
// the smallest node it runs on, so each one fits alone.
func (g *gen) sizes() {
	for _, l := range g.laneList {
		if l.kind == kindFederated {
			continue // the federated gateway admits it; memory unknown here
		}
		l.memGb = g.baseSize(l)
	}
	target := 0.6
	if g.sp.Tight {
		target = 1.3
	}
	for _, n := range g.nodeList {
		next := 0
		for _, l := range n.lanes {
			l.gpu = -1
			if l.onGPUs() && l.tp == 1 {
				l.gpu, next = next%h100GPUs, next+1
			}
		}
	}
	for _, n := range g.usable() {
		if n.hw == hwH100 {
			sizeGPUs(n, target)
			continue
		}
		fixed, scalable := 0.0, 0.0
		for _, l := range n.lanes {
			if l.kind == kindManaged && l.m.kind == "chat" && l.tp == 1 {
				scalable += l.memGb
			} else {
				fixed += l.memGb
			}
		}
		if scalable > 0 {
			f := math.Max(0.2, (target*n.budget-fixed)/scalable)
			for _, l := range n.lanes {
				if l.kind == kindManaged && l.m.kind == "chat" && l.tp == 1 {
					l.memGb = math.Max(4, math.Round(l.memGb*f))
				}
			}
		}
	}
	for _, l := range g.laneList {
		limit := math.Inf(1)
		for _, n := range l.nodes {
			limit = math.Min(limit, math.Floor(0.9*n.budget))
			if l.onGPUs() {
				limit = math.Floor(0.9*gpuBudget()) * float64(len(l.gpus()))
			}
		}
		if l.kind != kindFederated {
			l.memGb = math.Min(l.memGb, limit)
		}
		for _, n := range l.nodes {
			n.load += l.memGb
		}
	}
}

// sizeGPUs gives each one-GPU lane of an H100 box its GPU, round the
// eight, and scales the box's managed chat lanes so that each GPU's load
// is about target of its plan budget, next to the eight-GPU lanes' share.
func sizeGPUs(n *node, target float64) {
	scales := func(l *lane) bool { return l.kind == kindManaged && l.m.kind == "chat" && l.tp == 1 }
	fixed := make([]float64, h100GPUs)
	scalable := make([]float64, h100GPUs)
	for _, l := range n.lanes {
		if !l.onGPUs() {
			continue
		}
		for _, d := range l.gpus() {
			if scales(l) {
				scalable[d] += l.memGb
			} else {
				fixed[d] += l.memGb / float64(len(l.gpus()))
			}
		}
	}
	for _, l := range n.lanes {
		if scales(l) && scalable[l.gpu] > 0 {
			f := math.Max(0.2, (target*gpuBudget()-fixed[l.gpu])/scalable[l.gpu])
			l.memGb = math.Max(4, math.Round(l.memGb*f))
		}
	}
}

// gpus are the GPUs of its H100 box a lane takes: its one, or all eight.
func (l *lane) gpus() []int {
	if l.gpu >= 0 && l.tp == 1 {
		return []int{l.gpu}
	}
	all := make([]int, h100GPUs)
	for i := range all {
		all[i] = i
	}
	return all
}

// onGPUs reports whether the lane's memory is on its H100 box's GPUs: a
// runtime of one box, whose config gives gpuMemoryGb. Lanes across boxes
// (pool blocks, distributed members) give LLooM one figure per node, which
// it counts on the host.
func (l *lane) onGPUs() bool { return l.kind == kindManaged && l.nodes[0].hw == hwH100 }

// hostGb is what the lane takes of its node's primary domain.
func (l *lane) hostGb() float64 {
	if l.onGPUs() {
		return hostGb(l.memGb)
	}
	return l.memGb
}

// canHold reports whether keeping l resident leaves its node (each of its
// GPUs, on an H100 box) under 45% held, so that the fleet always has a
// plan; hold records it.
func canHold(l *lane) bool {
	n := l.nodes[0]
	if !l.onGPUs() {
		return n.held+l.memGb <= 0.45*n.budget
	}
	share := l.memGb / float64(len(l.gpus()))
	for _, d := range l.gpus() {
		if n.gpuHeld[d]+share > 0.45*gpuBudget() {
			return false
		}
	}
	return true
}

func hold(l *lane) {
	n := l.nodes[0]
	n.held += l.hostGb()
	if l.onGPUs() {
		for _, d := range l.gpus() {
			n.gpuHeld[d] += l.memGb / float64(len(l.gpus()))
		}
	}
}

// residency marks keepWarm and preferredWarm. keepWarm lanes become hard
// pins, so each node keeps them under 45% of its budget: the generated
// fleet always has a plan.
func (g *gen) residency() {
	for _, l := range g.laneList {
		if l.kind != kindManaged {
			continue
		}
		small := l.m.kind != "chat" && l.m.kind != "image"
		wantKeep := small && g.rng.Float64() < 0.7 || g.rng.Float64() < 0.1
		if wantKeep && canHold(l) {
			l.keep = true
			hold(l)
			continue
		}
		l.pref = g.rng.Float64() < 0.3
	}
}

// --- recipes ---

var recipeBackends = []struct{ id, image, command string }{
	{"docker-vllm", "vllm/vllm-openai", ""},
	{"docker-sglang", "lmsysorg/sglang", ""},
}

// recipes gives models a bundled recipe: an alternative lane the planner
// may place on any node (or linked clique) of the model's hardware.
func (g *gen) recipes() {
	if len(g.recs) == 0 {
		return
	}
	var cands []*mdl
	for _, m := range g.models {
		if !m.federated && len(m.lanes) > 0 && m.lanes[0].kind != kindExternalSingle {
			cands = append(cands, m)
		}
	}
	g.rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	// Big and popular models first: chat before the rest.
	sort.SliceStable(cands, func(i, j int) bool { return (cands[i].kind == "chat") && cands[j].kind != "chat" })
	for i := range g.recs {
		m := cands[i%len(cands)]
		first := m.lanes[0]
		r := &recipe{m: m, hw: m.hw, k: 1, tp: first.tp, memGb: first.memGb, gpus: first.onGPUs()}
		if first.kind != kindManaged {
			r.k = len(first.nodes) // a TP recipe needs the same clique size
		}
		be := recipeBackends[m.recipes%len(recipeBackends)]
		if m.hw == hwMac {
			be.id, be.image, be.command = "ollama", "", "ollama"
		}
		r.backend, r.image, r.command = be.id, be.image, be.command
		m.recipes++
		r.id = fmt.Sprintf("%s-%s-%s", m.hw.platform(), shortID(m.id), r.backend)
		if m.recipes > len(recipeBackends) || m.hw == hwMac && m.recipes > 1 {
			r.id += fmt.Sprintf("-v%d", m.recipes) // a later revision of the same recipe
		}
		r.diskGb = math.Ceil(r.memGb * 0.7)
		if g.rng.Float64() < 0.5 {
			r.ttft = math.Round(200 + g.rng.Float64()*1500)
			r.decode = round1(10 + g.rng.Float64()*60)
		}
		g.recs[i] = r
		// A few nodes already have the weights.
		for _, n := range g.usable() {
			if n.hw == m.hw && g.rng.Float64() < 0.1 {
				n.cached = append(n.cached, m.upstream)
			}
		}
	}
}

// --- aliases, demand and policy ---

func (g *gen) makeAliases() {
	g.clouds = map[string][]string{}
	local := 0
	for _, m := range g.models {
		if !m.federated {
			local++
		}
	}
	for i := 0; i < max(1, local/25); i++ {
		g.clouds["chat"] = append(g.clouds["chat"], fmt.Sprintf("cloud/provider-%d/chat", i+1))
	}
	g.clouds["embedding"] = []string{"cloud/provider-1/embedding"}

	byKind := map[string][]*mdl{}
	for _, m := range g.models {
		byKind[m.kind] = append(byKind[m.kind], m)
	}
	order := slices.Clone(g.models)
	g.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	count := map[string]int{}
	nAliases := max(1, int(math.Ceil(float64(len(order))*0.6)))
	for i, m := range order {
		if i >= nAliases {
			if g.rng.Float64() < 0.4 {
				m.direct = 1 // weighted in demand()
			}
			continue
		}
		count[m.kind]++
		a := &alias{id: fmt.Sprintf("%s-%03d", kindPrefix[m.kind], count[m.kind]), members: []string{m.id}}
		// A second local member of the same kind, sometimes a federated
		// lane the fleet may lose (optional).
		if peers := byKind[m.kind]; len(peers) > 1 && g.rng.Float64() < 0.5 {
			p := peers[g.rng.IntN(len(peers))]
			if p != m {
				a.members = append(a.members, modelRef(p))
				if p.federated {
					a.optional = append(a.optional, modelRef(p))
				}
			}
		}
		if m.federated {
			a.members[0] = modelRef(m)
		}
		if cl := g.clouds[m.kind]; len(cl) > 0 && g.rng.Float64() < 0.6 {
			a.members = append(a.members, cl[g.rng.IntN(len(cl))])
			a.routes = g.rng.Float64() < 0.4
		}
		g.aliases = append(g.aliases, a)
	}
}

// modelRef is the id clients use: federated models carry their node's
// namespace.
func modelRef(m *mdl) string {
	if m.federated {
		return m.lanes[0].nodes[0].id + "/" + m.id
	}
	return m.id
}

// demand spreads 500 requests per variant over the aliases with Zipf
// weights (ranks in a seeded random order), plus direct requests for some
// models; SLOs go to a third of the chat aliases.
func (g *gen) demand() {
	total := 500.0 * float64(g.sp.Variants)
	ranks := g.rng.Perm(len(g.aliases))
	h := 0.0
	for i := range g.aliases {
		h += 1 / math.Pow(float64(i+1), g.sp.Skew)
	}
	for i, a := range g.aliases {
		a.demand = math.Round(0.9 * total / math.Pow(float64(ranks[i]+1), g.sp.Skew) / h)
	}
	for _, m := range g.models {
		if m.direct > 0 {
			m.direct = math.Round(0.1 * total * g.rng.Float64() / float64(max(1, len(g.models)/10)))
		}
	}
	for _, a := range g.aliases {
		m := g.model(a.members[0])
		if m == nil || m.kind != "chat" || g.rng.Float64() >= 0.33 {
			continue
		}
		base := m.ttft
		if base == 0 {
			base = 1000
		}
		a.slo = math.Round(base*(1.3+1.7*g.rng.Float64())/100) * 100
	}
}

func (g *gen) model(ref string) *mdl {
	for _, m := range g.models {
		if m.id == ref || modelRef(m) == ref {
			return m
		}
	}
	return nil
}

// policyFacts picks cordons, an unreachable node, policy pins, route pins
// and required models. Pins go only where they hold: on available nodes,
// within 45% of the node's budget together with the keepWarm lanes.
func (g *gen) policyFacts() {
	usable := g.usable()
	if g.sp.Nodes >= 8 {
		idx := g.rng.Perm(len(usable))
		c := 0
		for _, i := range idx {
			n := usable[i]
			if i == 0 || c >= max(1, g.sp.Nodes/32) {
				continue
			}
			n.cordoned = true
			c++
		}
		if g.sp.Nodes >= 16 {
			for _, i := range idx {
				if n := usable[i]; i != 0 && !n.cordoned {
					n.down = true
					break
				}
			}
		}
	}
	pins := max(1, g.sp.Nodes/16)
	for _, i := range g.rng.Perm(len(g.laneList)) {
		if pins == 0 {
			break
		}
		l := g.laneList[i]
		n := l.nodes[0]
		if l.kind != kindManaged || l.keep || n.cordoned || n.down || !canHold(l) {
			continue
		}
		l.pinned, l.pref = true, false
		hold(l)
		pins--
	}
	routePins := max(1, g.sp.Nodes/32)
	for _, a := range g.aliases {
		if a.routes && routePins > 0 {
			a.pinned = true
			routePins--
		}
	}
	for _, m := range g.models {
		if !m.federated && g.rng.Float64() < 0.05 {
			m.required = true
		}
	}
}
