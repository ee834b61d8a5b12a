package gateway

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/poolsolve/poolsolve/fleet"
)

// Inputs merges the live fleet into base, the documents read from local
// files (at least the config, which a gateway does not serve): each node's
// status (and profile from /gateway/profile) and the metrics come from the
// gateway. It goes through the fleet bundle format, so the result equals
// what a bundle with the same documents loads to, and a snapshot written
// from it (Inputs.Bundle) plans the same. base is not changed.
//
// A node document or metrics given both by base and by the gateway is an
// error. Documents from base keep their sources (file names in messages);
// the gateway's are named by Fleet.Source and the route.
func (fl *Fleet) Inputs(base *fleet.Inputs) (*fleet.Inputs, error) {
	if base == nil || base.Config == nil {
		return nil, errors.New("gateway: no config to merge the live fleet into (a gateway does not serve its config)")
	}
	data, err := base.Bundle(false)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	nodes := map[string]map[string]json.RawMessage{}
	if raw, ok := doc["nodes"]; ok {
		if err := json.Unmarshal(raw, &nodes); err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
	}
	live := map[string]fleet.Source{}
	for _, id := range slices.Sorted(maps.Keys(fl.Nodes)) {
		n := fl.Nodes[id]
		parts := nodes[id]
		if parts == nil {
			parts = map[string]json.RawMessage{}
			nodes[id] = parts
		}
		if n.Status != nil {
			if _, dup := parts["status"]; dup {
				return nil, fmt.Errorf("node %q: a status is given by a local file and by the gateway; drop the file", id)
			}
			if parts["status"], err = json.Marshal(n.Status); err != nil {
				return nil, fmt.Errorf("gateway: node %q: %w", id, err)
			}
			live["nodes/"+id+"/status"] = fleet.Source{File: fl.Source, Path: statusRoute(n.From)}
		}
		if n.Metrics != nil {
			if _, dup := doc["metrics"]; dup {
				return nil, errors.New("metrics are given by a local file and by the gateway; drop the file")
			}
			// Added after the bundle is read, below.
		}
		if n.profileRaw != nil {
			if _, dup := parts["profile"]; dup {
				return nil, fmt.Errorf("node %q: a machine profile is given by a local file and by the gateway; drop the file", id)
			}
			parts["profile"] = n.profileRaw
			live["nodes/"+id+"/profile"] = fleet.Source{File: fl.Source, Path: "/gateway/profile"}
		}
	}
	if len(nodes) > 0 {
		if doc["nodes"], err = json.Marshal(nodes); err != nil {
			return nil, fmt.Errorf("gateway: %w", err)
		}
	}
	merged, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("gateway: %w", err)
	}
	in, err := fleet.ParseBundle(merged, fl.Source)
	if err != nil {
		return nil, fmt.Errorf("gateway: the live fleet does not load: %w", err)
	}
	// The local documents as read, so messages name their files.
	in.Config, in.ConfigRaw, in.ConfigPool = base.Config, base.ConfigRaw, base.ConfigPool
	in.Policy, in.Profiles, in.Benchmarks, in.Recipes = base.Policy, base.Profiles, base.Benchmarks, base.Recipes
	in.Description, in.DemandHistory = base.Description, base.DemandHistory
	for k := range in.Sources {
		if s, ok := live[k]; ok {
			in.Sources[k] = s
		} else if s, ok := base.Sources[k]; ok {
			in.Sources[k] = s
		} else {
			delete(in.Sources, k)
		}
	}
	// A node's metrics answer, often the largest document, joins as read
	// rather than through the merged bundle (a 31 MB answer: 312 MB peak
	// RSS through the bundle).
	// It was parsed when it was fetched; the inputs take that reading,
	// and the fleet lets go of it.
	for _, id := range slices.Sorted(maps.Keys(fl.Nodes)) {
		n := fl.Nodes[id]
		if n.Metrics == nil {
			continue
		}
		src := fleet.Source{File: fl.Source, Path: "its own /gateway/metrics"}
		m, err := n.ParsedMetrics(src.String())
		if err == nil {
			err = in.AddNodeMetrics(id, n.Metrics, m, src)
		}
		if err != nil {
			return nil, fmt.Errorf("gateway: the live fleet does not load: %w", err)
		}
		n.metrics = nil
	}
	return in, nil
}

func statusRoute(from string) string {
	switch from {
	case FromCluster:
		return "/gateway/cluster?inventory=1"
	case FromDirect:
		return "its own /gateway/node?inventory=1"
	}
	return "/gateway/node?inventory=1"
}
