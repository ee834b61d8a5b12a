package inventory

import (
	"context"
	"errors"
	"io/fs"
	"net/netip"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"testing/fstest"
)

// fakeProber is a machine made of canned answers.
type fakeProber struct {
	goos, goarch string
	host         string
	env          map[string]string
	onPath       []string
	// outputs maps "name arg1 arg2" to stdout; errs to a failure.
	outputs map[string]string
	errs    map[string]error
	files   map[string]string
	free    map[string]uint64
	fsys    fs.FS
	addrs   []InterfaceAddr

	// hang makes every command wait for ctx to end.
	hang bool
	// gate, when set, holds nvidia-smi until closed.
	gate chan struct{}
	// panicOn makes that command, or LookPath, panic.
	panicOn string

	mu    sync.Mutex
	calls []string
	smi   atomic.Int64 // nvidia-smi runs: one per collection
}

var _ Prober = (*fakeProber)(nil)

func (f *fakeProber) Command(ctx context.Context, name string, args ...string) ([]byte, error) {
	key := strings.Join(append([]string{name}, args...), " ")
	f.mu.Lock()
	f.calls = append(f.calls, key)
	f.mu.Unlock()
	if name == "nvidia-smi" {
		f.smi.Add(1)
		if f.gate != nil {
			select {
			case <-f.gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	if name == f.panicOn {
		panic("probe " + name + " exploded")
	}
	if f.hang {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	if err, ok := f.errs[key]; ok {
		return nil, err
	}
	if out, ok := f.outputs[key]; ok {
		return []byte(out), nil
	}
	return nil, errors.New("exit status 127")
}

func (f *fakeProber) LookPath(name string) (string, error) {
	if f.panicOn == "LookPath" {
		panic("LookPath exploded")
	}
	for _, c := range f.onPath {
		if c == name {
			return "/usr/bin/" + name, nil
		}
	}
	return "", exec.ErrNotFound
}

func (f *fakeProber) ReadFile(name string) ([]byte, error) {
	if s, ok := f.files[name]; ok {
		return []byte(s), nil
	}
	return nil, fs.ErrNotExist
}

func (f *fakeProber) FreeBytes(path string) (uint64, error) {
	if b, ok := f.free[path]; ok {
		return b, nil
	}
	return 0, fs.ErrNotExist
}

func (f *fakeProber) FS() fs.FS {
	if f.fsys == nil {
		return fstest.MapFS{}
	}
	return f.fsys
}

func (f *fakeProber) InterfaceAddrs() ([]InterfaceAddr, error) { return f.addrs, nil }
func (f *fakeProber) Platform() (string, string)               { return f.goos, f.goarch }
func (f *fakeProber) Hostname() (string, error)                { return f.host, nil }
func (f *fakeProber) Getenv(k string) string                   { return f.env[k] }

const (
	smiKey    = "nvidia-smi --query-gpu=index,name,memory.total,compute_cap --format=csv,noheader"
	dockerKey = "docker image ls --format {{.Repository}}:{{.Tag}}@{{.Digest}}"
)

// sparkMeminfo is /proc/meminfo as a DGX Spark shows it (121.69 GiB).
const sparkMeminfo = `MemTotal:       127598836 kB
MemFree:         3588140 kB
MemAvailable:   36568920 kB
Buffers:           12345 kB
`

// spark is a DGX Spark: GB10, unified memory, vLLM in Docker, a Hugging
// Face cache with one model, and two fabric cables.
func spark() *fakeProber {
	return &fakeProber{
		goos: "linux", goarch: "arm64", host: "spark-node-01",
		env:    map[string]string{"HOME": "/home/spark"},
		onPath: []string{"docker", "nvidia-smi"},
		outputs: map[string]string{
			smiKey:    "0, NVIDIA GB10, [N/A], 12.1\n",
			dockerKey: "vllm/vllm-openai:v0.11.0@sha256:abc123\n<none>:<none>@<none>\n",
		},
		files: map[string]string{"/proc/meminfo": sparkMeminfo},
		free:  map[string]uint64{"/home/spark/.cache/huggingface/hub": 500 << 30},
		fsys: fstest.MapFS{
			"home/spark/.cache/huggingface/hub/models--unsloth--Qwen3.8-27B-NVFP4/snapshots/r1/config.json":       {Data: []byte("{}")},
			"home/spark/.cache/huggingface/hub/models--unsloth--Qwen3.8-27B-NVFP4/snapshots/r1/model.safetensors": {Data: []byte("x")},
			"home/spark/.cache/huggingface/hub/models--unsloth--Qwen3.8-27B-NVFP4/blobs/aaa":                      {Data: make([]byte, 3<<20)},
			"home/spark/.cache/huggingface/hub/models--unsloth--Qwen3.8-27B-NVFP4/blobs/bbb.incomplete":           {Data: make([]byte, 1<<20)},
			"home/spark/.cache/huggingface/hub/version.txt":                                                       {Data: []byte("1")},
		},
		addrs: []InterfaceAddr{
			{Interface: "lo", Prefix: netip.MustParsePrefix("127.0.0.1/8")},
			{Interface: "enp1s0f0np0", Prefix: netip.MustParsePrefix("10.100.192.2/24")},
			{Interface: "enp1s0f1np1", Prefix: netip.MustParsePrefix("10.100.196.1/24")},
		},
	}
}

func sparkOptions(p Prober) Options {
	return Options{
		Prober: p,
		Now:    fixedNow,
		FabricPeers: []FabricPeer{
			{NodeID: "spark-node-02", Address: "10.100.192.1"},
			{NodeID: "spark-node-03", Address: "10.100.196.2"},
		},
	}
}
