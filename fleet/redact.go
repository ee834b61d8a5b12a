package fleet

import (
	"encoding/json"
	"maps"
	"slices"

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
				Metrics:   lloom.Redact(n.Metrics),
			}
		}
	}
	// The documents as read are only written by Bundle, which redacts
	// them then: a plan need not pay for re-encoding a large metrics file.
	out.redactRaw = true
	out.raw = rawDocs{
		profiles: maps.Clone(in.raw.profiles), nodes: maps.Clone(in.raw.nodes), metrics: in.raw.metrics,
		benchmarks: slices.Clone(in.raw.benchmarks), recipes: slices.Clone(in.raw.recipes),
	}
	var err error
	if in.ConfigRaw != nil {
		out.ConfigRaw, err = lloom.RedactJSON(in.ConfigRaw)
	}
	if err != nil {
		return nil, err
	}
	return &out, nil
}

// metricsDoc is a metrics document for a bundle: readMetrics keeps it as
// read, so it is made canonical here (redaction writes it so already).
func (in *Inputs) metricsDoc(raw json.RawMessage) (json.RawMessage, error) {
	if !in.redactRaw {
		var err error
		if raw, err = canonicalJSON(raw); err != nil {
			return nil, err
		}
	}
	return in.rawDoc(raw)
}

// rawDoc is a document as read, redacted when the inputs are.
func (in *Inputs) rawDoc(raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil || !in.redactRaw {
		return raw, nil
	}
	return lloom.RedactJSON(raw)
}
