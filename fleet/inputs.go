package fleet

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
	"github.com/poolsolve/poolsolve/inventory"
	"github.com/poolsolve/poolsolve/lloom"
)

// BundleSchema is the schema value of a fleet bundle.
const BundleSchema = "poolsolve.fleet/v1"

// Inputs is everything poolsolve reads about one fleet, parsed. LoadBundle
// and Load fill it alike: the same fleet given as one bundle or as
// separate files gives equal Inputs apart from Sources and the File
// fields lloom records.
type Inputs struct {
	// Description is the bundle's optional "description".
	Description string
	// LLooMRelease is the bundle's optional "lloomRelease": the release
	// of the gateway it was taken from, as that gateway was recognised.
	LLooMRelease string
	// Config is LLooM's config.json; ConfigRaw is the same document as
	// compact JSON with sorted keys, for readers of blocks lloom does not
	// model.
	Config    *lloom.Config
	ConfigRaw json.RawMessage
	// ConfigPool is the config's top-level "pool" block.
	ConfigPool ConfigPool
	// Profiles are the fleet profiles by name.
	Profiles map[string]*lloom.Profile
	// Policy is pool.toml (DefaultPolicy when none was given).
	Policy *Policy
	// Nodes holds what each node reports, by node id.
	Nodes   map[string]NodeInputs
	Metrics *lloom.Metrics
	// DemandHistory is poolsolve's memory of how each gateway's requests
	// split over aliases, reading by reading (--demand-history).
	DemandHistory *DemandHistory
	Benchmarks    []*lloom.BenchmarkSuite
	Recipes       []*lloom.Recipe

	// Sources says where each document came from, keyed "config",
	// "policy", "metrics", "profiles/<name>", "nodes/<id>/status",
	// "nodes/<id>/profile", "nodes/<id>/inventory", "nodes/<id>/metrics", "benchmarks[<i>]" and
	// "recipes[<i>]".
	Sources map[string]Source

	raw rawDocs
	// redactRaw says raw must go through lloom's redaction when written:
	// these are Redacted inputs.
	redactRaw bool
}

// NodeInputs is what one node reports about itself. Any part may be nil.
type NodeInputs struct {
	Profile   *lloom.MachineProfile
	Inventory *inventory.Inventory
	Status    *lloom.NodeStatus
	// Metrics are the node's own gateway's metrics: every LLooM gateway
	// counts the requests it answered, so a cluster's demand is the sum
	// over its nodes (docs/gateway.md).
	Metrics *lloom.Metrics
}

// ConfigPool is poolsolve's top-level "pool" block in LLooM's config.json
// ("config pool.pins"), which LLooM ignores.
type ConfigPool struct {
	Pins    []Pin    `json:"pins,omitempty"`
	Cordons []string `json:"cordons,omitempty" check:"nonempty"`
}

// Source is where one document was read: a file, and the JSON path of the
// document inside it when the file is a bundle.
type Source struct {
	File string `json:"file"`
	Path string `json:"path,omitempty"`
}

func (s Source) String() string {
	if s.Path == "" {
		return s.File
	}
	return s.File + " " + s.Path
}

// rawDocs keeps every document as compact JSON with sorted keys, so that
// Bundle writes back what was read, including fields lloom does not model.
type rawDocs struct {
	profiles   map[string]json.RawMessage
	nodes      map[string]rawNode
	metrics    json.RawMessage
	benchmarks []json.RawMessage
	recipes    []json.RawMessage
}

type rawNode struct {
	profile, inventory, status, metrics json.RawMessage
}

// Pins returns the policy's pins followed by the config's pool.pins.
func (in *Inputs) Pins() []Pin {
	var out []Pin
	if in.Policy != nil {
		out = append(out, in.Policy.Pins...)
	}
	return append(out, in.ConfigPool.Pins...)
}

// Cordons returns every cordoned node, sorted and without repeats: the
// policy's cordons, the config pool block's, and those carried by pins.
func (in *Inputs) Cordons() []string {
	var out []string
	if in.Policy != nil {
		out = append(out, in.Policy.Cordons...)
	}
	out = append(out, in.ConfigPool.Cordons...)
	for _, p := range in.Pins() {
		out = append(out, p.Cordons...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// NodeIDs returns the ids of the nodes with reports, sorted.
func (in *Inputs) NodeIDs() []string { return slices.Sorted(maps.Keys(in.Nodes)) }

// ProfileNames returns the fleet profile names, sorted.
func (in *Inputs) ProfileNames() []string { return slices.Sorted(maps.Keys(in.Profiles)) }

func (in *Inputs) setSource(key string, s Source) {
	if in.Sources == nil {
		in.Sources = map[string]Source{}
	}
	in.Sources[key] = s
}

// canonicalJSON rewrites a JSON document compactly with sorted keys and
// numbers as written, so equal documents compare equal byte for byte. It
// streams (jsonpos.Canonical): a large metrics file costs its size, not a
// tree of Go maps.
func canonicalJSON(data []byte) (json.RawMessage, error) {
	return jsonpos.Canonical(data)
}

// marshalCanonical writes v as canonicalJSON does.
func marshalCanonical(v any) (json.RawMessage, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return canonicalJSON(data)
}

func nodeKey(id, part string) string { return fmt.Sprintf("nodes/%s/%s", id, part) }
