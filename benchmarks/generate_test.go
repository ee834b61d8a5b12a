package benchmarks

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/model"
)

// committedSuite reads fixtures/suite.json from disk, so that
// UPDATE_GOLDEN can rewrite the bundles next to it.
func committedSuite(t *testing.T) Suite {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("fixtures", "suite.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s Suite
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// load reads a generated bundle the way `poolsolve plan --fleet FILE
// --consider-installs` does, failing on any problem validate reports.
func load(t *testing.T, data []byte, name string) (*fleet.Inputs, *model.Pool) {
	t.Helper()
	in, err := fleet.ParseBundle(data, name)
	if err != nil {
		t.Fatalf("%s does not parse as a fleet bundle: %v", name, err)
	}
	if ps := in.Validate(); len(ps) > 0 {
		t.Fatalf("%s: validate reports %v", name, ps)
	}
	cat, err := catalog.Build(in, catalog.Options{ConsiderInstalls: true})
	if err != nil {
		t.Fatalf("%s: catalog: %v", name, err)
	}
	return in, cat.Pool
}

func generate(t *testing.T, sp Spec) []byte {
	t.Helper()
	data, err := Generate(sp)
	if err != nil {
		t.Fatalf("Generate(%+v): %v", sp, err)
	}
	return data
}

func TestCommittedFixturesAreWhatTheirSpecsGenerate(t *testing.T) {
	for _, e := range committedSuite(t).Instances {
		if e.File == "" || e.Spec == nil {
			continue
		}
		t.Run(e.Name, func(t *testing.T) {
			want := generate(t, *e.Spec)
			path := filepath.Join("fixtures", e.File)
			if os.Getenv("UPDATE_GOLDEN") != "" {
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s differs from Generate(%+v): the generator changed; rerun with UPDATE_GOLDEN=1 and review the diff", path, *e.Spec)
			}
		})
	}
}

func TestTheSameSpecGivesTheSameBytesAndAnotherSeedOthers(t *testing.T) {
	sp := Size{Nodes: 24, Variants: 60, Tight: true}.Spec(7)
	a, b := generate(t, sp), generate(t, sp)
	if !bytes.Equal(a, b) {
		t.Fatal("two runs of Generate on one spec differ")
	}
	sp.Seed = 8
	if bytes.Equal(a, generate(t, sp)) {
		t.Fatal("seeds 7 and 8 give the same fleet")
	}
}

func TestEveryMixAndTopologyGivesAFleetThePlannerReads(t *testing.T) {
	for _, mix := range Mixes {
		for _, topo := range Topologies {
			for _, tight := range []bool{false, true} {
				sp := Spec{Nodes: 12, Variants: 40, Mix: mix, Topology: topo, Kinds: DefaultKinds, Tight: tight, Skew: 1.1, Seed: 3}
				t.Run(sp.Name(), func(t *testing.T) {
					_, p := load(t, generate(t, sp), sp.Name())
					if len(p.Nodes) != sp.Nodes || len(p.Variants) != sp.Variants {
						t.Fatalf("%d nodes and %d variants, want %d and %d", len(p.Nodes), len(p.Variants), sp.Nodes, sp.Variants)
					}
					ix := p.Index()
					for _, v := range p.Variants {
						for _, pl := range v.Placements {
							if v.Kind != model.Recipe && len(pl.Nodes) > 1 && !ix.Clique(pl.Nodes) {
								t.Errorf("%s runs on %v, which is not a linked clique", v.ID, pl.Nodes)
							}
						}
					}
				})
			}
		}
	}
}

func TestSizesAtTheEdgesOfTheRangeGenerate(t *testing.T) {
	for _, sz := range []Size{{3, 5, false}, {3, 5, true}, {512, 5, false}, {3, 200, true}} {
		t.Run(sz.String(), func(t *testing.T) {
			_, p := load(t, generate(t, sz.Spec(1)), sz.String())
			if len(p.Nodes) != sz.Nodes || len(p.Variants) != sz.Variants {
				t.Fatalf("%d nodes and %d variants, want %d and %d", len(p.Nodes), len(p.Variants), sz.Nodes, sz.Variants)
			}
		})
	}
}

func TestHardwareIsReportedAsLLooMReportsIt(t *testing.T) {
	sp := Size{Nodes: 16, Variants: 40}.Spec(2)
	_, p := load(t, generate(t, sp), "hetero")
	seen := map[string]bool{}
	for _, n := range p.Nodes {
		kind := n.ID[:strings.Index(n.ID, "-")]
		seen[kind] = true
		prim := n.PrimaryDomain()
		switch kind {
		case "spark":
			if n.Unavailable != "" {
				continue // unreachable: no telemetry, so the config's 128 GiB
			}
			if n.Platform != "linux-arm64" || !contains(n.Archs, "sm_121") || prim.ID != "system:0" || math.Abs(prim.Budget.TotalGb-121.69) > 0.01 {
				t.Errorf("%s: %s %v %s total %.2f; want a GB10 (linux-arm64, sm_121, system:0 of 121.69 GiB)", n.ID, n.Platform, n.Archs, prim.ID, prim.Budget.TotalGb)
			}
		case "h100":
			devices := 0
			for _, d := range n.Domains {
				if d.Kind == "device" && math.Abs(d.Budget.TotalGb-h100DeviceGb) < 0.01 {
					devices++
				}
			}
			if n.Platform != "linux-x64" || !contains(n.Archs, "sm_90") || devices != 8 {
				t.Errorf("%s: %s %v with %d device domains; want linux-x64, sm_90 and eight 79.6 GiB GPUs", n.ID, n.Platform, n.Archs, devices)
			}
		case "mac":
			if n.Platform != "darwin-arm64" || !contains(n.Archs, "apple-metal") || prim.ID != "unified:0" {
				t.Errorf("%s: %s %v %s; want darwin-arm64, apple-metal, unified:0", n.ID, n.Platform, n.Archs, prim.ID)
			}
		}
	}
	for _, k := range []string{"spark", "h100", "mac"} {
		if !seen[k] {
			t.Errorf("a hetero fleet of 16 has no %s node", k)
		}
	}
}

func TestTheKindsOfLanesFollowTheSpec(t *testing.T) {
	sp := Size{Nodes: 24, Variants: 100}.Spec(4)
	_, p := load(t, generate(t, sp), sp.Name())
	count := map[model.VariantKind]int{}
	tp := map[int]int{}
	for _, v := range p.Variants {
		count[v.Kind]++
		tp[v.Req.TensorParallel]++
	}
	want := map[model.VariantKind]int{
		model.Recipe:    int(math.Round(100 * sp.Kinds.Recipe)),
		model.Federated: int(math.Round(100 * sp.Kinds.Federated)),
		model.Unmanaged: int(math.Round(100 * sp.Kinds.Unmanaged)),
	}
	for k, n := range want {
		if count[k] != n {
			t.Errorf("%d %s variants, want %d (all: %v)", count[k], k, n, count)
		}
	}
	if count[model.Managed] != 100-want[model.Recipe]-want[model.Federated]-want[model.Unmanaged] {
		t.Errorf("%d managed variants (all: %v)", count[model.Managed], count)
	}
	if tp[2]+tp[4]+tp[8] == 0 {
		t.Errorf("no tensor-parallel lane among %v", tp)
	}
}

// A recipe that needs several nodes goes on the linked sets of the
// fleet's discovery links, which the catalog must know before it places
// recipes (it once placed them after, and every multi-node recipe of a
// generated fleet had no place: 24x60 went from 235 placements to 173).
func TestMultiNodeRecipesArePlacedOnLinkedSets(t *testing.T) {
	sp := Size{Nodes: 24, Variants: 100}.Spec(4)
	_, p := load(t, generate(t, sp), sp.Name())
	linked := map[[2]string]bool{}
	for _, l := range p.Links {
		linked[[2]string{l.A, l.B}], linked[[2]string{l.B, l.A}] = true, true
	}
	multi := 0
	for _, v := range p.Variants {
		if v.Kind != model.Recipe || v.Req.NodeCount < 2 {
			continue
		}
		multi++
		if len(v.Placements) == 0 {
			t.Errorf("%s needs %d nodes and has no place", v.ID, v.Req.NodeCount)
		}
		for _, pl := range v.Placements {
			for i, a := range pl.Nodes {
				for _, b := range pl.Nodes[i+1:] {
					if !linked[[2]string{a, b}] {
						t.Errorf("%s is placed on %v, where %s and %s are not linked", v.ID, pl.Nodes, a, b)
					}
				}
			}
		}
	}
	if multi == 0 {
		t.Error("the fleet has no multi-node recipe: the test does not reach the rule")
	}
}

func TestTightMemoryOverfillsNodesAndLooseLeavesRoom(t *testing.T) {
	fill := func(tight bool) float64 {
		sp := Size{Nodes: 24, Variants: 60, Tight: tight}.Spec(1)
		_, p := load(t, generate(t, sp), sp.Name())
		ix := p.Index()
		used := map[string]float64{}
		for _, v := range p.Variants {
			if v.Kind == model.Recipe || v.Kind == model.Federated {
				continue
			}
			for _, d := range v.Placements[0].Draws {
				used[d.Node] += d.Gb
			}
		}
		var ratios []float64
		for id, gb := range used {
			n := &p.Nodes[ix.Node[id]]
			ratios = append(ratios, gb/n.PrimaryDomain().Budget.PlanGb)
		}
		sort.Float64s(ratios)
		return ratios[len(ratios)/2]
	}
	if tight, loose := fill(true), fill(false); tight < 1.1 || loose > 0.8 {
		t.Fatalf("median configured load / plan budget: tight %.2f (want > 1.1), loose %.2f (want < 0.8)", tight, loose)
	}
}

func TestDemandIsZipfAcrossAliases(t *testing.T) {
	sp := Size{Nodes: 24, Variants: 200}.Spec(5)
	_, p := load(t, generate(t, sp), sp.Name())
	var d []float64
	for _, a := range p.Aliases {
		d = append(d, a.Demand)
	}
	sort.Sort(sort.Reverse(sort.Float64Slice(d)))
	if len(d) < 10 || d[0] <= 0 {
		t.Fatalf("demands %v", d)
	}
	// rank 1 over rank 10 is 10^skew for Zipf.
	if r, want := d[0]/d[9], math.Pow(10, sp.Skew); math.Abs(r-want)/want > 0.05 {
		t.Errorf("top alias / tenth = %.2f, want about %.2f", r, want)
	}
}

func TestLargerFleetsHaveCordonsPinsSLOsAndAnUnreachableNode(t *testing.T) {
	sp := Size{Nodes: 32, Variants: 120}.Spec(6)
	_, p := load(t, generate(t, sp), sp.Name())
	var cordoned, unreachable, lanePins, routePins, slos int
	for _, n := range p.Nodes {
		switch {
		case strings.HasPrefix(n.Unavailable, "cordoned"):
			cordoned++
		case strings.HasPrefix(n.Unavailable, "unreachable"):
			unreachable++
		}
	}
	for _, pin := range p.Pins {
		switch {
		case pin.Source == model.PinPolicy && pin.Alias != "":
			routePins++
		case pin.Source == model.PinPolicy:
			lanePins++
		}
	}
	for _, a := range p.Aliases {
		if a.SLO != nil {
			slos++
		}
	}
	if cordoned == 0 || unreachable != 1 || lanePins == 0 || routePins == 0 || slos == 0 {
		t.Fatalf("cordoned %d, unreachable %d, lane pins %d, route pins %d, SLOs %d; want each > 0 (one unreachable)", cordoned, unreachable, lanePins, routePins, slos)
	}
}

var urlRE = regexp.MustCompile(`https?://[^"\s]+`)

func TestGeneratedFleetsNameNoRealHostOrSecret(t *testing.T) {
	data := generate(t, Size{Nodes: 16, Variants: 60}.Spec(9))
	for _, u := range urlRE.FindAllString(string(data), -1) {
		host := strings.SplitN(strings.SplitN(u, "://", 2)[1], "/", 2)[0]
		host = strings.Split(host, ":")[0]
		if !strings.HasSuffix(host, ".invalid") && !strings.HasPrefix(u, "https://lloom.dev/") {
			t.Errorf("URL %s is not a placeholder (.invalid)", u)
		}
	}
	if bytes.Contains(data, []byte(`"apiKey":`)) {
		t.Error("a generated fleet holds an apiKey value; only apiKeyEnv names are allowed")
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Size
		err  string
	}{
		{"nodes by variants", "24x60", Size{24, 60, false}, ""},
		{"a tight suffix asks for tight memory", "24x60-tight", Size{24, 60, true}, ""},
		{"a loose suffix is the default", " 3x10-loose ", Size{3, 10, false}, ""},
		{"the largest size", "512x1000", Size{512, 1000, false}, ""},
		{"fewer than three nodes is refused", "2x10", Size{}, "outside 3..1024"},
		{"more than four thousand variants is refused", "8x4001", Size{}, "outside 5..4000"},
		{"a missing x is refused", "24by60", Size{}, "expected NODESxVARIANTS"},
		{"a non-number is refused", "ax10", Size{}, "is not a number"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSize(tc.in)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("ParseSize(%q) = %v, %v; want an error with %q", tc.in, got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ParseSize(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
			}
			if again, _ := ParseSize(got.String()); again != got {
				t.Errorf("%v does not survive String and ParseSize (%v)", got, again)
			}
		})
	}
	if _, err := ParseSizes(" , "); err == nil {
		t.Error("ParseSizes of an empty list should fail")
	}
}

func TestSpecValidateNamesWhatIsWrong(t *testing.T) {
	ok := Size{Nodes: 8, Variants: 20}.Spec(1)
	tests := []struct {
		name   string
		change func(*Spec)
		want   string
	}{
		{"an unknown mix", func(s *Spec) { s.Mix = "tpu" }, `unknown mix "tpu"`},
		{"an unknown topology", func(s *Spec) { s.Topology = "torus" }, `unknown topology "torus"`},
		{"a negative share", func(s *Spec) { s.Kinds.Recipe = -0.1 }, "must lie in [0, 1]"},
		{"shares that leave no managed runtime", func(s *Spec) { s.Kinds = Kinds{0.5, 0.3, 0.2} }, "less than 10% managed"},
		{"a skew of one is no Zipf", func(s *Spec) { s.Skew = 1 }, "skew"},
		{"too many nodes", func(s *Spec) { s.Nodes = 1025 }, "outside 3..1024"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sp := ok
			tc.change(&sp)
			if _, err := Generate(sp); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Generate = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// FuzzGenerate checks that any spec in range gives a bundle the planner
// reads, with the asked-for counts, and that Generate never panics.
func FuzzGenerate(f *testing.F) {
	f.Add(uint16(3), uint16(10), uint64(1), uint8(0), uint8(1), false)
	f.Add(uint16(24), uint16(60), uint64(2), uint8(1), uint8(3), true)
	f.Add(uint16(9), uint16(5), uint64(3), uint8(2), uint8(2), false)
	f.Fuzz(func(t *testing.T, nodes, variants uint16, seed uint64, mix, topo uint8, tight bool) {
		sp := Spec{
			Nodes: 3 + int(nodes)%38, Variants: 5 + int(variants)%76,
			Mix: Mixes[int(mix)%len(Mixes)], Topology: Topologies[int(topo)%len(Topologies)],
			Kinds: DefaultKinds, Tight: tight, Skew: 1.1, Seed: seed,
		}
		data, err := Generate(sp)
		if err != nil {
			t.Fatalf("Generate(%+v): %v", sp, err)
		}
		_, p := load(t, data, sp.Name())
		if len(p.Nodes) != sp.Nodes || len(p.Variants) != sp.Variants {
			t.Fatalf("%+v: %d nodes and %d variants", sp, len(p.Nodes), len(p.Variants))
		}
	})
}
