package catalog

import (
	"testing"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/model"
)

// currentOf is a lane's status in what runs now, and whether it counts as
// running; "" when the pool has no current entry for it.
func currentOf(p *model.Pool, variant string) (string, bool) {
	for _, l := range p.Current.Lanes {
		if l.Variant == variant {
			return l.Status, true
		}
	}
	for _, l := range p.Current.NotRunning {
		if l.Variant == variant {
			return l.Status, false
		}
	}
	return "", false
}

func TestWhatRunsNowFollowsTheGatewaysOwnReadingOfEachRuntime(t *testing.T) {
	type lane struct {
		status  string
		running bool
	}
	tests := []struct {
		name  string
		state string // capture folder, "" for the config alone
		want  map[string]lane
	}{
		{
			name: "with the config alone every lane is declared and counts as running",
			want: map[string]lane{
				pairLane: {model.LaneDeclared, true}, "qwen38-27b-nvfp4": {model.LaneDeclared, true},
				"qwen3-embedding-4b": {model.LaneDeclared, true}, "gemma-3-12b": {model.LaneDeclared, true},
			},
		},
		{
			name:  "fresh gateways: healthy external lanes run, an external lane with no health check does not, an idle managed auto lane runs on demand",
			state: "fresh",
			want: map[string]lane{
				pairLane: {"external, healthy", true}, "qwen38-27b-nvfp4": {"external, healthy", true},
				"qwen3-embedding-4b": {"idle", false}, "gemma-3-12b": {"idle, loaded on demand", true},
			},
		},
		{
			name:  "after serving, the managed lane a request started runs healthy",
			state: "served",
			want: map[string]lane{
				pairLane: {"external, healthy", true}, "gemma-3-12b": {"running, healthy", true}, "qwen3-embedding-4b": {"idle", false},
			},
		},
		{
			name:  "upstreams gone: running but unhealthy lanes do not run, a managed process failing its health is still starting",
			state: "dead",
			want: map[string]lane{
				pairLane: {"running, unhealthy", false}, "qwen38-27b-nvfp4": {"running, unhealthy", false},
				"gemma-3-12b": {"starting, unhealthy", true},
			},
		},
		{
			name:  "restarted with the upstreams gone: idle external lanes do not run",
			state: "dead-restarted",
			want: map[string]lane{
				pairLane: {"idle", false}, "qwen38-27b-nvfp4": {"idle", false}, "gemma-3-12b": {"idle, loaded on demand", true},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := fleet.Sources{Config: stateDir + "config.json"}
			if tc.state != "" {
				src.Cluster = stateDir + tc.state + "/cluster.json"
			}
			in, err := fleet.Load(src)
			if err != nil {
				t.Fatal(err)
			}
			p := build(t, in, Options{}).Pool
			for id, want := range tc.want {
				status, running := currentOf(p, id)
				if status != want.status || running != want.running {
					t.Errorf("%s: status %q running %v, want %q running %v", id, status, running, want.status, want.running)
				}
			}
		})
	}
}

func TestARouteIsServedNowOnlyByALaneThatRuns(t *testing.T) {
	in, err := fleet.Load(fleet.Sources{Config: stateDir + "config.json", Cluster: stateDir + "dead/cluster.json"})
	if err != nil {
		t.Fatal(err)
	}
	p := build(t, in, Options{}).Pool
	for _, r := range p.Current.Routes {
		if r.Alias == "q38fn" && r.Primary == "qwen3.8-flash-next" {
			t.Errorf("q38fn is served now by the dead pair: %+v", r)
		}
	}
}
