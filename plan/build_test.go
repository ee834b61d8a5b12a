package plan_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/internal/golden"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
	"github.com/poolsolve/poolsolve/solver"
)

func TestNodesShowHowFullEachDomainGets(t *testing.T) {
	p, res := steady()
	pl := plan.Build(p, res, plan.Meta{})
	var n03 plan.Node
	for _, n := range pl.Nodes {
		if n.ID == "spark-node-03" {
			n03 = n
		}
	}
	if len(n03.Domains) != 1 {
		t.Fatalf("spark-node-03 domains = %+v, want one", n03.Domains)
	}
	d := n03.Domains[0]
	got := []float64{float64(d.PlanGb), float64(d.AdmitGb), float64(d.ResidentGb), float64(d.AlwaysGb), float64(d.LargestAutoGb)}
	want := []float64{121.69*0.95 - 4, 121.69 * 0.95, 82, 12, 40}
	for i := range got {
		if diff := got[i] - want[i]; diff > 1e-9 || diff < -1e-9 {
			t.Errorf("domain figures = %v, want %v (plan, admit, resident, always, largest auto)", got, want)
			break
		}
	}
	if d.LargestAuto != "qwen38-27b-nvfp4" || !strings.Contains(d.Rule, "maxMemoryUtilization 0.95") {
		t.Errorf("domain = %+v, want the 27B as largest auto lane and the utilisation rule", d)
	}
	if diff := float64(d.FreeGb) - (float64(d.PlanGb) - 82); diff > 1e-9 || diff < -1e-9 {
		t.Errorf("free = %v, want plan - resident", d.FreeGb)
	}
	var lanes []string
	for _, l := range n03.Lanes {
		lanes = append(lanes, l.Variant+":"+string(l.Residency))
	}
	if want := []string{"qwen3-embedding-4b:always", "qwen-image-diffusers:preferred", "qwen38-27b-nvfp4:auto"}; !slices.Equal(lanes, want) {
		t.Errorf("lanes on spark-node-03 = %v, want %v (strongest residency first)", lanes, want)
	}
	for _, n := range pl.Nodes {
		if n.ID == "spark-node-01" {
			if len(n.Lanes) != 1 || !slices.Equal(n.Lanes[0].With, []string{"spark-node-02"}) || n.Lanes[0].Kind != model.Unmanaged {
				t.Errorf("spark-node-01 lanes = %+v, want the unmanaged pair shared with spark-node-02", n.Lanes)
			}
		}
	}
}

func TestRoutes(t *testing.T) {
	pool := func(parts ...pooltest.Part) *model.Pool {
		base := []pooltest.Part{
			pooltest.Node("n1", 100),
			pooltest.Variant("a", 20, pooltest.On("n1"), pooltest.Perf(800, 3000), pooltest.LoadMs(20000)),
			pooltest.Variant("b", 20, pooltest.On("n1"), pooltest.Perf(400, 0)),
			pooltest.External("cloud", 0),
			pooltest.Alias("x", 10, "a", "b", "cloud"),
			pooltest.RouteProfile("x", "first", "a", "cloud"),
			pooltest.RouteProfile("x", "second", "b", "a", "cloud"),
			pooltest.RouteProfile("x", "also-first", "a", "b"),
		}
		return pooltest.New(append(base, parts...)...)
	}
	both := []model.LaneChoice{lane("a", model.Auto, "n1"), lane("b", model.Always, "n1")}
	tests := []struct {
		name      string
		pool      *model.Pool
		res       *solver.Result
		want      plan.Route
		wantNotes int
	}{
		{
			name: "a local route takes the first matching profile and the available members after the model",
			pool: pool(),
			res:  result(both, route("x", "a", "a")),
			want: plan.Route{Source: "x", Demand: 10, Model: "a", Variant: "a", Nodes: []string{"n1"}, Residency: model.Auto,
				RouteName: "first", Fallbacks: []string{"cloud"}, FirstTokenMs: 800 + 0.25*20000, TotalMs: 3000 + 0.25*20000},
		},
		{
			name: "the active route wins when it matches too",
			pool: func() *model.Pool {
				p := pool()
				p.Aliases[0].ActiveRoute = "also-first"
				return p
			}(),
			res: result(both, route("x", "a", "a")),
			want: plan.Route{Source: "x", Demand: 10, Model: "a", Variant: "a", Nodes: []string{"n1"}, Residency: model.Auto,
				RouteName: "also-first", Fallbacks: []string{"b"}, FirstTokenMs: 5800, TotalMs: 8000},
		},
		{
			name: "a profile whose first member is unavailable matches its next available one",
			pool: pool(),
			res:  result([]model.LaneChoice{lane("a", model.Always, "n1")}, route("x", "a", "a")),
			want: plan.Route{Source: "x", Demand: 10, Model: "a", Variant: "a", Nodes: []string{"n1"}, Residency: model.Always,
				RouteName: "first", Fallbacks: []string{"cloud"}, FirstTokenMs: 800, TotalMs: 3000},
		},
		{
			name: "an external route takes the default latency, has no lane, and matches the profile it is first available on",
			pool: pool(),
			res:  result(nil, route("x", "cloud", "")),
			want: plan.Route{Source: "x", Demand: 10, Model: "cloud", External: true, RouteName: "first", FirstTokenMs: 1500, TotalMs: 1500},
		},
		{
			name: "an SLO the expected latency breaks is violated",
			pool: pool(pooltest.SLO("x", 1000, 0)),
			res:  result(both, route("x", "a", "a")),
			want: plan.Route{Source: "x", Demand: 10, Model: "a", Variant: "a", Nodes: []string{"n1"}, Residency: model.Auto,
				RouteName: "first", Fallbacks: []string{"cloud"}, FirstTokenMs: 5800, TotalMs: 8000,
				SLO: &plan.SLO{FirstTokenMs: 1000}, SLOStatus: plan.SLOViolated},
		},
		{
			name: "a total SLO is judged on the expected total",
			pool: pool(pooltest.SLO("x", 0, 9000)),
			res:  result(both, route("x", "a", "a")),
			want: plan.Route{Source: "x", Demand: 10, Model: "a", Variant: "a", Nodes: []string{"n1"}, Residency: model.Auto,
				RouteName: "first", Fallbacks: []string{"cloud"}, FirstTokenMs: 5800, TotalMs: 8000,
				SLO: &plan.SLO{TotalMs: 9000}, SLOStatus: plan.SLOOK},
		},
		{
			name: "an uncovered source carries the solver's explanation",
			pool: pool(),
			res: func() *solver.Result {
				r := result(nil)
				r.Explanations = []solver.Explanation{{Subject: "x", Reason: "every candidate is pinned off"}}
				return r
			}(),
			want: plan.Route{Source: "x", Demand: 10, Reason: "every candidate is pinned off"},
		},
		{
			name:      "a route to a lane the pool does not know keeps the names and leaves a note",
			pool:      pool(),
			res:       result([]model.LaneChoice{lane("ghost", model.Always, "n1")}, route("x", "a", "ghost")),
			want:      plan.Route{Source: "x", Demand: 10, Model: "a", Variant: "ghost", Fallbacks: []string{"cloud"}},
			wantNotes: 1,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pl := plan.Build(tc.pool, tc.res, plan.Meta{})
			if len(pl.Routes) != 1 {
				t.Fatalf("routes = %+v, want one", pl.Routes)
			}
			if got := pl.Routes[0]; !sameRoute(got, tc.want) {
				t.Errorf("route =\n  %+v\nwant\n  %+v", got, tc.want)
			}
			if len(pl.Notes) != tc.wantNotes {
				t.Errorf("notes = %q, want %d", pl.Notes, tc.wantNotes)
			}
		})
	}
}

func sameRoute(a, b plan.Route) bool {
	if (a.SLO == nil) != (b.SLO == nil) || a.SLO != nil && *a.SLO != *b.SLO {
		return false
	}
	a.SLO, b.SLO = nil, nil
	return a.Source == b.Source && a.Demand == b.Demand && a.Model == b.Model && a.External == b.External &&
		a.Variant == b.Variant && slices.Equal(a.Nodes, b.Nodes) && a.Residency == b.Residency &&
		a.RouteName == b.RouteName && slices.Equal(a.Fallbacks, b.Fallbacks) && a.FirstTokenMs == b.FirstTokenMs &&
		a.TotalMs == b.TotalMs && a.SLOStatus == b.SLOStatus && a.Reason == b.Reason
}

func TestDirectSourcesFollowAliases(t *testing.T) {
	p := pooltest.New(pooltest.Node("n1", 100), pooltest.Variant("m", 10, pooltest.On("n1")),
		pooltest.Alias("z", 1, "m"), pooltest.Direct("m", 5), pooltest.Required("m"))
	pl := plan.Build(p, result([]model.LaneChoice{lane("m", model.Always, "n1")}, route("model:m", "m", "m"), route("z", "m", "m")), plan.Meta{})
	var got []string
	for _, r := range pl.Routes {
		got = append(got, r.Source)
	}
	if want := []string{"z", "model:m"}; !slices.Equal(got, want) {
		t.Errorf("sources = %v, want aliases then direct models %v", got, want)
	}
}

func TestAnInfeasibleResultHasNoLanesRoutesOrChanges(t *testing.T) {
	p, res := infeasible()
	pl := plan.Build(p, res, plan.Meta{})
	if !pl.Infeasible || pl.HasChanges() || len(pl.Routes) != 0 || len(pl.Levels) != 0 || pl.Objective != nil {
		t.Errorf("plan = %+v, want infeasible with nothing planned", pl)
	}
	for _, n := range pl.Nodes {
		if len(n.Lanes) != 0 {
			t.Errorf("node %s has lanes %+v", n.ID, n.Lanes)
		}
	}
	if len(pl.Explanations) != 1 || len(pl.Explanations[0].Pins) != 3 {
		t.Errorf("explanations = %+v, want the conflict with its three pins", pl.Explanations)
	}
	var buf bytes.Buffer
	if err := plan.WriteText(&buf, pl, plan.TextOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"No plan: the hard constraints", "Why", "conflicting: qwen-image-diffusers@spark-node-03:always"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, buf.String())
		}
	}
	if strings.Contains(buf.String(), "Changes") {
		t.Errorf("an infeasible plan lists changes:\n%s", buf.String())
	}
}

func TestNilInputsGiveAPlanNotAPanic(t *testing.T) {
	pl := plan.Build(nil, nil, plan.Meta{})
	if !pl.Infeasible || len(pl.Explanations) != 1 {
		t.Errorf("Build(nil, nil) = %+v, want an infeasible plan that says the solver gave nothing", pl)
	}
	pl = plan.Build(nil, &solver.Result{}, plan.Meta{})
	if pl.Infeasible || pl.HasChanges() {
		t.Errorf("Build(nil, empty result) = %+v, want an empty feasible plan", pl)
	}
	var buf bytes.Buffer
	if err := plan.WriteText(&buf, nil, plan.TextOptions{}); err != nil || buf.Len() != 0 {
		t.Errorf("WriteText(nil) = %q, %v; want nothing", buf.String(), err)
	}
	if err := plan.WriteJSON(&buf, nil); err == nil {
		t.Error("WriteJSON(nil) gave no error")
	}
	var nilPlan *plan.Plan
	if nilPlan.HasChanges() {
		t.Error("a nil plan has changes")
	}
}

func TestBuildIsDeterministicWhateverTheAssignmentOrder(t *testing.T) {
	p, res := cordonedPair()
	want := render(t, plan.Build(p, res, plan.Meta{}))
	for i := range 5 {
		p, res := cordonedPair()
		slices.Reverse(res.Assignment.Lanes)
		slices.Reverse(res.Assignment.Routes)
		slices.Reverse(res.Explanations)
		slices.Reverse(p.Current.Lanes)
		if got := render(t, plan.Build(p, res, plan.Meta{})); got != want {
			t.Fatalf("run %d renders differently:\n%s", i, golden.Diff(want, got))
		}
	}
}

// render is the text and JSON of a plan together.
func render(t *testing.T, pl *plan.Plan) string {
	t.Helper()
	var buf bytes.Buffer
	if err := plan.WriteText(&buf, pl, plan.TextOptions{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if err := plan.WriteJSON(&buf, pl); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestBuildDoesNotModifyItsInputs(t *testing.T) {
	p, res := cordonedPair()
	before := render(t, plan.Build(p, res, plan.Meta{}))
	q, r := cordonedPair()
	if !equalJSON(t, p, q) || !equalJSON(t, res, r) {
		t.Fatal("Build changed the pool or the result")
	}
	if after := render(t, plan.Build(p, res, plan.Meta{})); after != before {
		t.Error("a second Build of the same inputs differs")
	}
}
