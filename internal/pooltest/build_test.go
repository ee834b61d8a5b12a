package pooltest_test

import (
	"encoding/json"
	"testing"

	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

func TestNewBuildsAPoolThatReadsLikeTheProblem(t *testing.T) {
	p := pooltest.New(
		pooltest.Node("spark-node-01", 121.69, pooltest.Spark()),
		pooltest.Node("spark-node-02", 121.69, pooltest.Spark()),
		pooltest.Node("gpu-01", 256, pooltest.GPU(80)),
		pooltest.Link("spark-node-02", "spark-node-01"),
		pooltest.Variant("qwen-tp2", 60, pooltest.Serves("qwen"), pooltest.TP(2), pooltest.On("spark-node-02", "spark-node-01")),
		pooltest.Variant("llama-gpu", 20, pooltest.DeviceGb(40), pooltest.On("gpu-01")),
		pooltest.External("gpt", 0),
		pooltest.Alias("q", 10, "qwen", "gpt"),
		pooltest.RouteProfile("q", "cloud", "gpt"),
		pooltest.SLO("q", 2000, 0),
		pooltest.Running("qwen-tp2", model.Always, "spark-node-01", "spark-node-02"),
		pooltest.Routed("q", "qwen"),
	)
	ix := p.Index()
	v := p.Variants[ix.Variant["qwen-tp2"]]
	if got := v.Placements[0].Key(); got != "spark-node-01+spark-node-02" {
		t.Errorf("placement key = %q, want sorted nodes", got)
	}
	if len(v.Placements[0].Draws) != 2 || v.Placements[0].Draws[0].Domain != "unified:0" || v.Placements[0].Draws[0].Gb != 60 {
		t.Errorf("draws = %+v, want 60 GiB on each node's unified:0", v.Placements[0].Draws)
	}
	if ok, why := model.Eligible(p, ix, &v, v.Placements[0]); !ok {
		t.Errorf("qwen-tp2 on its placement is ineligible: %s", why)
	}
	g := p.Variants[ix.Variant["llama-gpu"]]
	if len(g.Placements[0].Draws) != 2 || g.Placements[0].Draws[1].Domain != pooltest.DeviceDomain {
		t.Errorf("llama-gpu draws = %+v, want system:0 and device draws", g.Placements[0].Draws)
	}
	n := p.Nodes[ix.Node["spark-node-01"]]
	if b := n.Domains[0].Budget; b.AdmitGb != 121.69-8 || b.PlanGb != 121.69-8-4 {
		t.Errorf("budget = %+v, want total - reserve 8, minus headroom 4", b)
	}
	m := p.Models[ix.Model["qwen"]]
	if len(m.Variants) != 1 || m.Variants[0] != "qwen-tp2" {
		t.Errorf("model qwen variants = %v, want [qwen-tp2]", m.Variants)
	}
	a := p.Aliases[ix.Alias["q"]]
	if a.SLO == nil || a.SLO.FirstTokenMs != 2000 || len(a.Routes) != 1 {
		t.Errorf("alias q = %+v, want an SLO and one route profile", a)
	}
}

func TestRandomIsDeterministicForASeed(t *testing.T) {
	for seed := range uint64(20) {
		a, _ := json.Marshal(pooltest.Random(seed, 5, 12))
		b, _ := json.Marshal(pooltest.Random(seed, 5, 12))
		if string(a) != string(b) {
			t.Fatalf("Random(%d) differs between calls", seed)
		}
	}
}

func TestRandomPoolsAreWellFormed(t *testing.T) {
	kinds := map[model.VariantKind]int{}
	tp2, pins, eligible, placements := 0, 0, 0, 0
	for seed := range uint64(200) {
		p := pooltest.Random(seed, 1+int(seed%6), int(seed%9))
		ix := p.Index()
		for i := range p.Variants {
			v := &p.Variants[i]
			kinds[v.Kind]++
			if v.Req.NodeCount == 2 {
				tp2++
			}
			if len(v.Placements) == 0 {
				t.Fatalf("seed %d: %s has no placement", seed, v.ID)
			}
			for _, pl := range v.Placements {
				placements++
				if len(pl.Nodes) != v.Req.NodeCount {
					t.Fatalf("seed %d: %s placement %s has %d nodes, needs %d", seed, v.ID, pl.Key(), len(pl.Nodes), v.Req.NodeCount)
				}
				if ok, _ := model.Eligible(p, ix, v, pl); ok {
					eligible++
				}
			}
		}
		pins += len(p.Pins)
		for _, a := range p.Aliases {
			for _, m := range a.Candidates() {
				if _, ok := ix.Model[m]; !ok {
					t.Fatalf("seed %d: alias %s names unknown model %s", seed, a.ID, m)
				}
			}
		}
	}
	if kinds[model.Managed] == 0 || kinds[model.Unmanaged] == 0 || kinds[model.Recipe] == 0 || tp2 == 0 || pins == 0 {
		t.Errorf("kinds %v, tp2 %d, pins %d: want every kind, some TP2 and some pins", kinds, tp2, pins)
	}
	if eligible == 0 || eligible == placements {
		t.Errorf("%d of %d placements eligible: want most, not all", eligible, placements)
	}
	t.Logf("kinds %v, tp2 %d, pins %d, eligible %d/%d", kinds, tp2, pins, eligible, placements)
}
