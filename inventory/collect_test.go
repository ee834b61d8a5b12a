package inventory

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/poolsolve/poolsolve/lloom"
)

func fixedNow() time.Time { return time.Date(2026, 11, 29, 14, 8, 3, 0, time.UTC) }

func ptr(f float64) *float64 { return &f }

func TestCollect(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		probe func() *fakeProber
		opts  func(Prober) Options
		want  func(*Inventory)
	}{
		{
			name:  "a DGX Spark reports sm_121, the Spark tags and one unified domain",
			probe: spark,
			opts:  sparkOptions,
			want: func(w *Inventory) {
				w.NodeID = "spark-node-01"
				w.PlatformID = "linux-arm64"
				w.ComputeArchs = []string{"sm_121"}
				w.Accelerators = []string{"cuda", "nvidia-gpu", "blackwell", "dgx-spark", "gb10"}
				w.MemoryDomains = []Domain{{
					ID: "unified:0", Kind: "unified", Backend: "cuda", CapacityGb: 121.69,
					AvailableGb: ptr(34.87), DeviceIDs: []string{"cpu:0", "cuda:0"},
				}}
				w.ModelRoots = []ModelRoot{{Path: "/home/spark/.cache/huggingface/hub", FreeGb: 500}}
				w.CachedWeights = []CachedWeight{{Repo: "unsloth/Qwen3.8-27B-NVFP4", Root: "/home/spark/.cache/huggingface/hub", SizeGb: 0}}
				w.Commands = []string{"docker", "nvidia-smi"}
				w.DockerImages = []string{"vllm/vllm-openai:v0.11.0", "vllm/vllm-openai@sha256:abc123"}
				w.Links = []Link{
					{PeerNodeID: "spark-node-02", LocalInterface: "enp1s0f0np0", LocalAddress: "10.100.192.2", PeerAddress: "10.100.192.1", Prefixlen: 24},
					{PeerNodeID: "spark-node-03", LocalInterface: "enp1s0f1np1", LocalAddress: "10.100.196.1", PeerAddress: "10.100.196.2", Prefixlen: 24},
				}
			},
		},
		{
			name: "a Mac reports apple-metal and unified memory from sysctl and vm_stat",
			probe: func() *fakeProber {
				return &fakeProber{
					goos: "darwin", goarch: "arm64", host: "macbook.local",
					env:    map[string]string{"HOME": "/Users/me", "LLOOM_NODE_ID": "macbook-local"},
					onPath: []string{"ollama", "mlx_lm.server"},
					outputs: map[string]string{
						"sysctl -n hw.memsize": "103079215104\n",
						"vm_stat": "Mach Virtual Memory Statistics: (page size of 16384 bytes)\n" +
							"Pages free:                               131072.\n" +
							"Pages active:                            2000000.\n" +
							"Pages inactive:                           262144.\n" +
							"Pages speculative:                         65536.\n",
					},
				}
			},
			opts: func(p Prober) Options { return Options{Prober: p, Now: fixedNow} },
			want: func(w *Inventory) {
				w.NodeID = "macbook-local"
				w.PlatformID = "darwin-arm64"
				w.ComputeArchs = []string{"apple-metal"}
				w.Accelerators = []string{"apple-gpu", "apple-neural-engine", "metal", "ane"}
				w.MemoryDomains = []Domain{{
					ID: "unified:0", Kind: "unified", Backend: "metal", CapacityGb: 96,
					AvailableGb: ptr(7), DeviceIDs: []string{"cpu:0", "apple-gpu", "apple-neural-engine"},
				}}
				w.Commands = []string{"mlx_lm.server", "ollama"}
			},
		},
		{
			name: "an x64 server with two discrete GPUs reports system memory and one device domain per GPU",
			probe: func() *fakeProber {
				return &fakeProber{
					goos: "linux", goarch: "amd64", host: "gpu-box",
					onPath: []string{"nvidia-smi", "vllm"},
					outputs: map[string]string{
						smiKey: "1, NVIDIA H100 80GB HBM3, 81559 MiB, 9.0\n0, NVIDIA H100 80GB HBM3, 81559 MiB, 9.0\n",
					},
					files: map[string]string{"/proc/meminfo": "MemTotal: 1048576 kB\nMemFree: 524288 kB\nMemAvailable: 786432 kB\n"},
				}
			},
			opts: func(p Prober) Options { return Options{Prober: p, Now: fixedNow, NodeID: "gpu-box-1"} },
			want: func(w *Inventory) {
				w.NodeID = "gpu-box-1"
				w.PlatformID = "linux-x64"
				w.ComputeArchs = []string{"sm_90"}
				w.Accelerators = []string{"cuda", "nvidia-gpu"}
				w.MemoryDomains = []Domain{
					{ID: "system:0", Kind: "system", CapacityGb: 1, AvailableGb: ptr(0.75), DeviceIDs: []string{"cpu:0"}},
					{ID: "device:cuda:0", Kind: "device", Backend: "cuda", CapacityGb: 79.65, DeviceIDs: []string{"cuda:0"}},
					{ID: "device:cuda:1", Kind: "device", Backend: "cuda", CapacityGb: 79.65, DeviceIDs: []string{"cuda:1"}},
				}
				w.Commands = []string{"nvidia-smi", "vllm"}
			},
		},
		{
			name: "a CPU-only Linux box without nvidia-smi or docker reports system memory and says why there are no GPUs",
			probe: func() *fakeProber {
				return &fakeProber{
					goos: "linux", goarch: "amd64", host: "cpu-box",
					files: map[string]string{"/proc/meminfo": "MemTotal: 2097152 kB\nMemFree: 1048576 kB\n"},
				}
			},
			opts: func(p Prober) Options { return Options{Prober: p, Now: fixedNow} },
			want: func(w *Inventory) {
				w.NodeID = "cpu-box"
				w.PlatformID = "linux-x64"
				w.MemoryDomains = []Domain{{ID: "system:0", Kind: "system", CapacityGb: 2, AvailableGb: ptr(1), DeviceIDs: []string{"cpu:0"}}}
				w.Notes = []string{"nvidia-smi not on PATH: no NVIDIA GPUs reported"}
			},
		},
		{
			name: "failing tools leave their fields empty with a note and the rest is still reported",
			probe: func() *fakeProber {
				p := spark()
				delete(p.outputs, smiKey)
				p.errs = map[string]error{dockerKey: errors.New("exit status 1: permission denied while trying to connect to the Docker daemon socket")}
				p.files = nil
				return p
			},
			opts: sparkOptions,
			want: func(w *Inventory) {
				w.NodeID = "spark-node-01"
				w.PlatformID = "linux-arm64"
				w.ModelRoots = []ModelRoot{{Path: "/home/spark/.cache/huggingface/hub", FreeGb: 500}}
				w.CachedWeights = []CachedWeight{{Repo: "unsloth/Qwen3.8-27B-NVFP4", Root: "/home/spark/.cache/huggingface/hub"}}
				w.Commands = []string{"docker", "nvidia-smi"}
				w.Links = []Link{
					{PeerNodeID: "spark-node-02", LocalInterface: "enp1s0f0np0", LocalAddress: "10.100.192.2", PeerAddress: "10.100.192.1", Prefixlen: 24},
					{PeerNodeID: "spark-node-03", LocalInterface: "enp1s0f1np1", LocalAddress: "10.100.196.1", PeerAddress: "10.100.196.2", Prefixlen: 24},
				}
				w.Notes = []string{
					"nvidia-smi: exit status 127: no NVIDIA GPUs reported",
					"inventory: read /proc/meminfo: file does not exist: host memory not reported",
					"docker: exit status 1: permission denied while trying to connect to the Docker daemon socket: no Docker images reported",
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Collect(context.Background(), tc.opts(tc.probe()))
			want := &Inventory{Schema: Schema, CollectedAt: fixedNow()}
			tc.want(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Collect:\n got %s\nwant %s", mustJSON(t, got), mustJSON(t, want))
			}
		})
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestCollectOutputIsAValidDocumentAndTheSameEveryTime(t *testing.T) {
	t.Parallel()
	a := mustJSON(t, Collect(context.Background(), sparkOptions(spark())))
	b := mustJSON(t, Collect(context.Background(), sparkOptions(spark())))
	if !bytes.Equal(a, b) {
		t.Fatalf("two collections of the same machine differ:\n%s\n%s", a, b)
	}
	inv, err := Parse(a, "collected.json")
	if err != nil {
		t.Fatalf("Parse(collected inventory) = %v\n%s", err, a)
	}
	if again := mustJSON(t, inv); !bytes.Equal(a, again) {
		t.Errorf("Parse round trip changed the document:\n got %s\nwant %s", again, a)
	}
}

func TestCollectGivesEachProbeItsOwnTimeout(t *testing.T) {
	t.Parallel()
	p := spark()
	p.hang = true
	o := sparkOptions(p)
	o.Timeouts = Timeouts{Command: 20 * time.Millisecond}
	start := time.Now()
	inv := Collect(context.Background(), o)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Collect took %s with hanging tools", d)
	}
	for _, want := range []string{"nvidia-smi: timed out after 20ms: no NVIDIA GPUs reported", "docker: timed out after 20ms: no Docker images reported"} {
		if !slices.Contains(inv.Notes, want) {
			t.Errorf("notes %q lack %q", inv.Notes, want)
		}
	}
	if len(inv.MemoryDomains) != 1 || len(inv.CachedWeights) != 1 {
		t.Errorf("probes that do not hang were lost: domains %v, weights %v", inv.MemoryDomains, inv.CachedWeights)
	}
}

func TestCollectRunsToolsWithArgvOnly(t *testing.T) {
	t.Parallel()
	p := spark()
	Collect(context.Background(), sparkOptions(p))
	want := []string{dockerKey, smiKey}
	got := slices.Sorted(slices.Values(p.calls))
	if !slices.Equal(got, want) {
		t.Errorf("commands run = %q, want %q", got, want)
	}
	for _, c := range p.calls {
		if strings.HasPrefix(c, "sh ") || strings.HasPrefix(c, "bash ") {
			t.Errorf("a probe went through a shell: %q", c)
		}
	}
}

func TestCommandsAreLookedUpByNameOnly(t *testing.T) {
	t.Parallel()
	p := &fakeProber{goos: "linux", goarch: "arm64", host: "h", onPath: []string{"vllm", "ollama"},
		files: map[string]string{"/proc/meminfo": sparkMeminfo}}
	inv := Collect(context.Background(), Options{Prober: p, Now: fixedNow, Commands: []string{"vllm", "/bin/sh", "ollama", "vllm", "absent"}})
	if want := []string{"ollama", "vllm"}; !slices.Equal(inv.Commands, want) {
		t.Errorf("Commands = %q, want %q", inv.Commands, want)
	}
	if !slices.Contains(inv.Notes, `command "/bin/sh" skipped: give a name to find on PATH, not a path`) {
		t.Errorf("notes %q do not mention the path given as a command", inv.Notes)
	}
}

func TestModelRoots(t *testing.T) {
	t.Parallel()
	const hub = "/data/hf/hub"
	p := &fakeProber{
		goos: "linux", goarch: "arm64", host: "h",
		env:   map[string]string{"HOME": "/home/u", "HF_HOME": "/data/hf"},
		files: map[string]string{"/proc/meminfo": sparkMeminfo},
		free:  map[string]uint64{hub: 10 << 30, "/models": 1 << 40, "/home/u/weights": 3 << 29},
		fsys: fstest.MapFS{
			"data/hf/hub/models--Qwen--Qwen3-Embedding-4B/snapshots/a/config.json": {Data: []byte("{}")},
			"data/hf/hub/models--Qwen--Qwen3-Embedding-4B/blobs/1":                 {Data: make([]byte, 1<<20)},
			"data/hf/hub/models--Qwen--Qwen3-Embedding-4B/blobs/2":                 {Data: make([]byte, 1<<20)},
			"data/hf/hub/models--gpt2/snapshots/b/model.safetensors":               {Data: []byte("x")},
			"data/hf/hub/models--org--only-readme/snapshots/c/README.md":           {Data: []byte("x")},
			"data/hf/hub/datasets--org--set/snapshots/d/config.json":               {Data: []byte("{}")},
			"data/hf/hub/.locks/models--gpt2/x.lock":                               {Data: []byte("")},
			"models/openai/whisper-large-v3-turbo/config.json":                     {Data: []byte("{}")},
			"models/openai/whisper-large-v3-turbo/model.safetensors":               {Data: make([]byte, 5<<20)},
			"models/openai/notes/README.md":                                        {Data: []byte("x")},
			"models/Qwen3-8B-GGUF/qwen3-8b-q4.gguf":                                {Data: make([]byte, 2<<20)},
			"models/.cache/hidden/config.json":                                     {Data: []byte("{}")},
			"home/u/weights/org/name/config.json":                                  {Data: []byte("{}")},
		},
	}
	o := Options{Prober: p, Now: fixedNow, ModelRoots: []string{"/models", "~/weights", "/models/", "relative/dir", "/gone"}}
	inv := Collect(context.Background(), o)
	wantRoots := []ModelRoot{{Path: hub, FreeGb: 10}, {Path: "/models", FreeGb: 1024}, {Path: "/home/u/weights", FreeGb: 1.5}}
	if !reflect.DeepEqual(inv.ModelRoots, wantRoots) {
		t.Errorf("ModelRoots = %+v, want %+v", inv.ModelRoots, wantRoots)
	}
	wantWeights := []CachedWeight{
		{Repo: "Qwen/Qwen3-Embedding-4B", Root: hub, SizeGb: 0},
		{Repo: "Qwen3-8B-GGUF", Root: "/models", SizeGb: 0},
		{Repo: "gpt2", Root: hub, SizeGb: 0},
		{Repo: "openai/whisper-large-v3-turbo", Root: "/models", SizeGb: 0},
		{Repo: "org/name", Root: "/home/u/weights", SizeGb: 0},
	}
	if !reflect.DeepEqual(inv.CachedWeights, wantWeights) {
		t.Errorf("CachedWeights = %+v, want %+v", inv.CachedWeights, wantWeights)
	}
	for _, want := range []string{
		`model root "relative/dir" skipped: not an absolute path`,
		"model root /gone unreadable: not reported",
	} {
		if !slices.Contains(inv.Notes, want) {
			t.Errorf("notes %q lack %q", inv.Notes, want)
		}
	}
}

func TestWeightSizesAreSummed(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{
		"r/models--a--b/snapshots/x/config.json": {Data: []byte("{}")},
		"r/models--a--b/blobs/1":                 {Data: make([]byte, 600<<20)},
		"r/models--a--b/blobs/2":                 {Data: make([]byte, 424<<20)},
		"r/models--a--b/blobs/3.incomplete":      {Data: make([]byte, 100<<20)},
		"r/c/d/config.json":                      {Data: []byte("{}")},
		"r/c/d/sub/model-00001.safetensors":      {Data: make([]byte, 256<<20)},
		"r/c/d/.git/objects/big":                 {Data: make([]byte, 256<<20)},
	}
	s := &scanner{ctx: context.Background(), fsys: fsys}
	got, err := s.root("/r")
	if err != nil {
		t.Fatal(err)
	}
	want := []CachedWeight{{Repo: "a/b", Root: "/r", SizeGb: 1}, {Repo: "c/d", Root: "/r", SizeGb: 0.25}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("root(/r) = %+v, want %+v", got, want)
	}
}

func TestScanStopsAtItsLimitAndSaysSo(t *testing.T) {
	t.Parallel()
	fsys := fstest.MapFS{"r/a/b/config.json": {Data: []byte("{}")}}
	s := &scanner{ctx: context.Background(), fsys: fsys, visited: scanLimit}
	_, err := s.root("/r")
	if !errors.Is(err, errScanLimit) {
		t.Fatalf("root past the limit = %v, want errScanLimit", err)
	}
	if got := scanNote("/r", err); !strings.Contains(got, "cached weights may be incomplete") {
		t.Errorf("scanNote = %q", got)
	}
}

func TestFabricLinks(t *testing.T) {
	t.Parallel()
	ifs := []InterfaceAddr{
		{Interface: "enp1s0f0np0", Prefix: netip.MustParsePrefix("10.100.192.2/24")},
		{Interface: "enP2p1s0f0np0", Prefix: netip.MustParsePrefix("10.100.193.2/24")},
		{Interface: "enp1s0f1np1", Prefix: netip.MustParsePrefix("10.100.196.1/24")},
		{Interface: "eth0", Prefix: netip.MustParsePrefix("192.168.1.20/24")},
	}
	configured := []Link{
		{PeerNodeID: "spark-node-02", LocalInterface: "enp1s0f0np0", LocalAddress: "10.100.192.2", PeerAddress: "10.100.192.1", Prefixlen: 24},
		{PeerNodeID: "spark-node-02", LocalInterface: "enP2p1s0f0np0", LocalAddress: "10.100.193.2", PeerAddress: "10.100.193.1", Prefixlen: 24},
	}
	tests := []struct {
		name       string
		configured []Link
		peers      []FabricPeer
		addrs      []InterfaceAddr
		wantPeers  []string
		wantNotes  []string
	}{
		{
			name:       "configured links are kept and a fabric interface with no peer is noted",
			configured: configured,
			addrs:      ifs,
			wantPeers:  []string{"spark-node-02@10.100.193.1", "spark-node-02@10.100.192.1"}, // by interface: enP2... < enp1...
			wantNotes:  []string{"fabric interface enp1s0f1np1 10.100.196.1/24 leads to no configured peer"},
		},
		{
			name:       "a peer in the subnet of one fabric interface becomes a link and a duplicate address is dropped",
			configured: configured,
			peers:      []FabricPeer{{NodeID: "spark-node-03", Address: "10.100.196.2"}, {NodeID: "spark-node-02", Address: "10.100.192.1"}},
			addrs:      ifs,
			wantPeers:  []string{"spark-node-02@10.100.193.1", "spark-node-02@10.100.192.1", "spark-node-03@10.100.196.2"},
		},
		{
			name:      "peers outside the fabric range, on a local address, or on this node are ignored",
			peers:     []FabricPeer{{NodeID: "lan", Address: "192.168.1.30"}, {NodeID: "me", Address: "10.100.192.2"}, {NodeID: "self", Address: "10.100.192.9"}, {NodeID: "bad", Address: "not-an-ip"}},
			addrs:     ifs[:1],
			wantNotes: []string{"fabric interface enp1s0f0np0 10.100.192.2/24 leads to no configured peer"},
		},
		{
			name:  "a peer that two interfaces could reach is ambiguous and not linked",
			peers: []FabricPeer{{NodeID: "spark-node-02", Address: "10.100.192.1"}},
			addrs: []InterfaceAddr{
				{Interface: "a", Prefix: netip.MustParsePrefix("10.100.192.2/24")},
				{Interface: "b", Prefix: netip.MustParsePrefix("10.100.192.3/24")},
			},
			wantNotes: []string{
				"fabric peer spark-node-02 at 10.100.192.1 matches 2 local interfaces; not linked (ambiguous-local-interface)",
				"fabric interface a 10.100.192.2/24 leads to no configured peer",
				"fabric interface b 10.100.192.3/24 leads to no configured peer",
			},
		},
		{
			name:       "a configured link whose local address is gone is kept with a note",
			configured: configured[:1],
			wantPeers:  []string{"spark-node-02@10.100.192.1"},
			wantNotes:  []string{"configured link to spark-node-02: local address 10.100.192.2 is not on any interface"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			links, notes := fabricLinks("self", tc.configured, tc.peers, tc.addrs)
			var peers []string
			for _, l := range links {
				peers = append(peers, l.PeerNodeID+"@"+l.PeerAddress)
			}
			if !slices.Equal(peers, tc.wantPeers) {
				t.Errorf("links = %q, want %q", peers, tc.wantPeers)
			}
			if !slices.Equal(notes, tc.wantNotes) {
				t.Errorf("notes = %q, want %q", notes, tc.wantNotes)
			}
		})
	}
}

func TestFabricFromCluster(t *testing.T) {
	t.Parallel()
	pl := 24
	c := &lloom.Cluster{
		Discovery: &lloom.Discovery{Links: []lloom.Link{
			{NodeID: "spark-node-01", PeerNodeID: "spark-node-02", LocalInterface: "enp1s0f0np0", LocalAddress: "10.100.192.2", PeerAddress: "10.100.192.1", Prefixlen: &pl},
			{NodeID: "spark-node-02", PeerNodeID: "spark-node-03", PeerAddress: "10.100.200.1"},
		}},
		Nodes: map[string]lloom.ClusterNode{
			"spark-node-03": {BackendHost: "10.100.196.2"},
			"spark-node-01": {FabricAddress: "10.100.192.2"},
			"spark-node-02": {FabricAddress: "10.100.192.1", BackendHost: "192.168.1.12"},
		},
	}
	links, peers := FabricFromCluster(c, "spark-node-01")
	wantLinks := []Link{{PeerNodeID: "spark-node-02", LocalInterface: "enp1s0f0np0", LocalAddress: "10.100.192.2", PeerAddress: "10.100.192.1", Prefixlen: 24}}
	if !reflect.DeepEqual(links, wantLinks) {
		t.Errorf("links = %+v, want only the one observed from spark-node-01: %+v", links, wantLinks)
	}
	wantPeers := []FabricPeer{{NodeID: "spark-node-02", Address: "10.100.192.1"}, {NodeID: "spark-node-02", Address: "192.168.1.12"}, {NodeID: "spark-node-03", Address: "10.100.196.2"}}
	if !reflect.DeepEqual(peers, wantPeers) {
		t.Errorf("peers = %+v, want %+v", peers, wantPeers)
	}
}

func TestPlatformID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ goos, goarch, want string }{
		{"linux", "arm64", "linux-arm64"},
		{"darwin", "arm64", "darwin-arm64"},
		{"linux", "amd64", "linux-x64"},
		{"windows", "amd64", "win32-x64"},
		{"linux", "386", "linux-ia32"},
	} {
		if got := PlatformID(tc.goos, tc.goarch); got != tc.want {
			t.Errorf("PlatformID(%q, %q) = %q, want %q", tc.goos, tc.goarch, got, tc.want)
		}
	}
}

func TestCollectOnThisMachineNeverFails(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	inv := Collect(context.Background(), Options{NodeID: "this", ModelRoots: []string{dir}, Timeouts: Timeouts{Command: 5 * time.Second, Scan: 5 * time.Second}})
	b := mustJSON(t, inv)
	if _, err := Parse(b, "this.json"); err != nil {
		t.Fatalf("Parse(this machine's inventory) = %v\n%s", err, b)
	}
	if inv.PlatformID == "" || len(inv.ModelRoots) == 0 {
		t.Errorf("inventory of this machine lacks platform or the temp model root:\n%s", b)
	}
}
