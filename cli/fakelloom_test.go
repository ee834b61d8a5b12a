package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeLLooM is a fleet of in-process LLooM 0.2.3 gateways on loopback: a
// state machine over the admin routes apply uses, answering in the shape
// of the captures in ../apply/testdata/lloom-0.2.3. It re-reads the config
// file on every request and acts on a change (keepWarm, alias targets),
// as LLooM does within its 500 ms poll.
type fakeLLooM struct {
	t      *testing.T
	key    string
	config string
	mu     sync.Mutex
	last   []byte
	nodes  map[string]*fakeNode
	rts    map[string]*fakeRuntime
	alias  map[string]string
	budget float64
	starts []string // runtime ids started, in order
	stops  []string
}

type fakeNode struct {
	id   string
	srv  *httptest.Server
	hang bool // answers nothing until the request ends
}

type fakeRuntime struct {
	id, node string
	memGb    float64
	keepWarm bool
	status   string // idle, starting, running, stopped, exited
	healthy  bool
	// load is how long a start takes; fail makes it never healthy:
	// LLooM answers HTTP 500 after its startup timeout.
	load time.Duration
	fail bool
}

// newFakeLLooM starts one gateway per node of the config at path, and
// rewrites each node's endpoint in the file to its gateway.
func newFakeLLooM(t *testing.T, path, key string, nodes ...string) *fakeLLooM {
	f := &fakeLLooM{t: t, key: key, config: path, nodes: map[string]*fakeNode{}, rts: map[string]*fakeRuntime{}, alias: map[string]string{}, budget: 100}
	var cfg map[string]any
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	cl := cfg["cluster"].(map[string]any)
	cnodes := map[string]any{}
	for _, id := range nodes {
		n := &fakeNode{id: id}
		n.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { f.serve(n, w, r) }))
		t.Cleanup(n.srv.Close)
		f.nodes[id] = n
		cnodes[id] = map[string]any{"endpoint": n.srv.URL, "backendHost": "127.0.0.1", "resources": map[string]any{"memoryGb": 128}}
	}
	cl["nodes"] = cnodes
	cl["leaderNode"] = nodes[0]
	out, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	for id, rt := range cfg["runtimes"].(map[string]any) {
		m := rt.(map[string]any)
		mem, _ := m["memoryGb"].(float64)
		f.rts[id] = &fakeRuntime{id: id, node: m["node"].(string), memGb: mem, status: "idle"}
	}
	f.reload()
	return f
}

func (f *fakeLLooM) url(node string) string { return f.nodes[node].srv.URL }

// set changes a runtime under the lock.
func (f *fakeLLooM) set(id string, change func(*fakeRuntime)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	change(f.rts[id])
}

// reload reads the config when it changed: keepWarm and alias targets.
// Called with f.mu held, or before the gateways serve.
func (f *fakeLLooM) reload() {
	data, err := os.ReadFile(f.config)
	if err != nil || bytes.Equal(data, f.last) {
		return
	}
	var cfg struct {
		Runtimes map[string]struct {
			KeepWarm bool `json:"keepWarm"`
		} `json:"runtimes"`
		Aliases map[string]struct {
			Target string `json:"target"`
		} `json:"aliases"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return // a half-written file: LLooM keeps the config it has
	}
	f.last = data
	for id, rt := range cfg.Runtimes {
		if r := f.rts[id]; r != nil {
			r.keepWarm = rt.KeepWarm
		}
	}
	f.alias = map[string]string{}
	for a, v := range cfg.Aliases {
		f.alias[a] = v.Target
	}
}

func loaded(r *fakeRuntime) bool {
	return r.healthy || r.status == "running" || r.status == "starting"
}

func (f *fakeLLooM) serve(n *fakeNode, w http.ResponseWriter, r *http.Request) {
	if n.hang {
		<-r.Context().Done()
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+f.key {
		fakeAnswer(w, 401, map[string]any{"error": map[string]any{"message": "admin API key required", "type": "authentication_error"}})
		return
	}
	f.mu.Lock()
	f.reload()
	f.mu.Unlock()
	switch {
	case r.Method == "GET" && r.URL.Path == "/gateway/node":
		fakeAnswer(w, 200, map[string]any{"ok": true, "node": f.nodeDoc(n.id)})
	case r.Method == "GET" && r.URL.Path == "/gateway/cluster":
		docs := map[string]any{}
		for id := range f.nodes {
			d := f.nodeDoc(id)
			d["local"] = id == n.id
			docs[id] = d
		}
		fakeAnswer(w, 200, map[string]any{"ok": true, "cluster": map[string]any{"id": "spark-cluster", "nodeId": n.id, "nodes": docs}})
	case r.Method == "GET" && r.URL.Path == "/gateway/routing":
		f.mu.Lock()
		al := map[string]any{}
		for a, t := range f.alias {
			al[a] = map[string]any{"target": t}
		}
		f.mu.Unlock()
		fakeAnswer(w, 200, map[string]any{"aliases": al, "defaults": map[string]any{}})
	case r.Method == "GET" && r.URL.Path == "/gateway/runtimes/plan":
		fakeAnswer(w, 200, f.admission(r.URL.Query().Get("runtime")))
	case r.Method == "POST" && strings.HasPrefix(r.URL.Path, "/gateway/runtimes/") && strings.HasSuffix(r.URL.Path, "/start"):
		f.start(w, strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/gateway/runtimes/"), "/start"))
	case r.Method == "POST" && strings.HasPrefix(r.URL.Path, "/gateway/runtimes/") && strings.HasSuffix(r.URL.Path, "/stop"):
		id := strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/gateway/runtimes/"), "/stop")
		f.mu.Lock()
		rt := f.rts[id]
		if rt != nil {
			rt.status, rt.healthy = "stopped", false
			f.stops = append(f.stops, id)
		}
		f.mu.Unlock()
		fakeAnswer(w, 200, map[string]any{"runtimeId": id, "stopped": rt != nil})
	default:
		fakeAnswer(w, 404, map[string]any{"error": map[string]any{"message": "Not found", "type": "not_found"}})
	}
}

func fakeAnswer(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

// nodeDoc is a node's status, its runtime rows from the state.
func (f *fakeLLooM) nodeDoc(id string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	rows := map[string]any{}
	for rid, rt := range f.rts {
		if rt.node != id {
			continue
		}
		rows[rid] = map[string]any{"enabled": true, "keepWarm": rt.keepWarm, "management": "managed", "node": id,
			"healthy": rt.healthy, "status": rt.status, "activeRequests": 0, "queuedRequests": 0}
	}
	return map[string]any{"id": id, "name": id, "local": true, "reachable": true, "labels": map[string]any{},
		"resources": map[string]any{"memoryGb": 128}, "runtimeManager": map[string]any{"runtimes": rows},
		"system": map[string]any{"platform": "linux", "arch": "x64"}}
}

// admission is LLooM's plan to admit id: evict the least recently used
// loaded runtimes that are not keepWarm, or refuse when only keepWarm ones
// are in the way.
func (f *fakeLLooM) admission(id string) map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	rt := f.rts[id]
	if rt == nil {
		return map[string]any{"ok": true, "validationErrors": []any{"unknown runtime " + id}}
	}
	var acts []any
	if loaded(rt) {
		return map[string]any{"ok": true, "requestedRuntimeId": id, "admission": map[string]any{"allowed": true, "overBudgetGb": 0}, "actions": []any{}}
	}
	used := 0.0
	var evictable []*fakeRuntime
	for _, o := range f.rts {
		if o.node == rt.node && loaded(o) {
			used += o.memGb
			if !o.keepWarm {
				evictable = append(evictable, o)
			}
		}
	}
	sort.Slice(evictable, func(i, j int) bool { return evictable[i].id < evictable[j].id })
	for _, o := range evictable {
		if used+rt.memGb <= f.budget {
			break
		}
		used -= o.memGb
		acts = append(acts, map[string]any{"type": "stop", "runtimeId": o.id, "reason": "node-memory-budget"})
	}
	over := used + rt.memGb - f.budget
	if over > 0 {
		return map[string]any{"ok": true, "requestedRuntimeId": id, "admission": map[string]any{"allowed": false, "overBudgetGb": over},
			"actions": []any{map[string]any{"type": "start", "runtimeId": id}}}
	}
	acts = append(acts, map[string]any{"type": "start", "runtimeId": id, "reason": "requested-runtime"})
	return map[string]any{"ok": true, "requestedRuntimeId": id, "admission": map[string]any{"allowed": true, "overBudgetGb": 0}, "actions": acts}
}

// start answers once the runtime is healthy, as LLooM does, or with
// HTTP 500 when it never becomes so.
func (f *fakeLLooM) start(w http.ResponseWriter, id string) {
	f.mu.Lock()
	rt := f.rts[id]
	if rt == nil {
		f.mu.Unlock()
		fakeAnswer(w, 500, map[string]any{"error": map[string]any{"message": "unknown runtime " + id}})
		return
	}
	if rt.healthy {
		f.mu.Unlock()
		fakeAnswer(w, 200, map[string]any{"runtimeId": id, "healthy": true, "alreadyHealthy": true})
		return
	}
	rt.status = "starting"
	f.starts = append(f.starts, id)
	load, fail := rt.load, rt.fail
	f.mu.Unlock()
	time.Sleep(load)
	f.mu.Lock()
	defer f.mu.Unlock()
	if fail {
		rt.status = "exited"
		fakeAnswer(w, 500, map[string]any{"error": map[string]any{"code": "server_error", "message": fmt.Sprintf("runtime %s did not become healthy before timeout", id), "type": "server_error"}})
		return
	}
	rt.status, rt.healthy = "running", true
	fakeAnswer(w, 200, map[string]any{"runtimeId": id, "healthy": true, "started": true, "pid": 4242})
}

// fakeFleetDir is a folder with the captured config (three managed lanes
// on three nodes, alias chat on model-a) served by a fake fleet, and a
// pool.toml pinning lane-b and lane-c to residency always.
func fakeFleetDir(t *testing.T, key string) (string, *fakeLLooM) {
	dir := t.TempDir()
	data, err := os.ReadFile("../apply/testdata/lloom-0.2.3/config.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f := newFakeLLooM(t, cfg, key, "spark-node-01", "spark-node-02", "spark-node-03")
	pool := "[[pins]]\nruntime = \"lane-b\"\nresidency = \"always\"\n\n[[pins]]\nruntime = \"lane-c\"\nresidency = \"always\"\n"
	if err := os.WriteFile(filepath.Join(dir, "pool.toml"), []byte(pool), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, f
}
