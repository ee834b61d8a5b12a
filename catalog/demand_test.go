package catalog

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

// federatedDemand are three real LLooM 0.2.3 gateways whose config
// federates spark-node-03's 27B under its namespace and its embedding
// model under the bare id (testdata/lloom-0.2.3-federated-demand/README.md
// lists the traffic and the readings).
const federatedDemand = "testdata/lloom-0.2.3-federated-demand/"

var sparkNodes = []string{"spark-node-01", "spark-node-02", "spark-node-03"}

func loadReading(t *testing.T, name, node string) *lloom.Metrics {
	t.Helper()
	m, err := lloom.LoadMetrics(federatedDemand + name + "-" + node + ".json")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// demandAt builds the pool from the readings named per node: every
// reading but the last goes into the demand history (as live runs with
// --demand-history keep it), the last is the metrics the plan reads.
func demandAt(t *testing.T, readings map[string][]string) *Catalog {
	t.Helper()
	in, err := fleet.Load(fleet.Sources{Config: federatedDemand + "config.json"})
	if err != nil {
		t.Fatal(err)
	}
	in.Nodes = map[string]fleet.NodeInputs{}
	var h *fleet.DemandHistory
	for _, node := range sparkNodes {
		names := readings[node]
		for _, name := range names[:len(names)-1] {
			if h == nil {
				h = &fleet.DemandHistory{}
			}
			h.Record(node, loadReading(t, name, node))
		}
		in.Nodes[node] = fleet.NodeInputs{Metrics: loadReading(t, names[len(names)-1], node)}
	}
	in.DemandHistory = h
	return build(t, in, Options{})
}

func demandOfPool(p *model.Pool) (map[string]model.Alias, map[string]float64, float64) {
	aliases, direct, total := map[string]model.Alias{}, map[string]float64{}, 0.0
	for _, a := range p.Aliases {
		aliases[a.ID] = a
		total += a.Demand
	}
	for _, m := range p.Models {
		if m.DirectDemand != 0 {
			direct[m.ID] = m.DirectDemand
		}
		total += m.DirectDemand
	}
	return aliases, direct, total
}

func each(readings ...string) map[string][]string {
	out := map[string][]string{}
	for _, n := range sparkNodes {
		out[n] = readings
	}
	return out
}

func TestEachRequestIsCountedOnceAcrossThreeRealGateways(t *testing.T) {
	// What was sent up to reading 3: 93 requests, none failed.
	sent := map[string]float64{"q38fn": 8, "enntity-presence": 57, "q27-remote": 8, "embeddings": 8}
	sentDirect := map[string]float64{"qwen38-27b-nvfp4": 6, "spark-node-03/qwen38-27b-nvfp4": 6}
	tests := []struct {
		name     string
		readings map[string][]string
		// demand and source per alias; nil demand means the requests sent
		demand map[string]float64
		source map[string]string
		direct map[string]float64
	}{
		{
			name:     "readings 1, 2 and 3 kept in the demand history give exactly the requests sent",
			readings: each("reading1", "reading2", "reading3"),
			source:   map[string]string{"q38fn": "split:history", "enntity-presence": "split:history", "q27-remote": "split:history", "embeddings": "split:history"},
		},
		{
			// 55 enntity-presence requests at spark-node-01 between the
			// two readings: its recent[] shows 48, so 7 are split evenly
			// with q38fn, and said so; never 55 split by the last 50.
			name:     "readings 1 and 3 split only the requests no recent entry showed evenly",
			readings: each("reading1", "reading3"),
			demand:   map[string]float64{"q38fn": 11.5, "enntity-presence": 53.5, "q27-remote": 8, "embeddings": 8},
			source:   map[string]string{"q38fn": "split:even 3.5 + split:history 8", "enntity-presence": "split:even 3.5 + split:history 50", "q27-remote": "split:history", "embeddings": "split:history"},
			direct:   sentDirect,
		},
		{
			// No history: reading 3's recent entries are the only split,
			// and at spark-node-01 they show 50 of its 77 requests.
			name:     "reading 3 alone counts what its recent entries show and splits the rest evenly, said as such",
			readings: each("reading3"),
			demand:   map[string]float64{"q38fn": 9, "enntity-presence": 56, "q27-remote": 12, "embeddings": 8},
			source:   map[string]string{"q38fn": "split:even 6 + split:recent 3", "enntity-presence": "split:even 6 + split:recent 50", "q27-remote": "split:even 7 + split:recent 5", "embeddings": "split:even 6 + split:recent 2"},
			direct:   map[string]float64{"qwen38-27b-nvfp4": 6, "spark-node-03/qwen38-27b-nvfp4": 2},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := demandAt(t, tc.readings)
			aliases, direct, total := demandOfPool(c.Pool)
			want, wantDirect := tc.demand, tc.direct
			if want == nil {
				want, wantDirect = sent, sentDirect
			}
			for id, d := range want {
				if a := aliases[id]; a.Demand != d || a.DemandSource != tc.source[id] {
					t.Errorf("%s: %v (%s), want %v (%s)", id, a.Demand, a.DemandSource, d, tc.source[id])
				}
			}
			if !mapsNear(direct, wantDirect) {
				t.Errorf("direct demand %v, want %v", direct, wantDirect)
			}
			// The gateways counted 93 answered requests once each, and
			// forwarded ones again where they arrived.
			if math.Abs(total-93) > 1e-9 {
				t.Errorf("total demand %v, want the 93 requests sent", total)
			}
			if !containsNote(c, "demand: 14 requests spark-node-01, spark-node-03 forwarded to spark-node-03 arrive there as requests for qwen38-27b-nvfp4: counted once, where the client asked") {
				t.Errorf("the forwarded requests are not noted: %q", c.Notes)
			}
		})
	}
}

func mapsNear(a, b map[string]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || math.Abs(v-w) > 1e-9 {
			return false
		}
	}
	return true
}

func TestARestartedGatewayIsCountedFromWhatItStillCounts(t *testing.T) {
	tests := []struct {
		name     string
		readings map[string][]string
		demand   map[string]float64
		source   map[string]string
		total    float64
		note     string
	}{
		{
			// spark-node-02 answered 3 enntity-presence, restarted (its
			// counts persisted, recent[] empty), then 2 q38fn.
			name: "a gateway that kept its counts splits the requests before its restart evenly",
			readings: map[string][]string{
				"spark-node-01": {"reading1", "reading2", "reading3"},
				"spark-node-02": {"reading1", "reading2", "reading3", "restart-persisted", "reading4"},
				"spark-node-03": {"reading1", "reading2", "reading3"},
			},
			demand: map[string]float64{"q38fn": 11.5, "enntity-presence": 58.5},
			source: map[string]string{"q38fn": "split:even 1.5 + split:history 10", "enntity-presence": "split:even 1.5 + split:history 57"},
			total:  98,
		},
		{
			// spark-node-03 restarted without metrics persistence and
			// answered 1 q27-remote (forwarded to itself).
			name: "a gateway whose counts started over is counted from zero again",
			readings: map[string][]string{
				"spark-node-01": {"reading1", "reading2", "reading3"},
				"spark-node-02": {"reading1", "reading2", "reading3"},
				"spark-node-03": {"reading1", "reading2", "reading3", "reading5-nopersist"},
			},
			demand: map[string]float64{"q27-remote": 6, "embeddings": 6},
			source: map[string]string{"q27-remote": "split:history", "embeddings": "split:history"},
			// 01: its 75; 02: its 11; 03: the 1 q27-remote (its other
			// count is that request arriving from itself).
			total: 87,
			note:  "demand of spark-node-03: the counts of Qwen/Qwen3-Embedding-4B, qwen38-27b-nvfp4, spark-node-03/qwen38-27b-nvfp4 went down since the last reading (a restart without metrics persistence): their history starts over",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := demandAt(t, tc.readings)
			aliases, _, total := demandOfPool(c.Pool)
			for id, d := range tc.demand {
				if a := aliases[id]; a.Demand != d || a.DemandSource != tc.source[id] {
					t.Errorf("%s: %v (%s), want %v (%s)", id, a.Demand, a.DemandSource, d, tc.source[id])
				}
			}
			if math.Abs(total-tc.total) > 1e-9 {
				t.Errorf("total demand %v, want %v", total, tc.total)
			}
			if tc.note != "" && !containsNote(c, tc.note) {
				t.Errorf("no note %q in %q", tc.note, c.Notes)
			}
		})
	}
}

func TestEveryAliasWithDemandSaysWhereItCameFrom(t *testing.T) {
	for _, readings := range [][]string{{"reading3"}, {"reading1", "reading3"}, {"reading1", "reading2", "reading3"}} {
		c := demandAt(t, each(readings...))
		for _, a := range c.Pool.Aliases {
			if a.Demand > 0 && a.DemandSource == "" {
				t.Errorf("%v: %s has demand %v and no source", readings, a.ID, a.Demand)
			}
			if a.Demand > 0 && !slices.ContainsFunc(c.Notes, func(n string) bool { return strings.HasPrefix(n, "demand "+a.ID+": ") }) {
				t.Errorf("%v: no note says where %s's demand came from", readings, a.ID)
			}
		}
	}
}

func TestAPolicyWindowDoesNotUseTheAllTimeHistory(t *testing.T) {
	in, err := fleet.Load(fleet.Sources{Config: federatedDemand + "config.json"})
	if err != nil {
		t.Fatal(err)
	}
	in.Policy.Demand.Period = "7d"
	in.Nodes = map[string]fleet.NodeInputs{}
	h := &fleet.DemandHistory{}
	for _, node := range sparkNodes {
		h.Record(node, loadReading(t, "reading1", node))
		in.Nodes[node] = fleet.NodeInputs{Metrics: loadReading(t, "reading3", node)}
	}
	in.DemandHistory = h
	c := build(t, in, Options{})
	aliases, _, total := demandOfPool(c.Pool)
	// As reading 3 alone: the history counts all time, not the window.
	if a := aliases["enntity-presence"]; a.Demand != 56 || a.DemandSource != "split:even 6 + split:recent 50" {
		t.Errorf("enntity-presence %v (%s), want 56 (split:even 6 + split:recent 50)", a.Demand, a.DemandSource)
	}
	if total != 93 {
		t.Errorf("total %v, want 93", total)
	}
	if !containsNote(c, "demand of spark-node-01: the demand history counts all time, not the 7d window the policy asks for: not used") {
		t.Errorf("the unused history is not noted: %q", c.Notes)
	}
}
