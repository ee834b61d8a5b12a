package inventory

import (
	"context"
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultCommands are the backends and tools looked up on PATH.
var DefaultCommands = []string{"docker", "vllm", "sglang", "ollama", "mlx_lm.server", "llama-server", "nvidia-smi", "mtplx"}

const defaultCommandTimeout = 10 * time.Second

// DefaultTTL is how long a collected inventory is served from the cache.
const DefaultTTL = 5 * time.Minute

// Options say what to collect and how. The zero value collects this
// machine with the defaults below.
type Options struct {
	// NodeID names the node; default $LLOOM_NODE_ID, else the host name.
	NodeID string
	// Prober reaches the machine; default OS{}.
	Prober Prober
	// ModelRoots are folders to scan for weights, on top of the Hugging
	// Face cache ($HF_HUB_CACHE, else $HF_HOME/hub, else
	// ~/.cache/huggingface/hub). "~/" is expanded.
	ModelRoots []string
	// Commands are looked up on PATH; nil means DefaultCommands.
	Commands []string
	// Links are this node's links from the LLooM config's
	// cluster.discovery.links (already filtered to this node).
	Links []Link
	// FabricPeers are the other nodes' fabric addresses from the config;
	// a peer in the subnet of a local 10.100.* interface becomes a link.
	FabricPeers []FabricPeer
	// TTL is how long a collection is served from the cache; default
	// DefaultTTL.
	TTL time.Duration
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Timeouts bound each probe; zero fields take the defaults.
	Timeouts Timeouts
}

// Timeouts bound the probes. Each probe has its own, so one hung tool
// costs its own timeout and no more.
type Timeouts struct {
	Command time.Duration // one probe command (nvidia-smi, docker, sysctl); default 10s
	Scan    time.Duration // the weights scan over all model roots; default 20s
}

func (o Options) withDefaults() Options {
	if o.Prober == nil {
		o.Prober = OS{}
	}
	if o.Commands == nil {
		o.Commands = DefaultCommands
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeouts.Command <= 0 {
		o.Timeouts.Command = defaultCommandTimeout
	}
	if o.Timeouts.Scan <= 0 {
		o.Timeouts.Scan = 20 * time.Second
	}
	return o
}

// PlatformID names a platform the way LLooM's machine profile does
// (Node.js names): linux-arm64, darwin-arm64, linux-x64, win32-x64.
func PlatformID(goos, goarch string) string {
	if goos == "windows" {
		goos = "win32"
	}
	switch goarch {
	case "amd64":
		goarch = "x64"
	case "386":
		goarch = "ia32"
	case "ppc64le":
		goarch = "ppc64"
	}
	return goos + "-" + goarch
}

// Collect takes one inventory of the machine now, without a cache. It
// never fails: a probe that cannot run leaves its field empty and says
// why in Notes. Use a Collector to serve inventories on request.
func Collect(ctx context.Context, opts Options) *Inventory {
	o := opts.withDefaults()
	p := o.Prober
	goos, goarch := p.Platform()
	inv := &Inventory{
		Schema:      Schema,
		NodeID:      o.NodeID,
		CollectedAt: o.Now().UTC().Truncate(time.Millisecond),
		PlatformID:  PlatformID(goos, goarch),
	}
	var notes []string
	if inv.NodeID == "" {
		inv.NodeID = p.Getenv("LLOOM_NODE_ID")
	}
	if inv.NodeID == "" {
		h, err := p.Hostname()
		if err != nil || h == "" {
			h = "localhost"
			notes = append(notes, "no node id configured and no host name: using localhost")
		}
		inv.NodeID = h
	}

	inv.Commands, notes = lookCommands(p, o.Commands, notes)
	has := func(c string) bool { return slices.Contains(inv.Commands, c) }
	apple := goos == "darwin" && goarch == "arm64"

	// The slow probes run side by side; each writes only its own result.
	var wg sync.WaitGroup
	var gpus []GPU
	var gpuNote, dockerNote string
	var roots []ModelRoot
	var weights []CachedWeight
	var rootNotes []string
	switch {
	case apple:
	case has("nvidia-smi"):
		wg.Go(func() {
			defer recoverNote(&gpuNote, "nvidia-smi")
			gpus, gpuNote = probeGPUs(ctx, p, o.Timeouts.Command)
		})
	case goos == "linux" || goos == "windows":
		gpuNote = "nvidia-smi not on PATH: no NVIDIA GPUs reported"
	}
	if has("docker") {
		wg.Go(func() {
			defer recoverNote(&dockerNote, "docker")
			inv.DockerImages, dockerNote = probeImages(ctx, p, o.Timeouts.Command)
		})
	}
	var scanPanic string
	wg.Go(func() {
		defer recoverNote(&scanPanic, "model roots")
		roots, weights, rootNotes = probeRoots(ctx, p, o)
	})
	mem, memErr := SampleHostMemory(ctx, p, o.Timeouts.Command)
	addrs, addrErr := p.InterfaceAddrs()
	wg.Wait()

	if gpuNote != "" {
		notes = append(notes, gpuNote)
	}
	var domNotes []string
	inv.ComputeArchs, inv.Accelerators, inv.MemoryDomains, domNotes = hardware(apple, gpus, mem, memErr)
	notes = append(notes, domNotes...)
	if dockerNote != "" {
		notes = append(notes, dockerNote)
	}
	inv.ModelRoots, inv.CachedWeights = roots, weights
	notes = append(notes, rootNotes...)
	if scanPanic != "" {
		notes = append(notes, scanPanic)
	}
	if addrErr != nil {
		notes = append(notes, "network interfaces unreadable: fabric links from config only")
	}
	var linkNotes []string
	inv.Links, linkNotes = fabricLinks(inv.NodeID, o.Links, o.FabricPeers, addrs)
	inv.Notes = append(notes, linkNotes...)
	return inv
}

// recoverNote turns a panic in a probe goroutine into that probe's note:
// nothing else could catch it, and one broken probe must not end the
// process.
func recoverNote(note *string, probe string) {
	if r := recover(); r != nil {
		*note = fmt.Sprintf("%s probe: internal error: %v", probe, r)
	}
}

// lookCommands returns the names found on PATH, sorted.
func lookCommands(p Prober, names []string, notes []string) ([]string, []string) {
	var found []string
	for _, c := range names {
		if c == "" || strings.ContainsAny(c, `/\`) {
			notes = append(notes, fmt.Sprintf("command %q skipped: give a name to find on PATH, not a path", c))
			continue
		}
		if _, err := p.LookPath(c); err == nil {
			found = append(found, c)
		}
	}
	slices.Sort(found)
	return slices.Compact(found), notes
}

func probeGPUs(ctx context.Context, p Prober, timeout time.Duration) ([]GPU, string) {
	out, err := run(ctx, p, timeout, "nvidia-smi", nvidiaSMIArgs...)
	if err != nil {
		return nil, fmt.Sprintf("%v: no NVIDIA GPUs reported", err)
	}
	gpus, err := ParseNvidiaSMI(out)
	if err != nil {
		return nil, fmt.Sprintf("%v: no NVIDIA GPUs reported", err)
	}
	slices.SortFunc(gpus, func(a, b GPU) int { return a.Index - b.Index })
	return gpus, ""
}

func probeImages(ctx context.Context, p Prober, timeout time.Duration) ([]string, string) {
	out, err := run(ctx, p, timeout, "docker", dockerImageArgs...)
	if err != nil {
		return nil, fmt.Sprintf("%v: no Docker images reported", err)
	}
	imgs, err := ParseDockerImages(out)
	if err != nil {
		return nil, fmt.Sprintf("%v: no Docker images reported", err)
	}
	return imgs, ""
}

// hardware turns the GPU rows and the memory sample into archs,
// accelerator tags and memory domains. Unified memory (Apple Silicon, or
// NVIDIA GPUs that report no memory of their own, like GB10) is one
// unified:0 domain; otherwise host memory is system:0 and each GPU with
// memory is device:cuda:<index>.
func hardware(apple bool, gpus []GPU, mem HostMemory, memErr error) (archs, accels []string, doms []Domain, notes []string) {
	var host *Domain
	if memErr != nil {
		notes = append(notes, fmt.Sprintf("%v: host memory not reported", memErr))
	} else {
		avail := gib(mem.AvailableBytes)
		host = &Domain{ID: "system:0", Kind: "system", CapacityGb: gib(mem.TotalBytes), AvailableGb: &avail, DeviceIDs: []string{"cpu:0"}}
	}
	if apple {
		archs = []string{"apple-metal"}
		accels = slices.Clone(appleAccelerators)
		if host != nil {
			host.ID, host.Kind, host.Backend = "unified:0", "unified", "metal"
			host.DeviceIDs = []string{"cpu:0", "apple-gpu", "apple-neural-engine"}
			doms = append(doms, *host)
		}
		return archs, accels, doms, notes
	}
	var devices []Domain
	var shared []string // GPUs without memory of their own
	for _, g := range gpus {
		id := "cuda:" + strconv.Itoa(g.Index)
		if a := ComputeArch(g.ComputeCap); a != "" {
			archs = append(archs, a)
		} else {
			notes = append(notes, fmt.Sprintf("GPU %s (%s) reports no compute capability: arch unknown", id, g.Name))
		}
		for _, t := range nvidiaAccelerators(g) {
			if !slices.Contains(accels, t) {
				accels = append(accels, t)
			}
		}
		if g.MemoryMiB == nil {
			shared = append(shared, id)
			continue
		}
		devices = append(devices, Domain{
			ID: "device:" + id, Kind: "device", Backend: "cuda",
			CapacityGb: round2(*g.MemoryMiB / 1024), DeviceIDs: []string{id},
		})
	}
	slices.Sort(archs)
	archs = slices.Compact(archs)
	if host != nil {
		if len(shared) > 0 && len(devices) == 0 {
			host.ID, host.Kind, host.Backend = "unified:0", "unified", "cuda"
			host.DeviceIDs = append(host.DeviceIDs, shared...)
		} else if len(shared) > 0 {
			notes = append(notes, fmt.Sprintf("%s report no memory beside GPUs that do: counted in no domain", strings.Join(shared, ", ")))
		}
		doms = append(doms, *host)
	}
	return archs, accels, append(doms, devices...), notes
}

// probeRoots measures free disk on each model root and lists the weights
// in it, all within the scan timeout.
func probeRoots(ctx context.Context, p Prober, o Options) ([]ModelRoot, []CachedWeight, []string) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeouts.Scan)
	defer cancel()
	var roots []ModelRoot
	var weights []CachedWeight
	s := &scanner{ctx: ctx, fsys: p.FS()}
	def := defaultRoot(p)
	rs, notes := modelRoots(p, def, o.ModelRoots)
	for _, r := range rs {
		free, err := p.FreeBytes(r)
		if err != nil {
			// A missing default cache is normal on a fresh machine; a
			// configured root that is gone is worth saying.
			if r != def {
				notes = append(notes, fmt.Sprintf("model root %s unreadable: not reported", r))
			}
			continue
		}
		roots = append(roots, ModelRoot{Path: r, FreeGb: gib(free)})
		if s.visited > scanLimit || ctx.Err() != nil {
			continue
		}
		found, err := s.root(r)
		weights = append(weights, found...)
		if err != nil {
			notes = append(notes, scanNote(r, err))
		}
	}
	slices.SortFunc(weights, func(a, b CachedWeight) int {
		if c := strings.Compare(a.Repo, b.Repo); c != 0 {
			return c
		}
		return strings.Compare(a.Root, b.Root)
	})
	return roots, weights, notes
}

// defaultRoot is the Hugging Face hub cache as huggingface_hub finds it.
func defaultRoot(p Prober) string {
	if v := p.Getenv("HF_HUB_CACHE"); v != "" {
		return expandHome(p, v)
	}
	if v := p.Getenv("HF_HOME"); v != "" {
		return path.Join(expandHome(p, v), "hub")
	}
	if home := p.Getenv("HOME"); home != "" {
		return path.Join(home, ".cache", "huggingface", "hub")
	}
	return ""
}

// modelRoots is the default root plus the configured ones: absolute,
// clean, without duplicates, in the order given. A relative root is
// skipped with a note: relative to what the agent's working directory
// happens to be is not a fact about the node.
func modelRoots(p Prober, def string, extra []string) (roots, notes []string) {
	var out []string
	for i, r := range append([]string{def}, extra...) {
		r = expandHome(p, strings.TrimSpace(r))
		if r == "" {
			continue
		}
		if !path.IsAbs(r) {
			if i > 0 {
				notes = append(notes, fmt.Sprintf("model root %q skipped: not an absolute path", r))
			}
			continue
		}
		r = path.Clean(r)
		if !slices.Contains(out, r) {
			out = append(out, r)
		}
	}
	return out, notes
}

func expandHome(p Prober, s string) string {
	if s == "~" || strings.HasPrefix(s, "~/") {
		if home := p.Getenv("HOME"); home != "" {
			return path.Join(home, strings.TrimPrefix(s, "~"))
		}
	}
	return s
}

// gib converts bytes to GiB, rounded to 0.01 so equal machines print
// equal inventories.
func gib(b uint64) float64 { return round2(float64(b) / (1 << 30)) }

func round2(x float64) float64 { return math.Round(x*100) / 100 }
