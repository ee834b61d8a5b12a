package fleet

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
	"github.com/poolsolve/poolsolve/lloom"
)

// bundleKeys are the top-level keys of a bundle, in the order docs and
// messages list them.
var bundleKeys = []string{"schema", "description", "lloomRelease", "config", "profiles", "policy", "nodes", "metrics", "demandHistory", "benchmarks", "recipes"}

var nodeKeys = []string{"profile", "inventory", "status", "metrics"}

// LoadBundle reads a fleet bundle (docs/fleet-bundle.md). Errors name the
// file and the JSON path inside it, with line and column where known:
// `spark-fleet.json:41:23: $.config.runtimes["x"].memoryGb: expected a
// number, got string "40"`.
func LoadBundle(path string) (*Inputs, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return ParseBundle(data, path)
}

// ParseBundle reads a fleet bundle from data; file names it in errors.
// The documents inside are read by lloom's and inventory's parsers, whose
// errors are moved into the bundle (paths gain their prefix, positions
// count from the bundle's start).
func ParseBundle(data []byte, file string) (*Inputs, error) {
	doc, err := parseShallow(data, file)
	if err != nil {
		return nil, err
	}
	b := &bundleReader{data: data, file: file, in: &Inputs{}}
	if err := b.read(doc); err != nil {
		return nil, err
	}
	return b.in, nil
}

type bundleReader struct {
	data []byte
	file string
	in   *Inputs
}

func (b *bundleReader) fail(v *jsonpos.Value, path, format string, args ...any) error {
	e := &lloom.InputError{File: b.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if v != nil {
		e.Line, e.Col = jsonpos.Position(b.data, v.Start)
	}
	return e
}

// object checks that v is an object whose keys are all in known.
func (b *bundleReader) object(v *jsonpos.Value, path, what string, known []string) error {
	if v.Kind != jsonpos.Object {
		return b.fail(v, path, "expected %s, got %s", what, v.Describe())
	}
	if known == nil {
		return nil
	}
	for _, m := range v.Members {
		if !slices.Contains(known, m.Key) {
			return b.fail(m.Value, path, "unknown key %q (known: %s)", m.Key, strings.Join(known, ", "))
		}
	}
	return nil
}

// sub hands the bytes of v to read and moves its error into the bundle.
func (b *bundleReader) sub(v *jsonpos.Value, at string, read func(data []byte) error) error {
	sub := v.Bytes(b.data)
	return rebase(read(sub), b.file, at, b.data, v.Start, sub)
}

func (b *bundleReader) src(at string) Source { return Source{File: b.file, Path: at} }

// present returns the member k unless it is absent or null.
func present(doc *jsonpos.Value, k string) *jsonpos.Value {
	v := doc.Get(k)
	if v == nil || v.Kind == jsonpos.Null {
		return nil
	}
	return v
}

func (b *bundleReader) read(doc *jsonpos.Value) error {
	in := b.in
	t := &tree{style: jsonPaths}
	if s := doc.Get("schema"); s == nil || s.Kind != jsonpos.String || s.Text != BundleSchema {
		if kind := kindOf(doc); kind != "" {
			return b.fail(doc, "$", "this is %s, not a fleet bundle", kind)
		}
	}
	if err := b.object(doc, "$", "a fleet bundle object", bundleKeys); err != nil {
		return err
	}
	switch v := doc.Get("schema"); {
	case v == nil:
		return b.fail(doc, "$.schema", "missing: expected %q", BundleSchema)
	case v.Kind != jsonpos.String || v.Text != BundleSchema:
		return b.fail(v, "$.schema", "expected %q, got %s", BundleSchema, v.Describe())
	}
	if v := present(doc, "description"); v != nil {
		if v.Kind != jsonpos.String {
			return b.fail(v, "$.description", "expected a string, got %s", v.Describe())
		}
		in.Description = v.Text
	}
	if v := present(doc, "lloomRelease"); v != nil {
		if v.Kind != jsonpos.String {
			return b.fail(v, "$.lloomRelease", "expected a LLooM release such as \"0.2.3\", got %s", v.Describe())
		}
		r, err := lloom.ParseRelease(v.Text)
		if err != nil {
			return b.fail(v, "$.lloomRelease", "%v", err)
		}
		in.LLooMRelease = r.String()
	}

	v := present(doc, "config")
	if v == nil {
		return b.fail(doc, "$.config", "missing: a bundle needs LLooM's config.json as \"config\"")
	}
	if err := b.object(v, "$.config", "LLooM's config.json object", nil); err != nil {
		return err
	}
	if err := b.sub(v, "$.config", func(d []byte) error { return readConfig(in, d, b.file) }); err != nil {
		return err
	}
	for _, p := range in.Config.Typos {
		p.Path = "$.config" + strings.TrimPrefix(p.Path, jsonpos.Root)
	}
	in.setSource("config", b.src("$.config"))

	if v := present(doc, "profiles"); v != nil {
		if err := b.object(v, "$.profiles", "an object of fleet profiles by name", nil); err != nil {
			return err
		}
		in.Profiles = map[string]*lloom.Profile{}
		in.raw.profiles = map[string]json.RawMessage{}
		for _, m := range v.Distinct() {
			at := t.key("$.profiles", m.Key)
			var p *lloom.Profile
			var raw json.RawMessage
			err := b.sub(m.Value, at, func(d []byte) (err error) {
				p, raw, err = readProfile(d, b.file, m.Key)
				return err
			})
			if err != nil {
				return err
			}
			in.Profiles[m.Key], in.raw.profiles[m.Key] = p, raw
			in.setSource("profiles/"+m.Key, b.src(at))
		}
	}

	in.Policy = DefaultPolicy()
	if v := present(doc, "policy"); v != nil {
		// The shallow bundle tree stops above the policy's tables.
		full, err := parseSpans(v.Bytes(b.data), b.file)
		if err != nil {
			return err
		}
		p, err := decodePolicy(full.Any(true), &tree{file: b.file, style: jsonPaths}, "$.policy")
		if err != nil {
			return err
		}
		in.Policy = p
		in.setSource("policy", b.src("$.policy"))
	}

	if v := present(doc, "nodes"); v != nil {
		if err := b.object(v, "$.nodes", "an object of node reports by node id", nil); err != nil {
			return err
		}
		ms := v.Distinct()
		read := make([]nodeRead, len(ms))
		parallel(len(ms), func(k int) {
			read[k] = b.readNode(ms[k].Key, ms[k].Value, t.key("$.nodes", ms[k].Key))
		})
		for k, m := range ms {
			if err := b.addNode(m.Key, read[k]); err != nil {
				return err
			}
		}
	}

	if v := present(doc, "metrics"); v != nil {
		err := b.sub(v, "$.metrics", func(d []byte) (err error) {
			in.Metrics, in.raw.metrics, err = readMetrics(d, b.file)
			return err
		})
		if err != nil {
			return err
		}
		in.setSource("metrics", b.src("$.metrics"))
	}

	if v := present(doc, "demandHistory"); v != nil {
		err := b.sub(v, "$.demandHistory", func(d []byte) (err error) {
			in.DemandHistory, err = ParseDemandHistory(d, b.file)
			return err
		})
		if err != nil {
			return err
		}
		in.setSource("demandHistory", b.src("$.demandHistory"))
	}

	for _, list := range []string{"benchmarks", "recipes"} {
		v := present(doc, list)
		if v == nil {
			continue
		}
		if v.Kind != jsonpos.Array {
			return b.fail(v, "$."+list, "expected an array of documents, got %s", v.Describe())
		}
		for i, e := range v.Elems {
			at := t.index("$."+list, i)
			err := b.sub(e, at, func(d []byte) error {
				if list == "benchmarks" {
					s, raw, err := readBenchmarks(d, b.file)
					in.Benchmarks, in.raw.benchmarks = append(in.Benchmarks, s), append(in.raw.benchmarks, raw)
					return err
				}
				r, raw, err := readRecipe(d, b.file)
				in.Recipes, in.raw.recipes = append(in.Recipes, r), append(in.raw.recipes, raw)
				return err
			})
			if err != nil {
				return err
			}
			in.setSource(fmt.Sprintf("%s[%d]", list, i), b.src(at))
		}
	}
	return nil
}

// nodeRead is one node's report as read: each part present, in
// nodeKeys order, or the first error.
type nodeRead struct {
	parts []nodePart
	err   error
}

type nodePart struct {
	name string
	doc  any
	raw  json.RawMessage
	src  Source
}

// readNode reads the parts of node id's report; it only reads b, so
// nodes are read side by side.
func (b *bundleReader) readNode(id string, v *jsonpos.Value, at string) nodeRead {
	if id == "" {
		return nodeRead{err: b.fail(v, at, "empty node id")}
	}
	if err := b.object(v, at, "an object with profile, inventory, status and metrics", nodeKeys); err != nil {
		return nodeRead{err: err}
	}
	t := &tree{style: jsonPaths}
	var out nodeRead
	for _, part := range nodeKeys {
		pv := present(v, part)
		if pv == nil {
			continue
		}
		pat := t.field(at, part)
		var doc any
		var raw json.RawMessage
		err := b.sub(pv, pat, func(d []byte) (err error) {
			switch part {
			case "profile":
				doc, raw, err = readMachineProfile(d, b.file)
			case "inventory":
				doc, raw, err = readInventory(d, b.file, id)
			case "metrics":
				doc, raw, err = readMetrics(d, b.file)
			default:
				doc, raw, err = readStatus(d, b.file, id)
			}
			return err
		})
		if err != nil {
			out.err = err
			return out
		}
		out.parts = append(out.parts, nodePart{part, doc, raw, b.src(pat)})
	}
	return out
}

// addNode stores node id's report as read.
func (b *bundleReader) addNode(id string, r nodeRead) error {
	if r.err != nil {
		return r.err
	}
	for _, p := range r.parts {
		if err := b.in.addNodePart(id, p.name, p.doc, p.raw, p.src); err != nil {
			return err
		}
	}
	return nil
}

// parallel calls f(0..n-1) on as many goroutines as there are cores,
// each k once; it returns when all calls have. A bundle of 256 nodes
// reads its nodes in half the time on two cores.
func parallel(n int, f func(k int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for k := range n {
			f(k)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := int(next.Add(1) - 1); k < n; k = int(next.Add(1) - 1) {
				f(k)
			}
		}()
	}
	wg.Wait()
}

// Bundle writes the inputs as one fleet bundle: keys sorted, two-space
// indent, the same bytes for the same inputs. Documents are written as
// they were read, fields lloom does not model included. With redact,
// every document goes through lloom's redaction pass (Redacted), and the
// config and node statuses keep only the parts lloom models, plus
// poolsolve's pool block.
func (in *Inputs) Bundle(redact bool) ([]byte, error) {
	var b bytes.Buffer
	if err := in.WriteBundle(&b, redact); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// WriteBundle is Bundle writing to w: the same bytes. A metrics document
// (a busy gateway's is tens of megabytes) is written as it is rewritten
// and indented, never held whole again: the rest of the bundle is
// encoded around a placeholder that it then replaces. Nothing is written
// when the bundle cannot be made; only an error of w leaves part of it.
func (in *Inputs) WriteBundle(w io.Writer, redact bool) error {
	if redact {
		// The parsed metrics are not written (metrics come from the
		// documents as read, redacted below), so they are not copied.
		r, err := in.redacted(sharedMetrics)
		if err != nil {
			return err
		}
		in = r
	}
	var sp splicer
	if err := sp.init(); err != nil {
		return err
	}
	out, err := in.bundleDoc(redact, &sp)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	// Every document is checked before the first byte is written.
	for _, raw := range sp.docs {
		if !jsonpos.Check(raw, nil) {
			return in.metricsError(raw)
		}
	}
	return sp.write(w, b.Bytes(), in.writeMetrics)
}

// metricsError is the error writeMetrics meets on a document that
// jsonpos.Check refuses, worded as where the document is rewritten.
func (in *Inputs) metricsError(raw json.RawMessage) error {
	var err error
	if in.redactRaw {
		_, err = lloom.RedactJSON(raw)
	} else {
		_, err = jsonpos.Canonical(raw)
	}
	if err == nil {
		err = errors.New("fleet: a metrics document is not valid JSON")
	}
	return err
}

// writeMetrics writes a metrics document as read (readMetrics keeps it
// so), made canonical, or redacted when the inputs are (redaction writes
// it canonical).
func (in *Inputs) writeMetrics(w io.Writer, raw json.RawMessage) error {
	if in.redactRaw {
		return lloom.RedactJSONTo(w, raw)
	}
	return jsonpos.RewriteTo[struct{}](w, raw, struct{}{}, nil)
}

// splicer stands in for large documents while the rest of a bundle is
// encoded, and writes them in their places afterwards.
type splicer struct {
	nonce string
	docs  map[string]json.RawMessage // by placeholder, quoted
}

func (sp *splicer) init() error {
	var n [16]byte
	if _, err := rand.Read(n[:]); err != nil {
		return err
	}
	sp.nonce, sp.docs = hex.EncodeToString(n[:]), map[string]json.RawMessage{}
	return nil
}

// stand returns the placeholder for raw: a string no input can guess.
func (sp *splicer) stand(raw json.RawMessage) json.RawMessage {
	ph := fmt.Sprintf("%q", fmt.Sprintf("poolsolve-splice-%s-%d", sp.nonce, len(sp.docs)))
	sp.docs[ph] = raw
	return json.RawMessage(ph)
}

// write writes the encoded bundle to w with each placeholder replaced by
// its document, indented for where it stands, as the encoder would have
// indented it.
func (sp *splicer) write(w io.Writer, encoded []byte, doc func(io.Writer, json.RawMessage) error) error {
	type at struct {
		off int
		ph  string
	}
	var places []at
	for ph := range sp.docs {
		off := bytes.Index(encoded, []byte(ph))
		if off < 0 {
			return fmt.Errorf("fleet: internal error: a document's place is missing from the bundle")
		}
		places = append(places, at{off, ph})
	}
	slices.SortFunc(places, func(a, b at) int { return a.off - b.off })
	last := 0
	for _, p := range places {
		if _, err := w.Write(encoded[last:p.off]); err != nil {
			return err
		}
		line := bytes.LastIndexByte(encoded[:p.off], '\n') + 1
		depth := (len(encoded[line:p.off]) - len(bytes.TrimLeft(encoded[line:p.off], " "))) / 2
		iw := jsonpos.NewIndentWriter(w, depth, "  ")
		if err := doc(iw, sp.docs[p.ph]); err != nil {
			return err
		}
		if err := iw.Flush(); err != nil {
			return err
		}
		last = p.off + len(p.ph)
	}
	_, err := w.Write(encoded[last:])
	return err
}

// bundleDoc is the bundle as a value to encode, large documents stood in
// for by sp.
func (in *Inputs) bundleDoc(redact bool, sp *splicer) (map[string]any, error) {
	out := map[string]any{"schema": BundleSchema}
	if in.Description != "" {
		out["description"] = in.Description
	}
	if in.LLooMRelease != "" {
		out["lloomRelease"] = in.LLooMRelease
	}
	cfg, err := in.configDoc(redact)
	if err != nil {
		return nil, err
	}
	out["config"] = cfg
	if len(in.Profiles) > 0 {
		profiles := map[string]json.RawMessage{}
		for name, p := range in.Profiles {
			if profiles[name], err = in.docOrRaw(in.raw.profiles[name], p); err != nil {
				return nil, err
			}
		}
		out["profiles"] = profiles
	}
	if in.Policy != nil {
		if out["policy"], err = marshalCanonical(in.Policy); err != nil {
			return nil, err
		}
	}
	if len(in.Nodes) > 0 {
		nodes := map[string]map[string]json.RawMessage{}
		for id, n := range in.Nodes {
			r := in.raw.nodes[id]
			parts := map[string]json.RawMessage{}
			if n.Profile != nil {
				if parts["profile"], err = in.docOrRaw(r.profile, n.Profile); err != nil {
					return nil, err
				}
			}
			if n.Inventory != nil {
				if parts["inventory"], err = in.docOrRaw(r.inventory, n.Inventory); err != nil {
					return nil, err
				}
			}
			if n.Status != nil {
				if redact {
					parts["status"], err = marshalCanonical(n.Status.Redacted())
				} else {
					parts["status"], err = in.docOrRaw(r.status, n.Status)
				}
				if err != nil {
					return nil, err
				}
			}
			if n.Metrics != nil {
				if r.metrics == nil {
					return nil, fmt.Errorf("fleet: the metrics of node %q were not read from a document, so they cannot be written back", id)
				}
				parts["metrics"] = sp.stand(r.metrics)
			}
			nodes[id] = parts
		}
		out["nodes"] = nodes
	}
	if in.Metrics != nil {
		if in.raw.metrics == nil {
			return nil, fmt.Errorf("fleet: metrics were not read from a document, so they cannot be written back")
		}
		out["metrics"] = sp.stand(in.raw.metrics)
	}
	if in.DemandHistory != nil {
		h, err := in.DemandHistory.Marshal()
		if err != nil {
			return nil, err
		}
		out["demandHistory"] = json.RawMessage(h)
	}
	for _, list := range []struct {
		key  string
		docs []any
		raw  []json.RawMessage
	}{
		{"benchmarks", anySlice(in.Benchmarks), in.raw.benchmarks},
		{"recipes", anySlice(in.Recipes), in.raw.recipes},
	} {
		if len(list.docs) == 0 {
			continue
		}
		docs := make([]json.RawMessage, len(list.docs))
		for i, d := range list.docs {
			var raw json.RawMessage
			if i < len(list.raw) {
				raw = list.raw[i]
			}
			if docs[i], err = in.docOrRaw(raw, d); err != nil {
				return nil, err
			}
		}
		out[list.key] = docs
	}
	return out, nil
}

// configDoc is the config as read, or lloom's redacted copy with the pool
// block put back.
func (in *Inputs) configDoc(redact bool) (json.RawMessage, error) {
	if in.Config == nil {
		return nil, fmt.Errorf("fleet: no config to write")
	}
	if !redact {
		return in.docOrRaw(in.ConfigRaw, in.Config)
	}
	red, err := json.Marshal(in.Config.Redacted())
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(red, &m); err != nil {
		return nil, err
	}
	if len(in.ConfigPool.Pins) > 0 || len(in.ConfigPool.Cordons) > 0 {
		if m["pool"], err = json.Marshal(in.ConfigPool); err != nil {
			return nil, err
		}
	}
	return marshalCanonical(m)
}

// docOrRaw returns the raw document (redacted if the inputs are), or the
// parsed one marshalled when the inputs were built without reading a
// document.
func (in *Inputs) docOrRaw(raw json.RawMessage, doc any) (json.RawMessage, error) {
	if raw != nil {
		return in.rawDoc(raw)
	}
	return marshalCanonical(doc)
}

func anySlice[T any](s []T) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}
