package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
	"github.com/poolsolve/poolsolve/lloom"
)

// Schema is the value of the schema field this package reads and writes.
const Schema = "poolsolve.inventory/v1"

// Inventory is what one node reports about itself. Absent lists mean "not
// reported", which the planner treats differently from a reported fact.
type Inventory struct {
	Schema        string         `json:"schema"`
	NodeID        string         `json:"nodeId"`
	CollectedAt   time.Time      `json:"collectedAt,omitzero"`
	PlatformID    string         `json:"platformId,omitempty"`
	ComputeArchs  []string       `json:"computeArchs,omitempty"`
	Accelerators  []string       `json:"accelerators,omitempty"`
	MemoryDomains []Domain       `json:"memoryDomains,omitempty"`
	ModelRoots    []ModelRoot    `json:"modelRoots,omitempty"`
	CachedWeights []CachedWeight `json:"cachedWeights,omitempty"`
	Commands      []string       `json:"commands,omitempty"`
	DockerImages  []string       `json:"dockerImages,omitempty"`
	Links         []Link         `json:"links,omitempty"`
	Notes         []string       `json:"notes,omitempty"`
}

// Domain is one pool of memory: unified:0, system:0 or device:<id>.
type Domain struct {
	ID         string  `json:"id"`
	Kind       string  `json:"kind"` // unified, system, device
	Backend    string  `json:"backend,omitempty"`
	CapacityGb float64 `json:"capacityGb"`
	// AvailableGb is free memory when the inventory was taken; nil when
	// the probe could not tell.
	AvailableGb *float64 `json:"availableGb,omitempty"`
	DeviceIDs   []string `json:"deviceIds,omitempty"`
}

// ModelRoot is a folder where weights live, with its free disk.
type ModelRoot struct {
	Path   string  `json:"path"`
	FreeGb float64 `json:"freeGb"`
}

// CachedWeight is a model repository already on disk.
type CachedWeight struct {
	Repo   string  `json:"repo"`
	Root   string  `json:"root,omitempty"`
	SizeGb float64 `json:"sizeGb,omitempty"`
}

// Link is a fabric connection this node sees to a peer.
type Link struct {
	PeerNodeID     string `json:"peerNodeId"`
	LocalInterface string `json:"localInterface,omitempty"`
	LocalAddress   string `json:"localAddress,omitempty"`
	PeerAddress    string `json:"peerAddress,omitempty"`
	Prefixlen      int    `json:"prefixlen,omitempty"`
}

// DomainKinds are the memory domain kinds an inventory may report.
var DomainKinds = []string{"unified", "system", "device"}

// Parse reads an inventory document. Errors are *lloom.InputError naming
// file and the JSON path (`$.memoryDomains[0].capacityGb: expected a
// number >= 0, got string "x"`); syntax errors carry line and column.
// Unknown keys are errors, except extension keys starting with "x-".
func Parse(data []byte, file string) (*Inventory, error) {
	doc, err := decodeJSONValue(data, file)
	if err != nil {
		return nil, err
	}
	w := &schemaWalker{file: file}
	inv := w.inventory(doc, "$")
	if w.err != nil {
		return nil, w.err
	}
	return inv, nil
}

// decodeAny reads exactly one JSON value, numbers as json.Number.
func decodeJSONValue(data []byte, file string) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, jsonSyntaxError(data, file, err)
	}
	off := int(dec.InputOffset())
	if _, err := dec.Token(); err != io.EOF {
		for off < len(data) && strings.ContainsRune(" \t\r\n", rune(data[off])) {
			off++
		}
		line, col := jsonpos.Position(data, off)
		return nil, &lloom.InputError{File: file, Line: line, Col: col, Msg: "unexpected data after the top-level value"}
	}
	// The decoder keeps the last of two equal keys without a word.
	if err := jsonpos.Duplicates(data); err != nil {
		se := err.(*jsonpos.SyntaxError)
		return nil, &lloom.InputError{File: file, Line: se.Line, Col: se.Col, Path: se.Path, Msg: se.Msg}
	}
	return v, nil
}

func jsonSyntaxError(data []byte, file string, err error) error {
	off, msg := len(data), err.Error()
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = int(se.Offset) - 1
	case errors.As(err, &te):
		off = int(te.Offset)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		msg = "unexpected end of JSON input"
		if len(bytes.TrimSpace(data)) == 0 {
			msg = "empty document: expected a JSON object"
		}
	}
	line, col := jsonpos.Position(data, off)
	return &lloom.InputError{File: file, Line: line, Col: col, Msg: msg}
}

// schemaWalker checks a decoded JSON value against the schema and keeps the
// first problem, so that the message names the deepest path at fault.
type schemaWalker struct {
	file string
	err  *lloom.InputError
}

func (w *schemaWalker) failf(path, format string, args ...any) {
	if w.err == nil {
		w.err = &lloom.InputError{File: w.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	}
}

// object returns v as an object and reports its unknown keys.
func (w *schemaWalker) object(v any, path string, known ...string) map[string]any {
	m, ok := v.(map[string]any)
	if !ok {
		w.failf(path, "expected an object, got %s", describeJSON(v))
		return nil
	}
	var unknown []string
	for k := range m {
		if !slices.Contains(known, k) && !strings.HasPrefix(k, "x-") {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		w.failf(path, "unknown key %q (known: %s)", unknown[0], strings.Join(known, ", "))
	}
	return m
}

func (w *schemaWalker) str(m map[string]any, path, name string, required bool) string {
	v, ok := m[name]
	if !ok || v == nil {
		if required {
			w.failf(jsonpos.Field(path, name), "missing: expected a non-empty string")
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		w.failf(jsonpos.Field(path, name), "expected a string, got %s", describeJSON(v))
		return ""
	}
	if required && s == "" {
		w.failf(jsonpos.Field(path, name), "must not be empty")
	}
	return s
}

// num reads a finite number >= 0; present reports whether the key was set.
func (w *schemaWalker) num(m map[string]any, path, name string, required bool) (f float64, present bool) {
	v, ok := m[name]
	if !ok || v == nil {
		if required {
			w.failf(jsonpos.Field(path, name), "missing: expected a number >= 0")
		}
		return 0, false
	}
	n, ok := v.(json.Number)
	if !ok {
		w.failf(jsonpos.Field(path, name), "expected a number >= 0, got %s", describeJSON(v))
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || f < 0 {
		w.failf(jsonpos.Field(path, name), "expected a number >= 0, got %s", describeJSON(v))
		return 0, false
	}
	return f, true
}

func (w *schemaWalker) strs(m map[string]any, path, name string) []string {
	v, ok := m[name]
	if !ok || v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		w.failf(jsonpos.Field(path, name), "expected an array of strings, got %s", describeJSON(v))
		return nil
	}
	if len(arr) == 0 {
		return nil // [] and absent mean the same, and read back the same
	}
	out := make([]string, 0, len(arr))
	for i, e := range arr {
		s, ok := e.(string)
		if !ok || s == "" {
			w.failf(jsonpos.Index(jsonpos.Field(path, name), i), "expected a non-empty string, got %s", describeJSON(e))
			return nil
		}
		out = append(out, s)
	}
	return out
}

func (w *schemaWalker) array(m map[string]any, path, name string) []any {
	v, ok := m[name]
	if !ok || v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		w.failf(jsonpos.Field(path, name), "expected an array, got %s", describeJSON(v))
		return nil
	}
	return arr
}

func (w *schemaWalker) inventory(v any, path string) *Inventory {
	m := w.object(v, path, "schema", "nodeId", "collectedAt", "platformId", "computeArchs",
		"accelerators", "memoryDomains", "modelRoots", "cachedWeights", "commands",
		"dockerImages", "links", "notes")
	if m == nil {
		return nil
	}
	inv := &Inventory{}
	inv.Schema = w.str(m, path, "schema", true)
	if w.err == nil && inv.Schema != Schema {
		w.failf(jsonpos.Field(path, "schema"), "unsupported schema %q: expected %q", inv.Schema, Schema)
	}
	inv.NodeID = w.str(m, path, "nodeId", true)
	if at := w.str(m, path, "collectedAt", false); at != "" {
		t, err := time.Parse(time.RFC3339Nano, at)
		if err != nil {
			w.failf(jsonpos.Field(path, "collectedAt"), "expected an RFC 3339 time such as 2026-11-29T14:08:03Z, got %q", at)
		}
		inv.CollectedAt = t
	}
	inv.PlatformID = w.str(m, path, "platformId", false)
	inv.ComputeArchs = w.strs(m, path, "computeArchs")
	inv.Accelerators = w.strs(m, path, "accelerators")
	seen := map[string]bool{}
	for i, e := range w.array(m, path, "memoryDomains") {
		p := jsonpos.Index(jsonpos.Field(path, "memoryDomains"), i)
		d := w.domain(e, p)
		if w.err != nil {
			return nil
		}
		if seen[d.ID] {
			w.failf(jsonpos.Field(p, "id"), "duplicate memory domain %q", d.ID)
		}
		seen[d.ID] = true
		inv.MemoryDomains = append(inv.MemoryDomains, d)
	}
	for i, e := range w.array(m, path, "modelRoots") {
		p := jsonpos.Index(jsonpos.Field(path, "modelRoots"), i)
		r := w.object(e, p, "path", "freeGb")
		if r == nil {
			return nil
		}
		root := ModelRoot{Path: w.str(r, p, "path", true)}
		root.FreeGb, _ = w.num(r, p, "freeGb", true)
		inv.ModelRoots = append(inv.ModelRoots, root)
	}
	for i, e := range w.array(m, path, "cachedWeights") {
		p := jsonpos.Index(jsonpos.Field(path, "cachedWeights"), i)
		r := w.object(e, p, "repo", "root", "sizeGb")
		if r == nil {
			return nil
		}
		cw := CachedWeight{Repo: w.str(r, p, "repo", true), Root: w.str(r, p, "root", false)}
		cw.SizeGb, _ = w.num(r, p, "sizeGb", false)
		inv.CachedWeights = append(inv.CachedWeights, cw)
	}
	inv.Commands = w.strs(m, path, "commands")
	inv.DockerImages = w.strs(m, path, "dockerImages")
	for i, e := range w.array(m, path, "links") {
		p := jsonpos.Index(jsonpos.Field(path, "links"), i)
		r := w.object(e, p, "peerNodeId", "localInterface", "localAddress", "peerAddress", "prefixlen")
		if r == nil {
			return nil
		}
		l := Link{
			PeerNodeID:     w.str(r, p, "peerNodeId", true),
			LocalInterface: w.str(r, p, "localInterface", false),
			LocalAddress:   w.str(r, p, "localAddress", false),
			PeerAddress:    w.str(r, p, "peerAddress", false),
		}
		if n, ok := w.num(r, p, "prefixlen", false); ok {
			if n != math.Trunc(n) || n > 128 {
				w.failf(jsonpos.Field(p, "prefixlen"), "expected an integer from 0 to 128, got %s", describeJSON(r["prefixlen"]))
			}
			l.Prefixlen = int(n)
		}
		if w.err == nil && l.PeerNodeID == inv.NodeID {
			w.failf(jsonpos.Field(p, "peerNodeId"), "a node cannot link to itself (%q)", l.PeerNodeID)
		}
		inv.Links = append(inv.Links, l)
	}
	inv.Notes = w.strs(m, path, "notes")
	if w.err != nil {
		return nil
	}
	return inv
}

func (w *schemaWalker) domain(v any, path string) Domain {
	m := w.object(v, path, "id", "kind", "backend", "capacityGb", "availableGb", "deviceIds")
	if m == nil {
		return Domain{}
	}
	d := Domain{
		ID:      w.str(m, path, "id", true),
		Kind:    w.str(m, path, "kind", true),
		Backend: w.str(m, path, "backend", false),
	}
	if w.err == nil && !slices.Contains(DomainKinds, d.Kind) {
		w.failf(jsonpos.Field(path, "kind"), "expected one of %s, got %q", strings.Join(DomainKinds, ", "), d.Kind)
	}
	d.CapacityGb, _ = w.num(m, path, "capacityGb", true)
	if f, ok := w.num(m, path, "availableGb", false); ok {
		d.AvailableGb = &f
	}
	d.DeviceIDs = w.strs(m, path, "deviceIds")
	return d
}

// describeJSON names a JSON value for "expected X, got Y" messages. Unlike
// jsonpos.Describe it prints numbers whole, as it always has.
func describeJSON(v any) string {
	if n, ok := v.(json.Number); ok {
		return "number " + string(n)
	}
	return jsonpos.Describe(v)
}
