package eval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/poolsolve/poolsolve/model"
)

// PlanSchema is the plan document ReadPlan reads (docs/plan-json.md).
const PlanSchema = "poolsolve.plan/v1"

// PlanDoc is a plan document as eval reads it: the decisions, what the
// document claims about them, and where in the file each name came from.
// Only the decisions are trusted, and only after Check.
type PlanDoc struct {
	File       string
	Fleet      string
	Infeasible bool
	// Objective is the vector the document claims, nil when it has none.
	Objective  *model.Objective
	Assignment model.Assignment
	refs       []planRef
}

// planRef is a name the document uses, for Resolve.
type planRef struct {
	kind, id, path string
	line, col      int
}

// PlanError is one problem with a plan document. Error() reads like
// `plan.json:12:7: $.nodes[0].lanes[1].variant: no variant "x" in the
// pool`, leaving out the parts that are unknown.
type PlanError struct {
	File      string
	Line, Col int
	Path      string
	Msg       string
}

func (e *PlanError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		if e.File == "" {
			b.WriteString("line ")
		} else {
			b.WriteString(":")
		}
		fmt.Fprintf(&b, "%d:%d", e.Line, e.Col)
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// PlanErrors are every problem found in one document, in document order.
type PlanErrors []*PlanError

func (es PlanErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// maxDepth bounds nesting; a plan document is five levels deep.
const maxDepth = 64

// maxErrors bounds the problems reported for one document.
const maxErrors = 20

// ReadPlan reads a poolsolve.plan/v1 document, as `poolsolve plan
// --format json` writes it or as written by hand: "schema" (required),
// "nodes" with their "lanes" ("variant", "residency", and "with" for the
// lane's other nodes), "routes" ("source", and "model" and "variant" when
// covered), and optionally "infeasible" and the claimed "objective".
// Other fields are ignored. A lane listed on each of its nodes is one
// lane. Errors are *PlanError or PlanErrors, naming file, line, column
// and JSON path; ReadPlan never panics.
func ReadPlan(file string, data []byte) (*PlanDoc, error) {
	r := &planReader{file: file, data: data}
	root, err := r.parse()
	if err != nil {
		return nil, err
	}
	doc := &PlanDoc{File: file}
	r.doc(root, doc)
	if len(r.errs) > 0 {
		return nil, r.errs
	}
	return doc, nil
}

// jnode is one parsed JSON value with its offset in the file.
type jnode struct {
	off  int64
	val  any // string, json.Number, bool, nil, []*jnode, or *jobject
	path string
}

type jobject struct {
	keys []string
	vals map[string]*jnode
}

type planReader struct {
	file string
	data []byte
	dec  *json.Decoder
	errs PlanErrors
}

func (r *planReader) fail(off int64, path, format string, args ...any) {
	if len(r.errs) >= maxErrors {
		return
	}
	line, col := lineCol(r.data, off)
	r.errs = append(r.errs, &PlanError{File: r.file, Line: line, Col: col, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// lineCol turns a byte offset into a 1-based line and column.
func lineCol(data []byte, off int64) (int, int) {
	if off < 0 || len(data) == 0 {
		return 0, 0
	}
	off = min(off, int64(len(data)))
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := int(off) - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// start is where the next value begins: past blanks, commas and colons.
func (r *planReader) start() int64 {
	off := r.dec.InputOffset()
	for off < int64(len(r.data)) && strings.IndexByte(" \t\r\n,:", r.data[off]) >= 0 {
		off++
	}
	return off
}

func (r *planReader) parse() (*jnode, error) {
	if len(bytes.TrimSpace(r.data)) == 0 {
		return nil, &PlanError{File: r.file, Msg: "empty file; expected a " + PlanSchema + " JSON document"}
	}
	r.dec = json.NewDecoder(bytes.NewReader(r.data))
	r.dec.UseNumber()
	root, err := r.value("$", 0)
	if err != nil {
		return nil, err
	}
	if _, err := r.dec.Token(); err != io.EOF {
		off := r.start()
		line, col := lineCol(r.data, off)
		return nil, &PlanError{File: r.file, Line: line, Col: col, Msg: "more data after the JSON document"}
	}
	return root, nil
}

// value reads one value by tokens, so that an error can name the path
// where the document broke off.
func (r *planReader) value(path string, depth int) (*jnode, error) {
	if depth > maxDepth {
		return nil, r.syntax(r.start(), path, errors.New("nested too deeply"))
	}
	off := r.start()
	tok, err := r.dec.Token()
	if err != nil {
		return nil, r.syntax(off, path, err)
	}
	n := &jnode{off: off, path: path}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			obj := &jobject{vals: map[string]*jnode{}}
			keyAt := map[string]int64{}
			for r.dec.More() {
				koff := r.start()
				kt, err := r.dec.Token()
				if err != nil {
					return nil, r.syntax(koff, path, err)
				}
				k, ok := kt.(string)
				if !ok {
					return nil, r.syntax(koff, path, errors.New("expected a key"))
				}
				v, err := r.value(memberPath(path, k), depth+1)
				if err != nil {
					return nil, err
				}
				// Last-wins would silently drop what the first said.
				if first, dup := keyAt[k]; dup {
					fl, fc := lineCol(r.data, first)
					line, col := lineCol(r.data, koff)
					return nil, &PlanError{File: r.file, Line: line, Col: col, Path: memberPath(path, k),
						Msg: fmt.Sprintf("duplicate key %q (first at line %d, column %d)", k, fl, fc)}
				}
				keyAt[k] = koff
				obj.keys = append(obj.keys, k)
				obj.vals[k] = v
			}
			if _, err := r.dec.Token(); err != nil {
				return nil, r.syntax(r.start(), path, err)
			}
			n.val = obj
		case '[':
			var arr []*jnode
			for r.dec.More() {
				v, err := r.value(fmt.Sprintf("%s[%d]", path, len(arr)), depth+1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := r.dec.Token(); err != nil {
				return nil, r.syntax(r.start(), path, err)
			}
			if arr == nil {
				arr = []*jnode{}
			}
			n.val = arr
		default:
			return nil, r.syntax(off, path, fmt.Errorf("unexpected %q", string(t)))
		}
	default:
		n.val = tok
	}
	return n, nil
}

// memberPath is the path of member k of the object at path.
func memberPath(path, k string) string {
	s := jsonKey(k)
	if s[0] == '[' {
		return path + s
	}
	return path + "." + s
}

// jsonKey writes a key as a path step: name, or ["odd key"].
func jsonKey(k string) string {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			return "[" + strconv.Quote(k) + "]"
		}
	}
	if k == "" {
		return `[""]`
	}
	return k
}

func (r *planReader) syntax(off int64, path string, err error) error {
	var se *json.SyntaxError
	msg := err.Error()
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		off = int64(len(r.data))
		msg = "the file ends before the JSON document does (truncated?)"
	case errors.As(err, &se):
		off = se.Offset
		if off > 0 {
			off-- // the offset is past the offending byte
		}
		msg = "not valid JSON: " + strings.TrimPrefix(se.Error(), "json: ")
	}
	line, col := lineCol(r.data, off)
	return &PlanError{File: r.file, Line: line, Col: col, Path: path, Msg: msg}
}

// kindOf names a value's JSON type for messages.
func kindOf(v any) string {
	switch t := v.(type) {
	case string:
		return fmt.Sprintf("string %q", t)
	case json.Number:
		return "number " + t.String()
	case bool:
		return "boolean " + strconv.FormatBool(t)
	case nil:
		return "null"
	case []*jnode:
		return "an array"
	case *jobject:
		return "an object"
	}
	return "a value"
}

func (r *planReader) object(n *jnode, what string) *jobject {
	o, ok := n.val.(*jobject)
	if !ok {
		r.fail(n.off, n.path, "expected %s (an object), got %s", what, kindOf(n.val))
	}
	return o
}

func (r *planReader) array(n *jnode, what string) []*jnode {
	a, ok := n.val.([]*jnode)
	if !ok {
		r.fail(n.off, n.path, "expected %s (an array), got %s", what, kindOf(n.val))
	}
	return a
}

func (r *planReader) str(n *jnode, what string) (string, bool) {
	s, ok := n.val.(string)
	if !ok {
		r.fail(n.off, n.path, "expected %s (a string), got %s", what, kindOf(n.val))
	}
	return s, ok
}

// field returns an optional field, or nil.
func field(o *jobject, k string) *jnode {
	if o == nil {
		return nil
	}
	return o.vals[k]
}

// need returns a required field, reporting it when missing.
func (r *planReader) need(o *jobject, at *jnode, k, what string) *jnode {
	n := field(o, k)
	if n == nil {
		r.fail(at.off, at.path, "missing %q (%s)", k, what)
	}
	return n
}

func (r *planReader) ref(d *PlanDoc, kind, id string, n *jnode) {
	line, col := lineCol(r.data, n.off)
	d.refs = append(d.refs, planRef{kind: kind, id: id, path: n.path, line: line, col: col})
}

// laneAt is a lane as first read, for merging the entries of one lane.
type laneAt struct {
	idx  int
	path string
}

func (r *planReader) doc(root *jnode, d *PlanDoc) {
	o, ok := root.val.(*jobject)
	if !ok {
		r.fail(root.off, "$", "expected a %s document (a JSON object), got %s", PlanSchema, kindOf(root.val))
		return
	}
	if s := r.need(o, root, "schema", PlanSchema); s != nil {
		if v, ok := r.str(s, "the schema name"); ok && v != PlanSchema {
			r.fail(s.off, s.path, "schema %q: expected %q (a plan written by poolsolve plan --format json)", v, PlanSchema)
		}
	}
	if len(r.errs) > 0 {
		return // not a plan: say only that
	}
	if f := field(o, "fleet"); f != nil {
		d.Fleet, _ = r.str(f, "the fleet name")
	}
	if f := field(o, "infeasible"); f != nil {
		b, ok := f.val.(bool)
		if !ok {
			r.fail(f.off, f.path, "expected true or false, got %s", kindOf(f.val))
		}
		d.Infeasible = b
	}
	if f := field(o, "objective"); f != nil && f.val != nil {
		r.objective(f, d)
	}
	d.Assignment = model.Assignment{Lanes: []model.LaneChoice{}, Routes: []model.RouteChoice{}}
	if f := field(o, "nodes"); f != nil && f.val != nil {
		r.nodes(f, d)
	}
	if f := field(o, "routes"); f != nil && f.val != nil {
		r.routes(f, d)
	}
	sort.SliceStable(d.Assignment.Lanes, func(i, j int) bool {
		a, b := d.Assignment.Lanes[i], d.Assignment.Lanes[j]
		if a.Variant != b.Variant {
			return a.Variant < b.Variant
		}
		return strings.Join(a.Nodes, "+") < strings.Join(b.Nodes, "+")
	})
	sort.SliceStable(d.Assignment.Routes, func(i, j int) bool { return d.Assignment.Routes[i].Source < d.Assignment.Routes[j].Source })
}

func (r *planReader) objective(f *jnode, d *PlanDoc) {
	arr := r.array(f, "the objective vector")
	if arr == nil {
		return
	}
	if len(arr) != len(model.Objective{}) {
		r.fail(f.off, f.path, "expected %d numbers (one per level), got %d", len(model.Objective{}), len(arr))
		return
	}
	var obj model.Objective
	for i, n := range arr {
		num, ok := n.val.(json.Number)
		v, err := num.Int64()
		if !ok || err != nil {
			r.fail(n.off, n.path, "expected a whole number, got %s", kindOf(n.val))
			return
		}
		obj[i] = v
	}
	d.Objective = &obj
}

func (r *planReader) nodes(f *jnode, d *PlanDoc) {
	lanes := map[string]laneAt{} // variant + nodes -> first entry
	for _, nn := range r.array(f, "the nodes") {
		no := r.object(nn, "a node")
		if no == nil {
			continue
		}
		idn := r.need(no, nn, "id", "the node id")
		if idn == nil {
			continue
		}
		id, ok := r.str(idn, "the node id")
		if !ok {
			continue
		}
		r.ref(d, "node", id, idn)
		ln := field(no, "lanes")
		if ln == nil || ln.val == nil {
			continue
		}
		for _, l := range r.array(ln, "the node's lanes") {
			r.lane(l, id, d, lanes)
		}
	}
}

func (r *planReader) lane(l *jnode, node string, d *PlanDoc, lanes map[string]laneAt) {
	lo := r.object(l, "a lane")
	if lo == nil {
		return
	}
	vn := r.need(lo, l, "variant", "the lane's variant")
	rn := r.need(lo, l, "residency", "always, preferred or auto")
	if vn == nil || rn == nil {
		return
	}
	variant, ok1 := r.str(vn, "the variant id")
	res, ok2 := r.str(rn, "the residency")
	if !ok1 || !ok2 {
		return
	}
	r.ref(d, "variant", variant, vn)
	nodes := []string{node}
	if w := field(lo, "with"); w != nil && w.val != nil {
		for _, o := range r.array(w, "the lane's other nodes") {
			if s, ok := r.str(o, "a node id"); ok {
				r.ref(d, "node", s, o)
				nodes = append(nodes, s)
			}
		}
	}
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	key := variant + "\x00" + strings.Join(nodes, "\x00")
	if first, seen := lanes[key]; seen {
		if got := d.Assignment.Lanes[first.idx].Residency; got != model.Residency(res) {
			r.fail(rn.off, rn.path, "residency %q, but %s lists the same lane as %q", res, first.path, string(got))
		}
		return
	}
	lanes[key] = laneAt{idx: len(d.Assignment.Lanes), path: l.path}
	d.Assignment.Lanes = append(d.Assignment.Lanes, model.LaneChoice{Variant: variant, Nodes: nodes, Residency: model.Residency(res)})
}

func (r *planReader) routes(f *jnode, d *PlanDoc) {
	for _, rn := range r.array(f, "the routes") {
		ro := r.object(rn, "a route")
		if ro == nil {
			continue
		}
		sn := r.need(ro, rn, "source", "an alias id or model:<id>")
		if sn == nil {
			continue
		}
		src, ok := r.str(sn, "the source")
		if !ok {
			continue
		}
		r.ref(d, "source", src, sn)
		rc := model.RouteChoice{Source: src}
		if m := field(ro, "model"); m != nil && m.val != nil {
			if rc.Model, ok = r.str(m, "the served model"); ok && rc.Model != "" {
				r.ref(d, "model", rc.Model, m)
			}
		}
		if v := field(ro, "variant"); v != nil && v.val != nil {
			if rc.Variant, ok = r.str(v, "the serving lane's variant"); ok && rc.Variant != "" {
				r.ref(d, "variant", rc.Variant, v)
			}
		}
		d.Assignment.Routes = append(d.Assignment.Routes, rc)
	}
}

// Resolve checks that every node, variant, model and demand source the
// document names exists in p; a plan that names others was made for
// another fleet (or another pool of it). The error is PlanErrors, in
// document order, at most 20.
func (d *PlanDoc) Resolve(p *model.Pool) error {
	if p == nil {
		p = &model.Pool{}
	}
	known := map[string]map[string]bool{"node": {}, "variant": {}, "model": {}, "source": {}}
	for _, n := range p.Nodes {
		known["node"][n.ID] = true
	}
	for _, v := range p.Variants {
		known["variant"][v.ID] = true
	}
	for _, m := range p.Models {
		known["model"][m.ID] = true
		if m.IsDemandSource() {
			known["source"][model.DirectSource(m.ID)] = true
		}
	}
	for _, a := range p.Aliases {
		known["source"][a.ID] = true
	}
	what := map[string]string{"node": "node", "variant": "variant", "model": "model", "source": "alias or directly requested model"}
	var errs PlanErrors
	extra := 0
	for _, ref := range d.refs {
		if known[ref.kind][ref.id] {
			continue
		}
		if len(errs) == maxErrors {
			extra++
			continue
		}
		errs = append(errs, &PlanError{File: d.File, Line: ref.line, Col: ref.col, Path: ref.path,
			Msg: fmt.Sprintf("no %s %q in the pool (is the plan for another fleet?)", what[ref.kind], ref.id)})
	}
	if extra > 0 {
		errs = append(errs, &PlanError{File: d.File, Msg: fmt.Sprintf("and %d more names the pool does not have", extra)})
	}
	if len(errs) > 0 {
		return errs
	}
	return nil
}
