package gateway

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/poolsolve/poolsolve/lloom"
)

// fake is an in-process LLooM gateway (or node) on loopback that answers
// with documents captured from real gateways.
type fake struct {
	key    string // the bearer key it wants; "" takes any request
	srv    *httptest.Server
	mu     sync.Mutex
	routes map[string]http.HandlerFunc
	hits   map[string]int
	auths  []string
	query  map[string]string
}

func newFake(t testing.TB, key string) *fake {
	t.Helper()
	f := &fake{key: key, routes: map[string]http.HandlerFunc{}, hits: map[string]int{}, query: map[string]string{}}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fake) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.hits[r.URL.Path]++
	f.query[r.URL.Path] = r.URL.RawQuery
	if a := r.Header.Get("Authorization"); a != "" {
		f.auths = append(f.auths, a)
	}
	h := f.routes[r.URL.Path]
	f.mu.Unlock()
	if f.key != "" && r.Header.Get("Authorization") != "Bearer "+f.key {
		answer(http.StatusUnauthorized, noAuth)(w, r)
		return
	}
	if h == nil {
		answer(http.StatusNotFound, notFound)(w, r)
		return
	}
	h(w, r)
}

// handle sets what the fake answers on path.
func (f *fake) handle(path string, h http.HandlerFunc) *fake {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes[path] = h
	return f
}

func (f *fake) hit(path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hits[path]
}

func (f *fake) seenAuth() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.auths...)
}

// answer writes body as LLooM does: JSON with a charset.
func answer(status int, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		w.Write(body)
	}
}

var (
	noAuth   = readTestdata("gateway-0.2.3-node-noauth.json")
	notFound = readTestdata("gateway-0.2.3-not-found.json")
)

func readTestdata(name string) []byte {
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		panic(err)
	}
	return data
}

// doc is a JSON document to change before serving it.
type doc = map[string]any

func decode(t *testing.T, data []byte) doc {
	t.Helper()
	var d doc
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	return d
}

func encode(t *testing.T, d any) []byte {
	t.Helper()
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// olderCluster is the 0.2.3 cluster answer: no inventory, a machine
// profile in every node's status.
func olderCluster(t *testing.T) doc {
	return decode(t, readTestdata("gateway-0.2.3-cluster-inventory.json"))
}

func clusterNodes(d doc) doc { return d["cluster"].(doc)["nodes"].(doc) }

// nodeAnswer is one node of a cluster answer as its own /gateway/node
// answer.
func nodeAnswer(t *testing.T, cluster doc, id string) []byte {
	t.Helper()
	n := clusterNodes(cluster)[id].(doc)
	n["local"] = true
	return encode(t, doc{"ok": true, "node": n})
}

// sparkInventory is what a newer gateway adds to a GB10 node's status.
func sparkInventory(id string) doc {
	return doc{
		"schema": "poolsolve.inventory/v1", "nodeId": id, "platformId": "linux-arm64",
		"computeArchs": []any{"sm_121"}, "accelerators": []any{"cuda", "nvidia-gpu", "blackwell", "gb10", "dgx-spark"},
		"memoryDomains": []any{doc{"id": "system:0", "kind": "system", "capacityGb": 121.69, "availableGb": 80.5}},
		"modelRoots":    []any{doc{"path": "/home/lloom/.cache/huggingface", "freeGb": 612}},
		"commands":      []any{"docker", "nvidia-smi"},
	}
}

// newerCluster is the 0.2.3 answer with an inventory in every node.
func newerCluster(t *testing.T) doc {
	d := olderCluster(t)
	for id, n := range clusterNodes(d) {
		n.(doc)["inventory"] = sparkInventory(id)
	}
	return d
}

// testConfig is the config the captured gateways ran, with each node's
// endpoint pointing where the test says ("" leaves it out).
func testConfig(t *testing.T, endpoints map[string]string) *lloom.Config {
	t.Helper()
	cfg, err := lloom.ParseConfig(readTestdata("gateway-0.2.3-config.json"), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	for id, n := range cfg.Cluster.Nodes {
		n.Endpoint = endpoints[id]
		cfg.Cluster.Nodes[id] = n
	}
	return cfg
}

const configFile = "testdata/gateway-0.2.3-config.json"
