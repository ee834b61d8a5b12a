package cli

import (
	"encoding/json"
	"strings"
	"testing"
)

// fed023 holds real answers of LLooM 0.2.3 gateways where spark-node-01
// has federated proxy models for spark-node-03's runtimes.
const fed023 = "../catalog/testdata/lloom-0.2.3-federated/"

func TestAPlanRoutesThroughAFederatedModelOnTheLaneItForwardsToAndNeverStopsIt(t *testing.T) {
	cases := []struct {
		name string
		args []string
		// proxy is the model q27 asks for; lane, when set, the lane the
		// plan must route it through (empty: the lane may not fit).
		proxy, lane string
		// sources must all route through lane.
		sources []string
	}{
		{
			name:  "with the config's Spark memory the alias rides the 27B lane through the namespaced proxy",
			args:  []string{"--config", fed023 + "config-namespaced.json", "--metrics", fed023 + "namespaced/metrics-01.json"},
			proxy: "spark-node-03/qwen38-27b-nvfp4", lane: "qwen38-27b-nvfp4",
			sources: []string{"q27", "model:spark-node-03/qwen38-27b-nvfp4"},
		},
		{
			name:    "a gateway forwarding to itself asks for one lane by both names",
			args:    []string{"--config", fed023 + "config-namespaced.json", "--metrics", fed023 + "self/metrics-03.json"},
			proxy:   "spark-node-03/qwen38-27b-nvfp4",
			lane:    "qwen38-27b-nvfp4",
			sources: []string{"model:spark-node-03/qwen38-27b-nvfp4", "model:qwen38-27b-nvfp4"},
		},
		{
			name:  "with the capture host's memory the 27B lane does not fit and nothing routes to it",
			args:  []string{"--config", fed023 + "config-namespaced.json", "--metrics", fed023 + "namespaced/metrics-01.json", "--cluster", fed023 + "namespaced/cluster-01.json"},
			proxy: "spark-node-03/qwen38-27b-nvfp4",
		},
		{
			name:  "with the config's Spark memory the alias rides the 27B lane through the merged-id proxy",
			args:  []string{"--config", fed023 + "config-bare.json", "--metrics", fed023 + "bare/metrics-01.json"},
			proxy: "qwen38-27b-nvfp4", lane: "qwen38-27b-nvfp4",
			sources: []string{"q27", "model:qwen38-27b-nvfp4"},
		},
		{
			name:  "with the capture host's memory the merged-id proxy's lane does not fit and nothing routes to it",
			args:  []string{"--config", fed023 + "config-bare.json", "--metrics", fed023 + "bare/metrics-01.json", "--cluster", fed023 + "bare/cluster-01.json"},
			proxy: "qwen38-27b-nvfp4",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, out, errOut := run(t, append([]string{"plan", "--format", "json", "--quiet", "--time-limit", "3s"}, tc.args...)...)
			var doc struct {
				Nodes []struct {
					ID    string `json:"id"`
					Lanes []struct {
						Variant string `json:"variant"`
					} `json:"lanes"`
				} `json:"nodes"`
				Routes []struct {
					Source  string `json:"source"`
					Model   string `json:"model"`
					Variant string `json:"variant"`
				} `json:"routes"`
				Changes []struct {
					Kind    string `json:"kind"`
					Subject string `json:"subject"`
				} `json:"changes"`
			}
			if err := json.Unmarshal([]byte(out), &doc); err != nil {
				t.Fatalf("plan JSON: %v\n%s\n%s", err, out, errOut)
			}
			stopped := map[string]bool{}
			for _, c := range doc.Changes {
				if strings.Contains(c.Kind, "stop") {
					stopped[c.Subject] = true
				}
			}
			for _, r := range doc.Routes {
				if r.Variant != "" && stopped[r.Variant] {
					t.Errorf("%s routes through %s, which the plan stops", r.Source, r.Variant)
				}
				if strings.HasPrefix(r.Variant, "federated:") {
					t.Errorf("%s routes through %s, a lane of its own for a runtime the config declares", r.Source, r.Variant)
				}
				if r.Source == "q27" && tc.lane != "" && (r.Model != tc.proxy || r.Variant != tc.lane) {
					t.Errorf("q27 -> %s on %s, want %s on %s", r.Model, r.Variant, tc.proxy, tc.lane)
				}
			}
			for _, src := range tc.sources {
				found := false
				for _, r := range doc.Routes {
					if r.Source == src {
						found = true
						if r.Variant != tc.lane {
							t.Errorf("%s routes through %q, want %s", src, r.Variant, tc.lane)
						}
					}
				}
				if !found {
					t.Errorf("no route for %s", src)
				}
			}
			for _, n := range doc.Nodes {
				for _, l := range n.Lanes {
					if strings.HasPrefix(l.Variant, "federated:") {
						t.Errorf("the plan lists %s on %s as a lane", l.Variant, n.ID)
					}
				}
			}
		})
	}
}

func TestExplainAndCatalogShowAFederatedModelAsANameOfItsLane(t *testing.T) {
	inputs := []string{"--config", fed023 + "config-namespaced.json", "--metrics", fed023 + "namespaced/metrics-01.json"}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{
			name: "explain of the alias says the proxy it is served by is a name of the 27B lane",
			args: []string{"explain", "q27"},
			want: "spark-node-03/qwen38-27b-nvfp4 is a federated name of qwen38-27b-nvfp4: the gateway forwards it to spark-node-03's gateway, which serves it on that lane.",
		},
		{
			name: "explain of the alias as JSON names the peer the route goes through",
			args: []string{"explain", "q27", "--format", "json"},
			want: `"through": "spark-node-03"`,
		},
		{
			name: "explain of the lane lists the proxy among its names",
			args: []string{"explain", "qwen38-27b-nvfp4", "--node", "spark-node-03"},
			want: "It is also asked for as spark-node-03/qwen38-27b-nvfp4, federated: through spark-node-03's gateway.",
		},
		{
			name: "the catalog lists the proxy among the lane's models",
			args: []string{"catalog"},
			want: "qwen38-27b-nvfp4  [unmanaged]  serves qwen38-27b-nvfp4, spark-node-03/qwen38-27b-nvfp4 (federated, through spark-node-03's gateway)",
		},
		{
			name: "the catalog as JSON keeps the proxy with its peer on the lane",
			args: []string{"catalog", "--format", "json"},
			want: `"forwarded": {
          "spark-node-03/qwen3.8-flash-next": "spark-node-03"
        }`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, append(tc.args, inputs...)...)
			if code != ExitOK || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d; want %q in:\n%s\n%s", code, tc.want, out, errOut)
			}
		})
	}
}
