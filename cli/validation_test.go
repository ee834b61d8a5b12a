package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// brokenBundle writes the example fleet with one edit to its config.
func brokenBundle(t *testing.T, edit func(cfg map[string]any)) string {
	t.Helper()
	data, err := os.ReadFile(spark)
	if err != nil {
		t.Fatal(err)
	}
	var b map[string]any
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	edit(b["config"].(map[string]any))
	out, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "broken.json")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEveryCommandRefusesWhatValidateRefuses: plan, catalog, export, check
// and snapshot used to plan inputs validate rejects (exit 0 with a 0 GiB
// lane for a negative memory). Each must now exit 2 with validate's own
// messages.
func TestEveryCommandRefusesWhatValidateRefuses(t *testing.T) {
	m := func(v any) map[string]any { return v.(map[string]any) }
	cases := []struct {
		name string
		edit func(cfg map[string]any)
		want string
	}{
		{"a negative runtime memory", func(cfg map[string]any) {
			m(m(cfg["runtimes"])["qwen38-27b-nvfp4"])["memoryGb"] = -40
		}, `$.config.runtimes["qwen38-27b-nvfp4"].memoryGb`},
		{"a negative node memory", func(cfg map[string]any) {
			m(m(m(m(cfg["cluster"])["nodes"])["spark-node-03"])["resources"])["memoryGb"] = -128
		}, `$.config.cluster.nodes["spark-node-03"].resources.memoryGb`},
		{"a duplicate model id", func(cfg map[string]any) {
			models := cfg["models"].([]any)
			cfg["models"] = append(models, models[0])
		}, "duplicate"},
		{"a runtime on an undeclared node", func(cfg map[string]any) {
			m(m(cfg["runtimes"])["qwen38-27b-nvfp4"])["node"] = "spark-node-09"
		}, `"spark-node-09"`},
		{"an alias member that does not exist", func(cfg map[string]any) {
			m(cfg["aliases"])["a1"] = map[string]any{"members": []any{"nope-model"}}
		}, `$.config.aliases["a1"].members[0]`},
		{"a runtime with no node, which building the pool finds", func(cfg map[string]any) {
			delete(m(m(cfg["runtimes"])["qwen38-27b-nvfp4"]), "node")
			delete(m(cfg["cluster"]), "nodeId")
		}, `$.config.runtimes["qwen38-27b-nvfp4"]: runtime has no node`},
	}
	planFile := filepath.Join(t.TempDir(), "plan.json")
	if code, _, errOut := run(t, "plan", "--fleet", spark, "--format", "json", "-o", planFile); code > 1 {
		t.Fatalf("plan of the example = %d: %s", code, errOut)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			bundle := brokenBundle(t, tc.edit)
			code, _, want := run(t, "validate", "--fleet", bundle)
			if code != ExitBadInput || !strings.Contains(want, tc.want) {
				t.Fatalf("validate = %d, stderr %q; want exit 2 naming %s", code, want, tc.want)
			}
			for _, args := range [][]string{
				{"plan", "--fleet", bundle},
				{"plan", "--fleet", bundle, "--format", "json"},
				{"catalog", "--fleet", bundle},
				{"catalog", "--fleet", bundle, "--format", "json"},
				{"export", "--fleet", bundle, "--format", "opb", "-o", filepath.Join(t.TempDir(), "x.opb")},
				{"check", "--fleet", bundle, "--plan", planFile},
			} {
				code, out, errOut := run(t, args...)
				if code != ExitBadInput || errOut != want || out != "" {
					t.Errorf("%s = %d, stdout %q, stderr\n%s\nwant exit 2, no output and validate's stderr\n%s", strings.Join(args, " "), code, out, errOut, want)
				}
			}
		})
	}
}

// TestSnapshotRefusesWhatValidateRefuses: the live path validates too.
func TestSnapshotRefusesWhatValidateRefuses(t *testing.T) {
	f := newLiveFleet(t, "", newerGateway, func(cfg, _, _ map[string]any) {
		rt := cfg["runtimes"].(map[string]any)["qwen38-27b-nvfp4"].(map[string]any)
		rt["memoryGb"] = -40
	})
	code, _, want := runCLI(t, "validate", "--gateway", f.gw.URL, "--config", f.config)
	if code != ExitBadInput || !strings.Contains(want, "memoryGb") {
		t.Fatalf("validate = %d: %s", code, want)
	}
	for _, cmd := range []string{"snapshot", "plan", "catalog"} {
		code, out, errOut := runCLI(t, cmd, "--gateway", f.gw.URL, "--config", f.config)
		if code != ExitBadInput || errOut != want || out != "" {
			t.Errorf("%s = %d, stdout %q, stderr\n%s\nwant exit 2 and\n%s", cmd, code, out, errOut, want)
		}
	}
}

// TestServeAndInventoryValidateTheirConfig: the two commands that read
// only a config refuse what validate refuses, with its messages.
func TestServeAndInventoryValidateTheirConfig(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(cfg, []byte(`{"cluster": {"nodeId": "a", "nodes": {"a": {"resources": {"memoryGb": -128}}}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, want := run(t, "validate", "--config", cfg)
	if code != ExitBadInput || !strings.Contains(want, `$.cluster.nodes["a"].resources.memoryGb`) {
		t.Fatalf("validate = %d: %s", code, want)
	}
	for _, args := range [][]string{
		{"inventory", "--config", cfg},
		{"serve", "--config", cfg, "--insecure-no-auth", "--listen", "127.0.0.1:0"},
	} {
		code, out, errOut := run(t, args...)
		if code != ExitBadInput || errOut != want || out != "" {
			t.Errorf("%s = %d, stdout %q, stderr\n%s\nwant exit 2 and\n%s", args[0], code, out, errOut, want)
		}
	}
}

// TestProblemsNameTheirLineAndColumn: a problem found on decoded values
// names the line and column of its path, in a bundle (under $.config) as
// in a file of its own, as syntax errors always have.
func TestProblemsNameTheirLineAndColumn(t *testing.T) {
	bundle := brokenBundle(t, func(cfg map[string]any) {
		cfg["aliases"].(map[string]any)["a1"] = map[string]any{"members": []any{"nope-model"}}
	})
	dir := t.TempDir()
	config := filepath.Join(dir, "config.json")
	if err := os.WriteFile(config, []byte(`{"cluster": {"nodeId": "a", "nodes": {"a": {}}},
  "runtimes": {"r": {"node": "a",
    "memoryGb": -4}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, file, flag, path, at string
	}{
		{"an unknown alias member in a bundle", bundle, "--fleet", `$.config.aliases["a1"].members[0]`, `"nope-model"`},
		{"a negative memory in a config file", config, "--config", `$.runtimes["r"].memoryGb`, `-4}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, errOut := run(t, "validate", tc.flag, tc.file)
			var line, col int
			var path string
			for _, l := range strings.Split(errOut, "\n") {
				if rest, ok := strings.CutPrefix(l, tc.file+":"); ok {
					if _, err := fmt.Sscanf(rest, "%d:%d: %s", &line, &col, &path); err == nil && strings.TrimSuffix(path, ":") == tc.path {
						break
					}
				}
				line = 0
			}
			if line == 0 {
				t.Fatalf("no problem at FILE:LINE:COL: %s in\n%s", tc.path, errOut)
			}
			data, err := os.ReadFile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(string(data), "\n")
			if line > len(lines) || col > len(lines[line-1]) || !strings.HasPrefix(lines[line-1][col-1:], tc.at) {
				t.Errorf("%d:%d is not where %s is:\n%s", line, col, tc.at, errOut)
			}
		})
	}
}

// TestValidateWarnsWhatTheLLooMReleaseRefuses: poolsolve reads both alias
// forms, LLooM 0.2.3 only target + fallbacks, and exits on the members
// form. With the release given (or reported by the gateway), validate and
// plan say so; validate exits 2 when that release refuses the config.
func TestValidateWarnsWhatTheLLooMReleaseRefuses(t *testing.T) {
	const refuses = "LLooM 0.2.3 refuses this config: alias q38fn is missing target"
	code, _, errOut := run(t, "validate", "--fleet", spark, "--lloom-version", "0.2.3")
	if code != ExitBadInput || !strings.Contains(errOut, "poolsolve: warning: ../examples/spark-fleet.json $.config: "+refuses) || !strings.Contains(errOut, "LLooM 0.2.3 (--lloom-version 0.2.3) refuses this config at load (3 reason(s) above)") {
		t.Errorf("validate --lloom-version 0.2.3 = %d\nstderr %s", code, errOut)
	}
	if _, _, errOut := run(t, "plan", "--fleet", spark, "--solver", "greedy", "--lloom-version", "0.2.3", "--quiet"); !strings.Contains(errOut, refuses) {
		t.Errorf("plan does not warn:\n%s", errOut)
	}
	if code, _, errOut := run(t, "validate", "--fleet", spark, "--lloom-version", "0.3.0"); code != ExitOK || strings.Contains(errOut, "warning") {
		t.Errorf("a newer release: %d %s", code, errOut)
	}
	code, _, errOut = run(t, "validate", "--config", "../lloom/testdata/lloom-gateway-0.2.3/config.json", "--lloom-version", "0.2.3")
	if code != ExitOK || strings.Contains(errOut, "refuses") || !strings.Contains(errOut, "LLooM 0.2.3 does not read aliases.q38fn.fallbacks (cloud/openrouter/q38fn)") {
		t.Errorf("the config 0.2.3 ran: %d %s", code, errOut)
	}
	if code, _, errOut := run(t, "validate", "--fleet", spark, "--lloom-version", "two"); code != ExitBadInput || !strings.Contains(errOut, `--lloom-version: LLooM version "two": expected major.minor.patch`) {
		t.Errorf("a bad release: %d %s", code, errOut)
	}
	// A gateway that reports its release is checked without the flag.
	f := newLiveFleet(t, "", newerGateway, func(_, cluster, _ map[string]any) {
		cluster["cluster"].(map[string]any)["nodes"].(map[string]any)["spark-node-01"].(map[string]any)["version"] = "0.2.3"
	})
	if code, _, errOut := runCLI(t, "validate", "--gateway", f.gw.URL, "--config", f.config); code != ExitBadInput || !strings.Contains(errOut, refuses) {
		t.Errorf("validate --gateway on a 0.2.3 gateway: %d %s", code, errOut)
	}
}

// TestValidateAgainstALiveLLooM023GatewayNeedsNoVersion: a gateway that
// answers as the captured 0.2.3 cluster did (no version) is checked as
// 0.2.3: what that gateway served passes, with its unread fallbacks said;
// what it exited on fails.
func TestValidateAgainstALiveLLooM023GatewayNeedsNoVersion(t *testing.T) {
	dir := "../lloom/testdata/lloom-0.2.3-routing/"
	cluster, err := os.ReadFile(dir + "cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.URL.Path == "/gateway/cluster" {
			w.Write(cluster)
			return
		}
		w.WriteHeader(http.StatusNotFound)
		w.Write([]byte(`{"error":{"message":"unknown route: ` + r.URL.Path + `","type":"invalid_request_error","code":"not_found"}}`))
	}))
	t.Cleanup(gw.Close)
	tests := []struct {
		name     string
		config   string
		code     int
		want     []string
		wantNone string
	}{
		{"the config the gateways served", "config", ExitOK, []string{
			"LLooM 0.2.3 does not read aliases.chat.fallbacks (cloud): a request goes to primary alone, and fails when it fails",
			"LLooM 0.2.3 does not read aliases.fed.fallbacks (cloud)",
		}, "refuses"},
		{"a top-level keepWarm", "refuse-keepwarm", ExitBadInput, []string{
			"LLooM 0.2.3 refuses this config: top-level keepWarm is not supported",
			"LLooM 0.2.3 (recognised from the gateway's answers: no version and no availabilityState, as 0.2.3 answers) refuses this config at load",
		}, "targets unknown model"},
		{"a node other than the gateway's without endpoint, and the model it served", "refuse-endpoint", ExitBadInput, []string{
			`$.aliases["fed"].members[0]: unknown model or alias "node-b/bmodel"`,
		}, ""},
		{"a node other than the gateway's without endpoint", endpointless(t), ExitBadInput, []string{
			"LLooM 0.2.3 refuses this config: cluster node node-b is missing endpoint (every node but the local one, node-a, needs one)",
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			file := tc.config
			if !filepath.IsAbs(file) {
				file = dir + file + ".json"
			}
			code, _, errOut := runCLI(t, "validate", "--gateway", gw.URL, "--config", file)
			if code != tc.code {
				t.Errorf("exit %d, want %d:\n%s", code, tc.code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			if tc.wantNone != "" && strings.Contains(errOut, tc.wantNone) {
				t.Errorf("stderr says %q:\n%s", tc.wantNone, errOut)
			}
		})
	}
}

// endpointless is the served config with node-b's endpoint gone, and with
// it the federated model and its alias.
func endpointless(t *testing.T) string {
	data, err := os.ReadFile("../lloom/testdata/lloom-0.2.3-routing/config.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	b := cfg["cluster"].(map[string]any)["nodes"].(map[string]any)["node-b"].(map[string]any)
	delete(b, "endpoint")
	delete(b, "proxy")
	delete(cfg["aliases"].(map[string]any), "fed")
	out, _ := json.Marshal(cfg)
	p := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
