package fleet

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"sort"

	"github.com/poolsolve/poolsolve/lloom"
)

// HistorySchema is the schema value of a demand history file.
const HistorySchema = "poolsolve.demand-history/v1"

// maxSeen bounds the entry keys a node's history remembers: a gateway's
// recent[] holds at most 50 entries, so 1000 is many reads back.
const maxSeen = 1000

// DemandHistory is poolsolve's memory of how each gateway's requests for
// a model split over the ids clients asked for. LLooM 0.2.3 persists its
// per-model buckets across a restart but not recent[], the only place the
// split shows, so after a restart the split would fall back to even; the
// history keeps what earlier reads saw (docs/gateway.md).
type DemandHistory struct {
	Schema string `json:"schema"`
	// Nodes are by node id.
	Nodes map[string]*NodeHistory `json:"nodes,omitempty"`
}

// NodeHistory is one gateway's split.
type NodeHistory struct {
	// Models maps a resolved model id to the requested ids (aliases, or
	// the model itself) and how many recent entries named each.
	Models map[string]map[string]float64 `json:"models,omitempty"`
	// Seen are the entries already counted ("<at> <id>"), oldest first.
	Seen []string `json:"seen,omitempty"`
}

// ParseDemandHistory reads a demand history file strictly: unknown keys,
// wrong types and negative counts are errors naming the JSON path.
func ParseDemandHistory(data []byte, file string) (*DemandHistory, error) {
	v, err := parseSpans(data, file)
	if err != nil {
		return nil, err
	}
	t := &tree{file: file, style: jsonPaths}
	doc := v.Any(true)
	if _, ok := doc.(map[string]any); !ok {
		t.expected(doc, "$", t.object())
		return nil, t.err
	}
	h := &DemandHistory{}
	t.decode(doc, "$", reflect.ValueOf(h).Elem(), fieldTag{})
	if t.err != nil {
		return nil, t.err
	}
	if h.Schema != HistorySchema {
		return nil, &lloom.InputError{File: file, Path: "$.schema", Msg: fmt.Sprintf("expected %q, got %q", HistorySchema, h.Schema)}
	}
	for _, id := range slices.Sorted(maps.Keys(h.Nodes)) {
		n := h.Nodes[id]
		if n == nil {
			return nil, &lloom.InputError{File: file, Path: fmt.Sprintf("$.nodes[%q]", id), Msg: "expected an object with models and seen"}
		}
		for _, m := range slices.Sorted(maps.Keys(n.Models)) {
			for _, r := range slices.Sorted(maps.Keys(n.Models[m])) {
				if c := n.Models[m][r]; c < 0 || math.IsInf(c, 0) || math.IsNaN(c) {
					return nil, &lloom.InputError{File: file, Path: fmt.Sprintf("$.nodes[%q].models[%q][%q]", id, m, r), Msg: fmt.Sprintf("expected a count of requests (0 or more), got %v", c)}
				}
			}
		}
	}
	return h, nil
}

// LoadDemandHistory reads path; a file that does not exist yet is an
// empty history.
func LoadDemandHistory(path string) (*DemandHistory, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return &DemandHistory{Schema: HistorySchema}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseDemandHistory(data, path)
}

// Split is how node's requests for model split by requested id, or nil.
func (h *DemandHistory) Split(node, model string) map[string]float64 {
	if h == nil || h.Nodes[node] == nil {
		return nil
	}
	return h.Nodes[node].Models[model]
}

// Record counts the recent entries of node's metrics it has not counted
// before, and reports how many it added. Failed requests (5xx) are not
// counted: they are not demand.
func (h *DemandHistory) Record(node string, m *lloom.Metrics) int {
	if m == nil || len(m.Recent) == 0 {
		return 0
	}
	h.Schema = HistorySchema
	if h.Nodes == nil {
		h.Nodes = map[string]*NodeHistory{}
	}
	n := h.Nodes[node]
	if n == nil {
		n = &NodeHistory{}
		h.Nodes[node] = n
	}
	if n.Models == nil {
		n.Models = map[string]map[string]float64{}
	}
	seen := map[string]bool{}
	for _, k := range n.Seen {
		seen[k] = true
	}
	added := 0
	for _, e := range m.Recent {
		if e.Model == "" || e.RequestedModel == "" || e.At == "" || (e.Status != nil && *e.Status >= 500) {
			continue
		}
		k := e.At + " " + e.ID
		if seen[k] {
			continue
		}
		seen[k] = true
		n.Seen = append(n.Seen, k)
		if n.Models[e.Model] == nil {
			n.Models[e.Model] = map[string]float64{}
		}
		n.Models[e.Model][e.RequestedModel]++
		added++
	}
	sort.Strings(n.Seen) // keys start with the time: oldest first
	if len(n.Seen) > maxSeen {
		n.Seen = slices.Clone(n.Seen[len(n.Seen)-maxSeen:])
	}
	return added
}

// Marshal writes the history with sorted keys and two-space indent.
func (h *DemandHistory) Marshal() ([]byte, error) {
	data, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
