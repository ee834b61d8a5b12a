package lloom

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"
)

func TestParseConfigReadsTheRealGatewayConfig(t *testing.T) {
	cfg := loadConfig(t, gateway+"config.json")
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"the legacy target and fallbacks of q38fn become its members", cfg.Aliases["q38fn"].Members, []string{"qwen3.8-flash-next", "cloud/openrouter/q38fn"}},
		{"enntity-presence is normalised the same way", cfg.Aliases["enntity-presence"].Members, []string{"qwen3.8-flash-next", "cloud/openrouter/q38fn"}},
		{"an alias with only a target has that one member", cfg.Aliases["embeddings"].Members, []string{"Qwen/Qwen3-Embedding-4B"}},
		{"legacy aliases without optionalFallbacks have no optional members", cfg.Aliases["q38fn"].OptionalMembers, []string(nil)},
		{"the node id placeholder is kept verbatim", cfg.Cluster.NodeID, "${LLOOM_NODE_ID}"},
		{"backend key placeholders are kept verbatim", cfg.Backends["qwen38-27b-nvfp4"].APIKey, "${QWEN27B_BACKEND_KEY}"},
		{"apiKeyEnv names are read", cfg.Backends["openrouter-q38fn"].APIKeyEnv, "OPENROUTER_API_KEY"},
		{"the leader is spark-node-01", cfg.Cluster.LeaderNode, "spark-node-01"},
		{"nodes declare 128 GB", deref(cfg.Cluster.Nodes["spark-node-03"].Resources.MemoryGb), 128.0},
		{"node accelerators are read in order", cfg.Cluster.Nodes["spark-node-02"].Resources.Accelerators, []string{"cuda", "nvidia-gpu", "blackwell", "gb10"}},
		{"node labels are read", cfg.Cluster.Nodes["spark-node-01"].Labels["role"], "leader"},
		{"an unset node budget stays nil", cfg.Cluster.Nodes["spark-node-01"].Resources.MemoryBudgetGb, (*float64)(nil)},
		{"the 27B lane has 40 GB", deref(cfg.Runtimes["qwen38-27b-nvfp4"].MemoryGb), 40.0},
		{"the 27B lane has 4 slots", deref(cfg.Runtimes["qwen38-27b-nvfp4"].MaxConcurrency), 4},
		{"the 27B lane has priority 70", deref(cfg.Runtimes["qwen38-27b-nvfp4"].Policy.Priority), 70.0},
		{"the pair is externally managed", cfg.Runtimes["sparkqwen-pair"].IsExternal(), true},
		{"the pair has two members", len(cfg.Runtimes["sparkqwen-pair"].Placement.Members), 2},
		{"runtimes without keepWarm are not pinned", cfg.Runtimes["qwen3-embedding-4b"].KeepWarm, false},
		{"the policy allows 95% of memory", deref(cfg.RuntimePolicy.MaxMemoryUtilization), 0.95},
		{"an unset reserve stays nil", cfg.RuntimePolicy.ReserveMemoryGb, (*float64)(nil)},
		{"four models are read", len(cfg.Models), 4},
		{"the embedding model keeps its kind", cfg.Models[2].Kind, "embedding"},
		{"a model's context window is read", deref(cfg.Models[0].ContextWindow), 262144},
		{"the cloud model is external", cfg.Models[3].External(), true},
		{"the pair model is not external", cfg.Models[0].External(), false},
		{"the cloud model's tags are read", cfg.Models[3].Tags, []string{"cloud", "external", "openrouter"}},
		{"the file name is remembered", cfg.File, "config.json"},
		{"the current node is unknown behind a placeholder", cfg.CurrentNodeID(""), ""},
		{"a caller can say which node it is", cfg.CurrentNodeID("spark-node-02"), "spark-node-02"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.name, tc.got, tc.want) })
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("the real config should validate, got:\n%v", err)
	}
}

func TestParseConfigReadsTheFleetFixture(t *testing.T) {
	cfg := loadConfig(t, "testdata/fleet/config.json")
	pool := cfg.Models[0].Pool
	if pool == nil {
		t.Fatal("the pool block was not read")
	}
	check(t, "pool.nodes", pool.Nodes, []string{"spark-node-01", "spark-node-02"})
	check(t, "pool.tensorParallel", deref(pool.TensorParallel), 2)
	check(t, "pool.computeArchs", pool.ComputeArchs, []string{"sm_121"})
	check(t, "pool.memoryGbPerNode", deref(pool.MemoryGbPerNode), 108.0)
	check(t, "pool.maxSequences", deref(pool.MaxSequences), 8)
	check(t, "pool.loadTimeMs", deref(pool.LoadTimeMs), 600000.0)
	check(t, "pool.management", pool.Management, "external")
	check(t, "a legacy route profile becomes members", cfg.Aliases["enntity-presence"].RouteProfiles["standalone"].Members, []string{"qwen38-27b-nvfp4", "cloud/openrouter/q38fn"})
	check(t, "a string alias has one member", cfg.Aliases["image"].Members, []string{"Qwen/Qwen-Image-2.1-Diffusers"})
	check(t, "a string alias is marked direct", cfg.Aliases["image"].Direct, true)
	check(t, "discovery links", len(cfg.Cluster.Discovery.Links), 4)
	check(t, "link prefixlen", deref(cfg.Cluster.Discovery.Links[0].Prefixlen), 24)
	check(t, "an explicit null budget stays nil", cfg.Cluster.Nodes["spark-node-03"].Resources.MemoryBudgetGb, (*float64)(nil))
	check(t, "defaults", cfg.Defaults, map[string]string{"chatModel": "q38fn", "embeddingModel": "embeddings"})
	check(t, "fleet.activeProfile", cfg.Fleet.ActiveProfile, "sparkqwen-pair-rc16")
	check(t, "preferredWarm", cfg.Runtimes["qwen-image-diffusers"].PreferredWarm, true)
	check(t, "bootstrap command", cfg.Runtimes["qwen38-27b-nvfp4"].Bootstrap.Command[1], "--tensor-parallel-size")
	check(t, "current node", cfg.CurrentNodeID(""), "spark-node-01")
	if err := cfg.Validate(); err != nil {
		t.Errorf("the fleet fixture should validate, got:\n%v", err)
	}
}

func TestLegacySpellingsAreNormalisedAsLLooMDoes(t *testing.T) {
	tests := []struct {
		name          string
		alias         string
		wantMembers   []string
		wantOptional  []string
		wantProfiles  map[string]RouteProfile
		wantDirect    bool
		wantSuspended []string
	}{
		{
			name:         "target, fallbacks and optionalFallbacks become members and optionalMembers",
			alias:        `{"target": "a", "fallbacks": ["b", "c"], "optionalFallbacks": ["c"]}`,
			wantMembers:  []string{"a", "b", "c"},
			wantOptional: []string{"c"},
		},
		{
			name:        "members win over a legacy target",
			alias:       `{"members": ["x"], "target": "a", "fallbacks": ["b"]}`,
			wantMembers: []string{"x"},
		},
		{
			name:         "optionalMembers win over optionalFallbacks",
			alias:        `{"members": ["a", "b"], "optionalMembers": ["b"], "optionalFallbacks": ["a"]}`,
			wantMembers:  []string{"a", "b"},
			wantOptional: []string{"b"},
		},
		{
			name:        "an empty target is dropped",
			alias:       `{"target": "", "fallbacks": ["b"]}`,
			wantMembers: []string{"b"},
		},
		{
			name:        "route profiles are normalised too",
			alias:       `{"members": ["a"], "activeRoute": "p", "routeProfiles": {"p": {"target": "a", "fallbacks": ["b"], "optionalFallbacks": ["b"]}, "q": {"members": ["b"]}}}`,
			wantMembers: []string{"a"},
			wantProfiles: map[string]RouteProfile{
				"p": {Members: []string{"a", "b"}, OptionalMembers: []string{"b"}},
				"q": {Members: []string{"b"}},
			},
		},
		{
			name:        "a bare string is a single-member alias",
			alias:       `"a"`,
			wantMembers: []string{"a"},
			wantDirect:  true,
		},
		{
			name:          "suspended members are kept",
			alias:         `{"members": ["a", "b"], "suspendedMembers": ["a"]}`,
			wantMembers:   []string{"a", "b"},
			wantSuspended: []string{"a"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := parseConfigString(t, `{"aliases": {"x": `+tc.alias+`}}`)
			a := cfg.Aliases["x"]
			check(t, "members", a.Members, tc.wantMembers)
			check(t, "optionalMembers", a.OptionalMembers, tc.wantOptional)
			check(t, "routeProfiles", a.RouteProfiles, tc.wantProfiles)
			check(t, "direct", a.Direct, tc.wantDirect)
			check(t, "suspendedMembers", a.SuspendedMembers, tc.wantSuspended)
		})
	}

	t.Run("legacy managed false means external", func(t *testing.T) {
		cfg := parseConfigString(t, `{"runtimes": {"r": {"managed": false}, "s": {"managed": true}, "u": {"managed": false, "management": "managed"}}}`)
		check(t, "r", cfg.Runtimes["r"].Management, External)
		check(t, "s", cfg.Runtimes["s"].Management, "")
		check(t, "explicit management wins", cfg.Runtimes["u"].Management, Managed)
	})
	t.Run("legacy evictable false pins the runtime", func(t *testing.T) {
		cfg := parseConfigString(t, `{"runtimes": {"r": {"evictable": false}, "p": {"policy": {"evictable": false, "priority": 5}}, "o": {"evictable": true}}}`)
		check(t, "r", cfg.Runtimes["r"].KeepWarm, true)
		check(t, "p", cfg.Runtimes["p"].KeepWarm, true)
		check(t, "o", cfg.Runtimes["o"].KeepWarm, false)
	})
	t.Run("a model without kind is chat", func(t *testing.T) {
		cfg := parseConfigString(t, `{"models": [{"id": "m", "backend": "b"}]}`)
		check(t, "kind", cfg.Models[0].Kind, KindChat)
	})
	t.Run("unknown fields are ignored", func(t *testing.T) {
		cfg := parseConfigString(t, `{"server": {"port": 8100}, "web": [1], "runtimes": {"r": {"memoryGb": 3, "watchdog": {"x": 1}}}}`)
		check(t, "memoryGb", deref(cfg.Runtimes["r"].MemoryGb), 3.0)
	})
	t.Run("a null runtime entry is dropped", func(t *testing.T) {
		cfg := parseConfigString(t, `{"runtimes": {"r": null}}`)
		check(t, "runtimes", len(cfg.Runtimes), 0)
	})
}

func TestModelTargetsFollowsModelTargets(t *testing.T) {
	w := func(f float64) *float64 { return &f }
	tests := []struct {
		name  string
		model Model
		want  []ResolvedTarget
	}{
		{
			name:  "a single backend gives one default target",
			model: Model{ID: "m", Backend: "b", Runtime: "r"},
			want:  []ResolvedTarget{{ID: "default", Backend: "b", Runtime: "r", UpstreamModel: "m", Weight: 1}},
		},
		{
			name:  "the default target uses the model's upstream model",
			model: Model{ID: "m", Backend: "b", UpstreamModel: "up"},
			want:  []ResolvedTarget{{ID: "default", Backend: "b", UpstreamModel: "up", Weight: 1}},
		},
		{
			name:  "no backend and no targets means no target",
			model: Model{ID: "m"},
			want:  nil,
		},
		{
			name: "targets get ids from their node and position",
			model: Model{ID: "m", UpstreamModel: "up", Targets: []Target{
				{Node: "n1", Backend: "b1", Runtime: "r1"},
				{Backend: "b2", RemoteRuntime: "rr", UpstreamModel: "own"},
				{ID: "named", Node: "n3", Backend: "b3"},
			}},
			want: []ResolvedTarget{
				{ID: "n1-1", Node: "n1", Backend: "b1", Runtime: "r1", UpstreamModel: "up", Weight: 1},
				{ID: "target-2", Backend: "b2", RemoteRuntime: "rr", UpstreamModel: "own", Weight: 1},
				{ID: "named", Node: "n3", Backend: "b3", UpstreamModel: "up", Weight: 1},
			},
		},
		{
			name: "weights are floored and clamped to 1..100",
			model: Model{ID: "m", Targets: []Target{
				{ID: "a", Backend: "b", Weight: w(0)},
				{ID: "b", Backend: "b", Weight: w(0.5)},
				{ID: "c", Backend: "b", Weight: w(7.9)},
				{ID: "d", Backend: "b", Weight: w(250)},
				{ID: "e", Backend: "b", Weight: w(-3)},
			}},
			want: []ResolvedTarget{
				{ID: "a", Backend: "b", UpstreamModel: "m", Weight: 1},
				{ID: "b", Backend: "b", UpstreamModel: "m", Weight: 1},
				{ID: "c", Backend: "b", UpstreamModel: "m", Weight: 7},
				{ID: "d", Backend: "b", UpstreamModel: "m", Weight: 100},
				{ID: "e", Backend: "b", UpstreamModel: "m", Weight: 1},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, "ModelTargets", ModelTargets(tc.model), tc.want) })
	}
}

func TestModelExternalMeansNoLocalLane(t *testing.T) {
	tests := []struct {
		name  string
		model Model
		want  bool
	}{
		{"a model on a runtime is local", Model{ID: "m", Backend: "b", Runtime: "r"}, false},
		{"a cloud model is external", Model{ID: "m", Backend: "openrouter"}, true},
		{"a federated target with a remote runtime is local", Model{ID: "m", Targets: []Target{{Backend: "lloom-node-mac", RemoteRuntime: "rr"}}}, false},
		{"targets without runtimes are external", Model{ID: "m", Targets: []Target{{Backend: "a"}, {Backend: "b"}}}, true},
		{"one target with a runtime is enough", Model{ID: "m", Targets: []Target{{Backend: "a"}, {Backend: "b", Runtime: "r"}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, "External", tc.model.External(), tc.want) })
	}
}

func TestRuntimePlacementResolvesModes(t *testing.T) {
	cfg := loadConfig(t, gateway+"config.json")
	gb := func(f float64) *float64 { return &f }
	tests := []struct {
		name    string
		rt      Runtime
		id      string
		current string
		want    ResolvedPlacement
	}{
		{
			name: "a distributed runtime occupies its members' nodes in member order",
			rt:   cfg.Runtimes["sparkqwen-pair"], id: "sparkqwen-pair",
			want: ResolvedPlacement{Mode: ModeDistributed, Nodes: []string{"spark-node-02", "spark-node-01"}, Members: []ResolvedMember{
				{Node: "spark-node-02", Runtime: "sparkqwen-pair-worker", Role: "worker", Order: 10, MemoryGb: gb(108)},
				{Node: "spark-node-01", Runtime: "sparkqwen-pair-head", Role: "head", Order: 20, MemoryGb: gb(108)},
			}},
		},
		{
			name: "a runtime with a node is pinned there",
			rt:   cfg.Runtimes["qwen38-27b-nvfp4"], id: "qwen38-27b-nvfp4", current: "spark-node-01",
			want: ResolvedPlacement{Mode: ModePinned, Node: "spark-node-03", Nodes: []string{"spark-node-03"}, Members: []ResolvedMember{
				{Node: "spark-node-03", Runtime: "qwen38-27b-nvfp4", Role: "runtime", MemoryGb: gb(40)},
			}},
		},
		{
			name: "a runtime without a node is local to the current node",
			rt:   Runtime{}, id: "r", current: "n1",
			want: ResolvedPlacement{Mode: ModeLocal, Node: "n1", Nodes: []string{"n1"}, Members: []ResolvedMember{{Node: "n1", Runtime: "r", Role: "runtime"}}},
		},
		{
			name: "a local runtime with an unknown current node has no node",
			rt:   Runtime{}, id: "r",
			want: ResolvedPlacement{Mode: ModeLocal, Members: []ResolvedMember{{Runtime: "r", Role: "runtime"}}},
		},
		{
			name: "placement.node is used when the runtime has no node",
			rt:   Runtime{Placement: &Placement{Mode: ModeReplicated, Node: "n2"}}, id: "r", current: "n1",
			want: ResolvedPlacement{Mode: ModeReplicated, Node: "n2", Nodes: []string{"n2"}, Members: []ResolvedMember{{Node: "n2", Runtime: "r", Role: "runtime"}}},
		},
		{
			name: "members default to role worker and their index as order",
			rt: Runtime{Placement: &Placement{Mode: ModeDistributed, Members: []PlacementMember{
				{Node: "a", Runtime: "x"}, {Node: "a", Runtime: "y"}, {Runtime: "z"},
			}}}, id: "g",
			want: ResolvedPlacement{Mode: ModeDistributed, Nodes: []string{"a"}, Members: []ResolvedMember{
				{Node: "a", Runtime: "x", Role: "worker", Order: 0},
				{Node: "a", Runtime: "y", Role: "worker", Order: 1},
				{Runtime: "z", Role: "worker", Order: 2},
			}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check(t, "RuntimePlacement", RuntimePlacement(tc.rt, tc.id, tc.current), tc.want)
		})
	}
}

func TestRuntimeMemoryGbFallsBackInLLooMOrder(t *testing.T) {
	gb := func(f float64) *float64 { return &f }
	tests := []struct {
		name     string
		rt       Runtime
		want     float64
		declared bool
	}{
		{"memoryGb comes first", Runtime{MemoryGb: gb(40), Resources: &MemoryResources{MemoryGb: gb(1)}}, 40, true},
		{"then resources.memoryGb", Runtime{Resources: &MemoryResources{MemoryGb: gb(12)}, EstimatedMemoryGb: gb(1)}, 12, true},
		{"then resourceEstimate.memoryGb", Runtime{ResourceEstimate: &ResourceEstimate{MemoryGb: gb(8)}, EstimatedMemoryGb: gb(1)}, 8, true},
		{"then estimatedMemoryGb", Runtime{EstimatedMemoryGb: gb(6)}, 6, true},
		{"an explicit 0 is declared", Runtime{MemoryGb: gb(0), EstimatedMemoryGb: gb(6)}, 0, true},
		{"nothing declared is 0", Runtime{}, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, declared := RuntimeMemoryGb(tc.rt)
			if got != tc.want || declared != tc.declared {
				t.Errorf("RuntimeMemoryGb = %v, %v; want %v, %v", got, declared, tc.want, tc.declared)
			}
		})
	}
}

func TestRuntimeResourcesByNodeChargesEveryMemberNode(t *testing.T) {
	cfg := loadConfig(t, gateway+"config.json")
	check(t, "pair", cfg.RuntimeResourcesByNode("sparkqwen-pair", ""), map[string]NodeMemory{
		"spark-node-01": {MemoryGb: 108}, "spark-node-02": {MemoryGb: 108},
	})
	check(t, "27B", cfg.RuntimeResourcesByNode("qwen38-27b-nvfp4", ""), map[string]NodeMemory{"spark-node-03": {MemoryGb: 40}})
	check(t, "unknown", cfg.RuntimeResourcesByNode("nope", ""), map[string]NodeMemory{})

	// Without member resources the member runtime's own memory counts.
	cfg = parseConfigString(t, `{"runtimes": {
		"g": {"placement": {"mode": "distributed", "members": [{"node": "a", "runtime": "m1"}, {"node": "a", "runtime": "m2", "resources": {"memoryGb": -5}}]}},
		"m1": {"node": "a", "memoryGb": 30, "gpuMemoryGb": 2},
		"m2": {"node": "a", "memoryGb": 20}}}`)
	check(t, "fallback", cfg.RuntimeResourcesByNode("g", ""), map[string]NodeMemory{"a": {MemoryGb: 30, GPUMemoryGb: 2}})
}

func TestMaterializeFederatedAddsProxyModels(t *testing.T) {
	cfg := loadConfig(t, "testdata/fleet/federated.json")
	if err := cfg.Validate(); err != nil {
		t.Fatalf("a config whose alias names federated models should validate before materialising:\n%v", err)
	}
	MaterializeFederated(cfg)

	check(t, "mac backend", cfg.Backends["lloom-node-macbook-local"], Backend{
		Type: "openai", BaseURL: "http://macbook-private:8100/v1", APIKeyEnv: "LLOOM_CLUSTER_KEY", TimeoutMs: ptr(1800000.0),
	})
	check(t, "studio backend", cfg.Backends["lloom-node-studio"], Backend{
		Type: "openai", BaseURL: "http://studio:8100/v1", APIKeyEnv: "STUDIO_KEY", TimeoutMs: ptr(60000.0),
	})
	byID := map[string]Model{}
	for _, m := range cfg.Models {
		byID[m.ID] = m
	}
	check(t, "namespaced model", byID["macbook-local/qwen3-embedding:4b"], Model{
		ID: "macbook-local/qwen3-embedding:4b", Name: "qwen3-embedding:4b", Kind: "embedding", UpstreamModel: "qwen3-embedding:4b", Federated: true,
		Targets: []Target{{ID: "macbook-local", Node: "macbook-local", Backend: "lloom-node-macbook-local", RemoteRuntime: "ollama-qwen3-embedding-4b", UpstreamModel: "qwen3-embedding:4b", Weight: ptr(1.0)}},
	})
	check(t, "`as` names the model", byID["macbook-local/qwen36-27b"].Name, "Qwen3.6-27B-MTPLX-Optimized-Speed")
	check(t, "metadata is copied", deref(byID["macbook-local/qwen36-27b"].ContextWindow), 262144)
	check(t, "namespace false keeps the bare id", byID["gemma-local"].Targets[0].Backend, "lloom-node-studio")
	check(t, "a string proxy model is a chat model", byID["gemma-local"].Kind, KindChat)

	merged := byID["Qwen/Qwen3-Embedding-4B"]
	check(t, "a model that already exists gains the target", ModelTargets(merged), []ResolvedTarget{
		{ID: "default", Backend: "qwen3-embedding-4b", Runtime: "qwen3-embedding-4b", UpstreamModel: "Qwen/Qwen3-Embedding-4B", Weight: 1},
		{ID: "studio", Node: "studio", Backend: "lloom-node-studio", RemoteRuntime: "studio-embed", UpstreamModel: "Qwen/Qwen3-Embedding-4B", Weight: 100},
	})
	check(t, "and loses its own backend", merged.Backend, "")
	check(t, "and its own runtime", merged.Runtime, "")
	check(t, "it is not marked federated", merged.Federated, false)

	before := deepCopy(cfg)
	MaterializeFederated(cfg)
	if !reflect.DeepEqual(before, cfg) {
		t.Error("materialising twice changed the config")
	}
	if err := cfg.Validate(); err != nil {
		t.Errorf("the materialised config should validate:\n%v", err)
	}
}

func TestMaterializeFederatedSkipsDisabledAndEndpointlessProxies(t *testing.T) {
	cfg := parseConfigString(t, `{"cluster": {"nodes": {
		"off": {"endpoint": "http://off:8100", "proxy": {"enabled": false, "models": ["a"]}},
		"noend": {"proxy": {"models": ["b"]}},
		"empty": {"endpoint": "http://e:8100", "proxy": {"models": []}},
		"base": {"proxy": {"baseUrl": "http://direct/v1", "backend": "custom", "models": [{"model": "c"}, {"as": "ignored"}]}}}}}`)
	MaterializeFederated(cfg)
	check(t, "models", len(cfg.Models), 1)
	check(t, "model id", cfg.Models[0].ID, "base/c")
	check(t, "backends", slices.Sorted(maps.Keys(cfg.Backends)), []string{"custom"})
	check(t, "proxy.baseUrl wins", cfg.Backends["custom"].BaseURL, "http://direct/v1")
}

func TestExpandAliasFollowsNestedAliases(t *testing.T) {
	cfg := parseConfigString(t, `{
		"models": [{"id": "a", "backend": "b"}, {"id": "b", "backend": "b"}, {"id": "self", "backend": "b"}],
		"aliases": {
			"outer": {"members": ["inner", "b", "a"]},
			"inner": {"members": ["a", "s"], "suspendedMembers": ["s"]},
			"s": "b",
			"self": {"members": ["self", "a"]},
			"loop1": {"members": ["loop2"]},
			"loop2": {"members": ["loop1"]}}}`)
	got, err := cfg.ExpandAlias("outer")
	check(t, "outer", got, []string{"a", "b"})
	check(t, "outer error", err, nil)
	got, _ = cfg.ExpandAlias("self")
	check(t, "a same-name member is the model", got, []string{"self", "a"})
	if _, err := cfg.ExpandAlias("loop1"); err == nil || err.Error() != "alias cycle: loop1 -> loop2 -> loop1" {
		t.Errorf("ExpandAlias(loop1) error = %v", err)
	}
	if _, err := cfg.ExpandAlias("missing"); err == nil {
		t.Error("ExpandAlias(missing) should fail")
	}
}

func TestParseConfigErrorsNameFilePathAndPosition(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{
			name: "a syntax error reports line and column",
			doc:  "{\n  \"runtimes\": {\n    \"qwen\": {\"memoryGb\": 4,}\n  }\n}",
			want: `config.json:3:28: $.runtimes.qwen: invalid character '}' looking for beginning of object key string`,
		},
		{
			name: "a key given twice names both places and the path",
			doc:  "{\n  \"runtimes\": {\n    \"qwen\": {\"memoryGb\": 4},\n    \"qwen\": {\"memoryGb\": 40}\n  }\n}",
			want: `config.json:4:5: $.runtimes.qwen: duplicate key "qwen" (first at line 3, column 5)`,
		},
		{
			name: "a truncated file reports its end",
			doc:  "{\n  \"models\": [",
			want: `config.json:2:14: $.models: unexpected end of JSON input`,
		},
		{
			name: "an empty file is an error",
			doc:  "",
			want: `config.json:1:1: empty document: expected a JSON value`,
		},
		{
			name: "a second document is an error",
			doc:  "{}\n{}",
			want: `config.json:2:1: unexpected data after the top-level value`,
		},
		{
			name: "a string where a number belongs reports its path",
			doc:  "{\n  \"runtimes\": {\n    \"qwen\": {\"memoryGb\": \"40\"}\n  }\n}",
			want: `config.json:3:26: $.runtimes["qwen"].memoryGb: expected a number, got string "40"`,
		},
		{
			name: "array elements are named by index",
			doc:  `{"models": [{"id": "a"}, {"id": "b", "targets": [{"weight": true}]}]}`,
			want: `config.json:1:61: $.models[1].targets[0].weight: expected a number, got boolean true`,
		},
		{
			name: "a fraction where an integer belongs is refused",
			doc:  `{"runtimes": {"r": {"maxConcurrency": 2.5}}}`,
			want: `config.json:1:39: $.runtimes["r"].maxConcurrency: expected an integer, got number 2.5`,
		},
		{
			name: "an alias must be a string or an object",
			doc:  `{"aliases": {"a": ["x"]}}`,
			want: `config.json:1:19: $.aliases["a"]: expected a model id or an alias object, got an array`,
		},
		{
			name: "a namespace must be a string or false",
			doc:  `{"cluster": {"nodes": {"n": {"proxy": {"namespace": true}}}}}`,
			want: `config.json:1:53: $.cluster.nodes["n"].proxy.namespace: expected a string or false, got boolean true`,
		},
		{
			name: "the document must be an object",
			doc:  `[]`,
			want: `config.json:1:1: $: expected an object, got an array`,
		},
		{
			name: "a number too large for a float is refused",
			doc:  `{"runtimes": {"r": {"memoryGb": 1e999}}}`,
			want: `config.json:1:33: $.runtimes["r"].memoryGb: number 1e999 is out of range`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseConfig([]byte(tc.doc), "config.json")
			if err == nil {
				t.Fatal("ParseConfig succeeded")
			}
			if err.Error() != tc.want {
				t.Errorf("error\n  got  %s\n  want %s", err, tc.want)
			}
			var ie *InputError
			if !errors.As(err, &ie) || ie.File != "config.json" {
				t.Errorf("error %T is not an *InputError for config.json", err)
			}
		})
	}
}

func TestConfigValidateReportsEachProblem(t *testing.T) {
	// base is a small valid config; each case adds one mistake.
	const nodes = `"cluster": {"nodeId": "n1", "nodes": {"n1": {}, "n2": {"endpoint": "http://n2"}}}`
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{
			name: "a model target naming an unknown runtime",
			doc:  `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "m", "targets": [{"node": "n1", "backend": "b", "runtime": "ghost"}]}]}`,
			want: []string{`config.json: $.models[0].targets[0].runtime: unknown runtime "ghost"`},
		},
		{
			name: "a model naming an unknown runtime",
			doc:  `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "m", "backend": "b", "runtime": "ghost"}]}`,
			want: []string{`config.json: $.models[0].runtime: unknown runtime "ghost"`},
		},
		{
			name: "a model naming an unknown backend",
			doc:  `{` + nodes + `, "models": [{"id": "m", "backend": "nope"}]}`,
			want: []string{`config.json: $.models[0].backend: unknown backend "nope"`},
		},
		{
			name: "a target without a backend",
			doc:  `{` + nodes + `, "models": [{"id": "m", "targets": [{"node": "n1"}]}]}`,
			want: []string{`config.json: $.models[0].targets[0].backend: missing`},
		},
		{
			name: "a model without backend or targets",
			doc:  `{` + nodes + `, "models": [{"id": "m"}]}`,
			want: []string{`config.json: $.models[0]: missing backend or targets`},
		},
		{
			name: "a duplicate model id",
			doc:  `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "m", "backend": "b"}, {"id": "m", "backend": "b"}]}`,
			want: []string{`config.json: $.models[1].id: duplicate model id "m"`},
		},
		{
			name: "a runtime on a node not declared in cluster.nodes",
			doc:  `{` + nodes + `, "runtimes": {"r": {"node": "n9"}}}`,
			want: []string{`config.json: $.runtimes["r"].node: node "n9" is not declared in cluster.nodes`},
		},
		{
			name: "a target on an undeclared node",
			doc:  `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "m", "targets": [{"node": "n9", "backend": "b"}]}]}`,
			want: []string{`config.json: $.models[0].targets[0].node: node "n9" is not declared in cluster.nodes`},
		},
		{
			name: "a target node where its runtime does not run",
			doc:  `{` + nodes + `, "backends": {"b": {}}, "runtimes": {"r": {"node": "n1"}}, "models": [{"id": "m", "targets": [{"node": "n2", "backend": "b", "runtime": "r"}]}]}`,
			want: []string{`config.json: $.models[0].targets[0].node: node "n2" is not where runtime "r" runs (n1)`},
		},
		{
			name: "a distributed member whose runtime is missing",
			doc:  `{` + nodes + `, "runtimes": {"g": {"placement": {"mode": "distributed", "members": [{"node": "n1", "runtime": "ghost"}, {"node": "n2"}]}}}}`,
			want: []string{
				`config.json: $.runtimes["g"].placement.members[0].runtime: unknown runtime "ghost"`,
				`config.json: $.runtimes["g"].placement.members[1].runtime: missing: every distributed member needs a runtime`,
			},
		},
		{
			name: "a distributed runtime that lists itself",
			doc:  `{` + nodes + `, "runtimes": {"g": {"placement": {"mode": "distributed", "members": [{"node": "n1", "runtime": "g"}]}}}}`,
			want: []string{`config.json: $.runtimes["g"].placement.members[0].runtime: runtime "g" cannot be a member of itself`},
		},
		{
			name: "a distributed member without a node, and one on an unknown node",
			doc:  `{` + nodes + `, "runtimes": {"w": {"node": "n1"}, "h": {}, "g": {"placement": {"mode": "distributed", "members": [{"runtime": "w"}, {"node": "n7", "runtime": "h"}]}}}}`,
			want: []string{
				`config.json: $.runtimes["g"].placement.members[0].node: missing: every distributed member needs a node`,
				`config.json: $.runtimes["g"].placement.members[1].node: node "n7" is not declared in cluster.nodes`,
			},
		},
		{
			name: "a distributed runtime without members",
			doc:  `{` + nodes + `, "runtimes": {"g": {"placement": {"mode": "distributed"}}}}`,
			want: []string{`config.json: $.runtimes["g"].placement.members: a distributed runtime needs at least one member`},
		},
		{
			name: "distributed runtimes that nest or share a member",
			doc: `{` + nodes + `, "runtimes": {"m": {"node": "n1"},
				"g1": {"placement": {"mode": "distributed", "members": [{"node": "n1", "runtime": "m"}]}},
				"g2": {"placement": {"mode": "distributed", "members": [{"node": "n1", "runtime": "m"}, {"node": "n1", "runtime": "g1"}]}}}}`,
			want: []string{
				`config.json: $.runtimes["g2"].placement.members[0].runtime: member "m" already belongs to distributed runtime "g1"`,
				`config.json: $.runtimes["g2"].placement.members[1].runtime: member "g1" is itself distributed; distributed runtimes do not nest`,
			},
		},
		{
			name: "an unknown placement mode and a replicated runtime without a node",
			doc:  `{` + nodes + `, "runtimes": {"a": {"placement": {"mode": "spread"}}, "b": {"placement": {"mode": "replicated"}}}}`,
			want: []string{
				`config.json: $.runtimes["a"].placement.mode: expected local, pinned, replicated or distributed, got "spread"`,
				`config.json: $.runtimes["b"]: a replicated runtime needs a materialised node (one runtime per node)`,
			},
		},
		{
			name: "negative memory",
			doc:  `{` + nodes + `, "runtimes": {"qwen": {"memoryGb": -4, "resources": {"gpuMemoryGb": -1}}}}`,
			want: []string{
				`config.json: $.runtimes["qwen"].memoryGb: expected a number >= 0, got -4`,
				`config.json: $.runtimes["qwen"].resources.gpuMemoryGb: expected a number >= 0, got -1`,
			},
		},
		{
			name: "negative node memory and an impossible utilisation",
			doc:  `{"cluster": {"nodeId": "n1", "nodes": {"n1": {"resources": {"memoryGb": -128, "maxMemoryUtilization": 1.5}}}}}`,
			want: []string{
				`config.json: $.cluster.nodes["n1"].resources.memoryGb: expected a number >= 0, got -128`,
				`config.json: $.cluster.nodes["n1"].resources.maxMemoryUtilization: expected a number > 0 and <= 1, got 1.5`,
			},
		},
		{
			name: "keepWarm and preferredWarm together",
			doc:  `{` + nodes + `, "runtimes": {"r": {"node": "n1", "keepWarm": true, "preferredWarm": true}}}`,
			want: []string{`config.json: $.runtimes["r"]: keepWarm and preferredWarm are both set; a runtime is either pinned (keepWarm) or preferred`},
		},
		{
			name: "an unknown management value",
			doc:  `{` + nodes + `, "runtimes": {"r": {"node": "n1", "management": "manual"}}}`,
			want: []string{`config.json: $.runtimes["r"].management: expected managed or external, got "manual"`},
		},
		{
			name: "nested aliases that form a cycle are reported once",
			doc: `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "m", "backend": "b"}],
				"aliases": {"x": {"members": ["y", "m"]}, "y": {"members": ["z"]}, "z": {"members": ["x"]}, "top": {"members": ["y"]}}}`,
			want: []string{`config.json: $.aliases["x"].members: alias cycle: x -> y -> z -> x`},
		},
		{
			name: "an alias listing a model of its own name is not a cycle",
			doc:  `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "a", "backend": "b"}], "aliases": {"a": {"members": ["a"]}}}`,
			want: nil,
		},
		{
			name: "optionalMembers that are not members",
			doc:  `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "m", "backend": "b"}], "aliases": {"a": {"members": ["m"], "optionalMembers": ["elsewhere"]}}}`,
			want: []string{`config.json: $.aliases["a"].optionalMembers[0]: optional member "elsewhere" is not one of members`},
		},
		{
			name: "an optional member may be unknown, a required one may not",
			doc:  `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "m", "backend": "b"}], "aliases": {"a": {"members": ["m", "maybe", "ghost"], "optionalMembers": ["maybe"]}}}`,
			want: []string{`config.json: $.aliases["a"].members[2]: unknown model or alias "ghost"`},
		},
		{
			name: "suspended members that are not members",
			doc:  `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "m", "backend": "b"}], "aliases": {"a": {"members": ["m"], "suspendedMembers": ["x"]}}}`,
			want: []string{`config.json: $.aliases["a"].suspendedMembers[0]: suspended member "x" is not one of members`},
		},
		{
			name: "activeRoute not naming a route profile",
			doc: `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "m", "backend": "b"}],
				"aliases": {"a": {"members": ["m"], "activeRoute": "fast", "routeProfiles": {"local": {"members": ["m"]}}}}}`,
			want: []string{`config.json: $.aliases["a"].activeRoute: "fast" is not one of the alias's route profiles (local)`},
		},
		{
			name: "activeRoute without route profiles",
			doc:  `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "m", "backend": "b"}], "aliases": {"a": {"members": ["m"], "activeRoute": "local"}}}`,
			want: []string{`config.json: $.aliases["a"].activeRoute: activeRoute "local" needs routeProfiles`},
		},
		{
			name: "members that differ from the active route profile",
			doc: `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "m", "backend": "b"}, {"id": "c", "backend": "b"}],
				"aliases": {"a": {"members": ["c", "m"], "activeRoute": "local", "routeProfiles": {"local": {"members": ["m", "c"]}, "empty": {"members": []}}}}}`,
			want: []string{
				`config.json: $.aliases["a"].members: members must equal those of the active route profile "local"`,
				`config.json: $.aliases["a"].routeProfiles["empty"].members: a route profile needs at least one member`,
			},
		},
		{
			name: "an alias that mixes model kinds",
			doc: `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "c", "backend": "b"}, {"id": "e", "kind": "embedding", "backend": "b"}],
				"aliases": {"a": {"members": ["c", "e"]}}}`,
			want: []string{`config.json: $.aliases["a"].members: members mix model kinds chat, embedding`},
		},
		{
			name: "an alias without members",
			doc:  `{` + nodes + `, "aliases": {"a": {"members": []}}}`,
			want: []string{`config.json: $.aliases["a"].members: an alias needs at least one member`},
		},
		{
			name: "a pool block that breaks its rules",
			doc: `{` + nodes + `, "backends": {"b": {}}, "models": [{"id": "m", "backend": "b",
				"pool": {"nodes": ["n1", "n5"], "tensorParallel": 0, "maxSequences": 0, "computeArchs": ["sm_121a", "blackwell"], "memoryGbPerNode": -1}}]}`,
			want: []string{
				`config.json: $.models[0].pool.nodes[1]: node "n5" is not declared in cluster.nodes`,
				`config.json: $.models[0].pool.tensorParallel: expected an integer >= 1, got 0`,
				`config.json: $.models[0].pool.maxSequences: expected an integer >= 1, got 0`,
				`config.json: $.models[0].pool.memoryGbPerNode: expected a number >= 0, got -1`,
				`config.json: $.models[0].pool.computeArchs[1]: unknown compute arch "blackwell" (expected e.g. sm_121, 12.1a or apple-metal)`,
			},
		},
		{
			name: "runtime policy values out of range",
			doc:  `{` + nodes + `, "runtimePolicy": {"maxMemoryUtilization": 1.2, "reserveMemoryGb": 0, "memorySafety": {"mode": "lax", "pollIntervalMs": 5}}}`,
			want: []string{
				`config.json: $.runtimePolicy.maxMemoryUtilization: expected a number > 0 and < 1, got 1.2`,
				`config.json: $.runtimePolicy.reserveMemoryGb: expected a number > 0, got 0`,
				`config.json: $.runtimePolicy.memorySafety.mode: expected enforce or yolo, got "lax"`,
				`config.json: $.runtimePolicy.memorySafety.pollIntervalMs: expected a number from 50 to 1000, got 5`,
			},
		},
		{
			name: "a remote node without an endpoint and an undeclared leader",
			doc:  `{"cluster": {"nodeId": "n1", "leaderNode": "boss", "nodes": {"n1": {}, "n2": {}}}}`,
			want: []string{
				`config.json: $.cluster.leaderNode: node "boss" is not declared in cluster.nodes`,
				`config.json: $.cluster.nodes["n2"].endpoint: missing: every node other than the local one (n1) needs an endpoint`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := parseConfigString(t, tc.doc)
			wantProblems(t, cfg.Validate(), tc.want, true)
		})
	}
}

func TestConfigValidateReportsAllProblemsAtOnce(t *testing.T) {
	cfg := parseConfigString(t, `{"runtimes": {"a": {"memoryGb": -1, "keepWarm": true, "preferredWarm": true}},
		"models": [{"id": "m", "backend": "nope"}], "aliases": {"x": {"members": ["ghost"]}}}`)
	err := cfg.Validate()
	lines := problemLines(t, err)
	if len(lines) != 4 {
		t.Fatalf("got %d problems, want 4:\n%v", len(lines), err)
	}
	var ie *InputError
	if !errors.As(err, &ie) || ie.Path != `$.runtimes["a"].memoryGb` {
		t.Errorf("errors.As(*InputError) found %+v", ie)
	}
}

func TestEnvironmentValuesAreTextAsForSpawnedProcesses(t *testing.T) {
	cfg := parseConfigString(t, `{"runtimes": {"r": {"env": {"PORT": 8000, "DEBUG": true, "NAME": "x", "UNSET": null}}}}`)
	check(t, "env", cfg.Runtimes["r"].Env, Env{"PORT": "8000", "DEBUG": "true", "NAME": "x"})
	_, err := ParseConfig([]byte(`{"runtimes": {"r": {"env": {"LIST": [1]}}}}`), "config.json")
	if err == nil || err.Error() != `config.json:1:37: $.runtimes["r"].env["LIST"]: expected a string, got an array` {
		t.Errorf("error = %v", err)
	}
}

func TestAKeyOneEditFromLLooMsIsWarnedWithTheKeyMeant(t *testing.T) {
	for _, tc := range []struct {
		name, config string
		want         []string
	}{
		{"a misspelt top-level block", `{"cluser": {"nodes": {}}}`,
			[]string{`$.cluser: key "cluser" is not LLooM's, which ignores it; did you mean "cluster"?`}},
		{"a unit in the wrong case", `{"cluster": {"nodes": {"a": {"resources": {"memoryGB": 64}}}}}`,
			[]string{`$.cluster.nodes["a"].resources.memoryGB: key "memoryGB" is not LLooM's, which ignores it; did you mean "memoryGb"?`}},
		{"two letters swapped", `{"runtimes": {"r": {"nodee": "a", "enabeld": true}}}`,
			[]string{`$.runtimes["r"].enabeld: key "enabeld" is not LLooM's, which ignores it; did you mean "enabled"?`,
				`$.runtimes["r"].nodee: key "nodee" is not LLooM's, which ignores it; did you mean "node"?`}},
		{"a key far from every known one is LLooM's business", `{"somethingElse": 1, "ui": {}}`, nil},
		{"map keys are names, not keys", `{"aliases": {"clustr": {"members": ["m"]}}}`, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, err := ParseConfig([]byte(tc.config), "config.json")
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range cfg.Typos {
				got = append(got, p.Path+": "+p.Msg)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("typos\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
	for _, f := range []string{"testdata/lloom-gateway-0.2.3/config.json", "testdata/lloom-0.2.3-routing/config.json", "testdata/fleet/config.json"} {
		cfg, err := LoadConfig(f)
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Typos) > 0 {
			t.Errorf("%s, a real config, is warned: %v", f, cfg.Typos)
		}
	}
}
