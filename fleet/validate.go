package fleet

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/poolsolve/poolsolve/lloom"
)

// Validate returns every problem with the inputs at once, or nil: LLooM's
// own config rules (lloom's Config.Validate), each fleet profile against
// the config, each recipe, and the references poolsolve adds — pins and
// cordons (policy and config pool block) that name unknown nodes,
// runtimes, aliases or routes, SLOs and policy entries for unknown
// aliases, runtimes or models, node reports for nodes the cluster does not
// declare, and an active fleet profile that is not among the profiles.
// Each problem names the file and path where the reference is written.
func (in *Inputs) Validate() lloom.Problems {
	v := &validator{in: in}
	if in.Config == nil {
		v.add(Source{}, "", "no LLooM config")
		return v.out
	}
	v.index()
	v.lloom("config", in.Config.Validate())
	v.activeProfile()
	v.pool()
	for _, name := range in.ProfileNames() {
		v.lloom("profiles/"+name, in.Profiles[name].Validate(in.Config))
	}
	v.policy()
	v.nodeReports()
	for i, r := range in.Recipes {
		v.lloom(fmt.Sprintf("recipes[%d]", i), r.Validate())
	}
	return v.out
}

type validator struct {
	in  *Inputs
	out lloom.Problems

	nodes    []string // declared nodes, sorted
	runtimes map[string]lloom.Runtime
	aliases  map[string]lloom.Alias
	models   map[string]bool // including federated models
}

func (v *validator) index() {
	cfg := v.in.Config
	v.nodes = slices.Sorted(maps.Keys(cfg.Cluster.Nodes))
	if len(v.nodes) == 0 {
		if id := cfg.CurrentNodeID(""); id != "" {
			v.nodes = []string{id}
		}
	}
	v.runtimes, v.aliases = cfg.Runtimes, cfg.Aliases
	view := &lloom.Config{Cluster: cfg.Cluster, Models: slices.Clone(cfg.Models)}
	lloom.MaterializeFederated(view)
	v.models = map[string]bool{}
	for _, m := range view.Models {
		v.models[m.ID] = true
	}
}

// locate returns the tree that spells paths for the document key, and the
// path of its root.
func (v *validator) locate(key string) (Source, *tree, string) {
	src := v.in.Sources[key]
	if key == "policy" && src.Path == "" {
		return src, &tree{file: src.File, style: tomlPaths}, ""
	}
	at := src.Path
	if at == "" {
		at = "$"
	}
	return src, &tree{file: src.File, style: jsonPaths}, at
}

func (v *validator) add(src Source, path, format string, args ...any) {
	v.out = append(v.out, &lloom.InputError{File: src.File, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// lloom moves the problems a lloom Validate found into the document's
// place (a bundle path, or the file itself).
func (v *validator) lloom(key string, err error) {
	if err == nil {
		return
	}
	src, _, at := v.locate(key)
	switch e := rebase(err, src.File, at, nil, 0, nil).(type) {
	case lloom.Problems:
		v.out = append(v.out, e...)
	case *lloom.InputError:
		v.out = append(v.out, e)
	}
}

func (v *validator) nodeKnown(id string) bool { return slices.Contains(v.nodes, id) }

func (v *validator) checkNodes(src Source, path, what string, ids []string, t *tree) {
	for i, id := range ids {
		if !v.nodeKnown(id) {
			v.add(src, t.index(path, i), "%s %q is not a node of the cluster (%s)", what, id, strings.Join(v.nodes, ", "))
		}
	}
}

// checkPins checks what the pins at path refer to.
func (v *validator) checkPins(src Source, t *tree, path string, pins []Pin) {
	for i, p := range pins {
		pp := t.index(path, i)
		if p.Runtime != "" {
			if _, ok := v.runtimes[p.Runtime]; !ok {
				v.add(src, t.field(pp, "runtime"), "unknown runtime %q", p.Runtime)
			}
			v.checkNodes(src, t.field(pp, "nodes"), "node", p.Nodes, t)
		}
		if p.Alias != "" {
			alias, ok := v.aliases[p.Alias]
			switch {
			case !ok:
				v.add(src, t.field(pp, "alias"), "unknown alias %q", p.Alias)
			case v.routeKnown(alias, p.Route):
			default:
				v.add(src, t.field(pp, "route"), "unknown route %q: not a route profile of alias %q (%s) nor a model or alias id",
					p.Route, p.Alias, strings.Join(slices.Sorted(maps.Keys(alias.RouteProfiles)), ", "))
			}
		}
		v.checkNodes(src, t.field(pp, "cordons"), "cordoned node", p.Cordons, t)
	}
}

// routeKnown: a route profile of the alias, or a model or alias id that
// becomes its sole member (as fleet profiles route).
func (v *validator) routeKnown(alias lloom.Alias, route string) bool {
	if _, ok := alias.RouteProfiles[route]; ok {
		return true
	}
	_, isAlias := v.aliases[route]
	return v.models[route] || isAlias
}

func (v *validator) pool() {
	cp := v.in.ConfigPool
	if len(cp.Pins) == 0 && len(cp.Cordons) == 0 {
		return
	}
	src, t, at := v.locate("config")
	at = t.field(at, "pool")
	v.checkPins(src, t, t.field(at, "pins"), cp.Pins)
	v.checkNodes(src, t.field(at, "cordons"), "cordoned node", cp.Cordons, t)
}

func (v *validator) policy() {
	p := v.in.Policy
	if p == nil {
		return
	}
	src, t, at := v.locate("policy")
	v.checkNodes(src, t.field(at, "cordons"), "cordoned node", p.Cordons, t)
	v.checkPins(src, t, t.field(at, "pins"), p.Pins)
	for _, alias := range slices.Sorted(maps.Keys(p.SLO)) {
		if _, ok := v.aliases[alias]; !ok {
			v.add(src, t.key(t.field(at, "slo"), alias), "SLO for unknown alias %q", alias)
		}
	}
	for _, rt := range slices.Sorted(maps.Keys(p.Runtimes)) {
		if _, ok := v.runtimes[rt]; !ok {
			v.add(src, t.key(t.field(at, "runtimes"), rt), "unknown runtime %q", rt)
		}
	}
	for _, m := range slices.Sorted(maps.Keys(p.Models)) {
		if !v.models[m] {
			v.add(src, t.key(t.field(at, "models"), m), "unknown model %q", m)
		}
	}
}

func (v *validator) activeProfile() {
	f := v.in.Config.Fleet
	if f == nil || f.ActiveProfile == "" || len(v.in.Profiles) == 0 {
		return
	}
	if _, ok := v.in.Profiles[f.ActiveProfile]; !ok {
		src, t, at := v.locate("config")
		v.add(src, t.field(t.field(at, "fleet"), "activeProfile"), "active profile %q is not among the fleet profiles (%s)",
			f.ActiveProfile, strings.Join(v.in.ProfileNames(), ", "))
	}
}

func (v *validator) nodeReports() {
	if v.in.Metrics != nil {
		for _, id := range v.in.NodeIDs() {
			if v.in.Nodes[id].Metrics != nil {
				src, _, at := v.locate(nodeKey(id, "metrics"))
				v.add(src, at, "metrics of node %q next to the fleet's metrics: give each gateway's metrics per node, or one document for the fleet, not both (its requests would count twice)", id)
				break
			}
		}
	}
	for _, id := range v.in.NodeIDs() {
		if v.nodeKnown(id) {
			continue
		}
		for _, part := range nodeKeys {
			key := nodeKey(id, part)
			if _, ok := v.in.Sources[key]; ok {
				src, _, at := v.locate(key)
				v.add(src, at, "report for node %q, which the cluster does not declare (%s)", id, strings.Join(v.nodes, ", "))
				break
			}
		}
	}
}
