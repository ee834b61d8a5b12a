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
	return in.redacted(copyMetrics)
}

// RedactedInPlace is Redacted for inputs the caller drops: the parsed
// metrics, by far the largest documents (a busy gateway's answer is tens
// of megabytes), are redacted where they are instead of copied, so the
// receiver's metrics change; the rest is as Redacted.
func (in *Inputs) RedactedInPlace() (*Inputs, error) {
	return in.redacted(metricsInPlace)
}

// How redacted treats the parsed metrics.
type metricsRedaction int

const (
	copyMetrics    metricsRedaction = iota // lloom.Redact
	metricsInPlace                         // lloom.RedactInPlace
	// sharedMetrics keeps the receiver's, unredacted: only for Bundle,
	// which writes metrics from the documents as read, redacted then,
	// and never from the parsed ones.
	sharedMetrics
)

func redactMetrics(m *lloom.Metrics, how metricsRedaction) *lloom.Metrics {
	switch how {
	case metricsInPlace:
		lloom.RedactInPlace(m)
		return m
	case sharedMetrics:
		return m
	}
	return lloom.Redact(m)
}

func (in *Inputs) redacted(how metricsRedaction) (*Inputs, error) {
	out := *in
	out.Description = lloom.RedactText(in.Description)
	out.ConfigPool = lloom.Redact(in.ConfigPool)
	out.Profiles = lloom.Redact(in.Profiles)
	out.Metrics = redactMetrics(in.Metrics, how)
	out.Benchmarks = lloom.Redact(in.Benchmarks)
	out.Recipes = lloom.Redact(in.Recipes)
	out.Sources = maps.Clone(in.Sources)
	// The config and each node are redacted side by side: on 256 nodes
	// they are most of the time the inputs take before the search.
	ids := slices.Sorted(maps.Keys(in.Nodes))
	nodes := make([]NodeInputs, len(ids))
	var rawErr error
	parallel(len(ids)+1, func(k int) {
		if k == len(ids) {
			out.Config = in.Config.Redacted()
			if in.ConfigRaw != nil {
				out.ConfigRaw, rawErr = lloom.RedactJSON(in.ConfigRaw)
			}
			return
		}
		n := in.Nodes[ids[k]]
		nodes[k] = NodeInputs{
			Profile:   lloom.Redact(n.Profile),
			Inventory: lloom.Redact(n.Inventory),
			Status:    n.Status.Redacted(),
			Metrics:   redactMetrics(n.Metrics, how),
		}
	})
	if in.Nodes != nil {
		out.Nodes = make(map[string]NodeInputs, len(in.Nodes))
		for k, id := range ids {
			out.Nodes[id] = nodes[k]
		}
	}
	// The documents as read are only written by Bundle, which redacts
	// them then: a plan need not pay for re-encoding a large metrics file.
	out.redactRaw = true
	out.raw = rawDocs{
		profiles: maps.Clone(in.raw.profiles), nodes: maps.Clone(in.raw.nodes), metrics: in.raw.metrics,
		benchmarks: slices.Clone(in.raw.benchmarks), recipes: slices.Clone(in.raw.recipes),
	}
	if rawErr != nil {
		return nil, rawErr
	}
	return &out, nil
}

// rawDoc is a document as read, redacted when the inputs are.
func (in *Inputs) rawDoc(raw json.RawMessage) (json.RawMessage, error) {
	if raw == nil || !in.redactRaw {
		return raw, nil
	}
	return lloom.RedactJSON(raw)
}
