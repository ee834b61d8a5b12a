package catalog

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

// missingDevice is the domain a draw names when a node has fewer matching
// device domains than the lane needs: no node has it, so no placement
// that draws on it is eligible.
const missingDevice = "device:missing"

// devicesPerNode is how many device domains a lane takes on each of its
// nodes: its tensor-parallel ranks spread evenly over its nodes.
func devicesPerNode(tp, nodes int) int {
	if nodes < 1 {
		nodes = 1
	}
	return max(1, (tp+nodes-1)/nodes)
}

// gpuNeed is a runtime's gpuMemoryGb on one node as a requirement: LLooM
// sums it per node, so each of the lane's devices there holds its share.
func gpuNeed(gb float64, devices int) []lloom.DomainNeed {
	if !(gb > 0) || math.IsInf(gb, 0) {
		return nil
	}
	return []lloom.DomainNeed{{ID: "memory", Kind: "device", RequiredGb: gb / float64(devices)}}
}

// drawNeeds gives p what needs[node] asks of each node's domains,
// matched as LLooM's resource fit matches them (lloom.DomainNeed.Matches).
// A requirement that names its domain draws from the first that matches.
// One that names none draws from the primary domain when that is the
// first match (the draw there is the larger of it and the lane's total
// figure); otherwise from `devices` of the matching domains: when the
// launch says which devices it sees (visible, lloom.VisibleDevices), the
// first of those in the order the process numbers them; when the lane is
// free to take any (choose: a recipe the plan would install, whose launch
// is written by the plan), one placement per set of `devices` of them,
// so that the solver picks the GPUs; else the first in the order the
// machine lists them, as a process told nothing uses them. A requirement
// no domain matches draws nothing: LLooM calls such a fit unknown, not a
// misfit. Requirements come from the estimate's domains when it has any,
// else from the runtime's gpuMemoryGb (domainNeeds).
func (b *builder) drawNeeds(p model.Placement, needs func(node string) []lloom.DomainNeed, devices int, visible []string, choose bool) []model.Placement {
	type draw struct {
		node, dom string
		gb        float64
	}
	type pick struct {
		node  string
		need  int // which requirement of the node
		among []string
		gb    float64
	}
	p.Draws = slices.Clone(p.Draws)
	var fixed []draw
	var picks []pick
	for _, n := range p.Nodes {
		ns := needs(n)
		if len(ns) == 0 {
			continue
		}
		doms := b.hw[n]
		primary := ""
		at := -1
		for i, d := range p.Draws {
			if d.Node == n {
				primary, at = d.Domain, i
			}
		}
		for ni, need := range ns {
			var matches []string
			for _, d := range doms {
				if need.Matches(d) {
					matches = append(matches, d.ID)
				}
			}
			if len(visible) > 0 && !need.Named() && len(matches) > 0 && matches[0] != primary {
				matches = seen(doms, matches, visible)
			}
			switch {
			case len(matches) == 0:
				// A GPU without its own memory domain (GB10, Apple) shares
				// the host's, which the total figure already draws.
				if need.Named() {
					b.note("%s on %s: no memory domain matches a need of %s (%s); LLooM calls the fit unknown, so it is not counted", p.Key(), n, model.Gb(need.RequiredGb), needText(need))
				}
			case matches[0] == primary:
				if at >= 0 {
					p.Draws[at].Gb = math.Max(p.Draws[at].Gb, need.RequiredGb)
				}
			case need.Named():
				fixed = append(fixed, draw{n, matches[0], need.RequiredGb})
			case choose && len(visible) == 0 && len(matches) > devices:
				for range devices {
					picks = append(picks, pick{n, ni, matches, need.RequiredGb})
				}
			default:
				for i := range devices {
					dom := missingDevice
					if i < len(matches) {
						dom = matches[i]
					}
					fixed = append(fixed, draw{n, dom, need.RequiredGb})
				}
				if len(matches) < devices {
					b.note("%s on %s: needs %d %s domains, the node has %d", p.Key(), n, devices, need.Kind, len(matches))
				}
			}
		}
	}
	finish := func(extra []draw, chosen []string) model.Placement {
		q := model.Placement{Nodes: p.Nodes, Draws: slices.Clone(p.Draws)}
		at := map[[2]string]int{}
		for _, d := range extra {
			k := [2]string{d.node, d.dom}
			if i, ok := at[k]; ok {
				q.Draws[i].Gb += d.gb
				continue
			}
			at[k] = len(q.Draws)
			q.Draws = append(q.Draws, model.Draw{Node: d.node, Domain: d.dom, Gb: d.gb})
		}
		if len(chosen) > 0 {
			q.Devices = slices.Sorted(slices.Values(chosen))
		}
		return q
	}
	if len(picks) == 0 {
		return []model.Placement{finish(fixed, nil)}
	}
	// Every set of distinct devices for each requirement (its picks are
	// consecutive and take ascending positions, so each set comes once).
	var out []model.Placement
	var chosen []draw
	truncated := false
	var rec func(i, from int)
	rec = func(i, from int) {
		if len(out) >= maxDeviceSets {
			truncated = true
			return
		}
		if i == len(picks) {
			refs := make([]string, len(chosen))
			for j, d := range chosen {
				refs[j] = model.DeviceRef(d.node, d.dom)
			}
			out = append(out, finish(append(slices.Clone(fixed), chosen...), slices.Compact(slices.Sorted(slices.Values(refs)))))
			return
		}
		pk := picks[i]
		same := i > 0 && picks[i-1].node == pk.node && picks[i-1].need == pk.need
		start := 0
		if same {
			start = from + 1
		}
		for j := start; j < len(pk.among); j++ {
			chosen = append(chosen, draw{pk.node, pk.among[j], pk.gb})
			rec(i+1, j)
			chosen = chosen[:len(chosen)-1]
		}
	}
	rec(0, 0)
	if truncated {
		b.note("%s: more than %d device sets; only the first %d are candidates", p.Key(), maxDeviceSets, maxDeviceSets)
	}
	return out
}

// maxDeviceSets caps the device sets of one placement (8 GPUs, 4 each: 70).
const maxDeviceSets = 256

func needText(n lloom.DomainNeed) string {
	s := "kind " + n.Kind
	if n.ID != "memory" {
		s = "domain " + n.ID
	}
	if n.Backend != "" {
		s += ", backend " + n.Backend
	}
	if len(n.DeviceIDs) > 0 {
		s += ", devices " + strings.Join(n.DeviceIDs, ",")
	}
	return s
}

// domainNeeds are a lane's per-domain requirements on a node: the
// resource estimate's domains (the runtime's, else its recipe's), else
// the runtime's gpuMemoryGb there, shared by the lane's devices.
func domainNeeds(estimates []*lloom.ResourceEstimate, gpuGb float64, devices int) []lloom.DomainNeed {
	for _, e := range estimates {
		if ns := e.DomainNeeds(); len(ns) > 0 {
			return ns
		}
	}
	return gpuNeed(gpuGb, devices)
}

// recipeGPU is the GPU memory a recipe's settings give one node: a
// member's resources.gpuMemoryGb, as recipeMemory reads memoryGb.
func recipeGPU(rm lloom.RecipeModel) float64 {
	if s := rm.Settings; s != nil && s.Placement != nil {
		for _, m := range s.Placement.Members {
			if m.Resources != nil && m.Resources.GPUMemoryGb != nil {
				return *m.Resources.GPUMemoryGb
			}
		}
	}
	return 0
}

// deviceMisfits reports each configured runtime whose lane can hold no
// device it needs: its GPU memory passes a device's plan budget alone, or
// its node has too few devices. Such a config can never run the lane as
// written. Recipes are only candidates, so a misfit leaves them out.
func (b *builder) deviceMisfits() {
	ix := b.pool.Index()
	for _, v := range b.pool.Variants {
		if v.Runtime == "" || v.Kind == model.Recipe || v.Kind == model.Federated {
			continue
		}
		for _, pl := range v.Placements {
			for _, d := range pl.Draws {
				if d.Domain == missingDevice {
					b.configProblem(fmt.Sprintf("$.runtimes[%q]", v.Runtime), "the lane needs %d GPUs on %s (tensor parallel %d), the node has fewer device domains it may use: it fits no device set there",
						devicesPerNode(v.Req.TensorParallel, len(pl.Nodes)), d.Node, v.Req.TensorParallel)
					continue
				}
				dom := b.pool.Domain(ix, d.Node, d.Domain)
				if dom == nil || dom.Kind != "device" || dom.Budget.HoldsAlone(d.Gb) {
					continue
				}
				b.configProblem(fmt.Sprintf("$.runtimes[%q]", v.Runtime), "the lane needs %s on %s %s, whose plan budget is %s: it fits no device (%s)",
					model.Gb(d.Gb), d.Node, d.Domain, model.Gb(dom.Budget.PlanGb), dom.Budget.Rule)
			}
		}
	}
}

// seen keeps the matching domains that hold a visible device, in the
// order of visible: the devices the process numbers cuda:0, cuda:1, ...
func seen(doms []lloom.MemoryDomain, matches, visible []string) []string {
	var out []string
	for _, dev := range visible {
		for _, d := range doms {
			if slices.Contains(d.DeviceIDs, dev) && slices.Contains(matches, d.ID) && !slices.Contains(out, d.ID) {
				out = append(out, d.ID)
			}
		}
	}
	return out
}
