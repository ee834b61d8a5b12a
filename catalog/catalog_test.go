package catalog

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

func loadBundle(t *testing.T, path string) *fleet.Inputs {
	t.Helper()
	in, err := fleet.LoadBundle(path)
	if err != nil {
		t.Fatalf("load %s: %v", path, err)
	}
	return in
}

func build(t *testing.T, in *fleet.Inputs, opts Options) *Catalog {
	t.Helper()
	c, err := Build(in, opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return c
}

func variant(t *testing.T, p *model.Pool, id string) *model.Variant {
	t.Helper()
	for i := range p.Variants {
		if p.Variants[i].ID == id {
			return &p.Variants[i]
		}
	}
	t.Fatalf("no variant %q", id)
	return nil
}

func alias(t *testing.T, p *model.Pool, id string) *model.Alias {
	t.Helper()
	for i := range p.Aliases {
		if p.Aliases[i].ID == id {
			return &p.Aliases[i]
		}
	}
	t.Fatalf("no alias %q", id)
	return nil
}

func near(a, b float64) bool { return math.Abs(a-b) < 0.05 }

func TestSparkFleet(t *testing.T) {
	c := build(t, loadBundle(t, "../examples/spark-fleet.json"), Options{})
	p := c.Pool
	tests := []struct {
		name string
		ok   func() bool
	}{
		{"every Spark admits 115.6 GiB from telemetry and plans 111.6 after 4 of headroom", func() bool {
			for _, n := range p.Nodes {
				d := n.PrimaryDomain()
				if d == nil || !near(d.Budget.AdmitGb, 115.6) || !near(d.Budget.PlanGb, 111.6) || d.Budget.TotalSource != "telemetry" {
					return false
				}
			}
			return len(p.Nodes) == 3
		}},
		{"nodes report sm_121 on linux-arm64", func() bool {
			for _, n := range p.Nodes {
				if !slices.Equal(n.Archs, []string{"sm_121"}) || n.Platform != "linux-arm64" {
					return false
				}
			}
			return true
		}},
		{"only the observed links 01-02 and 01-03 exist", func() bool {
			return len(p.Links) == 2 && p.Links[0] == model.Link{A: "spark-node-01", B: "spark-node-02", Source: p.Links[0].Source} &&
				p.Links[1].A == "spark-node-01" && p.Links[1].B == "spark-node-03"
		}},
		{"the pair lane is one unmanaged TP2 variant over 01 and 02 with 108 GiB per node", func() bool {
			v := variant(t, p, "sparkqwen-pair")
			return v.Kind == model.Unmanaged && v.Req.TensorParallel == 2 && v.Req.NodeCount == 2 &&
				slices.Equal(v.Placements[0].Nodes, []string{"spark-node-01", "spark-node-02"}) && v.MemoryGb == 108 &&
				slices.Equal(v.Models, []string{"qwen3.8-flash-next"})
		}},
		{"the distributed members are not variants of their own", func() bool {
			for _, v := range p.Variants {
				if strings.HasPrefix(v.ID, "sparkqwen-pair-") {
					return false
				}
			}
			return true
		}},
		{"the 27B lane reads sm_121a from CUTE_DSL_ARCH and TP1, 4 sequences from its launch args", func() bool {
			v := variant(t, p, "qwen38-27b-nvfp4")
			return slices.Equal(v.Req.ComputeArchs, []string{"sm_121"}) && v.Req.TensorParallel == 1 && v.Req.MaxSequences == 4 &&
				v.Kind == model.Managed && v.DefaultResidency == model.Auto
		}},
		{"the 27B lane without metrics takes the concurrency-1 benchmark", func() bool {
			v := variant(t, p, "qwen38-27b-nvfp4")
			return v.Perf.FirstTokenMs == 1042 && strings.HasPrefix(v.Perf.Source, "benchmark:")
		}},
		{"the pair lane takes its performance from live metrics", func() bool {
			v := variant(t, p, "sparkqwen-pair")
			return v.Perf.FirstTokenMs == 850 && v.Perf.Source == "metrics:qwen3.8-flash-next"
		}},
		{"demand per alias comes from the requested buckets", func() bool {
			return alias(t, p, "q38fn").Demand == 1840 && alias(t, p, "enntity-presence").Demand == 5200 &&
				alias(t, p, "embeddings").Demand == 22000 && alias(t, p, "q38fn").DemandSource == "requested"
		}},
		{"route profiles expand to model ids", func() bool {
			a := alias(t, p, "q38fn")
			for _, r := range a.Routes {
				if r.Name == "standalone" {
					return slices.Equal(r.Members, []string{"qwen38-27b-nvfp4", "cloud/openrouter/q38fn"})
				}
			}
			return false
		}},
		{"keepWarm runtimes become pins with residency always", func() bool {
			var got []string
			for _, pin := range p.Pins {
				if pin.Source == model.PinKeepWarm && pin.Residency == model.Always {
					got = append(got, pin.Variant)
				}
			}
			return slices.Equal(got, []string{"qwen3-embedding-4b", "spark03-stt", "spark03-tts-custom"})
		}},
		{"what runs now includes the stopped on-demand 27B and routes cognition to the pair", func() bool {
			found := false
			for _, l := range p.Current.Lanes {
				if l.Variant == "qwen38-27b-nvfp4" && l.Residency == model.Auto && l.Status == "stopped, loaded on demand" {
					found = true
				}
			}
			for _, r := range p.Current.Routes {
				if r.Alias == "q38fn" && r.Primary != "qwen3.8-flash-next" {
					return false
				}
			}
			return found
		}},
		{"the cloud model is external with its metrics latency", func() bool {
			for _, m := range p.Models {
				if m.ID == "cloud/openrouter/q38fn" {
					return m.External && m.Perf.FirstTokenMs > 0
				}
			}
			return false
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if !tc.ok() {
				t.Errorf("does not hold; catalog:\n%s", dump(c))
			}
		})
	}
}

func dump(c *Catalog) string {
	b, _ := json.MarshalIndent(c.Pool, "", " ")
	return string(b)
}

func TestOptionsShapeThePool(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		check func(t *testing.T, c *Catalog)
	}{
		{
			name: "cordoning a node marks it and drops the keepWarm pins there with a note",
			opts: Options{Cordons: []string{"spark-node-03"}},
			check: func(t *testing.T, c *Catalog) {
				for _, n := range c.Pool.Nodes {
					if n.ID == "spark-node-03" && n.Unavailable != "cordoned (--cordon)" {
						t.Errorf("spark-node-03 unavailable = %q", n.Unavailable)
					}
				}
				for _, pin := range c.Pool.Pins {
					if pin.Source == model.PinKeepWarm {
						t.Errorf("keepWarm pin %s survived the cordon", pin.Variant)
					}
				}
				if !containsNote(c, "keepWarm qwen3-embedding-4b cannot hold: spark-node-03 is cordoned") {
					t.Errorf("no note about the dropped pin: %q", c.Notes)
				}
			},
		},
		{
			name: "an unreachable node carries the gateway's reason",
			opts: Options{Unreachable: map[string]string{"spark-node-02": "timeout after 3s"}},
			check: func(t *testing.T, c *Catalog) {
				if got := c.Pool.Nodes[1].Unavailable; got != "unreachable: timeout after 3s" {
					t.Errorf("unavailable = %q", got)
				}
			},
		},
		{
			name: "a --pin flag pins the runtime's lane to its nodes",
			opts: Options{Pins: []string{"qwen38-27b-nvfp4=spark-node-03"}},
			check: func(t *testing.T, c *Catalog) {
				last := c.Pool.Pins[len(c.Pool.Pins)-1]
				if last.Source != model.PinFlag || last.Variant != "qwen38-27b-nvfp4" || !slices.Equal(last.Nodes, []string{"spark-node-03"}) {
					t.Errorf("pin = %+v", last)
				}
			},
		},
		{
			name: "a profile turns its routes and residency into pins",
			opts: Options{Profile: "standalone"},
			check: func(t *testing.T, c *Catalog) {
				var routes, residency int
				for _, pin := range c.Pool.Pins {
					if pin.Source != model.PinProfile {
						continue
					}
					if pin.Alias != "" {
						routes++
						if pin.RouteName != "standalone" || pin.Route[0] != "qwen38-27b-nvfp4" {
							t.Errorf("route pin = %+v", pin)
						}
					} else {
						residency++
					}
				}
				if routes != 2 || residency != 4 {
					t.Errorf("profile pins: %d routes, %d residency; want 2 and 4", routes, residency)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.check(t, build(t, loadBundle(t, "../examples/spark-fleet.json"), tc.opts))
		})
	}
}

func containsNote(c *Catalog, sub string) bool {
	for _, n := range c.Notes {
		if strings.Contains(n, sub) {
			return true
		}
	}
	return false
}

func TestBadOptionsAreProblemsNamingTheFlag(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"a cordon on an unknown node", Options{Cordons: []string{"spark-node-09"}}, `--cordon: cordon names node "spark-node-09", which is not in the pool`},
		{"a pin without a node", Options{Pins: []string{"qwen38-27b-nvfp4"}}, `--pin[0]: expected RUNTIME=NODE[,NODE]`},
		{"a pin to an unknown node", Options{Pins: []string{"qwen38-27b-nvfp4=spark-node-09"}}, `names node "spark-node-09", which is not in the pool`},
		{"a pin of an unknown runtime", Options{Pins: []string{"nope=spark-node-01"}}, `names runtime "nope", which the pool does not plan`},
		{"an unknown profile", Options{Profile: "nope"}, `no fleet profile "nope" (profiles: sparkqwen-pair-rc16, standalone)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(loadBundle(t, "../examples/spark-fleet.json"), tc.opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v; want it to contain %q", err, tc.want)
			}
			var ps lloom.Problems
			if !asProblems(err, &ps) {
				t.Errorf("err is %T, want lloom.Problems", err)
			}
		})
	}
}

func asProblems(err error, ps *lloom.Problems) bool {
	p, ok := err.(lloom.Problems)
	*ps = p
	return ok
}

func TestAProfileRouteThatNamesNoRouteIsAProblem(t *testing.T) {
	in := loadBundle(t, "../examples/spark-fleet.json")
	in.Profiles["standalone"].Routes["q38fn"] = "no-such-route"
	_, err := Build(in, Options{Profile: "standalone"})
	if err == nil || !strings.Contains(err.Error(), `alias q38fn has no route profile "no-such-route" (it has: cloud, local-first, standalone)`) {
		t.Fatalf("err = %v", err)
	}
}

func TestMeasuredRSSAboveTheEstimateRaisesMemory(t *testing.T) {
	in := loadBundle(t, "../examples/spark-fleet.json")
	st := in.Nodes["spark-node-03"].Status
	row := st.RuntimeManager.Runtimes["qwen38-27b-nvfp4"]
	rss := int64(45.5 * model.GiB)
	row.MemoryUsage = &lloom.MemoryUsage{ResidentBytes: &rss}
	st.RuntimeManager.Runtimes["qwen38-27b-nvfp4"] = row
	c := build(t, in, Options{})
	v := variant(t, c.Pool, "qwen38-27b-nvfp4")
	if v.MemoryGb != 45.5 || v.MemorySource != "rss" || v.Placements[0].Draws[0].Gb != 45.5 {
		t.Errorf("memory = %v (%s), draw %v; want 45.5 from rss", v.MemoryGb, v.MemorySource, v.Placements[0].Draws[0].Gb)
	}
}

func TestLegacyAliasesAndRecentRequestsFromARealGateway(t *testing.T) {
	dir := "../lloom/testdata/lloom-gateway-0.2.3/"
	in, err := fleet.Load(fleet.Sources{Config: dir + "config.json", Metrics: dir + "metrics.json"})
	if err != nil {
		t.Fatal(err)
	}
	later := build(t, in, Options{Routing: lloom.RoutingFor(lloom.Release{Minor: 3}, "test")}).Pool
	if got := alias(t, later, "q38fn").Members; !slices.Equal(got, []string{"qwen3.8-flash-next", "cloud/openrouter/q38fn"}) {
		t.Errorf("later release: q38fn members = %v (legacy target + fallbacks)", got)
	}
	// Without a release, the legacy form is read as 0.2.3 reads it.
	c := build(t, in, Options{})
	p := c.Pool
	if a := alias(t, p, "q38fn"); !slices.Equal(a.Members, []string{"qwen3.8-flash-next"}) || !slices.Equal(a.Unread, []string{"cloud/openrouter/q38fn"}) {
		t.Errorf("unknown release: q38fn members = %v, unread %v; want the target alone, the fallback unread", a.Members, a.Unread)
	}
	// The capture sent 13 requests to q38fn, 5 to enntity-presence, 20 to
	// embeddings and 3 straight to the 27B model; the 0.2.3 gateway has no
	// requested buckets, so the split comes from recent[] requestedModel.
	want := map[string]float64{"q38fn": 13, "enntity-presence": 5, "embeddings": 20}
	for id, d := range want {
		if a := alias(t, p, id); a.Demand != d || a.DemandSource != "split:recent" {
			t.Errorf("%s demand = %v (%s), want %v from recent requests", id, a.Demand, a.DemandSource, d)
		}
	}
	for _, m := range p.Models {
		if m.ID == "qwen38-27b-nvfp4" && m.DirectDemand != 3 {
			t.Errorf("direct demand of the 27B = %v, want 3", m.DirectDemand)
		}
	}
	// Config and metrics only: the pair is declared, which is no evidence
	// that its nodes are cabled, so the note names the missing link.
	if !containsNote(c, "sparkqwen-pair spans spark-node-01+spark-node-02, but nothing shows them all linked (missing: no cluster.discovery.links entry") {
		t.Errorf("the unproven pair is not noted: %q", c.Notes)
	}
}

func TestHeteroFleetSeparatesRecipesByPlatform(t *testing.T) {
	c := build(t, loadBundle(t, "../examples/hetero-fleet.json"), Options{ConsiderInstalls: true})
	ix := c.Pool.Index()
	for _, v := range c.Pool.Variants {
		if v.Kind != model.Recipe {
			continue
		}
		var eligible []string
		for _, pl := range v.Placements {
			if ok, _ := model.Eligible(c.Pool, ix, &v, pl); ok {
				eligible = append(eligible, pl.Key())
			}
		}
		mac := strings.Contains(v.ID, "apple-silicon")
		for _, e := range eligible {
			if mac != (e == "macbook-local") {
				t.Errorf("%s is eligible on %s", v.ID, e)
			}
		}
		if len(eligible) == 0 {
			t.Errorf("%s is eligible nowhere", v.ID)
		}
	}
	fed := 0
	for _, v := range c.Pool.Variants {
		if v.Kind == model.Federated {
			fed++
		}
	}
	if fed != 2 {
		t.Errorf("%d federated variants, want the Mac's 2", fed)
	}
}

func TestBuildIsDeterministic(t *testing.T) {
	var outs [][]byte
	for range 3 {
		c := build(t, loadBundle(t, "../examples/hetero-fleet.json"), Options{ConsiderInstalls: true})
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, b)
	}
	if !bytes.Equal(outs[0], outs[1]) || !bytes.Equal(outs[1], outs[2]) {
		t.Error("two builds of the same inputs differ")
	}
}

func FuzzBuild(f *testing.F) {
	for _, p := range []string{"../examples/spark-fleet.json", "../examples/hetero-fleet.json", "../examples/rule-unlinked-tp.json", "testdata/gpu-box-fleet.json", "testdata/h100-box-fleet.json"} {
		in, err := fleet.LoadBundle(p)
		if err != nil {
			f.Fatal(err)
		}
		b, err := in.Bundle(false)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "", "")
	}
	// The federated captures: proxies that name the config's runtimes.
	for _, c := range []string{"config-namespaced.json", "config-bare.json"} {
		in, err := fleet.Load(fleet.Sources{Config: fed023 + c})
		if err != nil {
			f.Fatal(err)
		}
		b, err := in.Bundle(false)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "", "qwen38-27b-nvfp4=spark-node-03")
	}
	f.Fuzz(func(t *testing.T, data []byte, cordon, pin string) {
		in, err := fleet.ParseBundle(data, "fuzz.json")
		if err != nil {
			return
		}
		opts := Options{ConsiderInstalls: true}
		if cordon != "" {
			opts.Cordons = []string{cordon}
		}
		if pin != "" {
			opts.Pins = []string{pin}
		}
		c, err := Build(in, opts)
		if err != nil {
			return
		}
		for _, v := range c.Pool.Variants {
			if len(v.Placements) == 0 && v.Kind != model.Recipe {
				t.Fatalf("fixed variant %s has no placement", v.ID)
			}
		}
	})
}

func TestModelsThatShareARuntimeShareOneLane(t *testing.T) {
	in := loadBundle(t, "../examples/spark-fleet.json")
	in.Config.Models = append(in.Config.Models, lloom.Model{ID: "qwen38-27b-nvfp4-fast", Kind: "chat", Backend: "qwen38-27b-nvfp4", Runtime: "qwen38-27b-nvfp4"})
	c := build(t, in, Options{})
	v := variant(t, c.Pool, "qwen38-27b-nvfp4")
	if !slices.Equal(v.Models, []string{"qwen38-27b-nvfp4", "qwen38-27b-nvfp4-fast"}) || len(v.Placements) != 1 {
		t.Errorf("variant serves %v with %d placements; want both models on one lane", v.Models, len(v.Placements))
	}
	n := 0
	for _, x := range c.Pool.Variants {
		if x.Runtime == "qwen38-27b-nvfp4" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d variants for one runtime", n)
	}
}

// TestEachAliasFormHasTheCandidatesItsReleaseRoutesTo: the config two
// LLooM 0.2.3 gateways served, with an alias added in each other form.
func TestEachAliasFormHasTheCandidatesItsReleaseRoutesTo(t *testing.T) {
	data, err := os.ReadFile("../lloom/testdata/lloom-0.2.3-routing/config.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	aliases := doc["aliases"].(map[string]any)
	aliases["bare"] = "cloud"
	aliases["members"] = map[string]any{"members": []any{"primary", "cloud"}}
	aliases["nested"] = map[string]any{"target": "chat"}
	path := filepath.Join(t.TempDir(), "config.json")
	data, _ = json.Marshal(doc)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	in, err := fleet.Load(fleet.Sources{Config: path})
	if err != nil {
		t.Fatal(err)
	}
	old := lloom.RoutingFor(lloom.Release{Minor: 2, Patch: 3}, "test")
	later := lloom.RoutingFor(lloom.Release{Minor: 3}, "test")
	tests := []struct {
		name          string
		routing       lloom.Routing
		alias         string
		members, skip []string
	}{
		{"0.2.3: a bare id is its target", old, "bare", []string{"cloud"}, nil},
		{"0.2.3: target and fallbacks give the target alone", old, "chat", []string{"primary"}, []string{"cloud"}},
		{"0.2.3: a federated target is a model", old, "fed", []string{"node-b/bmodel"}, []string{"cloud"}},
		{"0.2.3: the members form has no target", old, "members", nil, []string{"primary", "cloud"}},
		{"0.2.3: an alias is no target", old, "nested", nil, []string{"primary", "cloud"}},
		{"later: target and fallbacks are members", later, "chat", []string{"primary", "cloud"}, nil},
		{"later: the members form", later, "members", []string{"primary", "cloud"}, nil},
		{"later: a nested alias expands", later, "nested", []string{"primary", "cloud"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := build(t, in, Options{Routing: tc.routing}).Pool
			a := alias(t, p, tc.alias)
			if !slices.Equal(a.Members, tc.members) || !slices.Equal(a.Unread, tc.skip) {
				t.Errorf("members %q, unread %q; want %q, %q", a.Members, a.Unread, tc.members, tc.skip)
			}
			if p.Routing == nil || p.Routing.Reading != string(tc.routing.Reading) {
				t.Errorf("the pool's routing is %+v", p.Routing)
			}
		})
	}
}
