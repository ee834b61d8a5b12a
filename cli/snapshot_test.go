package cli

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSnapshotReplaysTheLivePlan(t *testing.T) {
	t.Setenv("LLOOM_CLUSTER_KEY", "test-key")
	tests := []struct {
		name          string
		shape         gatewayShape
		wantFallbacks []string
	}{
		{"a newer gateway with inventory", newerGateway, nil},
		{"an older gateway planned from machine profiles", olderGateway, []string{
			"spark-node-01: planned from machine profile (gateway predates inventory)",
			"spark-node-02: planned from machine profile (gateway predates inventory)",
			"spark-node-03: planned from machine profile (gateway predates inventory)",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newLiveFleet(t, "test-key", tc.shape, nil)
			snap := filepath.Join(f.dir, "fleet.json")
			code, stdout, stderr := runCLI(t, f.args("snapshot", "-o", snap)...)
			if code != ExitOK || stdout != "" || !strings.Contains(stderr, "wrote "+snap+": 3 node(s)") {
				t.Fatalf("snapshot exited %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			code, live, stderr := runCLI(t, f.args("plan", "--solver", "greedy", "--format", "json")...)
			if code != ExitOK && code != ExitChanges {
				t.Fatalf("plan --gateway exited %d: %s", code, stderr)
			}
			code2, replay, stderr := runCLI(t, "plan", "--fleet", snap, "--solver", "greedy", "--format", "json")
			if code2 != code {
				t.Fatalf("plan --fleet snapshot exited %d, live %d: %s", code2, code, stderr)
			}
			lp, rp := livePlanJSON(t, live), livePlanJSON(t, replay)
			var fallbacks, rest []string
			for _, n := range planNotes(lp) {
				if slices.Contains(tc.wantFallbacks, n) {
					fallbacks = append(fallbacks, n)
				} else {
					rest = append(rest, n)
				}
			}
			if !slices.Equal(fallbacks, tc.wantFallbacks) {
				t.Errorf("live notes %q, want the fallbacks %q", planNotes(lp), tc.wantFallbacks)
			}
			if rn := planNotes(rp); !slices.Equal(rest, rn) {
				t.Errorf("notes differ beyond the fallbacks:\nlive   %q\nreplay %q", rest, rn)
			}
			delete(lp, "notes")
			delete(rp, "notes")
			sameLiveJSON(t, "the live plan and the snapshot's", lp, rp)

			data, err := os.ReadFile(snap)
			if err != nil {
				t.Fatal(err)
			}
			for _, fb := range tc.wantFallbacks {
				if !bytes.Contains(data, []byte(fb)) {
					t.Errorf("the snapshot's description does not record %q", fb)
				}
			}
			code, again, _ := runCLI(t, f.args("snapshot")...)
			if code != ExitOK || again != string(data) {
				t.Errorf("a second snapshot to stdout differs from the first (exit %d)", code)
			}
		})
	}
}

// TestNoSecretReachesAnyOutput puts recognisable secrets in the config,
// in the environment and in the gateway's answers, then runs every
// command that reads them and proves none reaches stdout, stderr or a
// file written.
func TestNoSecretReachesAnyOutput(t *testing.T) {
	t.Setenv("LLOOM_CLUSTER_KEY", "canary-bearer-key")
	t.Setenv("CANARY_DIR", "canary-dir-value")
	t.Setenv("LLOOM_API_KEY", "canary-api-env")
	t.Setenv("HF_TOKEN", "canary-hf-token")
	f := newLiveFleet(t, "canary-bearer-key", newerGateway, func(cfg, cluster, metrics map[string]any) {
		backends := cfg["backends"].(map[string]any)
		for _, id := range slices.Sorted(maps.Keys(backends)) {
			b := backends[id].(map[string]any)
			b["apiKey"] = "canary-cfg-apikey"
			b["baseUrl"] = "http://canary-backend-host:9/v1"
			b["healthUrl"] = "http://canary-backend-health/health"
		}
		cfg["security"] = map[string]any{"apiKeys": []any{"canary-security-key"}, "adminApiKeys": []any{"${LLOOM_CLUSTER_KEY}"}}
		for _, id := range slices.Sorted(maps.Keys(cfg["runtimes"].(map[string]any))) {
			rt := cfg["runtimes"].(map[string]any)[id].(map[string]any)
			rt["healthUrl"] = "http://canary-runtime-health:1/health"
			rt["env"] = map[string]any{"HF_TOKEN": "canary-env-token", "MODEL_DIR": "${CANARY_DIR}", "NOTE": "see https://canary-env-url/x"}
			rt["args"] = []any{"--api-key", "canary-arg-key", "--token=canary-arg-token"}
		}
		for _, n := range cfg["cluster"].(map[string]any)["nodes"].(map[string]any) {
			n.(map[string]any)["endpoint"] = "http://127.0.0.1:1/canary-endpoint-prefix" // loopback: refused at once
		}
		nodes := cluster["cluster"].(map[string]any)["nodes"].(map[string]any)
		for _, id := range slices.Sorted(maps.Keys(nodes)) {
			st := nodes[id].(map[string]any)
			st["labels"] = map[string]any{"docs": "https://canary-label-host/x"}
			rm, _ := st["runtimeManager"].(map[string]any)
			rows, _ := rm["runtimes"].(map[string]any)
			for _, rid := range slices.Sorted(maps.Keys(rows)) {
				row := rows[rid].(map[string]any)
				row["healthUrl"] = "http://canary-status-health:19001/health"
				row["args"] = []any{"--api-key", "canary-status-arg"}
				row["lastError"] = "GET http://canary-last-error/x: 500"
			}
		}
		nodes["spark-node-02"].(map[string]any)["error"] = "inventory unavailable: see http://canary-node-error/x"
		delete(nodes["spark-node-02"].(map[string]any), "inventory")
		if recent, ok := metrics["recent"].([]any); ok && len(recent) > 0 {
			e := recent[0].(map[string]any)
			e["error"] = "upstream https://canary-upstream/v1 failed"
			e["apiKey"] = "canary-metrics-key"
		}
		metrics["authorization"] = "Bearer canary-metrics-bearer"
	})
	snap := filepath.Join(f.dir, "fleet.json")
	inv := filepath.Join(f.dir, "inventory.json")
	runs := [][]string{
		f.args("plan", "--solver", "greedy"),
		f.args("plan", "--solver", "greedy", "--format", "json"),
		f.args("catalog"),
		f.args("catalog", "--format", "json"),
		f.args("validate"),
		f.args("snapshot", "-o", snap),
		f.args("snapshot"),
		{"inventory", "--config", f.config},
		{"inventory", "--config", f.config, "--format", "json", "-o", inv},
		{"plan", "--fleet", snap, "--solver", "greedy", "--format", "json"},
		{"catalog", "--fleet", snap, "--format", "json"},
	}
	var all strings.Builder
	for _, args := range runs {
		code, stdout, stderr := runCLI(t, args...)
		if code != ExitOK && code != ExitChanges && !(args[0] == "validate" && code == ExitBadInput) {
			t.Fatalf("%s exited %d: %s", strings.Join(args[:2], " "), code, stderr)
		}
		all.WriteString(stdout + stderr)
	}
	for _, file := range []string{snap, inv} {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(data)
	}
	out := all.String()
	if i := strings.Index(out, "canary"); i >= 0 {
		t.Errorf("a secret leaked: ...%s...", out[max(0, i-100):min(len(out), i+60)])
	}
	snapData, _ := os.ReadFile(snap)
	for _, want := range []string{"${CANARY_DIR}", `"apiKeyEnv": "LLOOM_CLUSTER_KEY"`, "[redacted]"} {
		if !bytes.Contains(snapData, []byte(want)) {
			t.Errorf("the snapshot lacks %q: placeholders and key names stay, values go", want)
		}
	}
}
