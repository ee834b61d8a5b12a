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
	}{
		{
			name:  "with the config's Spark memory the alias rides the 27B lane through the namespaced proxy",
			args:  []string{"--config", fed023 + "config-namespaced.json", "--metrics", fed023 + "namespaced/metrics-01.json"},
			proxy: "spark-node-03/qwen38-27b-nvfp4", lane: "qwen38-27b-nvfp4",
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
