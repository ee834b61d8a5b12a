package model

import (
	"fmt"
	"slices"
	"strings"
)

// Rule names one eligibility rule, so that rejections can be counted,
// tested and explained by rule, as a scheduler names its filters.
type Rule string

// The eligibility rules, in the order Ineligible checks them.
const (
	RuleNoNode      Rule = "no-node"      // the placement names no node
	RuleNodeCount   Rule = "node-count"   // the variant needs another number of nodes
	RuleUnknownNode Rule = "unknown-node" // a node the pool lacks
	RuleUnavailable Rule = "unavailable"  // a cordoned or unreachable node
	RuleArch        Rule = "arch"         // no compute arch the variant accepts
	RulePlatform    Rule = "platform"     // another platform
	RuleAccelerator Rule = "accelerator"  // a missing accelerator tag
	RuleCommand     Rule = "command"      // a recipe's command is not installed
	RuleImage       Rule = "image"        // a recipe's image is absent and docker too
	RuleWeights     Rule = "weights"      // a recipe's weights are neither cached nor have room
	RuleLink        Rule = "link"         // tensor parallel over nodes that are not all linked
	RuleNoDomain    Rule = "no-domain"    // a draw on a memory domain the node lacks
	RuleMemory      Rule = "memory"       // a draw larger than its domain's plan budget alone
)

// Reason is one rule a placement breaks, in operator terms: Text names
// the node and the figures ("spark-node-01 has arch sm_121, needs sm_90").
// Node is the node it concerns, empty for the placement as a whole.
type Reason struct {
	Rule Rule   `json:"rule"`
	Node string `json:"node,omitempty"`
	Text string `json:"text"`
}

func (r Reason) String() string { return r.Text }

// Eligible reports whether variant v may sit on placement pl at all, before
// any other lane is considered, and if not, why in operator terms: the
// first of Ineligible's reasons. It is the static filter the encoder and
// the greedy planner apply before a variable exists; the evaluator checks
// the same rules on its own.
func Eligible(p *Pool, ix *PoolIndex, v *Variant, pl Placement) (bool, string) {
	rs := ineligible(p, ix, v, pl, true)
	if len(rs) == 0 {
		return true, ""
	}
	return false, rs[0].Text
}

// Ineligible lists every rule that keeps variant v off placement pl, on
// every node of it, in a fixed order; nil when the placement is eligible.
//
// Facts a node does not report (no archs, no platform) pass for fixed
// placements, which the operator chose, and fail for recipe placements,
// which poolsolve would choose.
func Ineligible(p *Pool, ix *PoolIndex, v *Variant, pl Placement) []Reason {
	return ineligible(p, ix, v, pl, false)
}

func ineligible(p *Pool, ix *PoolIndex, v *Variant, pl Placement, first bool) []Reason {
	var out []Reason
	add := func(rule Rule, node, format string, args ...any) bool {
		out = append(out, Reason{Rule: rule, Node: node, Text: fmt.Sprintf(format, args...)})
		return first
	}
	if len(pl.Nodes) == 0 {
		add(RuleNoNode, "", "placement names no node")
		return out
	}
	if v.Req.NodeCount > 0 && len(pl.Nodes) != v.Req.NodeCount {
		if add(RuleNodeCount, "", "needs %d nodes, placement has %d", v.Req.NodeCount, len(pl.Nodes)) {
			return out
		}
	}
	free := v.Kind == Recipe
	known := true
	for _, id := range pl.Nodes {
		i, ok := ix.Node[id]
		if !ok {
			known = false
			if add(RuleUnknownNode, id, "node %s is not in the pool", id) {
				return out
			}
			continue
		}
		if nodeReasons(&p.Nodes[i], v, free, add) {
			return out
		}
	}
	if len(pl.Nodes) > 1 && !ix.Clique(pl.Nodes) {
		text := fmt.Sprintf("%s are not all directly linked (tensor parallel needs a linked clique)", strings.Join(pl.Nodes, "+"))
		if missing := ix.MissingLinks(pl.Nodes); len(pl.Nodes) > 2 && len(missing) > 0 {
			text += "; not linked: " + strings.Join(missing, ", ")
		}
		if add(RuleLink, "", "%s", text) {
			return out
		}
	}
	if !known {
		return out
	}
	for _, d := range pl.Draws {
		dom := p.Domain(ix, d.Node, d.Domain)
		if dom == nil {
			if add(RuleNoDomain, d.Node, "%s has no memory domain %s", d.Node, d.Domain) {
				return out
			}
			continue
		}
		if !dom.Budget.HoldsAlone(d.Gb) {
			if add(RuleMemory, d.Node, "needs %s on %s %s; budget %s - headroom %g = %s",
				Gb(d.Gb), d.Node, d.Domain, Gb(dom.Budget.AdmitGb), dom.Budget.HeadroomGb, Gb(dom.Budget.PlanGb)) {
				return out
			}
		}
	}
	return out
}

// nodeReasons adds the rules one node of a placement breaks; it reports
// true when add asks to stop at the first.
func nodeReasons(n *Node, v *Variant, free bool, add func(Rule, string, string, ...any) bool) bool {
	id := n.ID
	if n.Unavailable != "" {
		if add(RuleUnavailable, id, "%s is %s", id, n.Unavailable) {
			return true
		}
	}
	if len(v.Req.ComputeArchs) > 0 {
		if len(n.Archs) == 0 {
			if free && add(RuleArch, id, "%s reports no compute arch (needs %s)", id, strings.Join(v.Req.ComputeArchs, " or ")) {
				return true
			}
		} else if !intersects(v.Req.ComputeArchs, n.Archs) {
			if add(RuleArch, id, "%s has arch %s, needs %s", id, strings.Join(n.Archs, ","), strings.Join(v.Req.ComputeArchs, " or ")) {
				return true
			}
		}
	}
	if len(v.Req.Platforms) > 0 {
		if n.Platform == "" {
			if free && add(RulePlatform, id, "%s reports no platform (needs %s)", id, strings.Join(v.Req.Platforms, " or ")) {
				return true
			}
		} else if !slices.Contains(v.Req.Platforms, n.Platform) {
			if add(RulePlatform, id, "%s is %s, needs %s", id, n.Platform, strings.Join(v.Req.Platforms, " or ")) {
				return true
			}
		}
	}
	for _, a := range v.Req.Accelerators {
		if !slices.Contains(n.Accelerators, a) && (free || len(n.Accelerators) > 0) {
			if add(RuleAccelerator, id, "%s lacks accelerator %s", id, a) {
				return true
			}
		}
	}
	if free {
		return installable(n, &v.Req, add)
	}
	return false
}

// installable checks that a recipe's backend and weights can be had on n.
func installable(n *Node, r *Requirements, add func(Rule, string, string, ...any) bool) bool {
	for _, c := range r.Commands {
		if !slices.Contains(n.Commands, c) {
			if add(RuleCommand, n.ID, "%s lacks command %s", n.ID, c) {
				return true
			}
		}
	}
	if len(r.Images) > 0 && !intersects(r.Images, n.Images) && !slices.Contains(n.Commands, "docker") {
		if add(RuleImage, n.ID, "%s has no image %s and no docker to pull it", n.ID, r.Images[0]) {
			return true
		}
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
			if add(RuleWeights, n.ID, "%s has neither %s cached nor %s free on a model root", n.ID, w, Gb(r.DiskGb)) {
				return true
			}
		}
	}
	return false
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

// PinProblems lists the lane pins that no placement can hold, each with
// the rules that keep every placement it allows off (Ineligible, the
// reasons the solver gives when such a pin leaves no plan): validate
// reports them without searching.
func PinProblems(p *Pool) []string {
	ix := p.Index()
	var out []string
	for _, pin := range p.Pins {
		if pin.Variant == "" {
			continue
		}
		vi, ok := ix.Variant[pin.Variant]
		if !ok {
			continue // a pin of a variant the pool lacks is refused earlier
		}
		v := &p.Variants[vi]
		want := slices.Clone(pin.Nodes)
		slices.Sort(want)
		var why []string
		held := false
		for _, pl := range v.Placements {
			ns := slices.Clone(pl.Nodes)
			slices.Sort(ns)
			if len(want) > 0 && !slices.Equal(ns, want) {
				continue
			}
			rs := Ineligible(p, ix, v, pl)
			if len(rs) == 0 {
				held = true
				break
			}
			var texts []string
			for _, r := range rs {
				texts = append(texts, r.Text)
			}
			why = append(why, fmt.Sprintf("%s cannot run on %s: %s", v.ID, pl.Key(), strings.Join(texts, ", ")))
		}
		if held || len(why) == 0 {
			continue // no placement at all is the solver's to explain
		}
		label := pin.Label
		if label == "" {
			label = "pin " + pin.Variant
		}
		out = append(out, label+": "+strings.Join(why, "; "))
	}
	return out
}
