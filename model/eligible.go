package model

import (
	"fmt"
	"slices"
	"strings"
)

// Eligible reports whether variant v may sit on placement pl at all, before
// any other lane is considered, and if not, why in operator terms. It is
// the static filter the encoder and the greedy planner apply before a
// variable exists; the evaluator checks the same rules on its own.
//
// Facts a node does not report (no archs, no platform) pass for fixed
// placements, which the operator chose, and fail for recipe placements,
// which poolsolve would choose.
func Eligible(p *Pool, ix *PoolIndex, v *Variant, pl Placement) (bool, string) {
	if len(pl.Nodes) == 0 {
		return false, "placement names no node"
	}
	if v.Req.NodeCount > 0 && len(pl.Nodes) != v.Req.NodeCount {
		return false, fmt.Sprintf("needs %d nodes, placement has %d", v.Req.NodeCount, len(pl.Nodes))
	}
	free := v.Kind == Recipe
	for _, id := range pl.Nodes {
		i, ok := ix.Node[id]
		if !ok {
			return false, fmt.Sprintf("node %s is not in the pool", id)
		}
		n := &p.Nodes[i]
		if n.Unavailable != "" {
			return false, fmt.Sprintf("%s is %s", id, n.Unavailable)
		}
		if len(v.Req.ComputeArchs) > 0 {
			if len(n.Archs) == 0 {
				if free {
					return false, fmt.Sprintf("%s reports no compute arch (needs %s)", id, strings.Join(v.Req.ComputeArchs, " or "))
				}
			} else if !intersects(v.Req.ComputeArchs, n.Archs) {
				return false, fmt.Sprintf("%s has arch %s, needs %s", id, strings.Join(n.Archs, ","), strings.Join(v.Req.ComputeArchs, " or "))
			}
		}
		if len(v.Req.Platforms) > 0 {
			if n.Platform == "" {
				if free {
					return false, fmt.Sprintf("%s reports no platform (needs %s)", id, strings.Join(v.Req.Platforms, " or "))
				}
			} else if !slices.Contains(v.Req.Platforms, n.Platform) {
				return false, fmt.Sprintf("%s is %s, needs %s", id, n.Platform, strings.Join(v.Req.Platforms, " or "))
			}
		}
		for _, a := range v.Req.Accelerators {
			if !slices.Contains(n.Accelerators, a) && (free || len(n.Accelerators) > 0) {
				return false, fmt.Sprintf("%s lacks accelerator %s", id, a)
			}
		}
		if free {
			if why := installable(n, &v.Req); why != "" {
				return false, why
			}
		}
	}
	if len(pl.Nodes) > 1 && !ix.Clique(pl.Nodes) {
		return false, fmt.Sprintf("%s are not all directly linked (tensor parallel needs a linked clique)", strings.Join(pl.Nodes, "+"))
	}
	for _, d := range pl.Draws {
		dom := p.Domain(ix, d.Node, d.Domain)
		if dom == nil {
			return false, fmt.Sprintf("%s has no memory domain %s", d.Node, d.Domain)
		}
		if !dom.Budget.HoldsAlone(d.Gb) {
			return false, fmt.Sprintf("needs %s on %s %s; budget %s - headroom %g = %s",
				Gb(d.Gb), d.Node, d.Domain, Gb(dom.Budget.AdmitGb), dom.Budget.HeadroomGb, Gb(dom.Budget.PlanGb))
		}
	}
	return true, ""
}

// installable checks that a recipe's backend and weights can be had on n.
func installable(n *Node, r *Requirements) string {
	for _, c := range r.Commands {
		if !slices.Contains(n.Commands, c) {
			return fmt.Sprintf("%s lacks command %s", n.ID, c)
		}
	}
	if len(r.Images) > 0 && !intersects(r.Images, n.Images) && !slices.Contains(n.Commands, "docker") {
		return fmt.Sprintf("%s has no image %s and no docker to pull it", n.ID, r.Images[0])
	}
	for _, w := range r.Weights {
		if slices.Contains(n.CachedWeights, w) {
			continue
		}
		room := false
		for _, root := range n.ModelRoots {
			if root.FreeGb >= r.DiskGb {
				room = true
				break
			}
		}
		if !room {
			return fmt.Sprintf("%s has neither %s cached nor %s free on a model root", n.ID, w, Gb(r.DiskGb))
		}
	}
	return ""
}

func intersects(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// Domain returns node's domain id, or nil.
func (p *Pool) Domain(ix *PoolIndex, node, domain string) *Domain {
	i, ok := ix.Node[node]
	if !ok {
		return nil
	}
	for j := range p.Nodes[i].Domains {
		if p.Nodes[i].Domains[j].ID == domain {
			return &p.Nodes[i].Domains[j]
		}
	}
	return nil
}

// PrimaryDomain is the domain a node's host memory lives in: unified:0 on
// unified-memory machines, else system:0, else the first domain.
func (n *Node) PrimaryDomain() *Domain {
	for _, id := range []string{"unified:0", "system:0"} {
		for j := range n.Domains {
			if n.Domains[j].ID == id {
				return &n.Domains[j]
			}
		}
	}
	if len(n.Domains) > 0 {
		return &n.Domains[0]
	}
	return nil
}
