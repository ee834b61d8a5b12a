package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// canaryRE finds any canary: every planted secret holds "canary", and the
// model name's URL holds port 19003.
var canaryRE = regexp.MustCompile(`canary|19003`)

func noCanary(t *testing.T, what, out string) {
	t.Helper()
	if loc := canaryRE.FindStringIndex(out); loc != nil {
		t.Errorf("%s leaks a secret: ...%s...", what, out[max(0, loc[0]-120):min(len(out), loc[1]+40)])
	}
}

func writeJSONFile(t *testing.T, path string, v any) string {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCanariesInEveryShapeReachNoOutput plants a secret in each shape the
// redaction pass knows (a flag in a command string, flags in argument
// lists, Docker -e items, labels, an oddly named environment variable,
// credentials in an image reference, a URL in a model name), in the config,
// a recipe, an inventory and the gateway's answers, and reads every
// output: plan, catalog (text and JSON), snapshot, export, inventory,
// stderr and the agent's answers.
func TestCanariesInEveryShapeReachNoOutput(t *testing.T) {
	t.Setenv("LLOOM_CLUSTER_KEY", "key-for-the-fake-gateway")
	plant := func(rt map[string]any, tag string) {
		rt["command"] = "vllm serve m --api-key canary-cmd-" + tag + " --port 8000"
		rt["args"] = []any{"--bearer", "canary-bearer-" + tag, "--password=canary-pw-" + tag, "--token", "sk-canary-XYZ" + tag}
		rt["env"] = map[string]any{"MYPAT": "canary-pat-" + tag, "CUTE_DSL_ARCH": "sm_121a"}
		rt["bootstrap"] = map[string]any{"adapter": "docker", "image": "user:canary-img-" + tag + "@ghcr.io/org/vllm:1",
			"createArgs": []any{"-e", "HF_TOKEN=canary-create-" + tag, "--env=OTHER=canary-env-" + tag}}
	}
	f := newLiveFleet(t, "key-for-the-fake-gateway", newerGateway, func(cfg, cluster, metrics map[string]any) {
		for id, rt := range cfg["runtimes"].(map[string]any) {
			plant(rt.(map[string]any), "cfg-"+id)
		}
		for _, n := range cfg["cluster"].(map[string]any)["nodes"].(map[string]any) {
			n.(map[string]any)["labels"] = map[string]any{"token": "canary-label", "role": "worker"}
		}
		for _, m := range cfg["models"].([]any) {
			m.(map[string]any)["name"] = "served at http://127.0.0.1:19003/v1"
		}
		nodes := cluster["cluster"].(map[string]any)["nodes"].(map[string]any)
		for _, st := range nodes {
			st := st.(map[string]any)
			st["labels"] = map[string]any{"token": "canary-status-label"}
			st["name"] = "node at http://canary-status-name:1/"
			if inv, ok := st["inventory"].(map[string]any); ok {
				inv["dockerImages"] = append(inv["dockerImages"].([]any), "me:canary-gw-inv@ghcr.io/org/img:3")
				inv["notes"] = []any{"see http://canary-gw-inv-note/x"}
			}
			if rm, ok := st["runtimeManager"].(map[string]any); ok {
				for _, row := range rm["runtimes"].(map[string]any) {
					plant(row.(map[string]any), "status")
				}
			}
		}
		if recent, ok := metrics["recent"].([]any); ok && len(recent) > 0 {
			recent[0].(map[string]any)["error"] = "upstream refused sk-canary-metrics-0123 at http://canary-upstream/v1"
		}
	})

	// A recipe and an inventory with the same shapes, given as files.
	var recipe map[string]any
	data, err := os.ReadFile(f.recipes)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &recipe); err != nil {
		t.Fatal(err)
	}
	rt := map[string]any{}
	plant(rt, "recipe")
	recipe["runtime"] = rt
	recipe["name"] = "from http://canary-recipe-source/x"
	writeJSONFile(t, f.recipes, recipe)
	var bundle map[string]any
	if data, err = os.ReadFile(sparkBundle); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &bundle); err != nil {
		t.Fatal(err)
	}
	inv := bundle["nodes"].(map[string]any)["spark-node-03"].(map[string]any)["inventory"].(map[string]any)
	inv["dockerImages"] = append(inv["dockerImages"].([]any), "bob:canary-inv-img@registry.local:5000/org/img:2")
	inv["notes"] = []any{"pulled from https://canary-inv-note/x with --token canary-inv-token"}
	invFile := writeJSONFile(t, filepath.Join(f.dir, "inv03.json"), inv)

	snap := filepath.Join(f.dir, "fleet.json")
	exp := filepath.Join(f.dir, "instance.json")
	opb := filepath.Join(f.dir, "instance.opb")
	hist := filepath.Join(f.dir, "demand-history.json")
	root := filepath.Join(f.dir, "sk-canary-root-0123")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	live := func(cmd string, more ...string) []string {
		return f.args(cmd, append([]string{"--inventory", "spark-node-03=" + invFile}, more...)...)
	}
	runs := [][]string{
		live("plan", "--solver", "greedy"),
		live("plan", "--solver", "greedy", "--format", "json"),
		live("catalog"),
		live("catalog", "--format", "json"),
		live("catalog", "--consider-installs", "--format", "json"),
		live("validate"),
		live("snapshot", "-o", snap, "--demand-history", hist),
		live("snapshot"),
		live("plan", "--solver", "greedy", "--emit-profile", "planned-check", "--lloom-version", "0.2.3"),
		{"plan", "--fleet", snap, "--solver", "greedy"},
		{"catalog", "--fleet", snap},
		{"export", "--fleet", snap, "--format", "json", "-o", exp},
		{"export", "--fleet", snap, "--format", "opb", "-o", opb},
		{"inventory", "--config", f.config, "--model-root", root},
		{"inventory", "--config", f.config, "--model-root", root, "--format", "json"},
	}
	for _, args := range runs {
		code, stdout, stderr := runCLI(t, args...)
		if code != ExitOK && code != ExitChanges {
			t.Fatalf("%s exited %d: %s", strings.Join(args, " "), code, stderr)
		}
		noCanary(t, strings.Join(args[:1], " ")+" stdout", stdout)
		noCanary(t, strings.Join(args[:1], " ")+" stderr", stderr)
	}
	for _, file := range []string{snap, exp, opb, hist} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		noCanary(t, file, string(data))
	}
	// The planner still reads what it needs from the redacted launch.
	if data, _ := os.ReadFile(snap); !strings.Contains(string(data), `"CUTE_DSL_ARCH": "sm_121a"`) || !strings.Contains(string(data), "@ghcr.io/org/vllm:1") {
		t.Error("the snapshot lost the allowed environment or the image reference")
	}

	// stderr: an error quoting a planted value.
	var cfg map[string]any
	if data, err = os.ReadFile(f.config); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	for _, rt := range cfg["runtimes"].(map[string]any) {
		rt.(map[string]any)["memoryGb"] = "sk-canary-stderr-0123"
	}
	bad := writeJSONFile(t, filepath.Join(f.dir, "bad.json"), cfg)
	code, stdout, stderr := runCLI(t, "validate", "--config", bad)
	if code != ExitBadInput || !strings.Contains(stderr, "memoryGb") {
		t.Fatalf("validate of a bad memoryGb = %d: %s", code, stderr)
	}
	noCanary(t, "validate stderr", stdout+stderr)

	// The agent: its own node (name, labels, model roots) and a peer that
	// answers with planted secrets.
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"ok": true, "node": {"id": "peer", "name": "at http://canary-peer-name/", "reachable": true,
			"labels": {"token": "canary-peer-label", "apiKey": "canary-peer-key"},
			"error": "GET http://canary-peer-error/x failed",
			"models": [{"id": "m", "name": "served at http://127.0.0.1:19003/v1", "backend": "b"}],
			"runtimeManager": {"runtimes": {"r": {"status": "running", "healthUrl": "http://canary-peer-health/h"}}}}}`))
	}))
	t.Cleanup(peer.Close)
	t.Setenv("POOLSOLVE_SERVE_KEY", "serve-test-key")
	agentCfg := writeJSONFile(t, filepath.Join(f.dir, "agent.json"), map[string]any{
		"cluster": map[string]any{"nodeId": "agent-node", "apiKeyEnv": "POOLSOLVE_SERVE_KEY", "nodes": map[string]any{
			"agent-node": map[string]any{"name": "agent http://canary-agent-name/", "labels": map[string]any{"token": "canary-agent-label"}},
			"peer":       map[string]any{"endpoint": peer.URL},
		}},
	})
	s := startServe(t, "--config", agentCfg, "--model-root", root)
	for _, route := range []string{"/gateway/node", "/gateway/node?inventory=1", "/gateway/cluster", "/gateway/cluster?inventory=1"} {
		code, body := get(t, s.url+route, "serve-test-key")
		if code != http.StatusOK {
			t.Errorf("GET %s = %d: %s", route, code, body)
		}
		noCanary(t, "agent "+route, string(body))
	}
	noCanary(t, "serve stderr", s.stderr.String())
}
