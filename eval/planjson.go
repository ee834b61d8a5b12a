package eval

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
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
	Objective *model.Objective
	// Reading is the routing reading the plan says it was made with
	// ("target" or "members"), "" when it says none.
	Reading    string
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
	return jsonpos.Message(e.File, e.Line, e.Col, e.Path, e.Msg)
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

// maxErrors bounds the problems reported for one document.
const maxErrors = 20

// ReadPlan reads a poolsolve.plan/v1 document, as `poolsolve plan
// --format json` writes it or as written by hand: "schema" (required),
// "nodes" with their "lanes" ("variant", "residency", and "with" for the
// lane's other nodes), "routes" ("source", and "model" and "variant" when
// covered), and optionally "infeasible" and the claimed "objective".
// Other fields are ignored. A lane listed on each of its nodes is one
// lane; one listed twice under the same node is two, which Check rejects. Errors are *PlanError or PlanErrors, naming file, line, column
// and JSON path; ReadPlan never panics.
func ReadPlan(file string, data []byte) (*PlanDoc, error) {
	r := &planReader{file: file, data: jsonpos.TrimBOM(data)}
	v, err := jsonpos.Parse(r.data, jsonpos.Options{
		Empty:     "empty file; expected a " + PlanSchema + " JSON document",
		Truncated: "the file ends before the JSON document does (truncated?)",
	})
	if err != nil {
		var se *jsonpos.SyntaxError
		if !errors.As(err, &se) {
			return nil, &PlanError{File: file, Msg: err.Error()}
		}
		return nil, &PlanError{File: file, Line: se.Line, Col: se.Col, Path: se.Path, Msg: se.Msg}
	}
	doc := &PlanDoc{File: file}
	r.doc(&jnode{v: v, path: jsonpos.Root}, doc)
	if len(r.errs) > 0 {
		return nil, r.errs
	}
	return doc, nil
}

// jnode is one parsed value and its JSON path.
type jnode struct {
	v    *jsonpos.Value
	path string
}

func (n *jnode) null() bool { return n.v.Kind == jsonpos.Null }

type planReader struct {
	file string
	data []byte
	errs PlanErrors
}

func (r *planReader) fail(n *jnode, format string, args ...any) {
	if len(r.errs) >= maxErrors {
		return
	}
	line, col := jsonpos.Position(r.data, n.v.Start)
	r.errs = append(r.errs, &PlanError{File: r.file, Line: line, Col: col, Path: n.path, Msg: fmt.Sprintf(format, args...)})
}

func (r *planReader) object(n *jnode, what string) *jnode {
	if n.v.Kind != jsonpos.Object {
		r.fail(n, "expected %s (an object), got %s", what, n.v.Describe())
		return nil
	}
	return n
}

func (r *planReader) array(n *jnode, what string) []*jnode {
	if n.v.Kind != jsonpos.Array {
		r.fail(n, "expected %s (an array), got %s", what, n.v.Describe())
		return nil
	}
	out := make([]*jnode, len(n.v.Elems))
	for i, e := range n.v.Elems {
		out[i] = &jnode{v: e, path: jsonpos.Index(n.path, i)}
	}
	return out
}

func (r *planReader) str(n *jnode, what string) (string, bool) {
	if n.v.Kind != jsonpos.String {
		r.fail(n, "expected %s (a string), got %s", what, n.v.Describe())
		return "", false
	}
	return n.v.Text, true
}

// field returns an optional member of an object, or nil.
func field(o *jnode, k string) *jnode {
	if o == nil {
		return nil
	}
	if v := o.v.Get(k); v != nil {
		return &jnode{v: v, path: jsonpos.Field(o.path, k)}
	}
	return nil
}

// need returns a required member, reporting it when missing.
func (r *planReader) need(o *jnode, k, what string) *jnode {
	n := field(o, k)
	if n == nil {
		r.fail(o, "missing %q (%s)", k, what)
	}
	return n
}

func (r *planReader) ref(d *PlanDoc, kind, id string, n *jnode) {
	line, col := jsonpos.Position(r.data, n.v.Start)
	d.refs = append(d.refs, planRef{kind: kind, id: id, path: n.path, line: line, col: col})
}

// laneAt is a lane as first read, for merging the entries of one lane:
// a lane on several nodes is listed once under each of them.
type laneAt struct {
	idx   int
	path  string
	under map[string]bool // the nodes it was listed under
}

func (r *planReader) doc(root *jnode, d *PlanDoc) {
	if root.v.Kind != jsonpos.Object {
		r.fail(root, "expected a %s document (a JSON object), got %s", PlanSchema, root.v.Describe())
		return
	}
	o := root
	if s := r.need(o, "schema", PlanSchema); s != nil {
		if v, ok := r.str(s, "the schema name"); ok && v != PlanSchema {
			r.fail(s, "schema %q: expected %q (a plan written by poolsolve plan --format json)", v, PlanSchema)
		}
	}
	if len(r.errs) > 0 {
		return // not a plan: say only that
	}
	if f := field(o, "fleet"); f != nil {
		d.Fleet, _ = r.str(f, "the fleet name")
	}
	if f := field(o, "infeasible"); f != nil {
		if f.v.Kind != jsonpos.Bool {
			r.fail(f, "expected true or false, got %s", f.v.Describe())
		}
		d.Infeasible = f.v.Bool
	}
	if f := field(o, "objective"); f != nil && !f.null() {
		r.objective(f, d)
	}
	if f := field(o, "routing"); f != nil && !f.null() && r.object(f, "the routing reading") != nil {
		if g := field(f, "reading"); g != nil {
			if v, ok := r.str(g, "the reading"); ok && v != model.ReadTarget && v != model.ReadMembers {
				r.fail(g, "reading %q: expected %q or %q", v, model.ReadTarget, model.ReadMembers)
			} else {
				d.Reading = v
			}
		}
	}
	d.Assignment = model.Assignment{Lanes: []model.LaneChoice{}, Routes: []model.RouteChoice{}}
	if f := field(o, "nodes"); f != nil && !f.null() {
		r.nodes(f, d)
	}
	if f := field(o, "routes"); f != nil && !f.null() {
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
		r.fail(f, "expected %d numbers (one per level), got %d", len(model.Objective{}), len(arr))
		return
	}
	var obj model.Objective
	for i, n := range arr {
		v, err := strconv.ParseInt(n.v.Text, 10, 64)
		if n.v.Kind != jsonpos.Number || err != nil {
			r.fail(n, "expected a whole number, got %s", n.v.Describe())
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
		idn := r.need(no, "id", "the node id")
		if idn == nil {
			continue
		}
		id, ok := r.str(idn, "the node id")
		if !ok {
			continue
		}
		r.ref(d, "node", id, idn)
		ln := field(no, "lanes")
		if ln == nil || ln.null() {
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
	vn := r.need(lo, "variant", "the lane's variant")
	rn := r.need(lo, "residency", "always, preferred or auto")
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
	if w := field(lo, "with"); w != nil && !w.null() {
		for _, o := range r.array(w, "the lane's other nodes") {
			if s, ok := r.str(o, "a node id"); ok {
				r.ref(d, "node", s, o)
				nodes = append(nodes, s)
			}
		}
	}
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	var devices []string
	if dv := field(lo, "devices"); dv != nil && !dv.null() {
		for _, o := range r.array(dv, "the lane's devices") {
			if s, ok := r.str(o, "a device, node/domain"); ok {
				devices = append(devices, s)
			}
		}
	}
	slices.Sort(devices)
	key := variant + "\x00" + strings.Join(nodes, "\x00") + "\x00[" + strings.Join(devices, "\x00")
	if first, seen := lanes[key]; seen && !first.under[node] {
		if got := d.Assignment.Lanes[first.idx].Residency; got != model.Residency(res) {
			r.fail(rn, "residency %q, but %s lists the same lane as %q", res, first.path, string(got))
		}
		first.under[node] = true
		return
	} else if seen {
		// Listed twice under one node: kept, so that Check names it.
		d.Assignment.Lanes = append(d.Assignment.Lanes, model.LaneChoice{Variant: variant, Nodes: nodes, Devices: devices, Residency: model.Residency(res)})
		return
	}
	lanes[key] = laneAt{idx: len(d.Assignment.Lanes), path: l.path, under: map[string]bool{node: true}}
	d.Assignment.Lanes = append(d.Assignment.Lanes, model.LaneChoice{Variant: variant, Nodes: nodes, Devices: devices, Residency: model.Residency(res)})
}

func (r *planReader) routes(f *jnode, d *PlanDoc) {
	for _, rn := range r.array(f, "the routes") {
		ro := r.object(rn, "a route")
		if ro == nil {
			continue
		}
		sn := r.need(ro, "source", "an alias id or model:<id>")
		if sn == nil {
			continue
		}
		src, ok := r.str(sn, "the source")
		if !ok {
			continue
		}
		r.ref(d, "source", src, sn)
		rc := model.RouteChoice{Source: src}
		if m := field(ro, "model"); m != nil && !m.null() {
			if rc.Model, ok = r.str(m, "the served model"); ok && rc.Model != "" {
				r.ref(d, "model", rc.Model, m)
			}
		}
		if v := field(ro, "variant"); v != nil && !v.null() {
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
