package plan_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
	"github.com/poolsolve/poolsolve/solver"
)

func lane(v string, r model.Residency, nodes ...string) model.LaneChoice {
	return model.LaneChoice{Variant: v, Nodes: nodes, Residency: r}
}

func route(source, m, v string) model.RouteChoice {
	return model.RouteChoice{Source: source, Model: m, Variant: v}
}

func result(lanes []model.LaneChoice, routes ...model.RouteChoice) *solver.Result {
	return &solver.Result{Assignment: model.Assignment{Lanes: lanes, Routes: routes}}
}

// show is a change in one line, for comparing lists of changes.
func show(c plan.Change) string {
	s := c.Kind.String() + " " + c.Subject
	if len(c.FromNodes) > 0 {
		s += " " + strings.Join(c.FromNodes, "+") + " ->"
	}
	if len(c.Nodes) > 0 {
		s += " " + strings.Join(c.Nodes, "+")
	}
	if c.From != "" || c.To != "" {
		s += " " + c.From + "->" + c.To
	}
	return s
}

func showAll(cs []plan.Change) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, show(c))
	}
	return out
}

// two nodes, linked, with room for two 40 GiB lanes each (plan budget
// 100 - 8 reserve - 4 headroom = 88 GiB).
func twoNodes(parts ...pooltest.Part) *model.Pool {
	base := []pooltest.Part{
		pooltest.Node("n1", 100, pooltest.Spark()),
		pooltest.Node("n2", 100, pooltest.Spark()),
		pooltest.Link("n1", "n2"),
	}
	return pooltest.New(append(base, parts...)...)
}

func TestDiffKinds(t *testing.T) {
	tests := []struct {
		name       string
		pool       *model.Pool
		res        *solver.Result
		want       []string
		wantReason string // a substring of the first change's reason
	}{
		{
			name: "a lane placed that does not run now is started",
			pool: twoNodes(pooltest.Variant("a", 40, pooltest.On("n1")), pooltest.Alias("x", 10, "a")),
			res:  result([]model.LaneChoice{lane("a", model.Always, "n1")}, route("x", "a", "a")),
			want: []string{"start a n1"}, wantReason: "serves x",
		},
		{
			name: "a running lane the plan drops is stopped",
			pool: twoNodes(pooltest.Variant("a", 40, pooltest.On("n1")), pooltest.Running("a", model.Auto, "n1")),
			res:  result(nil),
			want: []string{"stop a n1"}, wantReason: "not needed: no alias or requested model asks for a",
		},
		{
			name: "a lane on other nodes is moved",
			pool: twoNodes(pooltest.Variant("a", 40, pooltest.Kind(model.Recipe), pooltest.On("n1"), pooltest.On("n2")),
				pooltest.Running("a", model.Auto, "n1"), pooltest.Alias("x", 10, "a")),
			res:  result([]model.LaneChoice{lane("a", model.Auto, "n2")}, route("x", "a", "a")),
			want: []string{"move a n1 -> n2"}, wantReason: "serves x",
		},
		{
			name: "a lane kept with another residency changes residency",
			pool: twoNodes(pooltest.Variant("a", 40, pooltest.On("n1")), pooltest.Running("a", model.Auto, "n1"),
				pooltest.Alias("x", 100, "a")),
			res:  result([]model.LaneChoice{lane("a", model.Always, "n1")}, route("x", "a", "a")),
			want: []string{"residency a n1 auto->always"}, wantReason: "latency: x expects 1000 ms first token instead of 8500 ms as auto",
		},
		{
			name: "an alias served by another model is re-routed",
			pool: twoNodes(pooltest.Variant("a", 40, pooltest.On("n1"), pooltest.Perf(2000, 0)), pooltest.Variant("b", 40, pooltest.On("n2"), pooltest.Perf(500, 0)),
				pooltest.Alias("x", 10, "a", "b"), pooltest.Running("a", model.Always, "n1"), pooltest.Running("b", model.Always, "n2"),
				pooltest.Routed("x", "a")),
			res:  result([]model.LaneChoice{lane("a", model.Always, "n1"), lane("b", model.Always, "n2")}, route("x", "b", "b")),
			want: []string{"reroute x a->b"}, wantReason: "latency: expected first token 500 ms instead of 2000 ms",
		},
		{
			name: "an alias that loses every candidate is re-routed to uncovered",
			pool: twoNodes(pooltest.Variant("a", 40, pooltest.On("n1")), pooltest.Alias("x", 10, "a"),
				pooltest.Running("a", model.Always, "n1"), pooltest.Routed("x", "a")),
			res:  result(nil, route("x", "", "")),
			want: []string{"stop a n1", "reroute x a->"}, wantReason: "not needed: x stays uncovered",
		},
		{
			name: "an unmanaged lane the plan drops gets a manual stop",
			pool: twoNodes(pooltest.Variant("pair", 60, pooltest.Kind(model.Unmanaged), pooltest.TP(2), pooltest.On("n1", "n2")),
				pooltest.Running("pair", model.Always, "n1", "n2")),
			res:  result(nil),
			want: []string{"manual-stop pair n1+n2"},
		},
		{
			name: "a federated lane the plan proposes gets a manual start",
			pool: twoNodes(pooltest.Variant("mac", 20, pooltest.Kind(model.Federated), pooltest.On("n2")), pooltest.Alias("x", 10, "mac")),
			res:  result([]model.LaneChoice{lane("mac", model.Always, "n2")}, route("x", "mac", "mac")),
			want: []string{"manual-start mac n2"}, wantReason: "serves x",
		},
		{
			name: "an unmanaged lane on other nodes gets a manual stop and a manual start",
			pool: twoNodes(pooltest.Variant("u", 20, pooltest.Kind(model.Unmanaged), pooltest.On("n2")),
				pooltest.Running("u", model.Always, "n1")),
			res:  result([]model.LaneChoice{lane("u", model.Always, "n2")}),
			want: []string{"manual-stop u n1", "manual-start u n2"}, wantReason: "n1 is no longer a candidate placement",
		},
		{
			name: "a lane kept as it runs changes nothing",
			pool: twoNodes(pooltest.Variant("a", 40, pooltest.On("n1")), pooltest.Running("a", model.Preferred, "n1"),
				pooltest.Alias("x", 10, "a"), pooltest.Routed("x", "a")),
			res:  result([]model.LaneChoice{lane("a", model.Preferred, "n1")}, route("x", "a", "a")),
			want: []string{},
		},
		{
			name: "a current lane without a valid residency has no residency to change",
			pool: twoNodes(pooltest.Variant("a", 40, pooltest.On("n1")), pooltest.Running("a", "", "n1")),
			res:  result([]model.LaneChoice{lane("a", model.Auto, "n1")}),
			want: []string{},
		},
		{
			name: "a variant running on two node sets keeps one and stops the other",
			pool: twoNodes(pooltest.Variant("a", 40, pooltest.Kind(model.Recipe), pooltest.On("n1"), pooltest.On("n2")),
				pooltest.Running("a", model.Auto, "n1"), pooltest.Running("a", model.Auto, "n2")),
			res:  result([]model.LaneChoice{lane("a", model.Auto, "n2")}),
			want: []string{"stop a n1"},
		},
		{
			name: "stops come before starts, then moves, residency changes, re-routes and manual actions",
			pool: twoNodes(
				pooltest.Variant("a", 10, pooltest.On("n1")), pooltest.Variant("b", 10, pooltest.On("n1")),
				pooltest.Variant("c", 10, pooltest.Kind(model.Recipe), pooltest.On("n1"), pooltest.On("n2")),
				pooltest.Variant("d", 10, pooltest.On("n2")), pooltest.Variant("u", 10, pooltest.Kind(model.Unmanaged), pooltest.On("n2")),
				pooltest.Alias("x", 1, "b", "d"),
				pooltest.Running("a", model.Auto, "n1"), pooltest.Running("c", model.Auto, "n1"), pooltest.Running("d", model.Auto, "n2"),
				pooltest.Running("u", model.Always, "n2"), pooltest.Routed("x", "d")),
			res: result([]model.LaneChoice{lane("b", model.Auto, "n1"), lane("c", model.Auto, "n2"), lane("d", model.Always, "n2")},
				route("x", "b", "b")),
			want: []string{"stop a n1", "start b n1", "move c n1 -> n2", "residency d n2 auto->always", "reroute x d->b", "manual-stop u n2"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := plan.Build(tc.pool, tc.res, plan.Meta{})
			if got := showAll(p.Changes); !slices.Equal(got, tc.want) {
				t.Errorf("changes = %q, want %q", got, tc.want)
			}
			if p.HasChanges() != (len(tc.want) > 0) {
				t.Errorf("HasChanges() = %v with %d changes", p.HasChanges(), len(tc.want))
			}
			if tc.wantReason != "" && len(p.Changes) > 0 && !strings.Contains(p.Changes[0].Reason, tc.wantReason) {
				t.Errorf("reason = %q, want it to contain %q", p.Changes[0].Reason, tc.wantReason)
			}
			for _, c := range p.Changes {
				if !c.Kind.Valid() {
					t.Errorf("change %+v has no valid kind", c)
				}
			}
		})
	}
}

func TestDiffReasons(t *testing.T) {
	tests := []struct {
		name    string
		pool    *model.Pool
		res     *solver.Result
		subject string
		want    string
	}{
		{
			name: "a lane on a cordoned node stops because of the cordon",
			pool: pooltest.New(pooltest.Node("n1", 100), pooltest.Node("n2", 100, pooltest.Cordoned()),
				pooltest.Variant("a", 40, pooltest.On("n2")), pooltest.Running("a", model.Always, "n2"), pooltest.Alias("x", 10, "a")),
			res:     result(nil, route("x", "", "")),
			subject: "a", want: "n2 is cordoned",
		},
		{
			name: "a lane that no longer fits next to the plan's resident lanes says which domain is full",
			pool: twoNodes(pooltest.Variant("big", 60, pooltest.On("n1")), pooltest.Variant("old", 50, pooltest.On("n1")),
				pooltest.Running("old", model.Preferred, "n1"), pooltest.Alias("x", 10, "big")),
			res:     result([]model.LaneChoice{lane("big", model.Always, "n1")}, route("x", "big", "big")),
			subject: "old", want: "does not fit: n1 unified:0 needs 50 GiB next to 60 GiB resident (big); plan budget 88 GiB",
		},
		{
			name: "a lane made auto says it no longer fits resident",
			pool: twoNodes(pooltest.Variant("big", 60, pooltest.On("n1")), pooltest.Variant("old", 30, pooltest.On("n1")),
				pooltest.Running("old", model.Always, "n1"), pooltest.Alias("x", 10, "big")),
			res:     result([]model.LaneChoice{lane("big", model.Always, "n1"), lane("old", model.Auto, "n1")}, route("x", "big", "big")),
			subject: "old", want: "does not fit resident: n1 unified:0 needs 30 GiB next to 60 GiB resident (big); plan budget 88 GiB",
		},
		{
			name:    "a pinned lane says which pin placed it",
			pool:    twoNodes(pooltest.Variant("a", 40, pooltest.On("n1")), pooltest.PinLane("a", model.Always, "n1")),
			res:     result([]model.LaneChoice{lane("a", model.Always, "n1")}),
			subject: "a", want: "pinned by a@n1:always",
		},
		{
			name: "a residency change that keeps an SLO names level 3",
			pool: twoNodes(pooltest.Variant("a", 40, pooltest.On("n1")), pooltest.Running("a", model.Auto, "n1"),
				pooltest.Alias("x", 10, "a"), pooltest.SLO("x", 2000, 0)),
			res:     result([]model.LaneChoice{lane("a", model.Always, "n1")}, route("x", "a", "a")),
			subject: "a", want: "SLO: x expects 8500 ms first token as auto, over its SLO",
		},
		{
			name: "a re-route away from a stopped lane names the lane",
			pool: twoNodes(pooltest.Variant("a", 40, pooltest.On("n1")), pooltest.Variant("b", 40, pooltest.On("n2")),
				pooltest.Alias("x", 10, "a", "b"), pooltest.Running("a", model.Always, "n1"), pooltest.Routed("x", "a")),
			res:     result([]model.LaneChoice{lane("b", model.Always, "n2")}, route("x", "b", "b")),
			subject: "x", want: "a stops with its lane a",
		},
		{
			name: "a re-route from an external model to a local lane names level 2",
			pool: twoNodes(pooltest.Variant("a", 40, pooltest.On("n1")), pooltest.External("cloud", 900),
				pooltest.Alias("x", 10, "a", "cloud"), pooltest.Routed("x", "cloud")),
			res:     result([]model.LaneChoice{lane("a", model.Always, "n1")}, route("x", "a", "a")),
			subject: "x", want: "local before external",
		},
		{
			name: "the solver's explanation of an alias is the reason for its re-route",
			pool: twoNodes(pooltest.Variant("a", 40, pooltest.On("n1")), pooltest.Alias("x", 10, "a"),
				pooltest.Running("a", model.Always, "n1"), pooltest.Routed("x", "a")),
			res: func() *solver.Result {
				r := result(nil, route("x", "", ""))
				r.Explanations = []solver.Explanation{{Subject: "x", Reason: "pin p keeps a off n1"}}
				return r
			}(),
			subject: "x", want: "pin p keeps a off n1",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := plan.Build(tc.pool, tc.res, plan.Meta{})
			i := slices.IndexFunc(p.Changes, func(c plan.Change) bool { return c.Subject == tc.subject })
			if i < 0 {
				t.Fatalf("no change for %s in %q", tc.subject, showAll(p.Changes))
			}
			if got := p.Changes[i].Reason; !strings.Contains(got, tc.want) {
				t.Errorf("reason for %s = %q, want it to contain %q", tc.subject, got, tc.want)
			}
		})
	}
}

func TestChangeKindZeroValueIsNoKind(t *testing.T) {
	var k plan.ChangeKind
	if k.Valid() {
		t.Fatal("the zero ChangeKind is valid")
	}
	if _, err := json.Marshal(plan.Change{Subject: "a"}); err == nil {
		t.Error("a change without a kind marshals without error")
	}
	for _, k := range []plan.ChangeKind{plan.Stop, plan.Start, plan.Move, plan.SetResidency, plan.Reroute, plan.ManualStop, plan.ManualStart} {
		b, err := k.MarshalText()
		if err != nil {
			t.Fatalf("%v.MarshalText: %v", k, err)
		}
		var back plan.ChangeKind
		if err := back.UnmarshalText(b); err != nil || back != k {
			t.Errorf("%s reads back as %v (%v)", b, back, err)
		}
	}
	var back plan.ChangeKind
	if err := back.UnmarshalText([]byte("")); err == nil {
		t.Error(`"" reads as a kind`)
	}
}

func TestManualChangesAreCountedApart(t *testing.T) {
	p, res := cordonedPair()
	pl := plan.Build(p, res, plan.Meta{})
	want := plan.Summary{Start: 1, Stop: 1, Residency: 1, Reroute: 2, Manual: 1}
	if pl.Summary != want {
		t.Errorf("summary = %+v, want %+v", pl.Summary, want)
	}
	i := slices.IndexFunc(pl.Changes, plan.Change.Manual)
	if i < 0 || pl.Changes[i].Subject != "sparkqwen-pair" || pl.Changes[i].LaneKind != model.Unmanaged {
		t.Fatalf("changes = %q, want a manual stop of the unmanaged pair", showAll(pl.Changes))
	}
	if got := pl.Changes[i].Reason; got != "spark-node-02 is cordoned (--cordon)" {
		t.Errorf("manual stop reason = %q, want the cordon", got)
	}
}
