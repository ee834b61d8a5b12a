package fleet

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
	"github.com/poolsolve/poolsolve/inventory"
	"github.com/poolsolve/poolsolve/lloom"
)

// Readers for one document each. They take the document's own bytes and
// report errors relative to them, as if the document were its own file;
// LoadBundle moves those errors into the bundle with rebase.

// parseCanonical runs parse on the canonical form of data (compact, keys
// sorted), so that the parts lloom keeps as raw JSON do not depend on how
// the document was laid out, in a bundle or in its own file. On an error
// it parses data as written, whose positions mean something to a reader.
func parseCanonical[T any](data []byte, file string, parse func([]byte, string) (T, error)) (T, json.RawMessage, error) {
	raw, cerr := canonicalJSON(data)
	if cerr == nil {
		if v, err := parse(raw, file); err == nil {
			return v, raw, nil
		}
	}
	v, err := parse(data, file)
	if err != nil {
		var zero T
		return zero, nil, err
	}
	if cerr != nil {
		var zero T
		return zero, nil, &lloom.InputError{File: file, Msg: cerr.Error()}
	}
	return v, raw, nil
}

func readConfig(in *Inputs, data []byte, file string) error {
	doc, perr := parseSpans(data, file)
	if perr == nil && doc.Get("schema") != nil {
		if kind := kindOf(doc); kind != "" {
			line, col := jsonpos.Position(data, doc.Start)
			return &lloom.InputError{File: file, Line: line, Col: col, Path: jsonpos.Root, Msg: "this is " + kind + ", not LLooM's config.json"}
		}
	}
	cfg, raw, err := parseCanonical(data, file, lloom.ParseConfig)
	if err != nil {
		return err
	}
	if perr != nil {
		return perr
	}
	pool, err := readConfigPool(doc, file)
	if err != nil {
		return err
	}
	in.Config, in.ConfigRaw, in.ConfigPool = cfg, raw, pool
	return nil
}

// readConfigPool reads the top-level "pool" block of the config doc
// strictly; LLooM itself ignores it.
func readConfigPool(doc *jsonpos.Value, file string) (ConfigPool, error) {
	var pool ConfigPool
	v := doc.Get("pool")
	if v == nil || v.Kind == jsonpos.Null {
		return pool, nil
	}
	t := &tree{file: file, style: jsonPaths}
	at := t.field("$", "pool")
	if v.Kind != jsonpos.Object {
		t.failf(at, "expected an object with pins and cordons, got %s", v.Describe())
		return pool, t.err
	}
	t.decode(v.Any(true), at, reflect.ValueOf(&pool).Elem(), fieldTag{})
	if t.err != nil {
		return pool, t.err
	}
	pool.Pins, pool.Cordons = nilIfEmpty(pool.Pins), nilIfEmpty(pool.Cordons)
	normalizePins(pool.Pins)
	for i := range pool.Pins {
		pool.Pins[i].Origin = fmt.Sprintf("config pool.pins[%d]", i)
		if err := checkPin(t, pool.Pins[i], t.index(t.field(at, "pins"), i)); err != nil {
			return pool, err
		}
	}
	return pool, nil
}

// readProfile reads a fleet profile given under name. A profile that
// names itself must use that name.
func readProfile(data []byte, file, name string) (*lloom.Profile, json.RawMessage, error) {
	if len(data) > lloom.MaxProfileBytes {
		// The limit is on the file as written.
		_, err := lloom.ParseProfile(data, file)
		return nil, nil, err
	}
	p, raw, err := parseCanonical(data, file, lloom.ParseProfile)
	if err != nil {
		return nil, nil, err
	}
	doc, err := parseSpans(data, file)
	if err != nil {
		return nil, nil, err
	}
	if n := doc.Get("name"); n != nil && n.Kind == jsonpos.String && p.Name != name {
		return nil, nil, &lloom.InputError{File: file, Path: "$.name", Msg: fmt.Sprintf("profile name %q differs from the name it is given under (%q)", p.Name, name)}
	}
	p.Name = name
	return p, raw, nil
}

func readMachineProfile(data []byte, file string) (*lloom.MachineProfile, json.RawMessage, error) {
	return parseCanonical(data, file, lloom.ParseMachineProfile)
}

// readInventory reads an inventory; node, when not empty, must be the
// inventory's nodeId.
func readInventory(data []byte, file, node string) (*inventory.Inventory, json.RawMessage, error) {
	inv, err := inventory.Parse(data, file)
	if err != nil {
		return nil, nil, err
	}
	if node != "" && inv.NodeID != node {
		return nil, nil, &lloom.InputError{File: file, Path: "$.nodeId", Msg: fmt.Sprintf("inventory of node %q given for node %q", inv.NodeID, node)}
	}
	raw, err := canonicalJSON(data)
	if err != nil {
		return nil, nil, &lloom.InputError{File: file, Msg: err.Error()}
	}
	return inv, raw, nil
}

// readStatus reads a /gateway/node answer; node, when not empty, must be
// the node's id.
func readStatus(data []byte, file, node string) (*lloom.NodeStatus, json.RawMessage, error) {
	st, raw, err := parseCanonical(data, file, lloom.ParseNodeStatus)
	if err != nil {
		return nil, nil, err
	}
	if node != "" && st.ID != "" && st.ID != node {
		return nil, nil, &lloom.InputError{File: file, Path: "$", Msg: fmt.Sprintf("status of node %q given for node %q", st.ID, node)}
	}
	if st.ID == "" && node == "" {
		return nil, nil, &lloom.InputError{File: file, Path: "$", Msg: "the node status has no id, so it cannot be matched to a node"}
	}
	return st, raw, nil
}

// readMetrics parses a metrics document as read, and keeps it so: it has
// no raw parts whose bytes would follow the layout, and an answer of tens
// of megabytes is not worth re-encoding for a plan (31 MB: 1.2 s and 190
// MB of allocations). Bundle writes its canonical form.
func readMetrics(data []byte, file string) (*lloom.Metrics, json.RawMessage, error) {
	m, err := lloom.ParseMetrics(data, file)
	if err != nil {
		return nil, nil, err
	}
	return m, data, nil
}

func readBenchmarks(data []byte, file string) (*lloom.BenchmarkSuite, json.RawMessage, error) {
	return parseCanonical(data, file, lloom.ParseBenchmarkSuite)
}

func readRecipe(data []byte, file string) (*lloom.Recipe, json.RawMessage, error) {
	return parseCanonical(data, file, lloom.ParseRecipe)
}

// addNodePart stores one part of a node's report; a part given twice is
// an error.
// AddNodeMetrics reads node's own metrics document (its /gateway/metrics
// answer) into the inputs, as a bundle's nodes.NODE.metrics would be read;
// src says where it came from. A live answer of tens of megabytes is read
// once, not copied into a bundle and read again: parsed, when not nil, is
// data already parsed by lloom.ParseMetrics (with File src.String()),
// which the inputs then own. A node given metrics twice is an error.
func (in *Inputs) AddNodeMetrics(node string, data []byte, parsed *lloom.Metrics, src Source) error {
	m, raw := parsed, json.RawMessage(data)
	if m == nil {
		var err error
		if m, raw, err = readMetrics(data, src.String()); err != nil {
			return err
		}
	}
	return in.addNodePart(node, "metrics", m, raw, src)
}

func (in *Inputs) addNodePart(node, part string, v any, raw json.RawMessage, src Source) error {
	if in.Nodes == nil {
		in.Nodes = map[string]NodeInputs{}
		in.raw.nodes = map[string]rawNode{}
	}
	key := nodeKey(node, part)
	if prev, dup := in.Sources[key]; dup {
		return &lloom.InputError{File: src.File, Path: src.Path, Msg: fmt.Sprintf("a second %s for node %q (the first came from %s)", part, node, prev)}
	}
	n, r := in.Nodes[node], in.raw.nodes[node]
	switch part {
	case "profile":
		n.Profile, r.profile = v.(*lloom.MachineProfile), raw
	case "inventory":
		n.Inventory, r.inventory = v.(*inventory.Inventory), raw
	case "status":
		n.Status, r.status = v.(*lloom.NodeStatus), raw
	case "metrics":
		n.Metrics, r.metrics = v.(*lloom.Metrics), raw
	}
	in.Nodes[node], in.raw.nodes[node] = n, r
	in.setSource(key, src)
	return nil
}
