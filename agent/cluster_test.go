package agent

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/inventory"
	"github.com/poolsolve/poolsolve/lloom"
)

// olderGatewayNode is spark-node-02 as a LLooM 0.2.3 gateway answers
// /gateway/node: no inventory, runtime rows with backend health URLs. The
// canary key stands for a secret a gateway might leak in a field poolsolve
// does not know.
func olderGatewayNode(t *testing.T) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/gateway-0.2.3-cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Cluster struct {
			Nodes map[string]map[string]any `json:"nodes"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	node := doc.Cluster.Nodes["spark-node-02"]
	node["apiKey"] = "sk-canary-leaked-by-gateway"
	node["local"] = true
	out, err := json.Marshal(map[string]any{"ok": true, "node": node})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fakePeers starts one in-process server per misbehaviour and returns
// the peers to configure and every URL that must not be quoted back.
func fakePeers(t *testing.T) ([]Peer, []string) {
	t.Helper()
	var urls []string
	serve := func(h http.HandlerFunc) string {
		s := httptest.NewServer(h)
		t.Cleanup(s.Close)
		urls = append(urls, s.URL)
		return s.URL
	}
	requireKey := func(want string, next http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+want {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(401)
				w.Write([]byte(`{"error":{"message":"missing or invalid admin authorization token","type":"authentication_error","code":"unauthorized"}}`))
				return
			}
			next(w, r)
		}
	}
	jsonBody := func(body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Write(body)
		}
	}

	// A real agent on spark-node-03, with its own key variable.
	agentCfg := newConfig("spark-node-03", sparkInventory("spark-node-03"))
	agentCfg.APIKeyEnv = peerEnv
	agentURL := serve(mustHandler(t, agentCfg).ServeHTTP)

	older := olderGatewayNode(t)
	other := serve(jsonBody(older))
	slowDone := make(chan struct{})
	t.Cleanup(func() { close(slowDone) })

	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refusedURL := "http://" + refused.Addr().String()
	refused.Close()
	urls = append(urls, refusedURL)

	peers := []Peer{
		{ID: "spark-node-02", Endpoint: serve(requireKey(adminKey, jsonBody(older)))},
		{ID: "spark-node-03", Endpoint: agentURL + "/", APIKeyEnv: peerEnv},
		{ID: "slow", Endpoint: serve(func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-slowDone:
			}
		})},
		{ID: "garbage", Endpoint: serve(jsonBody([]byte(`{"ok":true,"node":{"id":"garbage","telemetry":`)))},
		{ID: "html", Endpoint: serve(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>login</html>"))
		})},
		{ID: "huge", Endpoint: serve(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"ok":true,"node":{"id":"huge","notes":"`))
			w.Write([]byte(strings.Repeat("x", 1<<20)))
			w.Write([]byte(`"}}`))
		})},
		{ID: "wrong-key", Endpoint: serve(requireKey("another-key", jsonBody(older)))},
		{ID: "redirect", Endpoint: serve(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, other+"/gateway/node", http.StatusFound)
		})},
		{ID: "impostor", Endpoint: other},
		{ID: "down", Endpoint: refusedURL},
		{ID: "placeholder", Endpoint: "${SPARK_ENDPOINT}"},
		{ID: "with-credentials", Endpoint: "http://user:hunter2-canary@127.0.0.1:1"},
	}
	return peers, urls
}

func TestClusterGathersEveryNodeAndReportsEachFailure(t *testing.T) {
	t.Parallel()
	peers, urls := fakePeers(t)
	cfg := newConfig("spark-node-01", sparkInventory("spark-node-01"))
	cfg.Peers = append(peers, Peer{ID: "spark-node-01", Endpoint: "http://127.0.0.1:1"})
	cfg.NodeTimeout = 500 * time.Millisecond
	cfg.MaxBodyBytes = 256 << 10
	h := mustHandler(t, cfg)

	start := time.Now()
	rec := get(h, "GET", "/gateway/cluster?inventory=1", "Bearer "+adminKey)
	if rec.Code != 200 {
		t.Fatalf("GET /gateway/cluster = %d: %s", rec.Code, rec.Body)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the cluster answer took %s; nodes are not asked in parallel or not bounded", d)
	}
	cs, err := lloom.ParseClusterStatus(rec.Body.Bytes(), "cluster")
	if err != nil {
		t.Fatalf("lloom.ParseClusterStatus(agent answer) = %v", err)
	}
	if cs.ID != "spark-cluster" || cs.NodeID != "spark-node-01" || cs.LeaderNode != "spark-node-01" || len(cs.Nodes) != len(peers)+1 {
		t.Errorf("cluster = %s", mustJSON(t, cs))
	}

	tests := []struct {
		node          string
		wantReachable bool
		wantError     string
		wantInventory bool
	}{
		{"spark-node-01", true, "", true},
		{"spark-node-02", true, "", false}, // an older gateway: reachable, no inventory
		{"spark-node-03", true, "", true},  // another agent, asked with its own key
		{"slow", false, "no answer within 500ms", false},
		{"garbage", false, "answer is not a node status", false},
		{"html", false, `answer is not JSON (content type "text/html")`, false},
		{"huge", false, "answer larger than 262144 bytes", false},
		{"wrong-key", false, "key refused (HTTP 401: missing or invalid admin authorization token); check environment variable LLOOM_CLUSTER_KEY", false},
		{"redirect", false, "redirect to another host refused", false},
		{"impostor", false, `endpoint answered as node "spark-node-02"`, false},
		{"down", false, "connection refused", false},
		{"placeholder", false, "endpoint is not an http(s) URL", false},
		{"with-credentials", false, "endpoint carries credentials", false},
	}
	for _, tc := range tests {
		n, ok := cs.Nodes[tc.node]
		if !ok {
			t.Errorf("node %s missing from the cluster answer", tc.node)
			continue
		}
		if n.ID != tc.node || n.Reachable != tc.wantReachable || !strings.Contains(string(n.Error), tc.wantError) || (tc.wantError == "" && n.Error != "") {
			t.Errorf("node %s: id %q reachable %v error %q; want reachable %v error containing %q", tc.node, n.ID, n.Reachable, n.Error, tc.wantReachable, tc.wantError)
		}
		if got := len(n.Inventory) > 0; got != tc.wantInventory {
			t.Errorf("node %s: has inventory %v, want %v", tc.node, got, tc.wantInventory)
		}
		if len(n.Inventory) > 0 {
			if inv, err := inventory.Parse(n.Inventory, tc.node); err != nil || inv.NodeID != tc.node {
				t.Errorf("node %s: inventory %v, %v", tc.node, inv, err)
			}
		}
	}
	if n := cs.Nodes["spark-node-01"]; !n.Local {
		t.Error("this node is not marked local")
	}
	if n := cs.Nodes["spark-node-02"]; n.Local || len(n.RuntimeManager.Runtimes) == 0 || n.Telemetry == nil {
		t.Errorf("older gateway node lost its status or kept local:true: %s", mustJSON(t, n))
	}
	if n := cs.Nodes["impostor"]; n.Identity == nil || !n.Identity.Mismatch || n.Identity.ClaimedID != "spark-node-02" {
		t.Errorf("impostor identity = %+v", n.Identity)
	}

	// Canary secrets: keys, backend URLs, endpoints and fields poolsolve
	// does not know never reach the answer.
	body := rec.Body.String()
	for _, secret := range append(urls, adminKey, peerKey, "sk-canary-leaked-by-gateway", "hunter2-canary", "127.0.0.1:19001", "/health", `"apiKey"`) {
		if strings.Contains(body, secret) {
			t.Errorf("the cluster answer contains %q", secret)
		}
	}
}

func TestClusterWithoutInventoryAsksNoInventory(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []string
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.String())
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true,"node":{"id":"b","reachable":true,"inventory":{"schema":"poolsolve.inventory/v1","nodeId":"b"}}}`))
	}))
	defer peer.Close()
	src := sparkInventory("a")
	cfg := newConfig("a", src)
	cfg.Peers = []Peer{{ID: "b", Endpoint: peer.URL + "/prefix"}}
	rec := get(mustHandler(t, cfg), "GET", "/gateway/cluster", "Bearer "+adminKey)
	cs, err := lloom.ParseClusterStatus(rec.Body.Bytes(), "cluster")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 1 || asked[0] != "/prefix/gateway/node" {
		t.Errorf("peer was asked %q, want [/prefix/gateway/node]", asked)
	}
	if src.calls.Load() != 0 || len(cs.Nodes["a"].Inventory) != 0 || len(cs.Nodes["b"].Inventory) != 0 {
		t.Errorf("inventory in a cluster answer that did not ask for it: %s", rec.Body)
	}
}

func TestClusterDropsABrokenInventoryButKeepsTheNode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		inventory string
		wantError string
	}{
		{"an inventory of the wrong schema", `{"schema":"other/v9","nodeId":"b"}`, `inventory dropped: b: $.schema: unsupported schema "other/v9": expected "poolsolve.inventory/v1"`},
		{"an inventory of another node", `{"schema":"poolsolve.inventory/v1","nodeId":"c"}`, `inventory dropped: it describes node "c"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Write([]byte(`{"ok":true,"node":{"id":"b","reachable":true,"inventory":` + tc.inventory + `}}`))
			}))
			defer peer.Close()
			cfg := newConfig("a", sparkInventory("a"))
			cfg.Peers = []Peer{{ID: "b", Endpoint: peer.URL}}
			rec := get(mustHandler(t, cfg), "GET", "/gateway/cluster?inventory=1", "Bearer "+adminKey)
			cs, err := lloom.ParseClusterStatus(rec.Body.Bytes(), "cluster")
			if err != nil {
				t.Fatal(err)
			}
			n := cs.Nodes["b"]
			if !n.Reachable || len(n.Inventory) != 0 || string(n.Error) != tc.wantError {
				t.Errorf("node b = reachable %v, inventory %s, error %q; want reachable, no inventory, error %q", n.Reachable, n.Inventory, n.Error, tc.wantError)
			}
		})
	}
}

func TestAPeerMayRedirectWithinItsOwnHost(t *testing.T) {
	t.Parallel()
	mux := http.NewServeMux()
	mux.HandleFunc("/old/gateway/node", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/new/gateway/node?"+r.URL.RawQuery, http.StatusMovedPermanently)
	})
	mux.HandleFunc("/new/gateway/node", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+adminKey {
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok":true,"node":{"id":"b","reachable":true}}`))
	})
	peer := httptest.NewServer(mux)
	defer peer.Close()
	cfg := newConfig("a", sparkInventory("a"))
	cfg.Peers = []Peer{{ID: "b", Endpoint: peer.URL + "/old"}}
	rec := get(mustHandler(t, cfg), "GET", "/gateway/cluster", "Bearer "+adminKey)
	cs, err := lloom.ParseClusterStatus(rec.Body.Bytes(), "cluster")
	if err != nil {
		t.Fatal(err)
	}
	if n := cs.Nodes["b"]; !n.Reachable || n.Error != "" {
		t.Errorf("node b behind a same-host redirect = reachable %v error %q", n.Reachable, n.Error)
	}
}

func TestTheLocalNodeStaysInTheClusterWhenItsInventoryIsLate(t *testing.T) {
	t.Parallel()
	src := sparkInventory("a")
	src.hang = true
	cfg := newConfig("a", src)
	cfg.NodeTimeout = 20 * time.Millisecond
	rec := get(mustHandler(t, cfg), "GET", "/gateway/cluster?inventory=1", "Bearer "+adminKey)
	cs, err := lloom.ParseClusterStatus(rec.Body.Bytes(), "cluster")
	if err != nil {
		t.Fatal(err)
	}
	if n := cs.Nodes["a"]; !n.Reachable || !strings.Contains(string(n.Error), "still being collected") || n.Telemetry == nil {
		t.Errorf("local node with a late inventory = %s", mustJSON(t, n))
	}
}
