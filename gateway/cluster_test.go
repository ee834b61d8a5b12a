package gateway

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/agent"
	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/inventory"
	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

// metricsDoc is a /gateway/metrics answer with one model bucket and its
// recent entries: entries[i] is {requestedModel, node, status}.
func metricsDoc(modelID string, requests, errors int, entries [][3]any) doc {
	var recent []any
	for i, e := range entries {
		r := doc{"id": "conn_" + string(rune('a'+i)), "at": "2026-11-29T15:00:0" + string(rune('0'+i%10)) + "Z",
			"model": modelID, "requestedModel": e[0], "status": e[2], "ok": e[2].(int) < 400}
		if e[1] != "" {
			r["node"] = e[1]
		}
		recent = append(recent, r)
	}
	bucket := doc{"id": modelID, "requests": requests, "errors": errors}
	return doc{"object": "gateway.metrics", "period": "all", "totals": doc{"requests": requests, "errors": errors},
		"models": []any{bucket}, "routes": []any{}, "recent": recent}
}

// sumFleet is a three-node 0.2.3 cluster whose gateways each saw their own
// traffic: spark-node-01 the capture's (13 q38fn, 5 enntity-presence, 20
// embeddings, 3 to the 27B) plus 2 direct requests for
// qwen3.8-flash-next; spark-node-02 5 q38fn of which one failed with a
// 502; spark-node-03 2 q38fn whose entries name spark-node-01. An entry's
// node is the target LLooM chose, not a forward: this config gives the
// model no target that is a peer's gateway, so nothing is taken off
// (catalog's tests on real federated captures cover forwarding).
func sumFleet(t *testing.T) (*Fleet, *fleet.Inputs) {
	t.Helper()
	m1 := decode(t, readTestdata("gateway-0.2.3-metrics.json"))
	for _, b := range m1["models"].([]any) {
		if b := b.(doc); b["id"] == "qwen3.8-flash-next" {
			b["requests"] = b["requests"].(float64) + 2
		}
	}
	m1["recent"] = append(m1["recent"].([]any),
		doc{"id": "conn_90", "at": "2026-11-29T14:09:00Z", "model": "qwen3.8-flash-next", "requestedModel": "qwen3.8-flash-next", "status": 200, "ok": true, "caller": "node"},
		doc{"id": "conn_91", "at": "2026-11-29T14:09:01Z", "model": "qwen3.8-flash-next", "requestedModel": "qwen3.8-flash-next", "status": 200, "ok": true, "caller": "node"})
	gw := newFake(t, testKey).
		handle("/gateway/cluster", answer(200, encode(t, olderCluster(t)))).
		handle("/gateway/metrics", answer(200, encode(t, m1)))
	n2 := newFake(t, testKey).handle("/gateway/metrics", answer(200, encode(t, metricsDoc("qwen3.8-flash-next", 5, 1,
		[][3]any{{"q38fn", "", 200}, {"q38fn", "", 200}, {"q38fn", "", 200}, {"q38fn", "", 200}, {"q38fn", "", 502}}))))
	n3 := newFake(t, testKey).handle("/gateway/metrics", answer(200, encode(t, metricsDoc("qwen3.8-flash-next", 2, 0,
		[][3]any{{"q38fn", "spark-node-01", 200}, {"q38fn", "spark-node-01", 200}}))))
	cfg := testConfig(t, map[string]string{"spark-node-02": n2.srv.URL, "spark-node-03": n3.srv.URL})
	fl := fetch(t, Options{URL: gw.srv.URL, APIKey: testKey, Config: cfg})
	in, err := fl.Inputs(loadBase(t, fleet.Sources{}))
	if err != nil {
		t.Fatal(err)
	}
	return fl, in
}

func TestDemandIsTheSumOfEveryNodesMetrics(t *testing.T) {
	fl, in := sumFleet(t)
	if got := fl.MetricsFrom(); len(got) != 3 || len(fl.Problems) != 0 {
		t.Fatalf("metrics of %v, problems %q; want all three nodes and no problem", got, fl.Problems)
	}
	c, err := catalog.Build(in, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// q38fn: 13 at 01, 4 answered at 02 (the 502 is not demand), 2 at 03.
	want := map[string]float64{"q38fn": 19, "enntity-presence": 5, "embeddings": 20}
	for _, a := range c.Pool.Aliases {
		if d, ok := want[a.ID]; ok && (a.Demand != d || a.DemandSource != "split:recent") {
			t.Errorf("%s demand %v (%s), want %v split by recent requests", a.ID, a.Demand, a.DemandSource, d)
		}
	}
	for _, m := range c.Pool.Models {
		switch m.ID {
		case "qwen3.8-flash-next":
			if m.DirectDemand != 2 {
				t.Errorf("direct demand of %s = %v, want 2: no target of the model forwards", m.ID, m.DirectDemand)
			}
		case "qwen38-27b-nvfp4":
			if m.DirectDemand != 3 {
				t.Errorf("direct demand of %s = %v, want 3", m.ID, m.DirectDemand)
			}
		}
	}
	found := false
	for _, n := range c.Notes {
		if n == "demand q38fn: 19 requests from the metrics of spark-node-01, spark-node-02, spark-node-03, counted from the recent requests" {
			found = true
		}
	}
	if !found {
		t.Errorf("no note states q38fn's demand source and split: %q", c.Notes)
	}
}

// restarted is the capture's metrics after a gateway restart: the model
// buckets came back from the persisted history file, recent[] did not.
func restarted(t *testing.T) []byte {
	m := decode(t, readTestdata("gateway-0.2.3-metrics.json"))
	m["recent"] = []any{}
	return encode(t, m)
}

func TestARestartedGatewaySplitsByTheDemandHistory(t *testing.T) {
	serve := func(metrics []byte) *Fleet {
		gw := newFake(t, "").
			handle("/gateway/cluster", answer(200, encode(t, olderCluster(t)))).
			handle("/gateway/metrics", answer(200, metrics))
		return fetch(t, Options{URL: gw.srv.URL, Config: testConfig(t, nil)})
	}
	demand := func(fl *Fleet, history *fleet.DemandHistory) map[string]model.Alias {
		base := loadBase(t, fleet.Sources{})
		base.DemandHistory = history
		in, err := fl.Inputs(base)
		if err != nil {
			t.Fatal(err)
		}
		c, err := catalog.Build(in, catalog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]model.Alias{}
		for _, a := range c.Pool.Aliases {
			out[a.ID] = a
		}
		return out
	}
	// Before the restart: the split is in recent[]; the history learns it.
	history := &fleet.DemandHistory{}
	before := serve(readTestdata("gateway-0.2.3-metrics.json"))
	m, err := lloom.ParseMetrics(before.Nodes["spark-node-01"].Metrics, "metrics")
	if err != nil {
		t.Fatal(err)
	}
	if n := history.Record("spark-node-01", m).Counted; n != 41 {
		t.Errorf("recorded %d entries, want the 41 of the capture", n)
	}
	if n := history.Record("spark-node-01", m).Counted; n != 0 {
		t.Errorf("the same entries were counted again (%d)", n)
	}
	after := serve(restarted(t))
	tests := []struct {
		name     string
		history  *fleet.DemandHistory
		q38fn    float64
		presence float64
		source   string
	}{
		{"without a history the split falls back to even", nil, 9, 9, "split:even"},
		{"with the history the split is the one seen before the restart", history, 13, 5, "split:history"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := demand(after, tc.history)
			if a := got["q38fn"]; a.Demand != tc.q38fn || a.DemandSource != tc.source {
				t.Errorf("q38fn %v (%s), want %v (%s)", a.Demand, a.DemandSource, tc.q38fn, tc.source)
			}
			if a := got["enntity-presence"]; a.Demand != tc.presence || a.DemandSource != tc.source {
				t.Errorf("enntity-presence %v (%s), want %v (%s)", a.Demand, a.DemandSource, tc.presence, tc.source)
			}
		})
	}
}

// TestADirectTopologyClusterKeepsItsRunningPair is the 0.2.3 cluster that
// `lloom cluster discover` writes for an NVIDIA Sync pair (topology
// direct, fabric backendHost, no discovery.links), with the TP pair
// running (external, healthy) on both nodes: the pair is linked and stays.
func TestADirectTopologyClusterKeepsItsRunningPair(t *testing.T) {
	cfg := decode(t, readTestdata("gateway-0.2.3-config.json"))
	cluster := decode(t, mustRead(t, "../lloom/testdata/lloom-0.2.3-cluster-discover/cluster.json"))
	cfg["cluster"] = cluster
	peer := newFake(t, "")
	nodes := cluster["nodes"].(doc)
	for _, id := range []string{"spark-node-01", "spark-node-02"} {
		nodes[id].(doc)["endpoint"] = peer.srv.URL // loopback only
	}
	nodes["spark-node-03"] = doc{"endpoint": peer.srv.URL, "resources": doc{"memoryGb": 128}}
	path := t.TempDir() + "/config.json"
	if err := os.WriteFile(path, encode(t, cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	base := loadBase(t, fleet.Sources{Config: path})
	gw := newFake(t, "").
		handle("/gateway/cluster", answer(200, encode(t, olderCluster(t)))).
		handle("/gateway/metrics", answer(200, readTestdata("gateway-0.2.3-metrics.json")))
	fl := fetch(t, Options{URL: gw.srv.URL, Config: base.Config})
	in, err := fl.Inputs(base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Build(in, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var link string
	for _, l := range c.Pool.Links {
		if l.A == "spark-node-01" && l.B == "spark-node-02" {
			link = l.Source
		}
	}
	if link != "config topology direct" {
		t.Errorf("01-02 link from %q, want the direct topology; links %+v", link, c.Pool.Links)
	}
	running := false
	for _, cl := range c.Pool.Current.Lanes {
		if cl.Variant == "sparkqwen-pair" && cl.Status == "external, healthy" {
			running = true
		}
	}
	if !running {
		t.Errorf("the pair is not current and running: %+v", c.Pool.Current.Lanes)
	}
	for _, n := range c.Notes {
		if strings.Contains(n, "sparkqwen-pair spans") {
			t.Errorf("the linked pair is still noted: %q", n)
		}
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// deadlines records the deadline of every request a client sends.
type deadlines struct {
	mu   sync.Mutex
	rt   http.RoundTripper
	seen map[string]time.Time
	none []string
}

func (d *deadlines) RoundTrip(r *http.Request) (*http.Response, error) {
	d.mu.Lock()
	if dl, ok := r.Context().Deadline(); ok {
		if prev, had := d.seen[r.URL.Host+r.URL.Path]; !had || dl.After(prev) {
			d.seen[r.URL.Host+r.URL.Path] = dl
		}
	} else {
		d.none = append(d.none, r.URL.Path)
	}
	d.mu.Unlock()
	return d.rt.RoundTrip(r)
}

// TestAHungNodeCostsItsOwnBudget: spark-node-02 is missing from the
// cluster answer and never answers when asked directly. Every request
// about it ends within its own budget (half the fetch's by default), and
// every request to the gateway within the fetch's: the bounds are
// asserted on the requests' deadlines, not by a wall clock.
func TestAHungNodeCostsItsOwnBudget(t *testing.T) {
	cluster := olderCluster(t)
	delete(clusterNodes(cluster), "spark-node-02")
	release := make(chan struct{})
	hang := func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}
	hung := newFake(t, "").handle("/gateway/node", hang).handle("/gateway/metrics", hang)
	t.Cleanup(func() { close(release) })
	gw := newFake(t, "").
		handle("/gateway/cluster", answer(200, encode(t, cluster))).
		handle("/gateway/metrics", answer(200, readTestdata("gateway-0.2.3-metrics.json")))
	rec := &deadlines{rt: http.DefaultTransport.(*http.Transport).Clone(), seen: map[string]time.Time{}}
	const timeout = 300 * time.Millisecond
	cfg := testConfig(t, map[string]string{"spark-node-02": hung.srv.URL})
	start := time.Now()
	fl := fetch(t, Options{URL: gw.srv.URL, Config: cfg, Timeout: timeout, HTTPClient: &http.Client{Transport: rec}})
	if n := fl.Nodes["spark-node-02"]; n == nil || n.Unreachable != "not in the gateway's answer, and asked directly: no answer within 150ms" {
		t.Fatalf("spark-node-02 = %+v, want it unreachable after its own budget", n)
	}
	if len(rec.none) > 0 {
		t.Errorf("requests without a deadline: %v", rec.none)
	}
	hungHost := strings.TrimPrefix(hung.srv.URL, "http://")
	gwHost := strings.TrimPrefix(gw.srv.URL, "http://")
	cases := []struct {
		name   string
		host   string
		budget time.Duration
	}{
		{"every request about the hung node ends within its half of the budget", hungHost, timeout / 2},
		{"every request to the gateway ends within the whole budget", gwHost, timeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			for what, dl := range rec.seen {
				if !strings.HasPrefix(what, tc.host) {
					continue
				}
				n++
				if d := dl.Sub(start); d < tc.budget || d > tc.budget+50*time.Millisecond {
					t.Errorf("%s had its deadline %v after the call, want %v", what, d, tc.budget)
				}
			}
			if n == 0 {
				t.Error("no request was recorded")
			}
		})
	}
}

// refuseFirst dials a closed loopback port for the first connection to
// target, so the first attempt is refused for real, then dials target.
type refuseFirst struct {
	mu      sync.Mutex
	target  string
	closed  string
	attempt int
}

func (r *refuseFirst) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	r.mu.Lock()
	if addr == r.target {
		r.attempt++
		if r.attempt == 1 {
			addr = r.closed
		}
	}
	r.mu.Unlock()
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

func TestARefusedConnectionIsTriedOnceMore(t *testing.T) {
	cluster := olderCluster(t)
	delete(clusterNodes(cluster), "spark-node-03")
	node3 := newFake(t, "").handle("/gateway/node", answer(200, nodeAnswer(t, olderCluster(t), "spark-node-03")))
	gw := newFake(t, "").
		handle("/gateway/cluster", answer(200, encode(t, cluster))).
		handle("/gateway/metrics", answer(200, readTestdata("gateway-0.2.3-metrics.json")))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	rf := &refuseFirst{target: strings.TrimPrefix(node3.srv.URL, "http://"), closed: closed}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DialContext = rf.dial
	cfg := testConfig(t, map[string]string{"spark-node-03": node3.srv.URL})
	fl := fetch(t, Options{URL: gw.srv.URL, Config: cfg, HTTPClient: &http.Client{Transport: tr}, RetryBackoff: 10 * time.Millisecond})
	if n := fl.Nodes["spark-node-03"]; n == nil || n.Unreachable != "" {
		t.Fatalf("spark-node-03 = %+v, want it read on the second try", n)
	}
	if rf.attempt < 2 {
		t.Errorf("%d dial(s) to spark-node-03, want the refused one and the retry", rf.attempt)
	}

	// Refused twice: unreachable, and the reason says it was tried again.
	rf2 := &refuseFirst{target: "none", closed: closed}
	tr2 := http.DefaultTransport.(*http.Transport).Clone()
	tr2.DialContext = rf2.dial
	cfg = testConfig(t, map[string]string{"spark-node-03": "http://" + closed})
	fl = fetch(t, Options{URL: gw.srv.URL, Config: cfg, HTTPClient: &http.Client{Transport: tr2}, RetryBackoff: 10 * time.Millisecond})
	if n := fl.Nodes["spark-node-03"]; n == nil || !strings.Contains(n.Unreachable, "connection refused, and again 10ms later") {
		t.Errorf("spark-node-03 = %+v, want it unreachable after two refusals", n)
	}
}

// x64Box is the inventory of an x64 host without accelerators.
type x64Box struct{}

func (x64Box) Inventory(context.Context) (*inventory.Inventory, error) {
	return &inventory.Inventory{Schema: inventory.Schema, NodeID: "spark-node-03", PlatformID: "linux-x64",
		MemoryDomains: []inventory.Domain{{ID: "system:0", Kind: "system", CapacityGb: 23.5}}}, nil
}

// TestAnAgentsInventoryReachesAPlanMadeThroughAGateway: a LLooM 0.2.3
// gateway reports a node that runs `poolsolve serve` as the agent answers
// LLooM's plain status poll (no inventory, no profile): 0.2.3 never asks a
// peer for ?inventory=1. The node is also asked directly, so it is planned
// from its own inventory, an x64 host, not from the config's claim that it
// is a GB10.
func TestAnAgentsInventoryReachesAPlanMadeThroughAGateway(t *testing.T) {
	t.Setenv("POOLSOLVE_AGENT_TEST_KEY", testKey)
	h, err := agent.NewHandler(agent.Config{NodeID: "spark-node-03", APIKeyEnv: "POOLSOLVE_AGENT_TEST_KEY", Inventory: x64Box{}, Getenv: os.Getenv})
	if err != nil {
		t.Fatal(err)
	}
	box := httptest.NewServer(h)
	defer box.Close()
	req, _ := http.NewRequest("GET", box.URL+"/gateway/node", nil)
	req.Header.Set("Authorization", "Bearer "+testKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	plain := decode(t, readAll(t, resp))
	cluster := olderCluster(t)
	clusterNodes(cluster)["spark-node-03"] = plain["node"]
	gw := newFake(t, testKey).
		handle("/gateway/cluster", answer(200, encode(t, cluster))).
		handle("/gateway/metrics", answer(200, readTestdata("gateway-0.2.3-metrics.json")))
	cfg := testConfig(t, map[string]string{"spark-node-03": box.URL})
	fl := fetch(t, Options{URL: gw.srv.URL, APIKey: testKey, Config: cfg})
	n := fl.Nodes["spark-node-03"]
	if n.Facts != FactsInventory || n.From != FromCluster || n.Fallback != "" {
		t.Fatalf("spark-node-03: facts %q from %q, fallback %q; want the agent's own inventory in the gateway's status", n.Facts, n.From, n.Fallback)
	}
	in, err := fl.Inputs(loadBase(t, fleet.Sources{}))
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Build(in, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, node := range c.Pool.Nodes {
		if node.ID == "spark-node-03" && (node.Platform != "linux-x64" || len(node.Domains) != 1 || node.Domains[0].ID != "system:0" || len(node.Archs) != 0) {
			t.Errorf("spark-node-03 planned as %s %v archs %v; want linux-x64 system:0 and no arch", node.Platform, node.Domains, node.Archs)
		}
	}
}

func readAll(t *testing.T, resp *http.Response) []byte {
	t.Helper()
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
