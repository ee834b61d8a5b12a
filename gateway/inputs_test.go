package gateway

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/lloom"
)

func loadBase(t *testing.T, src fleet.Sources) *fleet.Inputs {
	t.Helper()
	if src.Config == "" {
		src.Config = configFile
	}
	in, err := fleet.Load(src)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// liveFleet serves a newer cluster whose spark-node-03 is down, and
// returns what Fetch reads from it.
func liveFleet(t *testing.T) *Fleet {
	t.Helper()
	cluster := newerCluster(t)
	clusterNodes(cluster)["spark-node-03"] = doc{"id": "spark-node-03", "reachable": false, "error": "timed out", "telemetry": nil}
	gw := newFake(t, testKey).
		handle("/gateway/cluster", answer(200, encode(t, cluster))).
		handle("/gateway/metrics", answer(200, readTestdata("gateway-0.2.3-metrics.json")))
	return fetch(t, Options{URL: gw.srv.URL, APIKey: testKey, Config: testConfig(t, nil)})
}

func TestInputsMergesTheLiveFleetWithLocalFiles(t *testing.T) {
	fl := liveFleet(t)
	base := loadBase(t, fleet.Sources{})
	in, err := fl.Inputs(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(in.Nodes) != 3 || in.Nodes["spark-node-01"].Metrics == nil {
		t.Fatalf("nodes %v, metrics %v; want 3 nodes and spark-node-01's metrics", in.NodeIDs(), in.Nodes["spark-node-01"].Metrics != nil)
	}
	if inv := in.Nodes["spark-node-01"].Status.Inventory; len(inv) == 0 {
		t.Errorf("spark-node-01's inventory did not reach the inputs")
	}
	if in.Config != base.Config || in.Sources["config"].File != configFile {
		t.Errorf("the config is not the one read from %s: source %v", configFile, in.Sources["config"])
	}
	if s := in.Sources["nodes/spark-node-01/status"]; s.File != fl.Source || s.Path != "/gateway/cluster?inventory=1" {
		t.Errorf("status source = %+v", s)
	}
	if s := in.Sources["nodes/spark-node-01/metrics"]; s.File != fl.Source || s.Path != "its own /gateway/metrics" {
		t.Errorf("metrics source = %+v", s)
	}
	if _, ok := in.Sources["policy"]; ok {
		t.Errorf("no policy file was given, yet it has a source: %v", in.Sources["policy"])
	}
	cat, err := catalog.Build(in, catalog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range cat.Pool.Nodes {
		want := ""
		if n.ID == "spark-node-03" {
			want = "unreachable: timed out"
		}
		if n.Unavailable != want {
			t.Errorf("%s unavailable = %q, want %q", n.ID, n.Unavailable, want)
		}
		if n.ID != "spark-node-03" && !strings.HasPrefix(n.Source, "inventory") {
			t.Errorf("%s planned from %q, want its inventory", n.ID, n.Source)
		}
	}
}

func TestInputsRefusesADocumentGivenTwice(t *testing.T) {
	fl := liveFleet(t)
	dir := t.TempDir()
	status := filepath.Join(dir, "status.json")
	if err := os.WriteFile(status, nodeAnswer(t, olderCluster(t), "spark-node-01"), 0o644); err != nil {
		t.Fatal(err)
	}
	metrics := filepath.Join(dir, "metrics.json")
	if err := os.WriteFile(metrics, readTestdata("gateway-0.2.3-metrics.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		src  fleet.Sources
		want string
	}{
		{"a status file for a node the gateway reports", fleet.Sources{StatusFiles: []string{status}}, `node "spark-node-01": a status is given by a local file and by the gateway`},
		{"a metrics file next to the gateway's metrics", fleet.Sources{Metrics: metrics}, "metrics are given by a local file and by the gateway"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := fl.Inputs(loadBase(t, tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
	if _, err := fl.Inputs(nil); err == nil {
		t.Errorf("no base: want an error")
	}
}

// TestASnapshotPlansLikeTheLiveFleet: the redacted bundle of the live
// inputs loads back to the same pool, so replaying it plans the same.
func TestASnapshotPlansLikeTheLiveFleet(t *testing.T) {
	for _, name := range []string{"newer", "older"} {
		t.Run("a "+name+" gateway", func(t *testing.T) {
			cluster := newerCluster(t)
			if name == "older" {
				cluster = olderCluster(t)
			}
			gw := newFake(t, "").
				handle("/gateway/cluster", answer(200, encode(t, cluster))).
				handle("/gateway/metrics", answer(200, readTestdata("gateway-0.2.3-metrics.json")))
			fl := fetch(t, Options{URL: gw.srv.URL, Config: testConfig(t, nil)})
			in, err := fl.Inputs(loadBase(t, fleet.Sources{}))
			if err != nil {
				t.Fatal(err)
			}
			snap, err := in.Bundle(true)
			if err != nil {
				t.Fatal(err)
			}
			again, err := fleet.ParseBundle(snap, "snapshot.json")
			if err != nil {
				t.Fatalf("the snapshot does not load: %v", err)
			}
			live, err := catalog.Build(in, catalog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			replay, err := catalog.Build(again, catalog.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(live.Pool, replay.Pool) {
				a, _ := json.MarshalIndent(live.Pool, "", " ")
				b, _ := json.MarshalIndent(replay.Pool, "", " ")
				t.Errorf("the snapshot's pool differs from the live one:\n%s", firstDiff(a, b))
			}
			if !reflect.DeepEqual(live.Notes, replay.Notes) {
				t.Errorf("notes differ:\nlive   %q\nreplay %q", live.Notes, replay.Notes)
			}
		})
	}
}

func firstDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return "line " + la[i] + "\n  vs " + lb[i]
		}
	}
	return "lengths differ"
}

func TestFetchIsDeterministic(t *testing.T) {
	var first []byte
	for i := range 3 {
		in, err := liveFleet(t).Inputs(loadBase(t, fleet.Sources{}))
		if err != nil {
			t.Fatal(err)
		}
		data, err := in.Bundle(true)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = data
		} else if !bytes.Equal(first, data) {
			t.Fatalf("fetch %d gave another snapshot", i)
		}
	}
}

// TestNoSecretLeavesTheGateway puts canaries where gateways keep secrets
// and proves none reaches what Fetch returns or a snapshot of it.
func TestNoSecretLeavesTheGateway(t *testing.T) {
	const bearer = "canary-bearer-7f3a"
	cluster := newerCluster(t)
	nodes := clusterNodes(cluster)
	n1 := nodes["spark-node-01"].(doc)
	row := n1["runtimeManager"].(doc)["runtimes"].(doc)["sparkqwen-pair-head"].(doc)
	row["healthUrl"] = "http://canary-health-host.internal:19001/health"
	row["env"] = doc{"HF_TOKEN": "canary-env-token"}
	row["args"] = []any{"--api-key", "canary-arg-key"}
	row["command"] = "vllm serve --api-key canary-command-key"
	n1["labels"].(doc)["docs"] = "see https://canary-label-host/x"
	n1["apiKey"] = "canary-node-apikey"
	nodes["spark-node-02"].(doc)["error"] = "inventory unavailable: GET http://canary-error-host/x failed"
	delete(nodes["spark-node-02"].(doc), "inventory")
	nodes["spark-node-03"] = doc{"id": "spark-node-03", "reachable": false, "error": "connect ECONNREFUSED http://canary-peer-host:8100"}
	metrics := decode(t, readTestdata("gateway-0.2.3-metrics.json"))
	recent := metrics["recent"].([]any)[0].(doc)
	recent["error"] = "upstream https://canary-upstream-host/v1 failed"
	recent["apiKey"] = "canary-metrics-key"
	recent["target"] = "http://canary-target-host:19001/v1"

	gw := newFake(t, bearer).
		handle("/gateway/cluster", answer(200, encode(t, cluster))).
		handle("/gateway/metrics", answer(200, encode(t, metrics)))
	fl := fetch(t, Options{URL: gw.srv.URL, APIKey: bearer, Config: testConfig(t, nil)})
	in, err := fl.Inputs(loadBase(t, fleet.Sources{}))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := in.Bundle(true)
	if err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	all.Write(snap)
	for _, n := range fl.Nodes {
		data, _ := json.Marshal(n.Status)
		all.Write(data)
		all.WriteString(n.Unreachable + n.Fallback)
	}
	for _, n := range fl.Nodes {
		all.Write(n.Metrics)
	}
	all.WriteString(strings.Join(fl.Problems, "\n") + strings.Join(fl.Fallbacks(), "\n"))
	if i := bytes.Index(all.Bytes(), []byte("canary")); i >= 0 {
		t.Errorf("a canary leaked: ...%s...", all.Bytes()[max(0, i-80):min(all.Len(), i+60)])
	}
	if !strings.Contains(all.String(), "[redacted]") {
		t.Errorf("nothing was redacted: the canaries were not where the test put them")
	}
}

// TestInputsTakeTheMetricsAsFetched: a metrics answer is parsed once, when
// it is fetched; the inputs get that reading (what parsing the redacted
// answer again gives, named by its source), and the fleet lets go of it.
func TestInputsTakeTheMetricsAsFetched(t *testing.T) {
	fl := liveFleet(t)
	n := fl.Nodes["spark-node-01"]
	if n.metrics == nil {
		t.Fatal("the fetch kept no parsed metrics")
	}
	in, err := fl.Inputs(loadBase(t, fleet.Sources{}))
	if err != nil {
		t.Fatal(err)
	}
	src := fleet.Source{File: fl.Source, Path: "its own /gateway/metrics"}
	want, err := lloom.ParseMetrics(n.Metrics, src.String())
	if err != nil {
		t.Fatal(err)
	}
	if got := in.Nodes["spark-node-01"].Metrics; !reflect.DeepEqual(got, want) {
		t.Errorf("the inputs' metrics are not the answer's reading:\n%+v\nwant\n%+v", got, want)
	}
	if n.metrics != nil {
		t.Error("the fleet still holds the parsed metrics")
	}
	if again, err := n.ParsedMetrics("x"); err != nil || again.File != "x" || !reflect.DeepEqual(again.Recent, want.Recent) {
		t.Errorf("ParsedMetrics after Inputs: %v", err)
	}
}
