package lloom

import (
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestLLooM023RefusesTheMembersFormAndIgnoresNewerFields(t *testing.T) {
	members := []byte(`{"models":[{"id":"qwen3.8-flash-next","backend":"b"},{"id":"cloud/q","backend":"b"}],"backends":{"b":{"type":"openai"}},
		"aliases":{"q38fn":{"members":["qwen3.8-flash-next","cloud/q"],"activeRoute":"local","routeProfiles":{"local":{"members":["qwen3.8-flash-next"]}}},
		           "plain":"cloud/q", "nested":{"target":"q38fn"}},
		"runtimes":{"img":{"preferredWarm":true},"emb":{"keepWarm":true}},
		"fleet":{"activeProfile":"rc16"}, "runtimePolicy":{"preferredWarmIdleMs":30000}}`)
	legacy, err := os.ReadFile("testdata/lloom-gateway-0.2.3/config.json")
	if err != nil {
		t.Fatal(err)
	}
	// "!" marks a refusal: LLooM exits at load.
	tests := []struct {
		name    string
		raw     []byte
		version string
		want    []string
	}{
		{"0.2.3 on a members-form config", members, "0.2.3", []string{
			"LLooM 0.2.3 does not read aliases.q38fn members, routeProfiles, activeRoute: it routes by target alone, so a route profile the plan picks is not one it can switch to",
			"LLooM 0.2.3 does not read fleet.activeProfile: it has no fleet profiles",
			"LLooM 0.2.3 does not read runtimePolicy.preferredWarmIdleMs",
			"LLooM 0.2.3 does not read runtimes.img.preferredWarm: the lane is auto (on demand) there",
			"!LLooM 0.2.3 refuses this config: alias nested targets unknown model q38fn (its target must be a model id, a federated one included)",
			"!LLooM 0.2.3 refuses this config: alias q38fn is missing target (it reads the legacy form, target + fallbacks, not members)",
		}},
		{"an older release warns alike", members, "v0.1.9", nil}, // want: the 0.2.3 lines, renamed
		{"the config 0.2.3 ran is not refused, its fallbacks are unread", legacy, "0.2.3", []string{
			"LLooM 0.2.3 does not read aliases.enntity-presence.fallbacks (cloud/openrouter/q38fn): a request goes to qwen3.8-flash-next alone, and fails when it fails",
			"LLooM 0.2.3 does not read aliases.q38fn.fallbacks (cloud/openrouter/q38fn): a request goes to qwen3.8-flash-next alone, and fails when it fails",
		}},
		{"a newer release reads both forms", members, "0.3.0", nil},
		{"every release refuses a top-level keepWarm", []byte(`{"keepWarm":true,"preferredWarm":false}`), "0.3.0", []string{
			"!LLooM 0.3.0 refuses this config: top-level keepWarm is not supported (set runtimes.<id>.keepWarm)",
			"!LLooM 0.3.0 refuses this config: top-level preferredWarm is not supported (set runtimes.<id>.preferredWarm)",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRelease(tc.version)
			if err != nil {
				t.Fatal(err)
			}
			ws, err := VersionWarnings(tc.raw, r, "")
			if err != nil {
				t.Fatal(err)
			}
			got := warningLines(ws)
			want := tc.want
			if tc.version == "v0.1.9" {
				for _, w := range tests[0].want {
					want = append(want, strings.Replace(w, "0.2.3", "0.1.9", 1))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func warningLines(ws []VersionWarning) []string {
	var out []string
	for _, w := range ws {
		if w.Refused {
			out = append(out, "!"+w.Text)
		} else {
			out = append(out, w.Text)
		}
	}
	return out
}

// TestWhatLLooM023ExitsOnIsRefusedAndWhatItServesIsNot: each config of
// testdata/lloom-0.2.3-routing was given to a 0.2.3 gateway started as
// node-a; every reason it printed before exiting is one refusal, and the
// config it served (a federated target node-b/bmodel included) has none.
func TestWhatLLooM023ExitsOnIsRefusedAndWhatItServesIsNot(t *testing.T) {
	dir := "testdata/lloom-0.2.3-routing/"
	for _, name := range []string{"config", "refuse-keepwarm", "refuse-endpoint", "refuse-members", "refuse-unknown-target"} {
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(dir + name + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var reasons []string
			if stderr, err := os.ReadFile(dir + name + ".stderr"); err == nil {
				for _, line := range strings.Split(strings.TrimSpace(string(stderr)), "\n") {
					if r, ok := strings.CutPrefix(line, "- "); ok {
						reasons = append(reasons, r)
					} else if _, r, ok := strings.Cut(line, ".json: "); ok {
						reasons = append(reasons, strings.TrimSuffix(r, "; use runtimes.<id>.keepWarm"))
					}
				}
				if len(reasons) == 0 {
					t.Fatalf("%s.stderr holds no reason", name)
				}
			}
			ws, err := VersionWarnings(raw, Release{0, 2, 3}, "node-a")
			if err != nil {
				t.Fatal(err)
			}
			var refused []string
			for _, w := range ws {
				if w.Refused {
					refused = append(refused, w.Text)
				}
			}
			for _, r := range reasons {
				if !slices.ContainsFunc(refused, func(w string) bool { return strings.Contains(w, r) }) {
					t.Errorf("LLooM 0.2.3 exited with %q; no refusal says so:\n%s", r, strings.Join(refused, "\n"))
				}
			}
			if len(refused) != len(reasons) {
				t.Errorf("refusals:\n%s\nwant one per reason LLooM gave: %q", strings.Join(refused, "\n"), reasons)
			}
		})
	}
}

func TestANodeWithoutEndpointIsRefusedUnlessItCanBeTheLocalOne(t *testing.T) {
	one := []byte(`{"cluster":{"nodeId":"${LLOOM_NODE_ID}","nodes":{"a":{"endpoint":"http://a"},"b":{}}}}`)
	two := []byte(`{"cluster":{"nodeId":"${LLOOM_NODE_ID}","nodes":{"a":{},"b":{}}}}`)
	named := []byte(`{"cluster":{"nodeId":"a","nodes":{"a":{},"b":{}}}}`)
	tests := []struct {
		name  string
		raw   []byte
		local string
		want  []string
	}{
		{"the gateway runs as the node without endpoint", one, "b", nil},
		{"the gateway runs as another node", one, "a", []string{"!LLooM 0.2.3 refuses this config: cluster node b is missing endpoint (every node but the local one, a, needs one)"}},
		{"an unknown local node may be the one without endpoint", one, "", []string{"LLooM 0.2.3 refuses this config on any node but b: cluster node b is missing endpoint"}},
		{"two nodes without endpoint cannot both be local", two, "", []string{"!LLooM 0.2.3 refuses this config: cluster nodes a, b are missing endpoint (only the local node may go without)"}},
		{"cluster.nodeId names the local node", named, "", []string{"!LLooM 0.2.3 refuses this config: cluster node b is missing endpoint (every node but the local one, a, needs one)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ws, err := VersionWarnings(tc.raw, Release{0, 2, 3}, tc.local)
			if err != nil {
				t.Fatal(err)
			}
			if got := warningLines(ws); !slices.Equal(got, tc.want) {
				t.Errorf("got %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestAGatewayIsRecognisedByWhatItsAnswersHold: 0.2.3 reports no version
// and puts no availabilityState in its cluster answer (the captures).
func TestAGatewayIsRecognisedByWhatItsAnswersHold(t *testing.T) {
	var nodes []NodeStatus
	for _, f := range []string{"testdata/lloom-0.2.3-routing/cluster.json", "testdata/lloom-gateway-0.2.3/cluster.json"} {
		cs, err := LoadClusterStatus(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range slices.Sorted(maps.Keys(cs.Nodes)) {
			nodes = append(nodes, cs.Nodes[id])
		}
	}
	single, err := LoadNodeStatus("testdata/lloom-0.2.3-routing/node.json")
	if err != nil {
		t.Fatal(err)
	}
	withVersion := slices.Clone(nodes)
	withVersion[0].Version = "0.3.1"
	later := slices.Clone(nodes)
	later[1].AvailabilityState = "healthy"
	withInventory := slices.Clone(nodes)
	withInventory[2].Inventory = []byte(`{"schema":"poolsolve.inventory/v1"}`)
	tests := []struct {
		name    string
		nodes   []NodeStatus
		live    bool
		ok      bool
		reading Reading
		release string
	}{
		{"a live 0.2.3 cluster answer", nodes, true, true, ReadTarget, "0.2.3"},
		{"a live 0.2.3 node answer", []NodeStatus{*single}, true, true, ReadTarget, "0.2.3"},
		{"a reported version settles it", withVersion, true, true, ReadMembers, "0.3.1"},
		{"availabilityState is the later line's", later, true, true, ReadMembers, "after 0.2.3"},
		{"an inventory is the later line's", withInventory, true, true, ReadMembers, "after 0.2.3"},
		{"saved answers that say nothing leave it unknown", nodes, false, false, "", ""},
		{"a saved answer with a version is known", withVersion, false, true, ReadMembers, "0.3.1"},
		{"no answer is unknown", nil, true, false, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := DetectRouting(tc.nodes, tc.live)
			if ok != tc.ok || r.Reading != tc.reading || r.Release != tc.release || ok && (!r.Known || r.Basis == "") {
				t.Errorf("got %+v, %v; want %s %q, %v", r, ok, tc.reading, tc.release, tc.ok)
			}
		})
	}
}

func TestAConfigOfUnknownReleaseIsReadByTheFormItsAliasesTake(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		want Reading
	}{
		{"a bare id alias", `{"models":[{"id":"m","backend":"b"}],"aliases":{"a":"m"}}`, ReadTarget},
		{"target and fallbacks", `{"models":[{"id":"m","backend":"b"},{"id":"c","backend":"b"}],"aliases":{"a":{"target":"m","fallbacks":["c"]}}}`, ReadTarget},
		{"the members form", `{"models":[{"id":"m","backend":"b"},{"id":"c","backend":"b"}],"aliases":{"a":{"members":["m","c"]}}}`, ReadMembers},
		{"route profiles", `{"models":[{"id":"m","backend":"b"}],"aliases":{"a":{"target":"m","routeProfiles":{"x":{"members":["m"]}},"activeRoute":"x"}}}`, ReadMembers},
		{"a fleet profile", `{"models":[{"id":"m","backend":"b"}],"aliases":{"a":"m"},"fleet":{"activeProfile":"p"}}`, ReadMembers},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.raw), "config.json")
			if err != nil {
				t.Fatal(err)
			}
			r := ConfigRouting(cfg)
			if r.Reading != tc.want || r.Known || !strings.Contains(r.Basis, "release unknown") {
				t.Errorf("got %+v, want reading %s, not known", r, tc.want)
			}
		})
	}
}

func TestParseReleaseNamesWhatItExpects(t *testing.T) {
	for _, s := range []string{"", "0.2", "x.y.z", "0.2.3.4", "-1.0.0"} {
		if _, err := ParseRelease(s); err == nil || !strings.Contains(err.Error(), "expected major.minor.patch") {
			t.Errorf("ParseRelease(%q) = %v", s, err)
		}
	}
	if r, err := ParseRelease("0.2.4-rc.1"); err != nil || r.String() != "0.2.4" {
		t.Errorf("0.2.4-rc.1 = %v, %v", r, err)
	}
}

func FuzzParseRelease(f *testing.F) {
	for _, s := range []string{"0.2.3", "v1.2.3", "0.2.4-rc.1+b", "..", "9999999999999999999.0.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRelease(s)
		if err != nil {
			return
		}
		back, err := ParseRelease(r.String())
		if err != nil || back != r {
			t.Fatalf("%q read as %v, which reads back as %v (%v)", s, r, back, err)
		}
	})
}

func FuzzVersionWarnings(f *testing.F) {
	for _, name := range []string{"config", "refuse-keepwarm", "refuse-endpoint", "refuse-members"} {
		raw, err := os.ReadFile("testdata/lloom-0.2.3-routing/" + name + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw, "node-a")
	}
	f.Add([]byte(`{"aliases":{"a":5,"b":{"target":7,"fallbacks":"x"}},"cluster":{"nodes":{"a":{"endpoint":3}}}}`), "")
	f.Fuzz(func(t *testing.T, raw []byte, local string) {
		for _, v := range []Release{{0, 2, 3}, {0, 3, 0}} {
			ws, err := VersionWarnings(raw, v, local)
			if err != nil {
				continue
			}
			for _, w := range ws {
				if !strings.HasPrefix(w.Text, "LLooM "+v.String()+" ") {
					t.Fatalf("warning %q does not name the release", w.Text)
				}
			}
		}
	})
}
