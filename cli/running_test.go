package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const (
	gw023Config  = "../lloom/testdata/lloom-gateway-0.2.3/config.json"
	runningState = "../lloom/testdata/lloom-gateway-0.2.3-runtime-state/"
)

func readJSONFile(t *testing.T, path string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// cabledConfig is the captured 0.2.3 config with the cluster block
// `lloom cluster discover` writes for an NVIDIA Sync pair (fabric
// backendHost on one /24: the pair's nodes are linked), spark-node-03
// added by hand.
func cabledConfig(t *testing.T) string {
	cfg := readJSONFile(t, gw023Config)
	cluster := readJSONFile(t, "../lloom/testdata/lloom-0.2.3-cluster-discover/cluster.json")
	cluster["nodes"].(map[string]any)["spark-node-03"] = map[string]any{"endpoint": "http://127.0.0.1:18103", "resources": map[string]any{"memoryGb": 128}}
	cfg["cluster"] = cluster
	return writeJSONFile(t, filepath.Join(t.TempDir(), "config.json"), cfg)
}

// stateCluster is a captured /gateway/cluster answer of the runtime-state
// captures without telemetry: the capture host has 23.5 GiB, so the
// config's 128 GiB Sparks are planned, and only the runtime rows differ.
func stateCluster(t *testing.T, state string) string {
	doc := readJSONFile(t, runningState+state+"/cluster.json")
	for _, n := range doc["cluster"].(map[string]any)["nodes"].(map[string]any) {
		delete(n.(map[string]any), "telemetry")
		delete(n.(map[string]any), "profile")
	}
	return writeJSONFile(t, filepath.Join(t.TempDir(), "cluster.json"), doc)
}

func TestADeadTPPairIsAChangeNotNoChanges(t *testing.T) {
	tests := []struct {
		name, state, read string
	}{
		{"a pair whose upstream died after serving reads running but unhealthy, and is started by hand", "dead", "running, unhealthy"},
		{"a pair whose gateways restarted with the upstream gone reads idle, and is started by hand", "dead-restarted", "idle"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, "plan", "--config", cabledConfig(t), "--cluster", stateCluster(t, tc.state))
			if code != ExitChanges {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			if strings.Contains(out, "No changes") {
				t.Errorf("a dead pair is planned as no changes:\n%s", out)
			}
			want := "manual start  sparkqwen-pair on spark-node-01+spark-node-02 (always; unmanaged: LLooM cannot start it): not running now (" + tc.read + ")"
			if !strings.Contains(out, want) {
				t.Errorf("no %q in:\n%s", want, out)
			}
			if !strings.Contains(out, "sparkqwen-pair      spark-node-01+spark-node-02  not running  read: "+tc.read) {
				t.Errorf("the plan does not say which status it read:\n%s", out)
			}
		})
	}
	// The embedding lane, idle for want of a health check, is the one change.
	code, out, _ := run(t, "plan", "--config", cabledConfig(t), "--cluster", stateCluster(t, "fresh"))
	if code != ExitChanges || strings.Contains(out, "sparkqwen-pair on spark-node-01+spark-node-02 (always") {
		t.Errorf("the healthy pair is changed (exit %d):\n%s", code, out)
	}
}

func TestNoManualStopOfALaneThatDoesNotRun(t *testing.T) {
	// No link evidence and the pair idle: it cannot be planned, and it
	// does not run, so there is nothing to stop.
	code, out, errOut := run(t, "plan", "--config", gw023Config, "--cluster", stateCluster(t, "dead-restarted"), "--format", "json")
	if code != ExitChanges {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Changes []struct{ Kind, Subject string }
		Now     []struct {
			Variant, Status string
			Running         bool
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range doc.Changes {
		if strings.Contains(c.Kind, "stop") {
			t.Errorf("%s of %s, which does not run", c.Kind, c.Subject)
		}
	}
	read := map[string]string{}
	for _, l := range doc.Now {
		if !l.Running {
			read[l.Variant] = l.Status
		}
	}
	for _, v := range []string{"sparkqwen-pair", "qwen38-27b-nvfp4", "qwen3-embedding-4b"} {
		if read[v] != "idle" {
			t.Errorf("now[%s] = %q not running, want idle", v, read[v])
		}
	}
}

func TestADeclaredTPPairWithNoLinkIsRefusedByPlanAndCheck(t *testing.T) {
	code, out, errOut := run(t, "plan", "--config", gw023Config)
	if code != ExitChanges {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"sparkqwen-pair spans spark-node-01+spark-node-02, but nothing shows them all linked",
		"manual stop  sparkqwen-pair on spark-node-01+spark-node-02 (unmanaged: LLooM cannot stop it): spark-node-01+spark-node-02 are not all directly linked",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	// A plan that keeps the pair, made where a direct topology links it,
	// is invalid for the config alone.
	paired := filepath.Join(t.TempDir(), "plan.json")
	if code, _, errOut := run(t, "plan", "--config", cabledConfig(t), "--format", "json", "-o", paired); code > ExitChanges {
		t.Fatalf("plan exit %d: %s", code, errOut)
	}
	code, out, _ = run(t, "check", "--config", gw023Config, "--plan", paired)
	if code != exitInvalid || !strings.Contains(out, "spark-node-01 and spark-node-02 are not directly linked") {
		t.Errorf("check exit %d, want %d naming the missing link:\n%s", code, exitInvalid, out)
	}
}
