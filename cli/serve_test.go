package cli

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/lloom"
)

// served is a `poolsolve serve` running in the test.
type served struct {
	url    string
	stderr *syncBuffer
	stop   context.CancelFunc
	done   chan int
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

// startServe runs serve with args until the test stops it, and waits for
// its address.
func startServe(t *testing.T, args ...string) *served {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	prev := serveUntil
	serveUntil = func(parent context.Context) (context.Context, context.CancelFunc) { return ctx, stop }
	t.Cleanup(func() { serveUntil = prev })
	s := &served{stderr: &syncBuffer{}, stop: stop, done: make(chan int, 1)}
	go func() {
		s.done <- Run(append([]string{"poolsolve", "serve", "--listen", "127.0.0.1:0"}, args...), strings.NewReader(""), io.Discard, s.stderr)
	}()
	t.Cleanup(func() {
		stop()
		<-s.done
	})
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if m := listening.FindStringSubmatch(s.stderr.String()); m != nil {
			s.url = m[1]
			return s
		}
		select {
		case code := <-s.done:
			s.done <- code // for the cleanup
			t.Fatalf("serve exited %d before listening: %s", code, s.stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not start: %s", s.stderr)
	return nil
}

func get(t *testing.T, url, key string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

func TestServeAnswersAsAGatewayAndStopsCleanly(t *testing.T) {
	t.Setenv("POOLSOLVE_SERVE_KEY", "serve-test-key")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.json")
	if err := os.WriteFile(cfg, []byte(`{
		"cluster": {"nodeId": "agent-node", "apiKeyEnv": "POOLSOLVE_SERVE_KEY",
		            "nodes": {"agent-node": {"resources": {"memoryGb": 16}}}},
		"backends": {"cloud": {"type": "openai", "baseUrl": "https://api.example/v1", "apiKeyEnv": "CLOUD_KEY"}},
		"models": [{"id": "cloud/chat", "backend": "cloud", "tags": ["cloud", "external"]}],
		"aliases": {"chat": {"members": ["cloud/chat"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startServe(t, "--config", cfg, "--model-root", dir)
	if !strings.Contains(s.stderr.String(), "node agent-node listening on") || !strings.Contains(s.stderr.String(), "admin key from $POOLSOLVE_SERVE_KEY") {
		t.Errorf("startup line: %q", s.stderr)
	}

	tests := []struct {
		name string
		key  string
		want int
	}{
		{"no key is 401", "", http.StatusUnauthorized},
		{"a wrong key is 401, as in LLooM", "not-the-key", http.StatusUnauthorized},
		{"the key reads the node", "serve-test-key", http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if code, body := get(t, s.url+"/gateway/node", tc.key); code != tc.want {
				t.Errorf("GET /gateway/node = %d (%s), want %d", code, body, tc.want)
			}
		})
	}

	code, body := get(t, s.url+"/gateway/node?inventory=1", "serve-test-key")
	st, err := lloom.ParseNodeStatus(body, "answer")
	if code != http.StatusOK || err != nil || st.ID != "agent-node" || len(st.Inventory) == 0 {
		t.Fatalf("GET /gateway/node?inventory=1 = %d, %v, status %+v", code, err, st)
	}

	// The client reads the agent as it reads a gateway.
	code, out, stderr := runCLI(t, "catalog", "--gateway", s.url, "--config", cfg)
	if code != ExitOK || !strings.Contains(out, "agent-node") || !strings.Contains(out, "(from inventory+status)") {
		t.Errorf("catalog --gateway on the agent exited %d (%s):\n%s", code, stderr, out)
	}
	if !strings.Contains(stderr, "/gateway/metrics: HTTP 404") {
		t.Errorf("the agent has no metrics; stderr should say so: %q", stderr)
	}

	s.stop()
	select {
	case code := <-s.done:
		s.done <- code // for the cleanup
		if code != ExitOK || !strings.Contains(s.stderr.String(), "poolsolve serve: stopped") {
			t.Errorf("serve exited %d after the stop: %s", code, s.stderr)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("serve did not stop")
	}
	if strings.Contains(s.stderr.String(), "serve-test-key") {
		t.Errorf("serve printed its key: %s", s.stderr)
	}
}

func TestServeWithoutAKeyOnLoopbackOnly(t *testing.T) {
	t.Setenv("LLOOM_NODE_ID", "mac-studio")
	s := startServe(t, "--insecure-no-auth")
	if !strings.Contains(s.stderr.String(), "NO KEY (--insecure-no-auth, loopback only)") {
		t.Errorf("startup line does not warn: %q", s.stderr)
	}
	if code, body := get(t, s.url+"/gateway/node", ""); code != http.StatusOK || !strings.Contains(string(body), `"mac-studio"`) {
		t.Errorf("GET /gateway/node without a key = %d (%s), want 200 for node mac-studio", code, body)
	}
}

func TestServeRefusesToStartUnsafely(t *testing.T) {
	t.Setenv("POOLSOLVE_EMPTY_KEY", "")
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"without a key", []string{"--node-id", "n1"}, "serve needs an admin key (no --api-key-env and no cluster.apiKeyEnv in the config)"},
		{"with an empty key variable", []string{"--node-id", "n1", "--api-key-env", "POOLSOLVE_EMPTY_KEY"}, "--api-key-env names an environment variable that is unset or empty"},
		{"without a key on every interface", []string{"--node-id", "n1", "--insecure-no-auth", "--listen", "0.0.0.0:0"}, "on loopback only"},
		{"without a key on an empty host", []string{"--node-id", "n1", "--insecure-no-auth", "--listen", ":0"}, "on loopback only"},
		{"on an address without a port", []string{"--node-id", "n1", "--listen", "localhost"}, "expected host:port"},
		{"with a bad key variable name", []string{"--node-id", "n1", "--api-key-env", "not a name"}, "expects the name of an environment variable"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, append([]string{"serve"}, tc.args...)...)
			if code != ExitBadInput || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, ExitBadInput, tc.want)
			}
		})
	}
}

// TestTheNodeIDIsPickedAsLLooMPicksIt: serve and inventory take the id a
// LLooM 0.2.3 gateway with the same environment and config would take
// (LLOOM_NODE_ID, then cluster.nodeId expanded, then the host name), so
// the agent answers for the node its gateway is.
func TestTheNodeIDIsPickedAsLLooMPicksIt(t *testing.T) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Skip("this machine has no host name")
	}
	t.Setenv("POOLSOLVE_SERVE_KEY", "serve-test-key")
	tests := []struct {
		name     string
		flag     string
		envID    string
		configID string
		want     string
	}{
		{"the environment wins over the config", "", "env-node", "config-node", "env-node"},
		{"the config is read when the environment is unset", "", "", "config-node", "config-node"},
		{"a placeholder in the config is expanded", "", "", "${POOLSOLVE_TEST_NODE}", "placeholder-node"},
		{"the host name is the last resort", "", "", "", host},
		{"an unset placeholder falls back to the host name", "", "", "${POOLSOLVE_TEST_UNSET}", host},
		{"--node-id wins over both", "flag-node", "env-node", "config-node", "flag-node"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LLOOM_NODE_ID", tc.envID)
			t.Setenv("POOLSOLVE_TEST_NODE", "placeholder-node")
			t.Setenv("POOLSOLVE_TEST_UNSET", "")
			cfg := filepath.Join(t.TempDir(), "config.json")
			if err := os.WriteFile(cfg, []byte(`{
		"cluster": {"nodeId": "`+tc.configID+`", "apiKeyEnv": "POOLSOLVE_SERVE_KEY",
		            "nodes": {"config-node": {"endpoint": "http://127.0.0.1:9", "resources": {"memoryGb": 16}},
		                      "env-node": {"endpoint": "http://127.0.0.1:9", "resources": {"memoryGb": 16}}}},
		"backends": {"cloud": {"type": "openai", "baseUrl": "https://api.example/v1", "apiKeyEnv": "CLOUD_KEY"}},
		"models": [{"id": "cloud/chat", "backend": "cloud", "tags": ["cloud", "external"]}],
		"aliases": {"chat": {"members": ["cloud/chat"]}}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"--config", cfg}
			if tc.flag != "" {
				args = append(args, "--node-id", tc.flag)
			}
			s := startServe(t, args...)
			if !strings.Contains(s.stderr.String(), "node "+tc.want+" listening on") {
				t.Errorf("serve startup line %q, want node %s", s.stderr, tc.want)
			}
			if code, body := get(t, s.url+"/gateway/node", "serve-test-key"); code != http.StatusOK || !strings.Contains(string(body), `"id":"`+tc.want+`"`) {
				t.Errorf("GET /gateway/node = %d %s, want node %s", code, body, tc.want)
			}
			code, out, stderr := runCLI(t, append([]string{"inventory", "--format", "json"}, args...)...)
			var inv struct {
				NodeID string `json:"nodeId"`
			}
			if code != ExitOK || json.Unmarshal([]byte(out), &inv) != nil || inv.NodeID != tc.want {
				t.Errorf("inventory exited %d (%s), nodeId %q, want %s", code, stderr, inv.NodeID, tc.want)
			}
		})
	}
}

// TestServeTakesTheNodeIDALLooM023GatewayTakes starts serve as two real
// 0.2.3 gateways were started (agent/testdata/README.md): the config's
// cluster.nodeId is spark-node-03, LLOOM_NODE_ID set or empty. The agent
// must answer for the node the gateway answered for.
func TestServeTakesTheNodeIDALLooM023GatewayTakes(t *testing.T) {
	raw, err := os.ReadFile("../gateway/testdata/gateway-0.2.3-config.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["cluster"].(map[string]any)["nodeId"] = "spark-node-03"
	raw, _ = json.Marshal(doc)
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LLOOM_CLUSTER_KEY", "cluster-key-123")
	tests := []struct {
		name    string
		envID   string
		capture string
	}{
		{"with LLOOM_NODE_ID set, the environment's node", "spark-node-02", "gateway-0.2.3-node-id-env.json"},
		{"with LLOOM_NODE_ID empty, the config's node", "", "gateway-0.2.3-node-id-config.json"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("LLOOM_NODE_ID", tc.envID)
			body, err := os.ReadFile("../agent/testdata/" + tc.capture)
			if err != nil {
				t.Fatal(err)
			}
			want, err := lloom.ParseNodeStatus(body, tc.capture)
			if err != nil || want.ID == "" {
				t.Fatalf("capture: %v", err)
			}
			s := startServe(t, "--config", cfg)
			code, got := get(t, s.url+"/gateway/node", "cluster-key-123")
			st, err := lloom.ParseNodeStatus(got, "answer")
			if code != http.StatusOK || err != nil {
				t.Fatalf("GET /gateway/node = %d (%v): %s", code, err, got)
			}
			if st.ID != want.ID {
				t.Errorf("the agent answers for %q; the gateway answered for %q", st.ID, want.ID)
			}
		})
	}
}
