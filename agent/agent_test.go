package agent

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/inventory"
	"github.com/poolsolve/poolsolve/lloom"
)

const (
	keyEnv   = "LLOOM_CLUSTER_KEY"
	adminKey = "canary-admin-key-7f3e91" // must never appear in an answer
	peerEnv  = "SPARK03_KEY"
	peerKey  = "canary-peer-key-c0ffee"
)

func env(k string) string {
	switch k {
	case keyEnv:
		return adminKey
	case peerEnv:
		return peerKey
	}
	return ""
}

// host is a DGX Spark as far as telemetry and system facts go; what it
// does not override is never called by the agent.
type host struct {
	inventory.OS
	id string
}

func (h host) Platform() (string, string) { return "linux", "arm64" }
func (h host) Hostname() (string, error)  { return h.id, nil }
func (h host) ReadFile(name string) ([]byte, error) {
	if name == "/proc/meminfo" {
		return []byte("MemTotal: 127598836 kB\nMemFree: 3588140 kB\nMemAvailable: 36568920 kB\n"), nil
	}
	return nil, fs.ErrNotExist
}

// fixedInventory is an inventory source that counts its calls and can
// be made to hang.
type fixedInventory struct {
	inv   inventory.Inventory
	calls atomic.Int64
	hang  bool
}

func (f *fixedInventory) Inventory(ctx context.Context) (*inventory.Inventory, error) {
	f.calls.Add(1)
	if f.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	inv := f.inv
	return &inv, nil
}

func sparkInventory(id string) *fixedInventory {
	avail := 34.87
	return &fixedInventory{inv: inventory.Inventory{
		Schema: inventory.Schema, NodeID: id,
		CollectedAt:  time.Date(2026, 11, 29, 14, 8, 3, 0, time.UTC),
		PlatformID:   "linux-arm64",
		ComputeArchs: []string{"sm_121"},
		Accelerators: []string{"cuda", "nvidia-gpu", "blackwell", "dgx-spark", "gb10"},
		MemoryDomains: []inventory.Domain{{ID: "unified:0", Kind: "unified", Backend: "cuda", CapacityGb: 121.69,
			AvailableGb: &avail, DeviceIDs: []string{"cpu:0", "cuda:0"}}},
		ModelRoots:    []inventory.ModelRoot{{Path: "/home/spark/.cache/huggingface/hub", FreeGb: 500}},
		CachedWeights: []inventory.CachedWeight{{Repo: "unsloth/Qwen3.8-27B-NVFP4", Root: "/home/spark/.cache/huggingface/hub", SizeGb: 18.2}},
		Commands:      []string{"docker", "nvidia-smi"},
		DockerImages:  []string{"vllm/vllm-openai:v0.11.0"},
		Links:         []inventory.Link{{PeerNodeID: "spark-node-02", LocalInterface: "enp1s0f0np0", LocalAddress: "10.100.192.2", PeerAddress: "10.100.192.1", Prefixlen: 24}},
	}}
}

func fixedNow() time.Time { return time.Date(2026, 11, 29, 14, 8, 3, 0, time.UTC) }

func newConfig(id string, src InventorySource) Config {
	return Config{NodeID: id, ClusterID: "spark-cluster", LeaderNode: "spark-node-01", APIKeyEnv: keyEnv,
		Inventory: src, Prober: host{id: id}, Getenv: env, Now: fixedNow}
}

func mustHandler(t testing.TB, cfg Config) http.Handler {
	t.Helper()
	h, err := NewHandler(cfg)
	if err != nil {
		t.Fatalf("NewHandler: %v", err)
	}
	return h
}

// get sends one request to h in process.
func get(h http.Handler, method, target, auth string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestAuthorization(t *testing.T) {
	t.Parallel()
	h := mustHandler(t, newConfig("spark-node-01", sparkInventory("spark-node-01")))
	tests := []struct {
		name       string
		method     string
		path       string
		auth       string
		wantStatus int
		wantCode   string
	}{
		{"no token is 401", "GET", "/gateway/node", "", 401, "unauthorized"},
		{"a token of another scheme is 401", "GET", "/gateway/node", "Basic " + adminKey, 401, "unauthorized"},
		{"an empty bearer token is 401", "GET", "/gateway/node", "Bearer ", 401, "unauthorized"},
		{"a wrong token is 401", "GET", "/gateway/node", "Bearer not-the-key", 401, "unauthorized"},
		{"a token that only starts like the key is 401", "GET", "/gateway/node", "Bearer " + adminKey[:10], 401, "unauthorized"},
		{"unknown routes need a token too", "GET", "/gateway/runtimes", "", 401, "unauthorized"},
		{"an unknown route with the token is 404", "GET", "/gateway/runtimes", "Bearer " + adminKey, 404, "not_found"},
		{"a write is an unknown route", "POST", "/gateway/node", "Bearer " + adminKey, 404, "not_found"},
		{"the right token is served", "GET", "/gateway/node", "Bearer " + adminKey, 200, ""},
		{"the scheme is case-insensitive", "GET", "/gateway/node", "bearer " + adminKey, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rec := get(h, tc.method, tc.path, tc.auth)
			if rec.Code != tc.wantStatus {
				t.Fatalf("%s %s = %d, want %d: %s", tc.method, tc.path, rec.Code, tc.wantStatus, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("Content-Type = %q", ct)
			}
			if tc.wantCode == "" {
				return
			}
			var body ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("error body is not LLooM's envelope: %v: %s", err, rec.Body)
			}
			if body.Error.Code != tc.wantCode || body.Error.Message == "" || body.Error.Type == "" {
				t.Errorf("error = %+v, want code %q with a message and a type", body.Error, tc.wantCode)
			}
			if tc.wantStatus == 401 && rec.Header().Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}
}

func TestUnauthorizedAnswerMatchesLLooM(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile("testdata/gateway-0.2.3-node-noauth.json")
	if err != nil {
		t.Fatal(err)
	}
	h := mustHandler(t, newConfig("n", sparkInventory("n")))
	rec := get(h, "GET", "/gateway/node", "")
	var a, b any
	json.Unmarshal(want, &a)
	json.Unmarshal(rec.Body.Bytes(), &b)
	if !jsonEqual(a, b) {
		t.Errorf("401 body = %s, want LLooM's %s", rec.Body, want)
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func TestNewHandlerRefusesToServeWithoutAKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string
	}{
		{"no key variable named", func(c *Config) { c.APIKeyEnv = "" }, "cluster.apiKeyEnv"},
		{"the key variable is empty", func(c *Config) { c.APIKeyEnv = "UNSET_VAR" }, "UNSET_VAR is empty"},
		{"no node id", func(c *Config) { c.NodeID = "" }, "NodeID"},
		{"no inventory source", func(c *Config) { c.Inventory = nil }, "Inventory"},
		{"a peer listed twice", func(c *Config) { c.Peers = []Peer{{ID: "b"}, {ID: "b"}} }, `"b" is listed twice`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := newConfig("a", sparkInventory("a"))
			tc.mutate(&cfg)
			_, err := NewHandler(cfg)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("NewHandler = %v, want an error mentioning %q", err, tc.wantErr)
			}
		})
	}
	cfg := newConfig("a", sparkInventory("a"))
	cfg.APIKeyEnv = "UNSET_VAR"
	if _, err := NewHandler(cfg); !errors.Is(err, ErrNoKey) {
		t.Errorf("NewHandler without a key = %v, want ErrNoKey", err)
	}
}

func TestNodeStatus(t *testing.T) {
	t.Parallel()
	src := sparkInventory("spark-node-01")
	h := mustHandler(t, newConfig("spark-node-01", src))

	rec := get(h, "GET", "/gateway/node", "Bearer "+adminKey)
	if rec.Code != 200 {
		t.Fatalf("GET /gateway/node = %d: %s", rec.Code, rec.Body)
	}
	if src.calls.Load() != 0 || strings.Contains(rec.Body.String(), `"inventory"`) {
		t.Errorf("a plain status asked for the inventory (%d calls): %s", src.calls.Load(), rec.Body)
	}
	st, err := lloom.ParseNodeStatus(rec.Body.Bytes(), "node")
	if err != nil {
		t.Fatalf("lloom.ParseNodeStatus(agent answer) = %v", err)
	}
	if st.ID != "spark-node-01" || !st.Local || !st.Reachable || st.System.Platform != "linux" || st.System.Arch != "arm64" {
		t.Errorf("node = %+v", st)
	}
	m := st.Telemetry.Memory
	if m == nil || *m.TotalBytes != 127598836*1024 || *m.AvailableBytes != 36568920*1024 || *m.FreeBytes != 3588140*1024 ||
		*m.UsedBytes != (127598836-3588140)*1024 || m.Source != "linux-memavailable" || *m.PressureUtilization != 71.34 {
		t.Errorf("telemetry.memory = %s", mustJSON(t, m))
	}
	if st.Telemetry.SampledAt != "2026-11-29T14:08:03.000Z" {
		t.Errorf("sampledAt = %q", st.Telemetry.SampledAt)
	}

	rec = get(h, "GET", "/gateway/node?inventory=1", "Bearer "+adminKey)
	st, err = lloom.ParseNodeStatus(rec.Body.Bytes(), "node")
	if err != nil {
		t.Fatalf("lloom.ParseNodeStatus(agent answer with inventory) = %v", err)
	}
	inv, err := inventory.Parse(st.Inventory, "inventory")
	if err != nil {
		t.Fatalf("inventory.Parse(agent inventory) = %v\n%s", err, st.Inventory)
	}
	if inv.NodeID != "spark-node-01" || inv.ComputeArchs[0] != "sm_121" || inv.ModelRoots[0].Path == "" || inv.DockerImages[0] == "" || inv.Links[0].PeerAddress == "" {
		t.Errorf("inventory = %+v", inv)
	}
	p := st.Profile
	if p == nil || p.ID != "linux-arm64-121_7gb" || p.PlatformID != "linux-arm64" || p.SchemaVersion != 1 || *p.TotalMemoryGb != 121.7 ||
		len(p.MemoryDomains) != 1 || p.MemoryDomains[0].ID != "unified:0" || p.ModelRoot != "/home/spark/.cache/huggingface/hub" {
		t.Errorf("profile = %s", mustJSON(t, p))
	}
	if doms := lloom.MemoryDomains(*p); len(doms) != 1 || *doms[0].CapacityGb != 121.69 {
		t.Errorf("lloom.MemoryDomains(derived profile) = %s", mustJSON(t, doms))
	}
}

func TestNodeStatusAnswers503WhileTheInventoryIsCollected(t *testing.T) {
	t.Parallel()
	src := sparkInventory("a")
	src.hang = true
	cfg := newConfig("a", src)
	cfg.InventoryWait = 20 * time.Millisecond
	rec := get(mustHandler(t, cfg), "GET", "/gateway/node?inventory=1", "Bearer "+adminKey)
	if rec.Code != 503 || rec.Header().Get("Retry-After") == "" || !strings.Contains(rec.Body.String(), "still being collected") {
		t.Errorf("GET with a slow inventory = %d %v: %s", rec.Code, rec.Header(), rec.Body)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestServeListenerServesUntilCancelled(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- ServeListener(ctx, ln, mustHandler(t, newConfig("a", sparkInventory("a")))) }()

	req, _ := http.NewRequest("GET", "http://"+ln.Addr().String()+"/gateway/node", nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("status over TCP = %d", resp.StatusCode)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("ServeListener after cancel = %v, want nil", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ServeListener did not stop after cancel")
	}
}

func TestServeReportsAnAddressItCannotListenOn(t *testing.T) {
	t.Parallel()
	if err := Serve(context.Background(), "127.0.0.1:notaport", http.NotFoundHandler()); err == nil {
		t.Error("Serve on a bad address = nil, want an error")
	}
}

func TestFromCluster(t *testing.T) {
	t.Parallel()
	pl := 24
	c := &lloom.Cluster{
		ID: "spark-cluster", LeaderNode: "spark-node-01", APIKeyEnv: keyEnv,
		Discovery: &lloom.Discovery{Links: []lloom.Link{
			{NodeID: "spark-node-01", PeerNodeID: "spark-node-02", LocalInterface: "enp1s0f0np0", LocalAddress: "10.100.192.2", PeerAddress: "10.100.192.1", Prefixlen: &pl},
			{NodeID: "spark-node-02", PeerNodeID: "spark-node-03", PeerAddress: "10.100.200.1"},
		}},
		Nodes: map[string]lloom.ClusterNode{
			"spark-node-03": {Endpoint: "http://10.100.196.2:8100", BackendHost: "10.100.196.2", APIKeyEnv: peerEnv},
			"spark-node-01": {Name: "leader", Endpoint: "http://10.100.192.2:8100", FabricAddress: "10.100.192.2"},
			"spark-node-02": {Endpoint: "http://10.100.192.1:8100", FabricAddress: "10.100.192.1", BackendHost: "192.168.1.12"},
		},
	}
	cfg := FromCluster(c, "spark-node-01")
	if cfg.NodeID != "spark-node-01" || cfg.Name != "leader" || cfg.ClusterID != "spark-cluster" || cfg.APIKeyEnv != keyEnv || len(cfg.Peers) != 2 ||
		cfg.Peers[0].ID != "spark-node-02" || cfg.Peers[1].APIKeyEnv != peerEnv {
		t.Errorf("FromCluster = %+v", cfg)
	}
}
