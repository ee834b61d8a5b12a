package pooltest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/poolsolve/poolsolve/model"
)

// Random returns a seeded pool with the given number of nodes and variants:
// Sparks, Macs and GPU servers of mixed sizes, some links, TP1 and TP2
// variants of every kind (recipes with several candidate placements),
// external models, aliases with route profiles, demand, SLOs, a current
// state, and occasional pins and cordons. The same arguments give the same
// pool. Pools of 2-3 nodes and 3-4 variants stay small enough for
// BruteForce.
func Random(seed uint64, nodes, variants int) *model.Pool {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	nodes, variants = max(nodes, 1), max(variants, 0)
	var parts []Part

	type nodeInfo struct {
		id, kind string
		capGb    float64
		devGb    float64
	}
	infos := make([]nodeInfo, nodes)
	for i := range infos {
		ni := nodeInfo{kind: []string{"spark", "mac", "gpu"}[r.IntN(3)]}
		ni.id = fmt.Sprintf("%s-%02d", ni.kind, i)
		var opts []NodeOpt
		switch ni.kind {
		case "spark":
			ni.capGb = 121.69
			opts = append(opts, Spark(), Commands("docker", "vllm"))
		case "mac":
			ni.capGb = []float64{32, 64, 96, 128, 192}[r.IntN(5)]
			opts = append(opts, Mac(), Commands("mlx_lm.server", "llama-server"))
		default:
			ni.capGb = []float64{128, 256}[r.IntN(2)]
			ni.devGb = []float64{24, 48, 80}[r.IntN(3)]
			opts = append(opts, GPU(ni.devGb), Commands("vllm"))
			if r.IntN(2) == 0 {
				opts = append(opts, Commands("docker"))
			}
		}
		if r.IntN(3) == 0 {
			opts = append(opts, Images("vllm/vllm-openai"))
		}
		if r.IntN(2) == 0 {
			opts = append(opts, Cached(fmt.Sprintf("org/w%d", r.IntN(4))))
		}
		opts = append(opts, ModelRoot("/models", float64(r.IntN(400))))
		if r.IntN(5) == 0 {
			opts = append(opts, BudgetGb(math.Round(ni.capGb*0.8)))
		}
		if nodes > 1 && r.IntN(10) == 0 {
			opts = append(opts, Cordoned())
		}
		infos[i] = ni
		parts = append(parts, Node(ni.id, ni.capGb, opts...))
	}

	var pairs [][2]int
	for i := range infos {
		for j := i + 1; j < len(infos); j++ {
			if infos[i].kind == infos[j].kind && infos[i].kind != "gpu" && r.IntN(2) == 0 {
				pairs = append(pairs, [2]int{i, j})
				parts = append(parts, Link(infos[i].id, infos[j].id))
			}
		}
	}

	nLocal := max(1, variants*2/3)
	local := make([]string, nLocal)
	for i := range local {
		local[i] = fmt.Sprintf("m%02d", i)
	}
	external := make([]string, 1+r.IntN(2))
	for i := range external {
		external[i] = fmt.Sprintf("ext-%d", i)
		ft := 0.0
		if r.IntN(2) == 0 {
			ft = float64(800 + 100*r.IntN(18))
		}
		parts = append(parts, External(external[i], ft))
	}
	for _, m := range local {
		parts = append(parts, LocalModel(m))
	}

	archOf := map[string]string{"spark": "sm_121", "mac": "apple-metal", "gpu": "sm_90"}
	for i := range variants {
		kind := model.Managed
		switch x := r.IntN(20); {
		case x < 4:
			kind = model.Unmanaged
		case x < 9:
			kind = model.Recipe
		}
		id := fmt.Sprintf("rt-%02d", i)
		if kind == model.Recipe {
			id = fmt.Sprintf("recipe:r%02d/rt", i)
		}
		tp := 1
		if len(pairs) > 0 && r.IntN(4) == 0 {
			tp = 2
		}
		pick := func() []int {
			if tp == 2 {
				pr := pairs[r.IntN(len(pairs))]
				return []int{pr[0], pr[1]}
			}
			return []int{r.IntN(nodes)}
		}
		count := 1
		if kind == model.Recipe {
			count = 2 + r.IntN(2)
		}
		var opts []VariantOpt
		var places [][]int
		for range count {
			pl := pick()
			dup := false
			for _, q := range places {
				dup = dup || slices.Equal(q, pl)
			}
			if dup {
				continue
			}
			places = append(places, pl)
			ids := make([]string, len(pl))
			for k, n := range pl {
				ids[k] = infos[n].id
			}
			opts = append(opts, On(ids...))
		}
		first := infos[places[0][0]]
		memGb := math.Round(first.capGb*(0.15+0.45*r.Float64())*2) / 2
		opts = append(opts, Kind(kind), TP(tp))
		if first.devGb > 0 {
			opts = append(opts, DeviceGb(math.Round(first.devGb*(0.3+0.6*r.Float64()))))
		}
		arch := archOf[first.kind]
		if r.IntN(12) == 0 {
			arch = archOf[[]string{"spark", "mac", "gpu"}[r.IntN(3)]]
		}
		if kind == model.Recipe || r.IntN(2) == 0 {
			opts = append(opts, Archs(arch))
		}
		if kind == model.Recipe {
			cmd := "vllm"
			if first.kind == "mac" {
				cmd = "mlx_lm.server"
			}
			w := fmt.Sprintf("org/w%d", r.IntN(4))
			opts = append(opts, Needs([]string{cmd}, nil), Weights(float64(20+10*r.IntN(10)), w))
		}
		served := []string{local[i%nLocal]}
		if r.IntN(7) == 0 && nLocal > 1 {
			other := local[r.IntN(nLocal)]
			if other != served[0] {
				served = append(served, other)
			}
		}
		ft := float64(150 + 50*r.IntN(60))
		total := 0.0
		if r.IntN(2) == 0 {
			total = ft + float64(1000*(1+r.IntN(20)))
		}
		opts = append(opts, Serves(served...), Perf(ft, total), LoadMs(float64(1000*(5+r.IntN(176)))),
			DefaultResidency(model.Residencies[r.IntN(3)]))
		parts = append(parts, Variant(id, memGb, opts...))

		if r.IntN(5) < 2 {
			res := model.Residencies[r.IntN(3)]
			if kind == model.Unmanaged {
				res = model.Always
			}
			pl := places[r.IntN(len(places))]
			ids := make([]string, len(pl))
			for k, n := range pl {
				ids[k] = infos[n].id
			}
			parts = append(parts, Running(id, res, ids...))
			if kind == model.Managed && r.IntN(6) == 0 {
				pin := model.Residency("")
				if r.IntN(2) == 0 {
					pin = res
				}
				parts = append(parts, PinLane(id, pin, ids...))
			}
		}
	}

	all := append(slices.Clone(local), external...)
	for _, m := range local {
		if r.IntN(5) == 0 {
			parts = append(parts, Direct(m, quarter(r)))
		}
		if r.IntN(10) == 0 {
			parts = append(parts, Required(m))
		}
	}
	for i := range 1 + variants/2 {
		id := fmt.Sprintf("alias-%02d", i)
		k := 1 + r.IntN(3)
		var members []string
		for _, j := range r.Perm(len(all)) {
			if len(members) < k {
				members = append(members, all[j])
			}
		}
		demand := 0.0
		if r.IntN(5) != 0 {
			demand = quarter(r)
		}
		parts = append(parts, Alias(id, demand, members...))
		if r.IntN(10) < 3 {
			route := []string{all[r.IntN(len(all))]}
			if r.IntN(2) == 0 {
				route = append(route, members[0])
			}
			if len(route) == 2 && route[0] == route[1] {
				route = route[:1]
			}
			parts = append(parts, RouteProfile(id, "fast", route...))
			if r.IntN(3) == 0 {
				parts = append(parts, PinRoute(id, route...))
			}
		}
		if r.IntN(4) == 0 {
			ft, total := float64(500+250*r.IntN(15)), 0.0
			if r.IntN(3) == 0 {
				total = ft + float64(1000*r.IntN(30))
			}
			parts = append(parts, SLO(id, ft, total))
		}
		if r.IntN(2) == 0 {
			parts = append(parts, Routed(id, members[r.IntN(len(members))]))
		}
	}
	if r.IntN(10) == 0 {
		parts = append(parts, Settings(func(s *model.Settings) { s.ExternalAllowed = false }))
	}
	return New(parts...)
}

// quarter is a demand in quarter requests, so that level-4 rounding meets
// halves.
func quarter(r *rand.Rand) float64 { return float64(1+r.IntN(200)) / 4 }
