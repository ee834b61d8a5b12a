package cli

import (
	"encoding/json"
	"github.com/poolsolve/poolsolve/internal/testnet"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// hungPeerFleet is the example fleet behind a LLooM 0.2.3 leader whose
// peer spark-node-02 hangs: the leader holds its cluster answer back 5 s
// for it, as 0.2.3 does, then reports it with 0.2.3's words; its own node
// answers at once.
func hungPeerFleet(t *testing.T) *liveFleetFiles {
	t.Helper()
	hung := testnet.Hung(t)
	var local, peer []byte
	// spark-node-03 answers its own status when asked directly.
	node3 := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.URL.Path != "/gateway/node" {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":{"message":"unknown route: ` + r.URL.Path + `","type":"invalid_request_error","code":"not_found"}}`))
			return
		}
		w.Write(peer)
	}))
	t.Cleanup(node3.Close)
	f := newLiveFleet(t, "test-key", olderGateway, func(cfg, cluster, _ map[string]any) {
		cn := cfg["cluster"].(map[string]any)["nodes"].(map[string]any)
		cn["spark-node-02"].(map[string]any)["endpoint"] = hung
		cn["spark-node-03"].(map[string]any)["endpoint"] = node3.URL
		nodes := cluster["cluster"].(map[string]any)["nodes"].(map[string]any)
		local, _ = json.Marshal(map[string]any{"ok": true, "node": nodes["spark-node-01"]})
		peer, _ = json.Marshal(map[string]any{"ok": true, "node": nodes["spark-node-03"]})
		nodes["spark-node-02"] = map[string]any{"id": "spark-node-02", "name": "spark-node-02", "local": false, "reachable": false,
			"telemetry": nil, "runtimeManager": map[string]any{"runtimes": map[string]any{}}, "error": "This operation was aborted"}
	})
	inner := f.gw.Config.Handler
	leader := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gateway/cluster":
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
				return
			}
		case "/gateway/node":
			if r.Header.Get("Authorization") == "Bearer test-key" {
				w.Header().Set("Content-Type", "application/json; charset=utf-8")
				w.Write(local)
				return
			}
		}
		inner.ServeHTTP(w, r)
	}))
	t.Cleanup(leader.Close)
	f.gw = leader
	return f
}

type faultPlan struct {
	Fallbacks []string `json:"fallbacks"`
	Notes     []string `json:"notes"`
	Levels    []struct {
		Status string `json:"status"`
	} `json:"levels"`
	Unknown []struct {
		Variant string `json:"variant"`
		Status  string `json:"status"`
	} `json:"unknown"`
	Nodes []struct {
		ID          string `json:"id"`
		Unavailable string `json:"unavailable"`
	} `json:"nodes"`
	Rollout *struct {
		Steps []struct {
			Step    int    `json:"step"`
			Subject string `json:"subject"`
		} `json:"steps"`
	} `json:"rollout"`
}

// TestAPlanWithOneHungNodeIsANormalPlan: one node hangs, and its leader
// waits 5 s for it before answering. With the default flags the plan is a
// normal one (exit 0 or 1), searched, and names the node that did not
// answer, never the gateway; with a reading budget that takes most of the
// time limit, the plan says so and how long the search had.
func TestAPlanWithOneHungNodeIsANormalPlan(t *testing.T) {
	if testing.Short() {
		t.Skip("the default flags take 5 s")
	}
	t.Setenv("LLOOM_CLUSTER_KEY", "test-key")
	cases := []struct {
		name      string
		flags     []string
		node      string
		searchHad string
	}{
		{"with the default flags, reading leaves the search more than half", nil, "spark-node-02: asked directly: no answer within 2s", ""},
		{"with a reading budget of most of the time limit, the plan says so", []string{"--time-limit", "2s", "--gateway-timeout", "3s"}, "spark-node-02: asked directly: no answer within 1.5s", "more than half: the search had"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := hungPeerFleet(t)
			code, out, stderr := runCLI(t, f.args("plan", append([]string{"--format", "json"}, tc.flags...)...)...)
			if code != ExitOK && code != ExitChanges {
				t.Fatalf("exit %d, want 0 or 1: %s", code, stderr)
			}
			var p faultPlan
			if err := json.Unmarshal([]byte(out), &p); err != nil {
				t.Fatalf("not a JSON plan: %v\n%s", err, out)
			}
			for _, n := range p.Nodes {
				if want := "unreachable: " + strings.TrimPrefix(tc.node, "spark-node-02: "); n.ID == "spark-node-02" && n.Unavailable != want {
					t.Errorf("spark-node-02 unavailable %q, want %q", n.Unavailable, want)
				}
				if n.ID != "spark-node-02" && n.Unavailable != "" {
					t.Errorf("%s unavailable %q: only the hung node is out", n.ID, n.Unavailable)
				}
			}
			if len(p.Unknown) == 0 {
				t.Error("no lane is unknown; want the hung node's lanes")
			}
			for _, u := range p.Unknown {
				if u.Status != "unknown (not read: "+tc.node+")" {
					t.Errorf("%s status %q, want it not read, naming the hung node", u.Variant, u.Status)
				}
			}
			if notes := strings.Join(p.Notes, "\n"); !strings.Contains(notes, "demand: spark-node-02 was not read (") {
				t.Errorf("the notes do not say the hung node's requests are left out of demand:\n%s", notes)
			}
			if p.Rollout != nil {
				for _, s := range p.Rollout.Steps {
					for _, u := range p.Unknown {
						if s.Subject == u.Variant {
							t.Errorf("rollout step %d acts on %s, whose status is unknown: %+v", s.Step, u.Variant, s)
						}
					}
				}
			}
			if strings.Contains(stderr, "/gateway/cluster: no answer") && !strings.Contains(stderr, "every other node directly") {
				t.Errorf("stderr blames the gateway without saying what was read instead:\n%s", stderr)
			}
			fallbacks := strings.Join(p.Fallbacks, "\n")
			if strings.Contains(fallbacks+stderr, "not searched") {
				t.Errorf("the plan was not searched:\n%s\n%s", fallbacks, stderr)
			}
			if (tc.searchHad == "") != !strings.Contains(fallbacks, "more than half") || !strings.Contains(fallbacks, tc.searchHad) {
				t.Errorf("fallbacks %q, want %q", p.Fallbacks, tc.searchHad)
			}
			optimal := 0
			for _, l := range p.Levels {
				if l.Status == "optimal" {
					optimal++
				}
			}
			if optimal == 0 {
				t.Errorf("no level was proved: %+v", p.Levels)
			}
		})
	}
}
