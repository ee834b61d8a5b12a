package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// runCLI drives the CLI in-process and returns exit code, stdout, stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(append([]string{"poolsolve"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

const sparkBundle = "../examples/spark-fleet.json"

// liveFleetFiles is the example three-Spark fleet taken apart the way an
// operator has it: local files for what a gateway does not serve, and a
// fake gateway on loopback for the rest.
type liveFleetFiles struct {
	dir      string
	config   string
	profiles string
	policy   string
	bench    string
	recipes  string
	gw       *httptest.Server
}

// args are the flags that read this live fleet.
func (f *liveFleetFiles) args(cmd string, more ...string) []string {
	a := []string{cmd, "--gateway", f.gw.URL, "--config", f.config, "--profiles", f.profiles,
		"--policy", f.policy, "--benchmarks", f.bench, "--recipes", f.recipes}
	return append(a, more...)
}

type gatewayShape int

const (
	newerGateway gatewayShape = iota // inventory in every node status
	olderGateway                     // 0.2.3: a machine profile, no inventory
)

// newLiveFleet serves the example fleet's statuses and metrics as a LLooM
// cluster gateway that wants key; change, if set, edits the documents
// (config, cluster answer, metrics) before they are written and served.
func newLiveFleet(t *testing.T, key string, shape gatewayShape, change func(cfg, cluster, metrics map[string]any)) *liveFleetFiles {
	t.Helper()
	data, err := os.ReadFile(sparkBundle)
	if err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	cfg := b["config"].(map[string]any)
	nodes := map[string]any{}
	for id, parts := range b["nodes"].(map[string]any) {
		p := parts.(map[string]any)
		st := p["status"].(map[string]any)["node"].(map[string]any)
		st["profile"] = p["profile"]
		if shape == newerGateway {
			st["inventory"] = p["inventory"]
		}
		nodes[id] = st
	}
	cluster := map[string]any{"ok": true, "cluster": map[string]any{
		"enabled": true, "id": "spark-cluster", "nodeId": "spark-node-01", "leaderNode": "spark-node-01", "nodes": nodes,
	}}
	metrics := b["metrics"].(map[string]any)
	// The bundle's endpoints are fabric addresses; a test sends nothing
	// off loopback, so each node's endpoint is a peer that has no
	// metrics (the bundle's metrics are the gateway's own).
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":{"message":"unknown route: ` + r.URL.Path + `","type":"invalid_request_error","code":"not_found"}}`))
	}))
	t.Cleanup(peer.Close)
	for _, n := range cfg["cluster"].(map[string]any)["nodes"].(map[string]any) {
		n.(map[string]any)["endpoint"] = peer.URL
	}
	if change != nil {
		change(cfg, cluster, metrics)
	}

	f := &liveFleetFiles{dir: t.TempDir()}
	write := func(name string, v any) string {
		t.Helper()
		p := filepath.Join(f.dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		var data []byte
		if s, ok := v.(string); ok {
			data = []byte(s)
		} else if data, err = json.MarshalIndent(v, "", "  "); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f.config = write("config.json", cfg)
	for name, p := range b["profiles"].(map[string]any) {
		write("profiles/"+name+".json", p)
	}
	f.profiles = filepath.Join(f.dir, "profiles")
	f.policy = write("pool.toml", "headroomGb = 4\n\n[slo.q38fn]\nfirstTokenMs = 2000\n\n[slo.enntity-presence]\nfirstTokenMs = 2000\n")
	f.bench = write("bench.json", b["benchmarks"].([]any)[0])
	f.recipes = write("recipe.json", b["recipes"].([]any)[0])

	clusterJSON, _ := json.Marshal(cluster)
	metricsJSON, _ := json.Marshal(metrics)
	f.gw = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"message":"missing or invalid admin authorization token","type":"authentication_error","code":"unauthorized"}}`))
			return
		}
		switch r.URL.Path {
		case "/gateway/cluster":
			w.Write(clusterJSON)
		case "/gateway/metrics":
			w.Write(metricsJSON)
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":{"message":"unknown route: ` + r.URL.Path + `","type":"invalid_request_error","code":"not_found"}}`))
		}
	}))
	t.Cleanup(f.gw.Close)
	return f
}

// planJSON decodes a JSON plan without the header that names where the
// inputs came from.
func livePlanJSON(t *testing.T, out string) map[string]any {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		t.Fatalf("not a JSON plan: %v\n%s", err, out)
	}
	delete(p, "fleet")
	// How the release was known differs between a gateway and its files;
	// the reading and release are compared.
	if rt, ok := p["routing"].(map[string]any); ok {
		delete(rt, "basis")
	}
	// The demand notes name where the metrics came from: the live run's
	// nodes, the files' one document. The figures are compared in routes.
	var notes []any
	for _, n := range planNotes(p) {
		if !strings.HasPrefix(n, "demand ") {
			notes = append(notes, n)
		}
	}
	p["notes"] = notes
	return p
}

func planNotes(p map[string]any) []string {
	var out []string
	ns, _ := p["notes"].([]any)
	for _, n := range ns {
		out = append(out, n.(string))
	}
	return out
}

func sameLiveJSON(t *testing.T, what string, a, b any) {
	t.Helper()
	ja, _ := json.MarshalIndent(a, "", " ")
	jb, _ := json.MarshalIndent(b, "", " ")
	if !bytes.Equal(ja, jb) {
		la, lb := strings.Split(string(ja), "\n"), strings.Split(string(jb), "\n")
		for i := range min(len(la), len(lb)) {
			if la[i] != lb[i] {
				t.Fatalf("%s differ at line %d:\n  %s\n  %s", what, i+1, la[i], lb[i])
			}
		}
		t.Fatalf("%s differ in length", what)
	}
}

func TestPlanGatewayPlansTheLiveFleetAsItsFiles(t *testing.T) {
	t.Setenv("LLOOM_CLUSTER_KEY", "test-key")
	f := newLiveFleet(t, "test-key", newerGateway, nil)
	code, live, stderr := runCLI(t, f.args("plan", "--solver", "greedy", "--format", "json")...)
	if code != ExitOK && code != ExitChanges {
		t.Fatalf("plan --gateway exited %d: %s", code, stderr)
	}
	code, files, stderr := runCLI(t, "plan", "--fleet", sparkBundle, "--solver", "greedy", "--format", "json")
	if code != ExitOK && code != ExitChanges {
		t.Fatalf("plan --fleet exited %d: %s", code, stderr)
	}
	sameLiveJSON(t, "the live plan and the plan of the same fleet from files", livePlanJSON(t, live), livePlanJSON(t, files))

	code, cat, stderr := runCLI(t, f.args("catalog")...)
	if code != ExitOK || !strings.Contains(cat, "spark-node-03") || !strings.Contains(cat, "(from inventory+status)") {
		t.Errorf("catalog --gateway exited %d (%s):\n%s", code, stderr, cat)
	}
}

func TestPlanGatewayPlansAnUnreachableNodeLikeACordon(t *testing.T) {
	t.Setenv("LLOOM_CLUSTER_KEY", "test-key")
	f := newLiveFleet(t, "test-key", newerGateway, func(_, cluster, _ map[string]any) {
		nodes := cluster["cluster"].(map[string]any)["nodes"].(map[string]any)
		nodes["spark-node-03"] = map[string]any{"id": "spark-node-03", "reachable": false, "error": "timed out after 10000 ms", "telemetry": nil}
	})
	code, out, stderr := runCLI(t, f.args("plan", "--solver", "greedy")...)
	if code != ExitChanges {
		t.Fatalf("exit %d, want %d (lanes leave spark-node-03): %s", code, ExitChanges, stderr)
	}
	// Its endpoint answers 404 when asked directly: both reasons are given.
	if !strings.Contains(out, "unreachable: asked directly: HTTP 404: unknown route: /gateway/node; timed out after 10000 ms") {
		t.Errorf("the plan does not say why spark-node-03 is out:\n%s", out)
	}
}

func TestGatewayFlagsAreChecked(t *testing.T) {
	f := newLiveFleet(t, "test-key", newerGateway, nil)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	t.Setenv("LLOOM_CLUSTER_KEY", "")
	t.Setenv("POOLSOLVE_TEST_KEY", "test-key")
	t.Setenv("POOLSOLVE_WRONG_KEY", "wrong-key-value")
	tests := []struct {
		name string
		args []string
		code int
		want string
	}{
		{"--gateway without --config", []string{"plan", "--gateway", f.gw.URL}, ExitBadInput, "--gateway needs --config FILE"},
		{"--gateway with --fleet", []string{"plan", "--gateway", f.gw.URL, "--fleet", sparkBundle}, ExitBadInput, "do not also give --fleet"},
		{"--gateway with a saved status", []string{"plan", "--gateway", f.gw.URL, "--config", f.config, "--status", f.config}, ExitBadInput, "do not also give --status"},
		{"--api-key-env without --gateway", []string{"plan", "--fleet", sparkBundle, "--api-key-env", "POOLSOLVE_TEST_KEY"}, ExitBadInput, "give --gateway URL too"},
		{"--api-key-env naming an unset variable", []string{"plan", "--gateway", f.gw.URL, "--config", f.config, "--api-key-env", "POOLSOLVE_UNSET_KEY"}, ExitBadInput, "--api-key-env names an environment variable that is unset or empty"},
		{"a key the gateway refuses", []string{"plan", "--gateway", f.gw.URL, "--config", f.config, "--api-key-env", "POOLSOLVE_WRONG_KEY"}, ExitBadInput, "unauthorized (HTTP 401: missing or invalid admin authorization token): set --api-key-env"},
		{"no key at all", []string{"catalog", "--gateway", f.gw.URL, "--config", f.config}, ExitBadInput, "unauthorized"},
		{"a gateway URL with credentials", []string{"plan", "--gateway", "http://admin:hunter2@127.0.0.1:1", "--config", f.config}, ExitBadInput, "carries credentials"},
		{"a gateway that is down", []string{"plan", "--gateway", closed.URL, "--config", f.config, "--api-key-env", "POOLSOLVE_TEST_KEY"}, ExitFailure, "gateway " + closed.URL + ": /gateway/cluster: connection refused"},
		{"snapshot without --gateway", []string{"snapshot", "--config", f.config}, ExitBadInput, "give --gateway URL and --config FILE"},
		{"snapshot of a saved bundle", []string{"snapshot", "--fleet", sparkBundle}, ExitBadInput, "unknown flag --fleet (poolsolve snapshot --help lists every flag)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.want)
			}
			for _, secret := range []string{"wrong-key-value", "test-key", "hunter2"} {
				if strings.Contains(stderr, secret) {
					t.Errorf("stderr quotes a secret: %q", stderr)
				}
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe to write from a server goroutine while
// the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestEveryLiveCommandTakesTheGatewayTimeout: plan, catalog and snapshot
// bound the whole read by --gateway-timeout, and keep the demand history
// given by --demand-history, which the snapshot carries.
func TestEveryLiveCommandTakesTheGatewayTimeout(t *testing.T) {
	t.Setenv("LLOOM_CLUSTER_KEY", "test-key")
	f := newLiveFleet(t, "test-key", newerGateway, nil)
	for _, cmd := range []string{"plan", "catalog", "snapshot"} {
		if code, _, stderr := runCLI(t, f.args(cmd, "--gateway-timeout", "0s")...); code != ExitBadInput || !strings.Contains(stderr, "--gateway-timeout 0s: expected a positive duration") {
			t.Errorf("%s --gateway-timeout 0s = %d: %s", cmd, code, stderr)
		}
	}
	hist := filepath.Join(t.TempDir(), "history.json")
	snap := filepath.Join(t.TempDir(), "fleet.json")
	if code, _, stderr := runCLI(t, f.args("snapshot", "--gateway-timeout", "3s", "--demand-history", hist, "-o", snap)...); code != ExitOK {
		t.Fatalf("snapshot = %d: %s", code, stderr)
	}
	h, err := os.ReadFile(hist)
	if err != nil || !strings.Contains(string(h), `"schema": "poolsolve.demand-history/v2"`) {
		t.Errorf("history %s: %v", h, err)
	}
	if s, _ := os.ReadFile(snap); !strings.Contains(string(s), `"demandHistory"`) {
		t.Errorf("the snapshot does not carry the demand history")
	}
	if code, _, stderr := runCLI(t, "plan", "--fleet", sparkBundle, "--gateway-timeout", "1s"); code != ExitBadInput || !strings.Contains(stderr, "give --gateway URL too") {
		t.Errorf("--gateway-timeout without --gateway = %d: %s", code, stderr)
	}
}
