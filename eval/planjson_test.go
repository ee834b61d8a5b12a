package eval_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

// pairPool has a TP2 lane on a linked pair, a single-node lane, a cloud
// model, an alias and a direct request.
func pairPool() *model.Pool {
	return pooltest.New(
		pooltest.Node("a", 128), pooltest.Node("b", 128), pooltest.Node("c", 64),
		pooltest.Link("a", "b"),
		pooltest.Variant("pair", 100, pooltest.TP(2), pooltest.On("a", "b"), pooltest.Serves("big")),
		pooltest.Variant("solo", 20, pooltest.On("c"), pooltest.Serves("small")),
		pooltest.External("cloud", 1500),
		pooltest.Alias("chat", 100, "big", "cloud"),
		pooltest.Direct("small", 10),
	)
}

// asWritten is the plan for pairPool as `poolsolve plan --format json`
// writes it (abridged: fields eval ignores left out or kept as samples).
const asWritten = `{
  "schema": "poolsolve.plan/v1",
  "fleet": "test",
  "solver": "exact",
  "infeasible": false,
  "objective": [0, 0, 0, 150],
  "levels": [{"level": 1, "name": "coverage", "value": 0, "status": "optimal", "lowerBound": 0, "gap": 0}],
  "nodes": [
    {"id": "a", "domains": [], "lanes": [
      {"variant": "pair", "models": ["big"], "residency": "always", "kind": "managed", "draws": [], "with": ["b"], "serves": ["chat"]}]},
    {"id": "b", "domains": [], "lanes": [
      {"variant": "pair", "models": ["big"], "residency": "always", "kind": "managed", "draws": [], "with": ["a"], "serves": ["chat"]}]},
    {"id": "c", "domains": [], "lanes": [
      {"variant": "solo", "models": ["small"], "residency": "auto", "kind": "managed", "draws": []}]}
  ],
  "routes": [
    {"source": "model:small", "demand": 10, "model": "small", "variant": "solo", "nodes": ["c"], "residency": "auto"},
    {"source": "chat", "demand": 100, "model": "big", "variant": "pair", "nodes": ["a", "b"], "residency": "always"}
  ],
  "changes": [],
  "summary": {"start": 2, "stop": 0, "move": 0, "residency": 0, "reroute": 0, "manual": 0}
}
`

func TestReadPlanReadsPlansAsWrittenAndByHand(t *testing.T) {
	want := model.Assignment{
		Lanes: []model.LaneChoice{
			{Variant: "pair", Nodes: []string{"a", "b"}, Residency: model.Always},
			{Variant: "solo", Nodes: []string{"c"}, Residency: model.Auto},
		},
		Routes: []model.RouteChoice{
			{Source: "chat", Model: "big", Variant: "pair"},
			{Source: "model:small", Model: "small", Variant: "solo"},
		},
	}
	tests := []struct {
		name string
		doc  string
		want model.Assignment
	}{
		{"a plan as poolsolve writes it, the pair listed on both its nodes", asWritten, want},
		{"a hand-written plan listing the pair once, with its other node", `{"schema": "poolsolve.plan/v1",
			"nodes": [{"id": "a", "lanes": [{"variant": "pair", "residency": "always", "with": ["b"]}]},
			          {"id": "c", "lanes": [{"variant": "solo", "residency": "auto"}]}],
			"routes": [{"source": "chat", "model": "big", "variant": "pair"}, {"source": "model:small", "model": "small", "variant": "solo"}]}`, want},
		{"an external route and an uncovered source", `{"schema": "poolsolve.plan/v1", "nodes": [],
			"routes": [{"source": "chat", "model": "cloud", "external": true}, {"source": "model:small"}]}`,
			model.Assignment{Lanes: []model.LaneChoice{}, Routes: []model.RouteChoice{{Source: "chat", Model: "cloud"}, {Source: "model:small"}}}},
		{"unknown fields and nulls are ignored", `{"schema": "poolsolve.plan/v1", "future": {"x": [1, 2]}, "objective": null,
			"nodes": [{"id": "c", "lanes": null, "extra": true}], "routes": null}`,
			model.Assignment{Lanes: []model.LaneChoice{}, Routes: []model.RouteChoice{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := eval.ReadPlan("plan.json", []byte(tc.doc))
			if err != nil {
				t.Fatalf("ReadPlan: %v", err)
			}
			if !reflect.DeepEqual(doc.Assignment, tc.want) {
				t.Fatalf("assignment = %+v\nwant %+v", doc.Assignment, tc.want)
			}
			if err := doc.Resolve(pairPool()); err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			if rep := eval.Check(pairPool(), doc.Assignment); !rep.Valid {
				t.Fatalf("Check: %v", rep.Err())
			}
		})
	}
	doc, _ := eval.ReadPlan("plan.json", []byte(asWritten))
	if doc.Objective == nil || *doc.Objective != (model.Objective{0, 0, 0, 150}) || doc.Fleet != "test" || doc.Infeasible {
		t.Errorf("stated objective %v, fleet %q, infeasible %v", doc.Objective, doc.Fleet, doc.Infeasible)
	}
}

// A lane on several nodes is listed under each of them and read once;
// the same lane listed twice under one node is a plan that places it
// twice, and Check says so instead of merging the two.
func TestALaneListedTwiceUnderOneNodeIsRejected(t *testing.T) {
	tests := []struct {
		name   string
		doc    string
		wantIn string // "" means valid
	}{
		{"the pair listed once under each of its nodes is one lane", asWritten, ""},
		{"the single-node lane listed twice under its node is placed twice", strings.Replace(asWritten,
			`{"variant": "solo", "models": ["small"], "residency": "auto", "kind": "managed", "draws": []}`,
			`{"variant": "solo", "residency": "auto"}, {"variant": "solo", "residency": "auto"}`, 1), "listed twice on c"},
		{"the pair listed twice under one of its nodes is placed twice", strings.Replace(asWritten,
			`"with": ["b"], "serves": ["chat"]}`,
			`"with": ["b"], "serves": ["chat"]}, {"variant": "pair", "residency": "always", "with": ["b"]}`, 1), "listed twice on a+b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := eval.ReadPlan("plan.json", []byte(tc.doc))
			if err != nil {
				t.Fatalf("ReadPlan: %v", err)
			}
			rep := eval.Check(pairPool(), doc.Assignment)
			if tc.wantIn == "" {
				if !rep.Valid {
					t.Fatalf("Check: %v", rep.Err())
				}
				return
			}
			if rep.Valid || !rep.Has(eval.RuleDuplicateLane) || !strings.Contains(rep.Err().Error(), tc.wantIn) {
				t.Fatalf("Check = %v; want a duplicate lane, %q", rep.Violations, tc.wantIn)
			}
		})
	}
}

func TestReadPlanNamesFileLineAndPathOfBadInput(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"an empty file", "  \n", []string{"plan.json", "empty file"}},
		{"a truncated document names where it broke off", asWritten[:700], []string{"plan.json:14:49", "$.nodes[2].lanes[0]", "truncated"}},
		{"not JSON at all", "schema: plan\n", []string{"plan.json:1:1", "invalid character 's'"}},
		{"a JSON syntax error mid-way", `{"schema": "poolsolve.plan/v1", "nodes": [}`, []string{"plan.json:1:43", "$.nodes", "invalid character '}'"}},
		{"a document that is not an object", `[1, 2]`, []string{"$:", "got an array"}},
		{"another schema", `{"schema": "poolsolve.fleet/v1"}`, []string{"$.schema", `"poolsolve.fleet/v1"`, "poolsolve.plan/v1"}},
		{"no schema", `{"nodes": []}`, []string{`missing "schema"`}},
		{"nodes that are not an array", `{"schema": "poolsolve.plan/v1", "nodes": {"a": 1}}`, []string{"$.nodes", "expected the nodes (an array), got an object"}},
		{"a lane without residency", `{"schema": "poolsolve.plan/v1", "nodes": [{"id": "a", "lanes": [{"variant": "pair"}]}]}`,
			[]string{"$.nodes[0].lanes[0]", `missing "residency"`}},
		{"a node id that is a number", `{"schema": "poolsolve.plan/v1", "nodes": [{"id": 7}]}`, []string{"$.nodes[0].id", "got number 7"}},
		{"one lane given two residencies", `{"schema": "poolsolve.plan/v1", "nodes": [
			{"id": "a", "lanes": [{"variant": "pair", "residency": "always", "with": ["b"]}]},
			{"id": "b", "lanes": [{"variant": "pair", "residency": "auto", "with": ["a"]}]}]}`,
			[]string{"$.nodes[1].lanes[0].residency", `"auto"`, "$.nodes[0].lanes[0]"}},
		{"an objective of three levels", `{"schema": "poolsolve.plan/v1", "objective": [0, 1, 2]}`, []string{"$.objective", "expected 4 numbers"}},
		{"a fractional objective", `{"schema": "poolsolve.plan/v1", "objective": [0, 1, 2, 3.5]}`, []string{"$.objective[3]", "whole number"}},
		{"data after the document", `{"schema": "poolsolve.plan/v1"} {}`, []string{"plan.json:1:33", "unexpected data after"}},
		{"a route without source", `{"schema": "poolsolve.plan/v1", "routes": [{"model": "big"}]}`, []string{"$.routes[0]", `missing "source"`}},
		{"a routing reading poolsolve does not know", `{"schema": "poolsolve.plan/v1", "routing": {"reading": "weights"}}`, []string{"$.routing.reading", `reading "weights": expected "target" or "members"`}},
		{"a routing that is not an object", `{"schema": "poolsolve.plan/v1", "routing": "target"}`, []string{"$.routing", "expected the routing reading (an object)"}},
		{"a node listed under one key twice", "{\"schema\": \"poolsolve.plan/v1\",\n \"nodes\": [{\"id\": \"a\", \"lanes\": [], \"id\": \"b\"}]}",
			[]string{"plan.json:2:37", `$.nodes[0].id`, `duplicate key "id" (first at line 2, column 13)`}},
		{"a repeated odd key is bracketed", `{"schema": "poolsolve.plan/v1", "x y": 1, "x y": 2}`, []string{`$["x y"]: duplicate key`}},
		{"nesting beyond reason", `{"schema": "poolsolve.plan/v1", "x": ` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`, []string{"nesting deeper than"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := eval.ReadPlan("plan.json", []byte(tc.doc))
			if err == nil {
				t.Fatalf("ReadPlan accepted %q", tc.doc)
			}
			var pe *eval.PlanError
			var pes eval.PlanErrors
			if !errors.As(err, &pe) && !errors.As(err, &pes) {
				t.Errorf("error %T is neither *PlanError nor PlanErrors", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func TestResolveRejectsAPlanForAnotherFleet(t *testing.T) {
	doc, err := eval.ReadPlan("other.json", []byte(`{"schema": "poolsolve.plan/v1",
  "nodes": [{"id": "spark-node-03", "lanes": [{"variant": "qwen", "residency": "always"}]},
            {"id": "a", "lanes": [{"variant": "pair", "residency": "always", "with": ["z"]}]}],
  "routes": [{"source": "q38fn", "model": "qwen", "variant": "qwen"}, {"source": "chat", "model": "gpt", "variant": "pair"}]}`))
	if err != nil {
		t.Fatalf("ReadPlan: %v", err)
	}
	err = doc.Resolve(pairPool())
	var pes eval.PlanErrors
	if !errors.As(err, &pes) {
		t.Fatalf("Resolve = %v, want PlanErrors", err)
	}
	want := []string{
		`other.json:2:20: $.nodes[0].id: no node "spark-node-03" in the pool (is the plan for another fleet?)`,
		`$.nodes[0].lanes[0].variant: no variant "qwen"`,
		`$.nodes[1].lanes[0].with[0]: no node "z"`,
		`$.routes[0].source: no alias or directly requested model "q38fn"`,
		`$.routes[0].model: no model "qwen"`,
		`$.routes[0].variant: no variant "qwen"`,
		`$.routes[1].model: no model "gpt"`,
	}
	if len(pes) != len(want) {
		t.Fatalf("%d problems, want %d:\n%v", len(pes), len(want), err)
	}
	for i, w := range want {
		if !strings.Contains(pes[i].Error(), w) {
			t.Errorf("problem %d = %q, want it to contain %q", i, pes[i].Error(), w)
		}
	}
}

// planJSON writes a as the smallest plan document ReadPlan reads, one
// node entry per lane node (as poolsolve writes it).
func planJSON(a model.Assignment) []byte {
	type lane struct {
		Variant   string          `json:"variant"`
		Residency model.Residency `json:"residency"`
		With      []string        `json:"with,omitempty"`
		Devices   []string        `json:"devices,omitempty"`
	}
	type node struct {
		ID    string `json:"id"`
		Lanes []lane `json:"lanes"`
	}
	var nodes []node
	for _, l := range a.Lanes {
		for _, n := range l.Nodes {
			var with []string
			for _, o := range l.Nodes {
				if o != n {
					with = append(with, o)
				}
			}
			nodes = append(nodes, node{ID: n, Lanes: []lane{{l.Variant, l.Residency, with, l.Devices}}})
		}
	}
	data, _ := json.Marshal(map[string]any{"schema": eval.PlanSchema, "nodes": nodes, "routes": a.Routes})
	return data
}

func FuzzReadPlan(f *testing.F) {
	f.Add([]byte(asWritten))
	f.Add([]byte(asWritten[:700]))
	f.Add([]byte(`{"schema": "poolsolve.plan/v1", "nodes": [{"id": "a", "lanes": [{"variant": "pair", "residency": "always", "with": ["b", "a"]}]}]}`))
	f.Add([]byte(`{"schema": "poolsolve.plan/v1", "objective": [1, 2, 3, 4], "routes": [{"source": "chat", "model": "cloud"}]}`))
	f.Add([]byte(`{"schema": "poolsolve.plan/v1", "nodes": [{"id": "c", "lanes": [{"variant": "solo", "residency": "auto"}, {"variant": "solo", "residency": "always"}]}]}`))
	f.Add([]byte(`{"schema": "poolsolve.plan/v1", "nodes": [{"id": "a", "lanes": [{"variant": "solo", "residency": "auto", "devices": ["a/device:cuda:3", "a/device:cuda:1"]}]}]}`))
	f.Add([]byte(`{"schema": "poolsolve.plan/v1", "nodes": [{"id": "a", "lanes": [{"variant": "solo", "residency": "auto", "devices": "a/device:cuda:3"}]}]}`))
	f.Add([]byte(`{"schema": "poolsolve.plan/v1", "nodes": [{"id": "a", "lanes": [{"variant": "solo", "residency": "auto", "devices": [7, null]}]}]}`))
	f.Add([]byte(`{"schema": 7}`))
	f.Add([]byte(`{"schema": "poolsolve.plan/v1", "routing": {"reading": "target", "release": "0.2.3", "basis": "x"}}`))
	f.Add([]byte(`{"schema": "poolsolve.plan/v1", "routing": {"reading": 3}}`))
	f.Add([]byte(`[{"\u00e9": "\ud800"}]`))
	pool := pairPool()
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := eval.ReadPlan("fuzz.json", data)
		again, err2 := eval.ReadPlan("fuzz.json", data)
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) {
			t.Fatalf("ReadPlan is not deterministic: %v then %v", err, err2)
		}
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.json") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if !reflect.DeepEqual(doc.Assignment, again.Assignment) {
			t.Fatalf("two reads differ")
		}
		_ = doc.Resolve(pool)
		eval.Check(pool, doc.Assignment)
		// What was read, written back, reads the same.
		back, err := eval.ReadPlan("back.json", planJSON(doc.Assignment))
		if err != nil {
			if errors.As(err, new(eval.PlanErrors)) {
				return // e.g. one variant placed twice with two residencies
			}
			t.Fatalf("re-reading %s: %v", planJSON(doc.Assignment), err)
		}
		if !sameLanes(back.Assignment, doc.Assignment) {
			t.Fatalf("round trip changed the plan:\n%+v\n%+v", doc.Assignment, back.Assignment)
		}
	})
}

// sameLanes compares lanes and routes; node lists compare as sets.
func sameLanes(a, b model.Assignment) bool {
	if len(a.Routes) != len(b.Routes) {
		return false
	}
	for i := range a.Routes {
		if a.Routes[i] != b.Routes[i] {
			return false
		}
	}
	key := func(x model.Assignment) map[string]model.Residency {
		m := map[string]model.Residency{}
		for _, l := range x.Lanes {
			m[l.Variant+"@"+strings.Join(l.Nodes, "+")] = l.Residency
		}
		return m
	}
	return reflect.DeepEqual(key(a), key(b))
}
