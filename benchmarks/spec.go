package benchmarks

import (
	"fmt"
	"strconv"
	"strings"
)

// Mix is the hardware a generated fleet is made of.
type Mix string

const (
	// MixSpark is DGX Sparks only (GB10, linux-arm64, sm_121).
	MixSpark Mix = "spark"
	// MixHetero is half Sparks, a quarter 8-GPU H100 boxes and a quarter
	// Macs, some of them federated gateways.
	MixHetero Mix = "hetero"
	// MixH100 is 8-GPU H100 boxes only (linux-x64, sm_90).
	MixH100 Mix = "h100"
	// MixMac is Apple Silicon Macs only (darwin-arm64, apple-metal).
	MixMac Mix = "mac"
)

// Mixes lists the hardware mixes.
var Mixes = []Mix{MixSpark, MixHetero, MixH100, MixMac}

// Topology is how the nodes of one hardware kind are linked (NVIDIA Sync
// rails between Sparks, Thunderbolt between Macs, InfiniBand between GPU
// boxes). Tensor parallelism across k nodes needs a linked k-clique.
type Topology string

const (
	TopoNone    Topology = "none"    // no links: every lane is single-node
	TopoPairs   Topology = "pairs"   // nodes 1+2, 3+4, ... (a clique of 2)
	TopoRing    Topology = "ring"    // each node to the next, the last to the first
	TopoClique4 Topology = "clique4" // full cliques of 4
	TopoClique8 Topology = "clique8" // full cliques of 8
)

// Topologies lists the link topologies.
var Topologies = []Topology{TopoNone, TopoPairs, TopoRing, TopoClique4, TopoClique8}

// cliqueSize is the largest tensor-parallel width the topology allows
// across nodes.
func (t Topology) cliqueSize() int {
	switch t {
	case TopoPairs, TopoRing:
		return 2
	case TopoClique4:
		return 4
	case TopoClique8:
		return 8
	}
	return 1
}

// Kinds are the shares of the variants by where they come from. Federated
// lanes need federated Macs; without them their share goes to managed.
type Kinds struct {
	Unmanaged float64 `json:"unmanaged"` // run by hand: TP lanes (distributed runtimes, model pool blocks) and single-node servers
	Recipe    float64 `json:"recipe"`    // bundled recipes, free placement (alternatives for configured models)
	Federated float64 `json:"federated"` // lanes another gateway owns
	// The rest are managed runtimes, fixed to their node.
}

// DefaultKinds is a fleet that is mostly managed runtimes.
var DefaultKinds = Kinds{Unmanaged: 0.10, Recipe: 0.12, Federated: 0.06}

// Spec says what fleet to generate. The same Spec always gives the same
// bytes.
type Spec struct {
	Nodes    int      `json:"nodes"`    // 3..1024
	Variants int      `json:"variants"` // 5..4000: lanes the planner sees, with recipes
	Mix      Mix      `json:"mix"`
	Topology Topology `json:"topology"`
	Kinds    Kinds    `json:"kinds"`
	// Tight fills each node's configured lanes to about 1.3 times its
	// plan budget, so not everything can be resident; loose to about 0.6.
	Tight bool `json:"tight"`
	// Skew is the Zipf exponent of demand across aliases (> 1).
	Skew float64 `json:"skew"`
	Seed uint64  `json:"seed"`
}

// Size is a fleet size, written NxV: N nodes and V variants, with an
// optional "-tight" or "-loose" (the default).
type Size struct {
	Nodes    int
	Variants int
	Tight    bool
}

func (s Size) String() string {
	out := fmt.Sprintf("%dx%d", s.Nodes, s.Variants)
	if s.Tight {
		out += "-tight"
	}
	return out
}

// ParseSize reads "24x60" or "24x60-tight".
func ParseSize(text string) (Size, error) {
	s := strings.TrimSpace(text)
	var sz Size
	switch {
	case strings.HasSuffix(s, "-tight"):
		sz.Tight, s = true, strings.TrimSuffix(s, "-tight")
	case strings.HasSuffix(s, "-loose"):
		s = strings.TrimSuffix(s, "-loose")
	}
	n, v, ok := strings.Cut(s, "x")
	if !ok {
		return Size{}, fmt.Errorf("size %q: expected NODESxVARIANTS, e.g. 24x60 or 24x60-tight", text)
	}
	var err error
	if sz.Nodes, err = strconv.Atoi(n); err != nil {
		return Size{}, fmt.Errorf("size %q: node count %q is not a number", text, n)
	}
	if sz.Variants, err = strconv.Atoi(v); err != nil {
		return Size{}, fmt.Errorf("size %q: variant count %q is not a number", text, v)
	}
	if err := checkRange(sz.Nodes, sz.Variants); err != nil {
		return Size{}, fmt.Errorf("size %q: %w", text, err)
	}
	return sz, nil
}

// ParseSizes reads a comma-separated list of sizes.
func ParseSizes(list string) ([]Size, error) {
	var out []Size
	for _, f := range strings.Split(list, ",") {
		if strings.TrimSpace(f) == "" {
			continue
		}
		s, err := ParseSize(f)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("sizes %q: expected at least one NODESxVARIANTS", list)
	}
	return out, nil
}

func checkRange(nodes, variants int) error {
	if nodes < 3 || nodes > 1024 {
		return fmt.Errorf("node count %d is outside 3..1024", nodes)
	}
	if variants < 5 || variants > 4000 {
		return fmt.Errorf("variant count %d is outside 5..4000", variants)
	}
	return nil
}

// Spec is the default fleet of this size: heterogeneous hardware from 8
// nodes up (Sparks only below), pairs of linked nodes up to 8 nodes and
// cliques of 4 above, the default kinds, Zipf 1.1 demand.
func (s Size) Spec(seed uint64) Spec {
	sp := Spec{Nodes: s.Nodes, Variants: s.Variants, Mix: MixHetero, Topology: TopoClique4, Kinds: DefaultKinds, Tight: s.Tight, Skew: 1.1, Seed: seed}
	if s.Nodes < 8 {
		sp.Mix, sp.Topology = MixSpark, TopoPairs
	}
	return sp
}

// Validate reports the first thing wrong with the spec.
func (sp Spec) Validate() error {
	if err := checkRange(sp.Nodes, sp.Variants); err != nil {
		return fmt.Errorf("benchmarks: %w", err)
	}
	if !contains(Mixes, sp.Mix) {
		return fmt.Errorf("benchmarks: unknown mix %q (want %s)", sp.Mix, joinAny(Mixes))
	}
	if !contains(Topologies, sp.Topology) {
		return fmt.Errorf("benchmarks: unknown topology %q (want %s)", sp.Topology, joinAny(Topologies))
	}
	k := sp.Kinds
	for _, f := range []float64{k.Unmanaged, k.Recipe, k.Federated} {
		if !(f >= 0 && f <= 1) {
			return fmt.Errorf("benchmarks: kind shares must lie in [0, 1], got %+v", k)
		}
	}
	if k.Unmanaged+k.Recipe+k.Federated > 0.9 {
		return fmt.Errorf("benchmarks: kind shares %+v leave less than 10%% managed runtimes", k)
	}
	if !(sp.Skew > 1 && sp.Skew <= 4) {
		return fmt.Errorf("benchmarks: skew %g must lie in (1, 4]", sp.Skew)
	}
	return nil
}

// Name is a short label of the spec: the size, then whatever differs from
// the size's default spec.
func (sp Spec) Name() string {
	sz := Size{Nodes: sp.Nodes, Variants: sp.Variants, Tight: sp.Tight}
	name := sz.String()
	def := sz.Spec(sp.Seed)
	if sp.Mix != def.Mix {
		name += "-" + string(sp.Mix)
	}
	if sp.Topology != def.Topology {
		name += "-" + string(sp.Topology)
	}
	return name
}

func contains[T comparable](s []T, x T) bool {
	for _, y := range s {
		if y == x {
			return true
		}
	}
	return false
}

func joinAny[T ~string](s []T) string {
	parts := make([]string, len(s))
	for i, x := range s {
		parts[i] = string(x)
	}
	return strings.Join(parts, ", ")
}
