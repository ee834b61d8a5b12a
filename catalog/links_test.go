package catalog

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

const (
	gw023     = "../lloom/testdata/lloom-gateway-0.2.3/"
	discover  = "../lloom/testdata/lloom-0.2.3-cluster-discover/cluster.json"
	pairLane  = "sparkqwen-pair"
	pairNodes = "spark-node-01+spark-node-02"
	stateDir  = "../lloom/testdata/lloom-gateway-0.2.3-runtime-state/"
)

// directConfig is the captured 0.2.3 config with the cluster block that
// `lloom cluster discover` writes for an NVIDIA Sync pair (topology
// direct, fabric backendHost, no discovery.links), and spark-node-03
// added by hand without fabric fields, as the captured runtimes need it.
func directConfig(t *testing.T) string {
	t.Helper()
	var cfg map[string]any
	readJSON(t, gw023+"config.json", &cfg)
	var cluster map[string]any
	readJSON(t, discover, &cluster)
	nodes := cluster["nodes"].(map[string]any)
	nodes["spark-node-03"] = map[string]any{"endpoint": "http://127.0.0.1:18103", "resources": map[string]any{"memoryGb": 128}}
	cfg["cluster"] = cluster
	return writeJSON(t, "config.json", cfg)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatal(err)
	}
}

func writeJSON(t *testing.T, name string, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/" + name
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// stoppedCluster is the captured cluster answer with the pair's member
// rows stopped.
func stoppedCluster(t *testing.T) string {
	t.Helper()
	var doc map[string]any
	readJSON(t, gw023+"cluster.json", &doc)
	nodes := doc["cluster"].(map[string]any)["nodes"].(map[string]any)
	for id, member := range map[string]string{"spark-node-01": "sparkqwen-pair-head", "spark-node-02": "sparkqwen-pair-worker"} {
		row := nodes[id].(map[string]any)["runtimeManager"].(map[string]any)["runtimes"].(map[string]any)[member].(map[string]any)
		row["status"], row["healthy"] = "stopped", false
	}
	return writeJSON(t, "cluster.json", doc)
}

func linkSource(p *model.Pool, a, b string) string {
	for _, l := range p.Links {
		if l.A == a && l.B == b {
			return l.Source
		}
	}
	return ""
}

func TestLinksComeFromEverySourceOfEvidence(t *testing.T) {
	tests := []struct {
		name    string
		src     func(t *testing.T) fleet.Sources
		link    string // source of the 01-02 link, "" for none
		link13  string
		note    string
		planned bool // the pair's nodes are a linked clique
	}{
		{
			name: "a direct topology links the pair whose fabric addresses share a subnet, not the node added by hand",
			src: func(t *testing.T) fleet.Sources {
				return fleet.Sources{Config: directConfig(t), Cluster: gw023 + "cluster.json"}
			},
			link: "config topology direct", planned: true,
		},
		{
			name: "a TP pair running across two nodes shows them linked",
			src: func(t *testing.T) fleet.Sources {
				return fleet.Sources{Config: gw023 + "config.json", Cluster: gw023 + "cluster.json"}
			},
			link: "running lane " + pairLane, planned: true,
		},
		{
			name: "a declared pair with no status is no evidence of a link, and the note names what is missing",
			src: func(t *testing.T) fleet.Sources {
				return fleet.Sources{Config: gw023 + "config.json"}
			},
			note: pairLane + " spans " + pairNodes + ", but nothing shows them all linked (missing: no cluster.discovery.links entry joins them; cluster.topology is not \"direct\"; no node inventory (a gateway with ?inventory=1 or poolsolve serve reports fabric links); no status row shows the lane healthy on all of them",
		},
		{
			name: "a pair whose upstream is gone, running but unhealthy on both nodes, is no evidence of a link",
			src: func(t *testing.T) fleet.Sources {
				return fleet.Sources{Config: gw023 + "config.json", Cluster: stateDir + "dead/cluster.json"}
			},
			note: pairLane + " spans " + pairNodes + ", but nothing shows them all linked",
		},
		{
			name: "a pair the captured gateways show healthy on both nodes is a link",
			src: func(t *testing.T) fleet.Sources {
				return fleet.Sources{Config: gw023 + "config.json", Cluster: stateDir + "fresh/cluster.json"}
			},
			link: "running lane " + pairLane, planned: true,
		},
		{
			name: "a stopped pair with no evidence is not linked, and the note names what is missing",
			src: func(t *testing.T) fleet.Sources {
				return fleet.Sources{Config: gw023 + "config.json", Cluster: stoppedCluster(t)}
			},
			note: pairLane + " spans " + pairNodes + ", but nothing shows them all linked (missing: no cluster.discovery.links entry joins them; cluster.topology is not \"direct\"; no node inventory (a gateway with ?inventory=1 or poolsolve serve reports fabric links); no status row shows the lane healthy on all of them (a lane the config declares is no evidence))",
		},
		{
			name: "a direct topology links even a stopped pair",
			src: func(t *testing.T) fleet.Sources {
				return fleet.Sources{Config: directConfig(t), Cluster: stoppedCluster(t)}
			},
			link: "config topology direct", planned: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in, err := fleet.Load(tc.src(t))
			if err != nil {
				t.Fatal(err)
			}
			c := build(t, in, Options{})
			if got := linkSource(c.Pool, "spark-node-01", "spark-node-02"); got != tc.link {
				t.Errorf("01-02 link from %q, want %q; links %+v", got, tc.link, c.Pool.Links)
			}
			if got := linkSource(c.Pool, "spark-node-01", "spark-node-03") + linkSource(c.Pool, "spark-node-02", "spark-node-03"); got != "" {
				t.Errorf("spark-node-03 is linked (%q), but nothing shows it", got)
			}
			if tc.note != "" && !containsNote(c, tc.note) {
				t.Errorf("no note %q in %q", tc.note, c.Notes)
			}
			// The capture's telemetry is a 23.5 GiB host, so only the link
			// rule is asked here, not memory.
			v := variant(t, c.Pool, pairLane)
			if ok := c.Pool.Index().Clique(v.Placements[0].Nodes); ok != tc.planned {
				t.Errorf("pair is a linked clique = %v, want %v", ok, tc.planned)
			}
		})
	}
}

func TestTheDiscoverSampleIsTheShapeLLooMWrites(t *testing.T) {
	data, err := os.ReadFile(discover)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := lloom.ParseConfig(append(append([]byte(`{"cluster":`), data...), '}'), "cluster.json")
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Cluster
	if c.Provider != "nvidia-sync" || c.Topology != "direct" || c.Discovery != nil || !strings.HasPrefix(c.Nodes["spark-node-02"].BackendHost, "10.100.") {
		t.Errorf("cluster = %+v", c)
	}
}
