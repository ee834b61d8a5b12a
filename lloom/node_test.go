package lloom

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseNodeStatusReadsTheRealNodeAnswers(t *testing.T) {
	for _, file := range []string{"node.json", "node-memoryUsage.json", "node-inventory-older.json"} {
		t.Run(file, func(t *testing.T) {
			n, err := LoadNodeStatus(gateway + file)
			if err != nil {
				t.Fatal(err)
			}
			mem := n.Telemetry.Memory
			row := n.RuntimeManager.Runtimes["sparkqwen-pair-head"]
			tests := []struct {
				name string
				got  any
				want any
			}{
				{"the node names itself", n.ID, "spark-node-01"},
				{"it is local and reachable", n.Local && n.Reachable, true},
				{"total memory is in bytes", deref(mem.TotalBytes), int64(25276059648)},
				{"available memory is in bytes", deref(mem.AvailableBytes), int64(24770904064)},
				{"the memory source is named", mem.Source, "linux-memavailable"},
				{"a host without NVIDIA GPUs has no GPU telemetry", n.Telemetry.GPU, (*GPUTelemetry)(nil)},
				{"the sample time is kept", n.Telemetry.SampledAt, "2026-11-29T14:08:03.929Z"},
				{"the profile is embedded", n.Profile.ID, "linux-x64-23_5gb"},
				{"configured resources are echoed", deref(n.Resources.MemoryGb), 128.0},
				{"the system is described", n.System.Arch, "x64"},
				{"the node reports four models", len(n.Models), 4},
				{"the cloud model is external", n.Models[0].External(), true},
				{"only the local runtime row is reported", len(n.RuntimeManager.Runtimes), 1},
				{"the row is healthy", deref(row.Healthy), true},
				{"the row is external", row.Status, "external"},
				{"the row says where it runs", row.Node, "spark-node-01"},
				{"the row is loaded", row.Loaded(), true},
				{"the row's healthUrl is kept on read", row.HealthURL, "http://127.0.0.1:19001/health"},
				{"an older gateway sends no inventory", len(n.Inventory), 0},
				{"the row has no memory usage in 0.2.3", row.MemoryUsage, (*MemoryUsage)(nil)},
			}
			for _, tc := range tests {
				t.Run(tc.name, func(t *testing.T) { check(t, tc.name, tc.got, tc.want) })
			}
		})
	}
}

func TestParseNodeStatusAcceptsTheBareNodeObject(t *testing.T) {
	var env struct {
		Node json.RawMessage `json:"node"`
	}
	if err := json.Unmarshal(readFile(t, gateway+"node.json"), &env); err != nil {
		t.Fatal(err)
	}
	bare, err := ParseNodeStatus(env.Node, "bare.json")
	if err != nil {
		t.Fatal(err)
	}
	wrapped, err := LoadNodeStatus(gateway + "node.json")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(bare, wrapped) {
		t.Error("the bare node and the envelope decode differently")
	}
}

func TestParseNodeStatusKeepsInventoryRaw(t *testing.T) {
	inv := `{"computeArchs":["sm_121"],"modelRoots":[{"path":"/models","freeGb":900}]}`
	tests := []struct {
		name string
		doc  string
	}{
		{"an inventory inside the node", `{"ok": true, "node": {"id": "n", "inventory": ` + inv + `}}`},
		{"an inventory next to the node", `{"ok": true, "node": {"id": "n"}, "inventory": ` + inv + `}`},
		{"an inventory in a bare node", `{"id": "n", "inventory": ` + inv + `}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := ParseNodeStatus([]byte(tc.doc), "n.json")
			if err != nil {
				t.Fatal(err)
			}
			check(t, "inventory", string(n.Inventory), inv)
		})
	}
}

func TestParseNodeStatusReadsRowsOfNewerGateways(t *testing.T) {
	doc := `{"ok": true, "node": {"id": "spark-node-03", "reachable": true, "runtimeManager": {"runtimes": {
		"qwen-image-diffusers": {"enabled": true, "preferredWarm": true, "management": "managed", "healthy": null, "status": "running",
			"memoryUsage": {"residentBytes": 75161927680, "source": "process-rss", "sampledAt": "t", "sharedRuntimeIds": ["a", "b"], "loadedModelIds": null}},
		"pair": {"remote": true, "distributed": true, "status": "external",
			"members": [{"node": "spark-node-01", "runtime": "head", "role": "head", "order": 20, "status": "running", "healthy": true}],
			"resourcesByNode": {"spark-node-01": {"memoryGb": 108, "gpuMemoryGb": 0}}}}}}}`
	n, err := ParseNodeStatus([]byte(doc), "n.json")
	if err != nil {
		t.Fatal(err)
	}
	img := n.RuntimeManager.Runtimes["qwen-image-diffusers"]
	check(t, "residentBytes", deref(img.MemoryUsage.ResidentBytes), int64(75161927680))
	check(t, "sharedRuntimeIds", img.MemoryUsage.SharedRuntimeIDs, []string{"a", "b"})
	check(t, "a null healthy is unknown", img.Healthy, (*bool)(nil))
	check(t, "running counts as loaded", img.Loaded(), true)
	pair := n.RuntimeManager.Runtimes["pair"]
	check(t, "remote", pair.Remote, true)
	check(t, "member order", deref(pair.Members[0].Order), 20)
	check(t, "resourcesByNode", pair.ResourcesByNode, map[string]NodeMemory{"spark-node-01": {MemoryGb: 108}})
}

func TestParseNodeStatusTurnsErrorEnvelopesIntoGatewayErrors(t *testing.T) {
	tests := []struct {
		file, code, typ, msg string
	}{
		{"node-noauth.json", "unauthorized", "authentication_error", "missing or invalid admin authorization token"},
		{"runtimes.json", "not_found", "invalid_request_error", "unknown route: /gateway/runtimes"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			_, err := LoadNodeStatus(gateway + tc.file)
			var ge *GatewayError
			if !errors.As(err, &ge) {
				t.Fatalf("error %T (%v) is not a *GatewayError", err, err)
			}
			check(t, "code", ge.Code, tc.code)
			check(t, "type", ge.Type, tc.typ)
			check(t, "message", ge.Message, tc.msg)
			if !strings.HasPrefix(err.Error(), gateway+tc.file+": gateway error "+tc.code) {
				t.Errorf("Error() = %s", err)
			}
		})
	}
	if _, err := ParseNodeStatus([]byte(`{"ok": true}`), "x.json"); err == nil {
		t.Error("a document without a node should fail")
	}
}

func TestParseClusterStatusReadsTheRealClusterAnswers(t *testing.T) {
	for _, file := range []string{"cluster.json", "cluster-inventory-older.json"} {
		t.Run(file, func(t *testing.T) {
			c, err := LoadClusterStatus(gateway + file)
			if err != nil {
				t.Fatal(err)
			}
			check(t, "enabled", c.Enabled, true)
			check(t, "id", c.ID, "spark-cluster")
			check(t, "nodeId", c.NodeID, "spark-node-01")
			check(t, "leaderNode", c.LeaderNode, "spark-node-01")
			check(t, "nodes", slices.Sorted(maps.Keys(c.Nodes)), []string{"spark-node-01", "spark-node-02", "spark-node-03"})
			check(t, "node 2 runs the pair worker", slices.Sorted(maps.Keys(c.Nodes["spark-node-02"].RuntimeManager.Runtimes)), []string{"sparkqwen-pair-worker"})
			check(t, "node 3 runs two lanes", slices.Sorted(maps.Keys(c.Nodes["spark-node-03"].RuntimeManager.Runtimes)), []string{"qwen3-embedding-4b", "qwen38-27b-nvfp4"})
			check(t, "remote rows are healthy", deref(c.Nodes["spark-node-03"].RuntimeManager.Runtimes["qwen38-27b-nvfp4"].Healthy), true)
			check(t, "every node sends telemetry", deref(c.Nodes["spark-node-02"].Telemetry.Memory.TotalBytes), int64(25276059648))
		})
	}
}

func TestParseClusterStatusReadsUnreachableNodes(t *testing.T) {
	doc := `{"ok": true, "cluster": {"enabled": true, "nodeId": "a", "leaderNode": "a", "runtimeScopes": [], "nodes": {
		"b": {"id": "b", "reachable": false, "error": "connect ECONNREFUSED http://10.0.0.2:8100", "telemetry": null,
			"runtimeManager": {"runtimes": {}}, "identity": {"configuredId": "b", "claimedId": null, "verified": false, "mismatch": false},
			"requiredByRuntime": ["pair"], "required": true, "availabilityState": "unavailable"}}}}`
	c, err := ParseClusterStatus([]byte(doc), "c.json")
	if err != nil {
		t.Fatal(err)
	}
	b := c.Nodes["b"]
	check(t, "reachable", b.Reachable, false)
	check(t, "error", b.Error, Message("connect ECONNREFUSED http://10.0.0.2:8100"))
	check(t, "telemetry", b.Telemetry, (*Telemetry)(nil))
	check(t, "requiredByRuntime", b.RequiredByRuntime, []string{"pair"})
	check(t, "availabilityState", b.AvailabilityState, "unavailable")
	check(t, "identity", *b.Identity, NodeIdentity{ConfiguredID: "b"})

	bare, err := ParseClusterStatus([]byte(`{"enabled": false, "nodes": {}}`), "c.json")
	if err != nil || bare.Enabled {
		t.Errorf("bare cluster = %+v, %v", bare, err)
	}
	if _, err := ParseClusterStatus(readFile(t, gateway+"node.json"), "node.json"); err == nil {
		t.Error("a node answer is not a cluster answer")
	}
	var ge *GatewayError
	if _, err := ParseClusterStatus(readFile(t, gateway+"node-noauth.json"), "x"); !errors.As(err, &ge) {
		t.Errorf("error %v is not a *GatewayError", err)
	}
}

// The runtime-state captures: the same three gateways read fresh, after
// serving, with the pair's upstream gone and a managed runtime failing its
// health check, and restarted with the upstream still gone.
const runtimeState = "testdata/lloom-gateway-0.2.3-runtime-state/"

func TestARuntimeRowServesOnlyWhenItsGatewayReadsItHealthyOrStarting(t *testing.T) {
	tests := []struct {
		name, state, node, runtime string
		reading                    string
		serves, healthy            bool
	}{
		{"an external runtime whose health check passes serves", "fresh", "spark-node-01", "sparkqwen-pair-head", "external, healthy", true, true},
		{"an external runtime with no health check is idle, and 0.2.3 refuses its requests", "served", "spark-node-03", "qwen3-embedding-4b", "idle", false, false},
		{"a managed runtime nothing asked for is idle", "fresh", "spark-node-02", "gemma-3-12b", "idle", false, false},
		{"a managed runtime started by a request serves", "served", "spark-node-02", "gemma-3-12b", "running, healthy", true, true},
		{"a served external runtime whose upstream is gone stays running but unhealthy, and does not serve", "dead", "spark-node-02", "sparkqwen-pair-worker", "running, unhealthy", false, false},
		{"a managed process failing its health check is starting: it holds its memory", "dead", "spark-node-02", "gemma-3-12b", "starting, unhealthy", true, false},
		{"after a restart a runtime whose upstream is gone is idle", "dead-restarted", "spark-node-01", "sparkqwen-pair-head", "idle", false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := LoadClusterStatus(runtimeState + tc.state + "/cluster.json")
			if err != nil {
				t.Fatal(err)
			}
			row, ok := c.Nodes[tc.node].RuntimeManager.Runtimes[tc.runtime]
			if !ok {
				t.Fatalf("no row %s on %s", tc.runtime, tc.node)
			}
			check(t, "reading", row.Reading(), tc.reading)
			check(t, "serves", row.Serves(), tc.serves)
			check(t, "shows healthy", row.ShowsHealthy(), tc.healthy)
		})
	}
}

func TestARowWithoutHealthIsTakenAtItsStatusWord(t *testing.T) {
	tests := []struct {
		name   string
		row    RuntimeStatus
		serves bool
		read   string
	}{
		{"running with no health field serves", RuntimeStatus{Status: "running"}, true, "running"},
		{"stopped with no health field does not", RuntimeStatus{Status: "stopped"}, false, "stopped"},
		{"a row with health and no status word is read by its health", RuntimeStatus{Healthy: new(bool)}, false, "unhealthy"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check(t, "serves", tc.row.Serves(), tc.serves)
			check(t, "reading", tc.row.Reading(), tc.read)
		})
	}
}

func TestAPeersErrorIsWordedAsPoolsolveSaysIt(t *testing.T) {
	cases := []struct{ name, msg, want string }{
		{"a peer the gateway gave up on after its 5 s", "This operation was aborted", "the gateway got no answer from it within its 5s"},
		{"a peer the gateway could not connect to", "fetch failed", "the gateway could not connect to it"},
		{"a peer with no error given", "", "the gateway reports it unreachable"},
		{"another message is kept", "cluster node spark-node-02 has no endpoint", "cluster node spark-node-02 has no endpoint"},
		{"a reason already worded is kept", "the gateway could not connect to it", "the gateway could not connect to it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := PeerError(tc.msg); got != tc.want {
				t.Errorf("PeerError(%q) = %q, want %q", tc.msg, got, tc.want)
			}
		})
	}
}
