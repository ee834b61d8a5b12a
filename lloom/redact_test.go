package lloom

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// canaryConfig puts a distinct canary secret in every place a secret can
// hide in a config.
const canaryConfig = `{
  "cluster": {
    "nodeId": "${LLOOM_NODE_ID}",
    "apiKeyEnv": "LLOOM_CLUSTER_KEY",
    "nodes": {
      "n1": {"endpoint": "http://CANARY-node-endpoint:8100", "apiKeyEnv": "NODE_KEY_NAME",
        "proxy": {"baseUrl": "http://CANARY-proxy-base/v1", "models": ["m"]}}
    }
  },
  "backends": {
    "b": {"type": "openai", "baseUrl": "https://CANARY-backend-base/v1", "apiKey": "sk-CANARY-backend-key",
      "apiKeyEnv": "OPENROUTER_API_KEY", "healthUrl": "http://CANARY-backend-health/health"},
    "p": {"apiKey": "${PLACEHOLDER_KEY}"}
  },
  "runtimes": {
    "r": {
      "healthUrl": "http://CANARY-runtime-health/health",
      "command": "vllm serve --hub http://user:CANARY-command-url@hub",
      "args": ["--api-key", "CANARY-arg-key", "--hf-token=CANARY-arg-token", "--port", "8000"],
      "env": {"HF_TOKEN": "CANARY-env-token", "DB_PASSWORD": "CANARY-env-password", "MY_SECRET": "CANARY-env-secret",
        "PROXY": "http://CANARY-env-url:3128", "CUDA_VISIBLE_DEVICES": "0"},
      "bootstrap": {"image": "vllm/vllm-openai",
        "createArgs": ["-e", "OPENAI_API_KEY=CANARY-create-key", "-e", "CUTE_DSL_ARCH=sm_121a", "--env=AUTH_HEADER=CANARY-create-auth"],
        "command": ["model", "--api-key=CANARY-command-key"]}
    }
  }
}`

func TestConfigRedactedLeaksNoCanary(t *testing.T) {
	cfg := parseConfigString(t, canaryConfig)
	before, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	out, err := MarshalRedacted(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.Index(out, []byte("CANARY")); i >= 0 {
		t.Errorf("redacted config leaks a canary near %q", out[max(0, i-60):min(len(out), i+40)])
	}
	for _, keep := range []string{
		`"apiKeyEnv": "OPENROUTER_API_KEY"`, `"apiKeyEnv": "NODE_KEY_NAME"`, `"nodeId": "${LLOOM_NODE_ID}"`,
		`"CUTE_DSL_ARCH=sm_121a"`, `"CUDA_VISIBLE_DEVICES": "0"`, `"--port"`, `"8000"`,
	} {
		if !bytes.Contains(out, []byte(keep)) {
			t.Errorf("redacted config lost %s:\n%s", keep, out)
		}
	}
	after, _ := json.Marshal(cfg)
	if !bytes.Equal(before, after) {
		t.Error("Redacted changed the original config")
	}
	if !strings.Contains(string(after), "sk-CANARY-backend-key") {
		t.Error("the original config should still hold its key")
	}

	// Federated backends are made from node endpoints; they must not leak either.
	MaterializeFederated(cfg)
	out, _ = MarshalRedacted(cfg)
	if bytes.Contains(out, []byte("CANARY")) {
		t.Errorf("redacted federated config leaks a canary:\n%s", out)
	}
}

func TestRealConfigRedactedHasNoBackendURL(t *testing.T) {
	cfg := loadConfig(t, gateway+"config.json")
	out, err := MarshalRedacted(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"http://", "127.0.0.1:19", "QWEN27B_BACKEND_KEY"} {
		if bytes.Contains(out, []byte(leak)) {
			t.Errorf("redacted config contains %q", leak)
		}
	}
	back, err := ParseConfig(out, "redacted.json")
	if err != nil {
		t.Fatalf("the redacted config does not parse back: %v", err)
	}
	check(t, "aliases survive", back.Aliases["q38fn"].Members, []string{"qwen3.8-flash-next", "cloud/openrouter/q38fn"})
	check(t, "memory survives", deref(back.Runtimes["qwen38-27b-nvfp4"].MemoryGb), 40.0)
}

func TestNodeStatusRedactedDropsHealthURLs(t *testing.T) {
	n, err := LoadNodeStatus(gateway + "node.json")
	if err != nil {
		t.Fatal(err)
	}
	n.Error = "fetch http://CANARY-error-url:8100/gateway/node failed"
	out, err := MarshalRedacted(n)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"19001", "CANARY", "http://"} {
		if bytes.Contains(out, []byte(leak)) {
			t.Errorf("redacted node status contains %q", leak)
		}
	}
	check(t, "the original keeps its row URL", n.RuntimeManager.Runtimes["sparkqwen-pair-head"].HealthURL, "http://127.0.0.1:19001/health")
	check(t, "the row is otherwise intact", n.Redacted().RuntimeManager.Runtimes["sparkqwen-pair-head"].Status, "external")

	c, err := LoadClusterStatus(gateway + "cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err = MarshalRedacted(c)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(out, []byte("http://")) {
		t.Error("redacted cluster status contains a URL")
	}
	if c.Nodes["spark-node-03"].RuntimeManager.Runtimes["qwen3-embedding-4b"].HealthURL == Redaction {
		t.Error("ClusterStatus.Redacted changed the original")
	}
}

func TestRedactedOfNilIsNil(t *testing.T) {
	var c *Config
	var n *NodeStatus
	var cs *ClusterStatus
	if c.Redacted() != nil || n.Redacted() != nil || cs.Redacted() != nil {
		t.Error("Redacted of nil should be nil")
	}
	_ = fmt.Sprint(c, n, cs) // printing nil documents must not panic
}

// TestRedactInPlaceLeavesWhatRedactReturns: the large metrics are
// redacted where they are for a command's inputs; the values must be
// Redact's.
func TestRedactInPlaceLeavesWhatRedactReturns(t *testing.T) {
	doc := `{"totals": {"requests": 2}, "models": [{"id": "m", "last": {"error": "upstream http://10.0.0.9:8000/v1 refused key sk-canaryInPlace1"}}],
		"recent": [{"model": "m", "target": "http://10.0.0.9:8000", "error": {"message": "Bearer abcdefghij failed"}}, {"model": "n", "runtime": "vllm serve n --api-key sk-canaryInPlace2"}]}`
	a, err := ParseMetrics([]byte(doc), "http://gateway.test/gateway/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ParseMetrics([]byte(doc), "http://gateway.test/gateway/metrics")
	want := Redact(a)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("Redact changed its argument")
	}
	RedactInPlace(b)
	if !reflect.DeepEqual(b, want) {
		t.Errorf("in place: %+v\nRedact: %+v", b, want)
	}
	if s := fmt.Sprintf("%+v %+v", b, *b.Models[0].Last); strings.Contains(s, "canaryInPlace") || strings.Contains(s, "10.0.0.9") || strings.Contains(s, "abcdefghij") {
		t.Errorf("a canary is left: %s", s)
	}
}

// secretName's remembered answers are the ones it works out: asked
// twice, for long names it does not keep, and once its table is full.
func TestSecretNamesAnswerTheSameRememberedOrNot(t *testing.T) {
	names := []string{"apiKey", "--api-key", "HF_TOKEN", "model", "GITHUB_PAT", "path", "apiKeyEnv",
		strings.Repeat("x", secretMemoMax) + "_TOKEN", strings.Repeat("y", secretMemoMax+1)}
	for _, n := range names {
		want := secretNameOf(n)
		if got, again := secretName(n), secretName(n); got != want || again != want {
			t.Errorf("secretName(%q) = %v, then %v; want %v", n, got, again, want)
		}
	}
	full := secretMemoLen.Load()
	secretMemoLen.Store(secretMemoEntries)
	defer secretMemoLen.Store(full)
	if got := secretName("SESSION_unseen"); !got {
		t.Error("with the table full, a secret-looking name is not secret")
	}
	if _, kept := secretMemo.Load("SESSION_unseen"); kept {
		t.Error("a full table kept a new name")
	}
}
