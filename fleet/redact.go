package fleet

import (
	"encoding/json"
	"maps"

	"github.com/poolsolve/poolsolve/lloom"
)

// Redacted returns a copy of the inputs with lloom's redaction pass
// applied to every document, parsed and as read: what the commands print,
// write and serve is made from this copy, so no secret in an input can
// reach an output. The receiver is not changed.
func (in *Inputs) Redacted() (*Inputs, error) {
	out := *in
	out.Description = lloom.RedactText(in.Description)
	out.Config = in.Config.Redacted()
	out.ConfigPool = lloom.Redact(in.ConfigPool)
	out.Profiles = lloom.Redact(in.Profiles)
	out.Metrics = lloom.Redact(in.Metrics)
	out.Benchmarks = lloom.Redact(in.Benchmarks)
	out.Recipes = lloom.Redact(in.Recipes)
	out.Sources = maps.Clone(in.Sources)
	if in.Nodes != nil {
		out.Nodes = make(map[string]NodeInputs, len(in.Nodes))
		for id, n := range in.Nodes {
			out.Nodes[id] = NodeInputs{
				Profile:   lloom.Redact(n.Profile),
				Inventory: lloom.Redact(n.Inventory),
				Status:    n.Status.Redacted(),
			}
		}
	}
	var err error
	red := func(raw json.RawMessage) json.RawMessage {
		if raw == nil || err != nil {
			return raw
		}
		var r json.RawMessage
		r, err = lloom.RedactJSON(raw)
		return r
	}
	out.ConfigRaw = red(in.ConfigRaw)
	out.raw = rawDocs{metrics: red(in.raw.metrics)}
	if in.raw.profiles != nil {
		out.raw.profiles = map[string]json.RawMessage{}
		for k, v := range in.raw.profiles {
			out.raw.profiles[k] = red(v)
		}
	}
	if in.raw.nodes != nil {
		out.raw.nodes = map[string]rawNode{}
		for k, v := range in.raw.nodes {
			out.raw.nodes[k] = rawNode{profile: red(v.profile), inventory: red(v.inventory), status: red(v.status)}
		}
	}
	for _, b := range in.raw.benchmarks {
		out.raw.benchmarks = append(out.raw.benchmarks, red(b))
	}
	for _, r := range in.raw.recipes {
		out.raw.recipes = append(out.raw.recipes, red(r))
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}
