package gateway

import (
	"github.com/poolsolve/poolsolve/lloom"
	"maps"

	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

const testKey = "test-admin-key"

// noEndpointProblems are the lines of a fetch whose config gives the
// other nodes no endpoint: their metrics cannot be read.
var noEndpointProblems = []string{
	"spark-node-02: /gateway/metrics: the config gives no usable endpoint; its requests are left out of demand",
	"spark-node-03: /gateway/metrics: the config gives no usable endpoint; its requests are left out of demand",
}

func fetch(t *testing.T, opts Options) *Fleet {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	fl, err := Fetch(ctx, opts)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	return fl
}

func TestFetchReadsClusterGateways(t *testing.T) {
	metrics := readTestdata("gateway-0.2.3-metrics.json")
	tests := []struct {
		name          string
		cluster       func(*testing.T) doc
		wantFacts     string
		wantFallbacks []string
	}{
		{
			name:      "an older gateway that ignores inventory=1 is planned from the machine profile in each status",
			cluster:   olderCluster,
			wantFacts: FactsProfile,
			wantFallbacks: []string{
				"spark-node-01: planned from machine profile (gateway predates inventory)",
				"spark-node-02: planned from machine profile (gateway predates inventory)",
				"spark-node-03: planned from machine profile (gateway predates inventory)",
			},
		},
		{
			name:      "a newer gateway's inventories are used and nothing falls back",
			cluster:   newerCluster,
			wantFacts: FactsInventory,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gw := newFake(t, testKey).
				handle("/gateway/cluster", answer(200, encode(t, tc.cluster(t)))).
				handle("/gateway/metrics", answer(200, metrics))
			fl := fetch(t, Options{URL: gw.srv.URL, APIKey: testKey, Config: testConfig(t, nil)})
			if fl.Mode != FromCluster {
				t.Errorf("Mode = %q, want %q", fl.Mode, FromCluster)
			}
			if ids := slices.Sorted(maps.Keys(fl.Nodes)); !slices.Equal(ids, []string{"spark-node-01", "spark-node-02", "spark-node-03"}) {
				t.Fatalf("nodes = %v", ids)
			}
			for id, n := range fl.Nodes {
				if n.Facts != tc.wantFacts || n.Unreachable != "" || n.Status == nil || !n.Status.Reachable {
					t.Errorf("%s: facts %q, unreachable %q, status %+v; want facts %q and reachable", id, n.Facts, n.Unreachable, n.Status, tc.wantFacts)
				}
				if (len(n.Status.Inventory) > 0) != (tc.wantFacts == FactsInventory) {
					t.Errorf("%s: inventory kept = %v, want %v", id, len(n.Status.Inventory) > 0, tc.wantFacts == FactsInventory)
				}
			}
			if got := fl.Fallbacks(); !slices.Equal(got, tc.wantFallbacks) {
				t.Errorf("Fallbacks() = %q, want %q", got, tc.wantFallbacks)
			}
			if from := fl.MetricsFrom(); !slices.Equal(from, []string{"spark-node-01"}) || !slices.Equal(fl.Problems, noEndpointProblems) {
				t.Errorf("metrics of %v, problems %q; want the gateway's own, and the others named", from, fl.Problems)
			}
			if gw.hit("/gateway/node") != 0 || gw.hit("/gateway/profile") != 0 {
				t.Errorf("a cluster answer with profiles needs no other route; hits %v", gw.hits)
			}
			for _, a := range gw.seenAuth() {
				if a != "Bearer "+testKey {
					t.Errorf("Authorization = %q, want the bearer key", a)
				}
			}
		})
	}
}

func TestFetchAsksTheNodeOfAGatewayThatIsNotACluster(t *testing.T) {
	cluster := olderCluster(t)
	gw := newFake(t, testKey).
		handle("/gateway/node", answer(200, readTestdata("gateway-0.2.3-node-inventory.json"))).
		handle("/gateway/metrics", answer(200, readTestdata("gateway-0.2.3-metrics.json")))
	node2 := newFake(t, testKey).handle("/gateway/node", answer(200, nodeAnswer(t, cluster, "spark-node-02")))
	cfg := testConfig(t, map[string]string{"spark-node-01": gw.srv.URL, "spark-node-02": node2.srv.URL, "spark-node-03": "http://user:secret@10.0.0.3:8100"})
	fl := fetch(t, Options{URL: gw.srv.URL, APIKey: testKey, Config: cfg})

	if fl.Mode != FromNode {
		t.Errorf("Mode = %q, want %q", fl.Mode, FromNode)
	}
	// Twice /gateway/node: as the gateway's own node after the 404, and
	// as spark-node-01 asked directly (its endpoint is the gateway).
	if gw.hit("/gateway/cluster") != 1 || gw.hit("/gateway/node") != 2 {
		t.Errorf("want /gateway/cluster (404), then /gateway/node, and spark-node-01 asked directly; hits %v", gw.hits)
	}
	if gw.query["/gateway/node"] != "inventory=1" {
		t.Errorf("query = %q, want inventory=1", gw.query["/gateway/node"])
	}
	want := map[string]struct{ from, facts, unreachable string }{
		"spark-node-01": {FromNode, FactsProfile, ""},
		"spark-node-02": {FromDirect, FactsProfile, ""},
		"spark-node-03": {FromDirect, FactsNone, "not in the gateway's answer, and its configured endpoint is unusable (it carries credentials; give the key through an environment variable instead)"},
	}
	for id, w := range want {
		n := fl.Nodes[id]
		if n == nil {
			t.Fatalf("no node %s", id)
		}
		if n.From != w.from || n.Facts != w.facts || n.Unreachable != w.unreachable {
			t.Errorf("%s: from %q facts %q unreachable %q; want %q %q %q", id, n.From, n.Facts, n.Unreachable, w.from, w.facts, w.unreachable)
		}
	}
	if got := fl.Unreachable(); len(got) != 1 || got["spark-node-03"] == "" {
		t.Errorf("Unreachable() = %v, want spark-node-03 only", got)
	}
}

// TestFetchPlansABadNodeAsUnreachable: one node misbehaves in each way a
// node can; it is planned as unreachable with a clear reason, and the
// other nodes are read as usual.
func TestFetchPlansABadNodeAsUnreachable(t *testing.T) {
	cluster := olderCluster(t)
	good := nodeAnswer(t, cluster, "spark-node-02")
	elsewhere := newFake(t, "").handle("/gateway/node", answer(200, good))
	release := make(chan struct{})
	t.Cleanup(func() { close(release) }) // runs before the servers close
	tests := []struct {
		name    string
		handler http.HandlerFunc
		opts    func(*Options)
		want    string
	}{
		{
			name: "a node that does not answer in time",
			handler: func(w http.ResponseWriter, r *http.Request) {
				select {
				case <-r.Context().Done():
				case <-release:
				}
			},
			opts: func(o *Options) { o.NodeTimeout = 200 * time.Millisecond },
			want: "no answer within 200ms",
		},
		{
			name:    "a node answering garbage",
			handler: answer(200, []byte("<<<garbage>>> not json")),
			want:    "answer is not a node status",
		},
		{
			name:    "a node answering truncated JSON",
			handler: answer(200, good[:len(good)/2]),
			want:    "answer is not a node status: unexpected end of JSON input",
		},
		{
			name:    "a node answering more than the body cap",
			handler: answer(200, append(bytes.TrimSuffix(good, []byte("}")), []byte(`,"pad":"`+strings.Repeat("x", 200<<10)+`"}`)...)),
			opts:    func(o *Options) { o.MaxBody = 64 << 10 },
			want:    "answer larger than the 65536-byte cap",
		},
		{
			name: "a node redirecting to another host",
			handler: func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, elsewhere.srv.URL+"/gateway/node", http.StatusFound)
			},
			want: "redirect to another host refused",
		},
		{
			name: "a node answering HTML",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Write(good)
			},
			want: `answer is not JSON (content type "text/html")`,
		},
		{
			name:    "a node refusing the key",
			handler: answer(http.StatusUnauthorized, noAuth),
			want:    "unauthorized (HTTP 401: missing or invalid admin authorization token): set --api-key-env",
		},
		{
			name:    "a node failing with LLooM's error envelope",
			handler: answer(http.StatusServiceUnavailable, []byte(`{"error":{"message":"busy, see http://internal-host:9/x","type":"server_error","code":"busy"}}`)),
			want:    "HTTP 503: busy, see [redacted]",
		},
		{
			name:    "a node answering as another node",
			handler: answer(200, nodeAnswer(t, cluster, "spark-node-03")),
			want:    `its status names another node ("spark-node-03")`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gw := newFake(t, testKey).
				handle("/gateway/node", answer(200, readTestdata("gateway-0.2.3-node-inventory.json"))).
				handle("/gateway/metrics", answer(200, readTestdata("gateway-0.2.3-metrics.json")))
			bad := newFake(t, "").handle("/gateway/node", tc.handler)
			node3 := newFake(t, testKey).handle("/gateway/node", answer(200, nodeAnswer(t, cluster, "spark-node-03")))
			cfg := testConfig(t, map[string]string{"spark-node-02": bad.srv.URL, "spark-node-03": node3.srv.URL})
			opts := Options{URL: gw.srv.URL, APIKey: testKey, Config: cfg}
			if tc.opts != nil {
				tc.opts(&opts)
			}
			fl := fetch(t, opts)
			n := fl.Nodes["spark-node-02"]
			if n == nil || !strings.Contains(n.Unreachable, tc.want) {
				t.Fatalf("spark-node-02 unreachable = %+v, want a reason with %q", n, tc.want)
			}
			if n.Status == nil || n.Status.Reachable || string(n.Status.Error) != n.Unreachable {
				t.Errorf("status = %+v, want {reachable: false, error: the reason}", n.Status)
			}
			for _, id := range []string{"spark-node-01", "spark-node-03"} {
				if m := fl.Nodes[id]; m == nil || m.Unreachable != "" || m.Facts != FactsProfile {
					t.Errorf("%s = %+v, want it read from its profile", id, m)
				}
			}
			if elsewhere.hit("/gateway/node") != 0 || len(elsewhere.seenAuth()) != 0 {
				t.Errorf("the other host was asked: the key may have travelled")
			}
		})
	}
}

func TestFetchFailsOnlyWhenTheGatewayGivesNothing(t *testing.T) {
	closed := newFake(t, "")
	closedURL := closed.srv.URL
	closed.srv.Close()
	tests := []struct {
		name    string
		url     func(gw *fake) string
		setup   func(gw *fake)
		want    []string
		wantIs  error
		notWant string
	}{
		{
			name:    "a gateway that refuses the key says to set --api-key-env",
			setup:   func(gw *fake) { gw.key = "another-key" },
			want:    []string{"unauthorized (HTTP 401: missing or invalid admin authorization token)", "set --api-key-env"},
			wantIs:  ErrUnauthorized,
			notWant: testKey,
		},
		{
			name: "a gateway answering garbage on both routes names both",
			setup: func(gw *fake) {
				gw.handle("/gateway/cluster", answer(200, []byte("{{{"))).handle("/gateway/node", answer(200, []byte("[1,2")))
			},
			want: []string{"/gateway/cluster: answer is not a cluster status", "/gateway/node: answer is not a node status"},
		},
		{
			name: "a gateway whose node answer names no node and no config says",
			setup: func(gw *fake) {
				gw.handle("/gateway/node", answer(200, []byte(`{"ok":true,"node":{"reachable":true}}`)))
			},
			want: []string{"names no node"},
		},
		{
			name: "a gateway that is down",
			url:  func(*fake) string { return closedURL },
			want: []string{"connection refused"},
		},
		{
			name:    "a URL with credentials is refused without quoting them",
			url:     func(gw *fake) string { return strings.Replace(gw.srv.URL, "http://", "http://user:hunter2@", 1) },
			want:    []string{"carries credentials"},
			wantIs:  ErrBadURL,
			notWant: "hunter2",
		},
		{
			name:   "a URL that is not http",
			url:    func(*fake) string { return "ftp://gateway.example/" },
			want:   []string{"expected http(s)://"},
			wantIs: ErrBadURL,
		},
		{
			name:    "a URL with a query is refused",
			url:     func(gw *fake) string { return gw.srv.URL + "?token=hunter2" },
			want:    []string{"may not have a query"},
			wantIs:  ErrBadURL,
			notWant: "hunter2",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gw := newFake(t, testKey)
			if tc.setup != nil {
				tc.setup(gw)
			}
			u := gw.srv.URL
			if tc.url != nil {
				u = tc.url(gw)
			}
			cfg := testConfig(t, nil)
			cfg.Cluster.NodeID = "${LLOOM_NODE_ID}"
			_, err := Fetch(context.Background(), Options{URL: u, APIKey: testKey, Config: cfg})
			if err == nil {
				t.Fatal("Fetch succeeded, want an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("error %v is not %v", err, tc.wantIs)
			}
			if tc.notWant != "" && strings.Contains(err.Error(), tc.notWant) {
				t.Errorf("error %q quotes %q", err, tc.notWant)
			}
		})
	}
}

func TestFetchFallsBackToGatewayProfile(t *testing.T) {
	tests := []struct {
		name         string
		profileRoute http.HandlerFunc // on every node; nil answers 404
		wantFacts    string
		wantFallback string
	}{
		{
			name:         "a status without inventory or profile takes GET /gateway/profile",
			profileRoute: answer(200, readTestdata("gateway-0.2.3-profile.json")),
			wantFacts:    FactsProfile,
			wantFallback: "planned from machine profile (gateway predates inventory)",
		},
		{
			name:         "without a profile either the node is planned from its telemetry and the config",
			wantFacts:    FactsStatus,
			wantFallback: "planned from status telemetry and config only (gateway predates inventory; no machine profile: HTTP 404: unknown route: /gateway/runtimes)",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cluster := olderCluster(t)
			for _, n := range clusterNodes(cluster) {
				delete(n.(doc), "profile")
			}
			gw := newFake(t, testKey).handle("/gateway/cluster", answer(200, encode(t, cluster)))
			node2 := newFake(t, testKey)
			if tc.profileRoute != nil {
				gw.handle("/gateway/profile", tc.profileRoute)
				node2.handle("/gateway/profile", tc.profileRoute)
			}
			cfg := testConfig(t, map[string]string{"spark-node-02": node2.srv.URL})
			fl := fetch(t, Options{URL: gw.srv.URL, APIKey: testKey, Config: cfg})
			for _, id := range []string{"spark-node-01", "spark-node-02"} {
				n := fl.Nodes[id]
				if n.Facts != tc.wantFacts || (n.Profile != nil) != (tc.wantFacts == FactsProfile) {
					t.Errorf("%s: facts %q, profile %v; want facts %q", id, n.Facts, n.Profile != nil, tc.wantFacts)
				}
			}
			if gw.hit("/gateway/profile") != 1 || node2.hit("/gateway/profile") != 1 {
				t.Errorf("profile asked %d times of the gateway (its own node) and %d of spark-node-02; want once each", gw.hit("/gateway/profile"), node2.hit("/gateway/profile"))
			}
			fb := fl.Fallbacks()
			if len(fb) != 3 || fb[0] != "spark-node-01: "+tc.wantFallback || fb[1] != "spark-node-02: "+tc.wantFallback {
				t.Errorf("Fallbacks() = %q, want %q for spark-node-01 and 02", fb, tc.wantFallback)
			}
			// spark-node-03 has no endpoint in the config to ask.
			if n := fl.Nodes["spark-node-03"]; n.Facts != FactsStatus || !strings.Contains(n.Fallback, "no machine profile: the config gives no usable endpoint") {
				t.Errorf("spark-node-03: facts %q fallback %q", n.Facts, n.Fallback)
			}
		})
	}
}

func TestFetchDropsABrokenInventory(t *testing.T) {
	cluster := newerCluster(t)
	nodes := clusterNodes(cluster)
	nodes["spark-node-01"].(doc)["inventory"] = doc{"schema": "poolsolve.inventory/v1", "nodeId": "spark-node-01", "memoryDomains": "many"}
	nodes["spark-node-02"].(doc)["inventory"] = sparkInventory("spark-node-09")
	nodes["spark-node-03"].(doc)["error"] = "inventory unavailable: nvidia-smi timed out"
	delete(nodes["spark-node-03"].(doc), "inventory")
	gw := newFake(t, "").handle("/gateway/cluster", answer(200, encode(t, cluster)))
	fl := fetch(t, Options{URL: gw.srv.URL, Config: testConfig(t, nil)})
	want := []string{
		"spark-node-01: planned from machine profile (its inventory is unreadable: $.memoryDomains: expected an array, got string \"many\")",
		`spark-node-02: planned from machine profile (its inventory describes node "spark-node-09")`,
		"spark-node-03: planned from machine profile (inventory unavailable: nvidia-smi timed out)",
	}
	if got := fl.Fallbacks(); !slices.Equal(got, want) {
		t.Errorf("Fallbacks() =\n%q\nwant\n%q", got, want)
	}
	for id, n := range fl.Nodes {
		if len(n.Status.Inventory) > 0 {
			t.Errorf("%s kept a broken inventory", id)
		}
	}
}

func TestFetchReportsNodesTheClusterCannotReach(t *testing.T) {
	cluster := newerCluster(t)
	clusterNodes(cluster)["spark-node-03"] = doc{
		"id": "spark-node-03", "reachable": false, "error": "connect ECONNREFUSED http://10.0.0.3:8100/gateway/node",
		"telemetry": nil, "runtimeManager": doc{"runtimes": doc{}},
	}
	gw := newFake(t, "").handle("/gateway/cluster", answer(200, encode(t, cluster)))
	fl := fetch(t, Options{URL: gw.srv.URL, Config: testConfig(t, nil)})
	want := map[string]string{"spark-node-03": "connect ECONNREFUSED [redacted]"}
	if got := fl.Unreachable(); len(got) != 1 || got["spark-node-03"] != want["spark-node-03"] {
		t.Errorf("Unreachable() = %q, want %q", got, want)
	}
	if len(fl.Fallbacks()) != 0 {
		t.Errorf("an unreachable node is not a fallback: %q", fl.Fallbacks())
	}
}

func TestFetchReadsTheRestOfAClusterAnswerWithABrokenNode(t *testing.T) {
	cluster := newerCluster(t)
	clusterNodes(cluster)["spark-node-02"].(doc)["telemetry"] = "garbage"
	gw := newFake(t, "").handle("/gateway/cluster", answer(200, encode(t, cluster)))
	fl := fetch(t, Options{URL: gw.srv.URL, Config: testConfig(t, nil)})
	if fl.Mode != FromCluster || gw.hit("/gateway/node") != 0 {
		t.Errorf("mode %q, /gateway/node asked %d times; want the cluster answer used", fl.Mode, gw.hit("/gateway/node"))
	}
	want := "its entry in the cluster answer is unreadable (answer is not a node status: expected an object, got string \"garbage\" at $.telemetry)"
	if got := fl.Unreachable(); len(got) != 1 || got["spark-node-02"] != want {
		t.Errorf("Unreachable() = %q, want spark-node-02: %q", got, want)
	}
	for _, id := range []string{"spark-node-01", "spark-node-03"} {
		if n := fl.Nodes[id]; n.Facts != FactsInventory {
			t.Errorf("%s: facts %q, want its inventory", id, n.Facts)
		}
	}
}

func TestFetchLeavesOutNodesWithUnusableIDs(t *testing.T) {
	cluster := newerCluster(t)
	nodes := clusterNodes(cluster)
	nodes[""] = doc{"reachable": true}
	nodes["evil\x1b[2Jnode"] = doc{"id": "evil\x1b[2Jnode", "reachable": true}
	gw := newFake(t, "").handle("/gateway/cluster", answer(200, encode(t, cluster)))
	fl := fetch(t, Options{URL: gw.srv.URL})
	if ids := slices.Sorted(maps.Keys(fl.Nodes)); !slices.Equal(ids, []string{"spark-node-01", "spark-node-02", "spark-node-03"}) {
		t.Errorf("nodes = %q, want the three with usable ids", ids)
	}
	unusable := 0
	for _, p := range fl.Problems {
		if strings.Contains(p, "answered a node with an unusable id") && !strings.Contains(p, "\x1b") {
			unusable++
		}
	}
	if unusable != 2 {
		t.Errorf("problems = %q, want both left-out nodes named, printably", fl.Problems)
	}
}

func TestFetchKeepsGoingWithoutMetrics(t *testing.T) {
	tests := []struct {
		name    string
		metrics http.HandlerFunc
		want    string
	}{
		{"a gateway without the metrics route", nil, "spark-node-01: /gateway/metrics: HTTP 404: unknown route: /gateway/runtimes; its requests are left out of demand"},
		{"metrics that are not a metrics document", answer(200, []byte(`{"hello":"world"}`)), "spark-node-01: /gateway/metrics: answer is not a metrics document: not a metrics document: expected a /gateway/metrics answer or a metrics history file; its requests are left out of demand"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gw := newFake(t, "").handle("/gateway/cluster", answer(200, encode(t, newerCluster(t))))
			if tc.metrics != nil {
				gw.handle("/gateway/metrics", tc.metrics)
			}
			fl := fetch(t, Options{URL: gw.srv.URL, Config: testConfig(t, nil)})
			want := append([]string{"no node gave its metrics: planning without demand", tc.want}, noEndpointProblems...)
			if from := fl.MetricsFrom(); len(from) != 0 || !slices.Equal(fl.Problems, want) {
				t.Errorf("metrics of %v, problems %q; want none and %q", from, fl.Problems, want)
			}
		})
	}
}

func TestFetchAsksMetricsForThePolicyPeriod(t *testing.T) {
	gw := newFake(t, "").
		handle("/gateway/cluster", answer(200, encode(t, newerCluster(t)))).
		handle("/gateway/metrics", answer(200, readTestdata("gateway-0.2.3-metrics.json")))
	fetch(t, Options{URL: gw.srv.URL + "/", MetricsPeriod: "7d"})
	if q := gw.query["/gateway/metrics"]; q != "period=7d" {
		t.Errorf("metrics query = %q, want period=7d", q)
	}
	if _, err := Fetch(context.Background(), Options{URL: gw.srv.URL, MetricsPeriod: "fortnight"}); err == nil || !strings.Contains(err.Error(), `"fortnight"`) {
		t.Errorf("a bad period: err = %v", err)
	}
}

func TestFetchUnderAPathPrefix(t *testing.T) {
	gw := newFake(t, "").handle("/lloom/gateway/cluster", answer(200, encode(t, newerCluster(t))))
	fl := fetch(t, Options{URL: gw.srv.URL + "/lloom/"})
	if len(fl.Nodes) != 3 {
		t.Errorf("nodes = %v", slices.Sorted(maps.Keys(fl.Nodes)))
	}
}

func TestFetchEndsWithTheContext(t *testing.T) {
	release := make(chan struct{})
	gw := newFake(t, "").handle("/gateway/cluster", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := Fetch(ctx, Options{URL: gw.srv.URL, Timeout: time.Minute})
	if err == nil || !strings.Contains(err.Error(), "no answer within") && !strings.Contains(err.Error(), "cancelled") {
		t.Errorf("err = %v, want the request given up", err)
	}
}

func TestClipKeepsMessagesPrintable(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"control characters become spaces", "a\x1b[31mb\nc", "a [31mb c"},
		{"long text is cut on a rune boundary", strings.Repeat("é", 200), strings.Repeat("é", 80) + "..."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := clip(tc.in); got != tc.want {
				t.Errorf("clip(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// TestReadClusterRefusesRepeatedNodeIDs: encoding/json keeps the last of
// two entries for one node, which silently dropped the other's report. A
// repeated key inside one node's entry breaks only that node.
func TestReadClusterRefusesRepeatedNodeIDs(t *testing.T) {
	node := func(id string) string {
		return `{"id": "` + id + `", "reachable": true}`
	}
	twice := `{"ok": true, "cluster": {"enabled": true, "nodes": {"spark-node-03": ` + node("spark-node-03") +
		`, "spark-node-02": {"id": "spark-node-02", "reachable": "yes"}, "spark-node-03": ` + node("spark-node-03") + `}}}`
	if _, _, err := readCluster([]byte(twice)); err == nil || !strings.Contains(err.Error(), `duplicate key "spark-node-03" (first at line 1, column 53) at $.cluster.nodes["spark-node-03"]`) {
		t.Errorf("readCluster with a repeated node = %v, want the duplicate named with both places", err)
	}
	inner := `{"ok": true, "cluster": {"enabled": true, "nodes": {"spark-node-01": ` + node("spark-node-01") +
		`, "spark-node-03": {"id": "spark-node-03", "reachable": true, "reachable": false}}}}`
	cs, broken, err := readCluster([]byte(inner))
	if err != nil {
		t.Fatalf("readCluster: %v", err)
	}
	if _, ok := cs.Nodes["spark-node-01"]; !ok || !strings.Contains(broken["spark-node-03"], `duplicate key "reachable"`) {
		t.Errorf("nodes %v, broken %q; want spark-node-01 read and spark-node-03 broken by its duplicate", cs.Nodes, broken)
	}
}

// TestRepeatedKeysInMetricsAreAProblem: the metrics are scrubbed before
// they are parsed, and the scrub decodes them; a repeated key must not be
// merged away on the way.
func TestRepeatedKeysInMetricsAreAProblem(t *testing.T) {
	if _, err := lloom.RedactJSON([]byte(`{"object": "gateway.metrics", "requested": [{"id": "q38fn", "requests": 1, "requests": 900}]}`)); err == nil ||
		!strings.Contains(err.Error(), `$.requested[0].requests: duplicate key "requests" (first at line 1, column 61)`) {
		t.Errorf("RedactJSON = %v, want the repeated key named", err)
	}
}
