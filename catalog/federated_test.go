package catalog

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/model"
)

// fed023 holds real answers of LLooM 0.2.3 gateways where spark-node-01
// has federated proxy models for spark-node-03's runtimes (README.md).
const fed023 = "testdata/lloom-0.2.3-federated/"

func TestAFederatedProxyIsANameOfTheLaneItForwardsTo(t *testing.T) {
	cases := []struct {
		name    string
		config  string
		capture string
		// proxy is the federated model id; lane the runtime it forwards to.
		proxy, lane string
		// names are every model the lane serves.
		names []string
		// q27 is the alias the capture sent through the proxy.
		q27 bool
	}{
		{
			name:    "the namespaced proxy that cluster add-node writes is the 27B lane",
			config:  "config-namespaced.json",
			capture: "namespaced/",
			proxy:   "spark-node-03/qwen38-27b-nvfp4", lane: "qwen38-27b-nvfp4",
			names: []string{"qwen38-27b-nvfp4", "spark-node-03/qwen38-27b-nvfp4"},
			q27:   true,
		},
		{
			name:    "a proxy to a member of a distributed runtime is the distributed lane",
			config:  "config-namespaced.json",
			capture: "namespaced/",
			proxy:   "spark-node-03/qwen3.8-flash-next", lane: "sparkqwen-pair",
			names: []string{"qwen3.8-flash-next", "spark-node-03/qwen3.8-flash-next"},
		},
		{
			name:    "a proxy with namespace false merges into the model of the same id and its lane",
			config:  "config-bare.json",
			capture: "bare/",
			proxy:   "qwen38-27b-nvfp4", lane: "qwen38-27b-nvfp4",
			names: []string{"qwen38-27b-nvfp4"},
			q27:   true,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, err := fleet.Load(fleet.Sources{Config: fed023 + tc.config, Metrics: fed023 + tc.capture + "metrics-01.json"})
			if err != nil {
				t.Fatal(err)
			}
			p := build(t, in, Options{}).Pool
			for _, v := range p.Variants {
				if v.Kind == model.Federated || strings.HasPrefix(v.ID, "federated:") {
					t.Errorf("lane %s of its own for a runtime the config declares", v.ID)
				}
			}
			v := variant(t, p, tc.lane)
			if !slices.Equal(v.Models, tc.names) {
				t.Errorf("%s serves %v, want %v", tc.lane, v.Models, tc.names)
			}
			if got := v.Forwarded[tc.proxy]; got != "spark-node-03" {
				t.Errorf("%s forwarded = %v, want %s through spark-node-03", tc.lane, v.Forwarded, tc.proxy)
			}
			for _, m := range p.Models {
				if m.ID == tc.proxy && !slices.Equal(m.Variants, []string{tc.lane}) {
					t.Errorf("%s is served by %v, want only %s", m.ID, m.Variants, tc.lane)
				}
			}
			// One lane, one memory draw: spark-node-03 holds the 27B
			// (40 GiB) and the embedder (12 GiB), nothing for the proxy.
			var draws float64
			for _, x := range p.Variants {
				for _, d := range x.Placements[0].Draws {
					if d.Node == "spark-node-03" {
						draws += d.Gb
					}
				}
			}
			if draws != 52 {
				t.Errorf("spark-node-03 draws %v GiB, want 52", draws)
			}
			if a := alias(t, p, "q27"); tc.q27 && !slices.Equal(a.Members, []string{tc.proxy}) {
				t.Errorf("q27 members = %v, want %s", a.Members, tc.proxy)
			}
		})
	}
}

func TestAFederatedTargetTheConfigDoesNotDeclareStaysTheOtherGatewaysLane(t *testing.T) {
	cases := []struct {
		name string
		edit func(in *fleet.Inputs)
		want []string
	}{
		{
			name: "the Mac's own runtimes, unknown to this config, are federated lanes",
			want: []string{"federated:macbook-local/mtplx-qwen36-27b-speed", "federated:macbook-local/ollama-qwen3-embedding-4b"},
		},
		{
			name: "a proxy naming a runtime this config declares joins that runtime's lane",
			edit: func(in *fleet.Inputs) {
				n := in.Config.Cluster.Nodes["macbook-local"]
				n.Proxy.Models[0].RemoteRuntime = "qwen3-embedding-4b"
			},
			want: []string{"federated:macbook-local/mtplx-qwen36-27b-speed"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := loadBundle(t, "../examples/hetero-fleet.json")
			if tc.edit != nil {
				tc.edit(in)
			}
			p := build(t, in, Options{}).Pool
			var fed []string
			for _, v := range p.Variants {
				if v.Kind == model.Federated {
					fed = append(fed, v.ID)
				}
			}
			if !slices.Equal(fed, tc.want) {
				t.Errorf("federated lanes = %v, want %v", fed, tc.want)
			}
		})
	}
}

func TestAProxyToARuntimeThatIsNotPlannedHasNoLane(t *testing.T) {
	in, err := fleet.Load(fleet.Sources{Config: fed023 + "config-namespaced.json"})
	if err != nil {
		t.Fatal(err)
	}
	rt := in.Config.Runtimes["qwen38-27b-nvfp4"]
	rt.Enabled = false
	in.Config.Runtimes["qwen38-27b-nvfp4"] = rt
	c := build(t, in, Options{})
	for _, m := range c.Pool.Models {
		if m.ID == "spark-node-03/qwen38-27b-nvfp4" && len(m.Variants) > 0 {
			t.Errorf("the proxy to a disabled runtime is served by %v", m.Variants)
		}
	}
	for _, v := range c.Pool.Variants {
		if slices.Contains(slices.Collect(maps.Keys(v.Forwarded)), "spark-node-03/qwen38-27b-nvfp4") || strings.Contains(v.ID, "qwen38-27b-nvfp4") {
			t.Errorf("lane %s for a disabled runtime", v.ID)
		}
	}
	if !containsNote(c, "runtime qwen38-27b-nvfp4 is not enabled") {
		t.Errorf("notes = %q", c.Notes)
	}
}
