package gateway

import (
	"maps"
	"slices"

	"github.com/poolsolve/poolsolve/lloom"
)

// Routing is the LLooM release behind the gateway, as its answers show it
// (lloom.DetectRouting over the nodes it reported itself, not those read
// directly); ok is false when they do not say.
func (fl *Fleet) Routing() (r lloom.Routing, ok bool) {
	var nodes []lloom.NodeStatus
	for _, id := range slices.Sorted(maps.Keys(fl.Nodes)) {
		if n := fl.Nodes[id]; n.From != FromDirect && n.Status != nil {
			nodes = append(nodes, *n.Status)
		}
	}
	return lloom.DetectRouting(nodes, true)
}

// LocalNode is the node the gateway answered as, "" when unknown.
func (fl *Fleet) LocalNode() string {
	for _, id := range slices.Sorted(maps.Keys(fl.Nodes)) {
		if n := fl.Nodes[id]; n.From != FromDirect && n.Status != nil && n.Status.Local {
			return id
		}
	}
	if fl.Mode == FromNode && len(fl.Nodes) == 1 {
		for id := range fl.Nodes {
			return id
		}
	}
	return ""
}
