package pooltest

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/poolsolve/poolsolve/model"
)

// RandomGPUs returns a seeded pool of GPU servers with 1-4 GPUs each
// (each GPU its own device domain, some nodes alike), where lanes draw
// per GPU: recipes on any k of a node's GPUs (one placement per set),
// configured runtimes on the first k, some running now on named GPUs;
// aliases with demand over them and an external fallback. It is the
// brute-force ground for per-GPU packing and the symmetry between GPUs.
// The same arguments give the same pool.
func RandomGPUs(seed uint64, nodes, variants int) *model.Pool {
	r := rand.New(rand.NewPCG(seed, seed^0x51ed2701a3c0b7e5))
	nodes, variants = max(nodes, 1), max(variants, 1)
	var parts []Part
	type nodeInfo struct {
		id   string
		gpus int
		gb   float64
	}
	infos := make([]nodeInfo, nodes)
	for i := range infos {
		ni := nodeInfo{id: fmt.Sprintf("gpu-%02d", i), gpus: 1 + r.IntN(4), gb: []float64{24, 48, 80}[r.IntN(3)]}
		if i > 0 && r.IntN(2) == 0 {
			ni.gpus, ni.gb = infos[i-1].gpus, infos[i-1].gb // a twin box
		}
		infos[i] = ni
		parts = append(parts, Node(ni.id, 512, GPUs(ni.gpus, ni.gb), Commands("vllm")))
	}
	parts = append(parts, External("ext-0", float64(800+100*r.IntN(10))))
	for i := range variants {
		n := infos[r.IntN(nodes)]
		k := 1 + r.IntN(n.gpus)
		gb := math.Round(n.gb*(0.25+0.6*r.Float64())) - 2
		m := fmt.Sprintf("m%02d", i)
		parts = append(parts, LocalModel(m))
		opts := []VariantOpt{Serves(m), Perf(float64(200+50*r.IntN(20)), 0), LoadMs(float64(1000 * (5 + r.IntN(60)))),
			DefaultResidency(model.Residencies[r.IntN(3)])}
		id := fmt.Sprintf("rt-%02d", i)
		switch r.IntN(3) {
		case 0: // a configured runtime on the first GPUs
			opts = append(opts, On(n.id), Kind(model.Managed), FirstGPUs(k, gb))
		default: // a recipe on any GPUs of one or two nodes
			id = fmt.Sprintf("recipe:r%02d/rt", i)
			opts = append(opts, On(n.id), Kind(model.Recipe), PerGPU(k, gb))
			if o := infos[r.IntN(nodes)]; o.id != n.id && o.gpus >= k && r.IntN(2) == 0 {
				opts = append(opts, On(o.id))
			}
			if r.IntN(4) == 0 {
				gpu := fmt.Sprintf("device:cuda:%d", r.IntN(n.gpus))
				if k == 1 {
					parts = append(parts, RunningOn(id, model.Residencies[r.IntN(3)], n.id, gpu))
				}
			}
		}
		parts = append(parts, Variant(id, 8, opts...))
		alias := fmt.Sprintf("alias-%02d", i)
		members := []string{m}
		if r.IntN(2) == 0 {
			members = append(members, "ext-0")
		}
		parts = append(parts, Alias(alias, quarter(r), members...))
	}
	return New(parts...)
}
