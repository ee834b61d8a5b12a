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
const HistorySchema = "poolsolve.demand-history/v2"

// DemandHistory is poolsolve's memory of each gateway's metrics readings.
// LLooM 0.2.3 counts requests per resolved model only; the id a client
// asked for (an alias or the model) shows only in recent[], the gateway's
// last 50 requests. So each reading adds to a model the requests its
// count grew by since the last reading, split by the recent entries newer
// than that reading where they show them all; what they do not show is
// kept apart as uncounted and never split as if they had (docs/gateway.md).
// A model's counted plus uncounted requests are then the gateway's own
// count: the split and the counts it splits cover the same window.
type DemandHistory struct {
	Schema string `json:"schema"`
	// Nodes are by node id.
	Nodes map[string]*NodeHistory `json:"nodes,omitempty"`
}

// NodeHistory is what the readings of one gateway found.
type NodeHistory struct {
	// At is the last reading's generatedAt.
	At string `json:"at,omitempty"`
	// Since is the gateway's persistence.since at the last reading: it
	// changes when a gateway that keeps no metrics history restarts, its
	// counts starting over from zero.
	Since string `json:"since,omitempty"`
	// Seen are the last reading's recent entries ("<at> <id>"): the next
	// reading counts only entries not among them.
	Seen []string `json:"seen,omitempty"`
	// Models are by resolved model id.
	Models map[string]*ModelHistory `json:"models,omitempty"`
}

// ModelHistory is one model's requests on one gateway, as the readings
// counted them. Failed requests are not counted: they are not demand.
type ModelHistory struct {
	// Requested counts recent entries by the id the client asked for.
	Requested map[string]float64 `json:"requested,omitempty"`
	// Targets counts the same entries by the node the gateway sent them
	// to, for entries that name one.
	Targets map[string]float64 `json:"targets,omitempty"`
	// Uncounted are requests the count grew by that no reading's recent
	// entries showed (more than 50 requests between two readings, or
	// requests before a restart emptied recent[]).
	Uncounted float64 `json:"uncounted,omitempty"`
}

// Total is every request the readings added for the model: the
// gateway's own count of its answered requests at the last reading.
func (m *ModelHistory) Total() float64 {
	if m == nil {
		return 0
	}
	t := m.Uncounted
	for _, n := range m.Requested {
		t += n
	}
	return t
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
	obj, ok := doc.(map[string]any)
	if !ok {
		t.expected(doc, "$", t.object())
		return nil, t.err
	}
	if s, _ := obj["schema"].(string); s == "poolsolve.demand-history/v1" {
		return nil, &lloom.InputError{File: file, Path: "$.schema", Msg: fmt.Sprintf("expected %q, got %q: a v1 history has no readings to split by; remove the file and the next live run starts a new one", HistorySchema, s)}
	}
	h := &DemandHistory{}
	t.decode(doc, "$", reflect.ValueOf(h).Elem(), fieldTag{})
	if t.err != nil {
		return nil, t.err
	}
	if h.Schema != HistorySchema {
		return nil, &lloom.InputError{File: file, Path: "$.schema", Msg: fmt.Sprintf("expected %q, got %q", HistorySchema, h.Schema)}
	}
	count := func(path string, c float64) error {
		if c < 0 || math.IsInf(c, 0) || math.IsNaN(c) {
			return &lloom.InputError{File: file, Path: path, Msg: fmt.Sprintf("expected a count of requests (0 or more), got %v", c)}
		}
		return nil
	}
	for _, id := range slices.Sorted(maps.Keys(h.Nodes)) {
		n := h.Nodes[id]
		if n == nil {
			return nil, &lloom.InputError{File: file, Path: fmt.Sprintf("$.nodes[%q]", id), Msg: "expected an object with at, seen and models"}
		}
		for _, m := range slices.Sorted(maps.Keys(n.Models)) {
			mh := n.Models[m]
			path := fmt.Sprintf("$.nodes[%q].models[%q]", id, m)
			if mh == nil {
				return nil, &lloom.InputError{File: file, Path: path, Msg: "expected an object with requested, targets and uncounted"}
			}
			if err := count(path+".uncounted", mh.Uncounted); err != nil {
				return nil, err
			}
			for _, field := range []struct {
				name   string
				counts map[string]float64
			}{{"requested", mh.Requested}, {"targets", mh.Targets}} {
				for _, r := range slices.Sorted(maps.Keys(field.counts)) {
					if err := count(fmt.Sprintf("%s.%s[%q]", path, field.name, r), field.counts[r]); err != nil {
						return nil, err
					}
				}
			}
		}
	}
	return h, nil
}

// LoadDemandHistory reads path; a file that does not exist yet is an
// empty history.
func LoadDemandHistory(path string) (*DemandHistory, error) {
	data, err := lloom.ReadInput(path)
	if os.IsNotExist(err) {
		return &DemandHistory{Schema: HistorySchema}, nil
	}
	if err != nil {
		return nil, err
	}
	return ParseDemandHistory(data, path)
}

// Node is node's history, or nil.
func (h *DemandHistory) Node(node string) *NodeHistory {
	if h == nil {
		return nil
	}
	return h.Nodes[node]
}

// Clone is a deep copy.
func (h *DemandHistory) Clone() *DemandHistory {
	if h == nil {
		return nil
	}
	out := &DemandHistory{Schema: h.Schema}
	for id, n := range h.Nodes {
		if out.Nodes == nil {
			out.Nodes = map[string]*NodeHistory{}
		}
		out.Nodes[id] = n.Clone()
	}
	return out
}

// Clone is a deep copy.
func (n *NodeHistory) Clone() *NodeHistory {
	if n == nil {
		return nil
	}
	out := &NodeHistory{At: n.At, Since: n.Since, Seen: slices.Clone(n.Seen)}
	for id, m := range n.Models {
		if out.Models == nil {
			out.Models = map[string]*ModelHistory{}
		}
		if m == nil {
			continue
		}
		out.Models[id] = &ModelHistory{Requested: maps.Clone(m.Requested), Targets: maps.Clone(m.Targets), Uncounted: m.Uncounted}
	}
	return out
}

// Recorded is what one reading changed.
type Recorded struct {
	// Counted are the recent entries the reading counted.
	Counted int
	// StartedOver are the models whose counts started over (the gateway
	// restarted without keeping its metrics): their history restarts.
	StartedOver []string
}

// Record adds one reading of node's metrics. Reading the same answer
// twice changes nothing.
func (h *DemandHistory) Record(node string, m *lloom.Metrics) Recorded {
	if m == nil || m.Period != "" && m.Period != "all" {
		return Recorded{} // a window's counts drop days as it moves: no deltas
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
	return n.Record(m)
}

// served reports whether an entry is an answered request: LLooM counts
// every request whose status is not 2xx or 3xx in a bucket's errors.
func served(e lloom.MetricsEntry) bool {
	if e.OK != nil {
		return *e.OK
	}
	return e.Status != nil && *e.Status >= 200 && *e.Status < 400
}

func entryKey(e lloom.MetricsEntry) string { return e.At + " " + e.ID }

// Record adds one reading of the gateway's metrics (see DemandHistory).
func (n *NodeHistory) Record(m *lloom.Metrics) Recorded {
	var rec Recorded
	at := m.GeneratedAt
	if at == "" {
		at = m.UpdatedAt
	}
	if n.Since != "" && m.PersistenceSince != "" && m.PersistenceSince != n.Since {
		for _, id := range slices.Sorted(maps.Keys(n.Models)) {
			if n.Models[id].Total() > 0 {
				rec.StartedOver = append(rec.StartedOver, id)
			}
		}
		n.Models, n.Seen = nil, nil
	}
	seen := map[string]bool{}
	for _, k := range n.Seen {
		seen[k] = true
	}
	fresh := map[string][]lloom.MetricsEntry{}
	for _, e := range m.Recent {
		if e.Model == "" || !served(e) || seen[entryKey(e)] || (n.At != "" && e.At != "" && e.At < n.At) {
			continue
		}
		fresh[e.Model] = append(fresh[e.Model], e)
	}
	if n.Models == nil {
		n.Models = map[string]*ModelHistory{}
	}
	counts := map[string]float64{}
	for _, bk := range m.Models {
		if bk.ID != "" {
			counts[bk.ID] += math.Max(0, float64(bk.Requests-bk.Errors))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(n.Models)) {
		if _, ok := counts[id]; !ok && n.Models[id].Total() > 0 {
			counts[id] = 0 // gone from the answer: its count started over
		}
	}
	for _, id := range slices.Sorted(maps.Keys(counts)) {
		mh := n.Models[id]
		if mh == nil {
			mh = &ModelHistory{}
		}
		if counts[id] < mh.Total() {
			rec.StartedOver = append(rec.StartedOver, id)
			mh = &ModelHistory{}
		}
		grew := counts[id] - mh.Total()
		es := fresh[id]
		sort.SliceStable(es, func(i, j int) bool { return es[i].At < es[j].At })
		if float64(len(es)) > grew {
			es = es[len(es)-int(grew):] // never more than the count grew by
		}
		for _, e := range es {
			req := e.RequestedModel
			if req == "" {
				req = e.Model
			}
			if mh.Requested == nil {
				mh.Requested = map[string]float64{}
			}
			mh.Requested[req]++
			if e.Node != "" {
				if mh.Targets == nil {
					mh.Targets = map[string]float64{}
				}
				mh.Targets[e.Node]++
			}
		}
		rec.Counted += len(es)
		mh.Uncounted += grew - float64(len(es))
		if mh.Total() == 0 {
			delete(n.Models, id)
			continue
		}
		n.Models[id] = mh
	}
	slices.Sort(rec.StartedOver)
	rec.StartedOver = slices.Compact(rec.StartedOver)
	n.At, n.Since = at, m.PersistenceSince
	n.Seen = n.Seen[:0:0]
	for _, e := range m.Recent {
		n.Seen = append(n.Seen, entryKey(e))
	}
	slices.Sort(n.Seen)
	n.Seen = slices.Compact(n.Seen)
	return rec
}

// Marshal writes the history with sorted keys and two-space indent.
func (h *DemandHistory) Marshal() ([]byte, error) {
	data, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}
