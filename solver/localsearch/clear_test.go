package localsearch

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

// A hot model served by a lane over four linked nodes waits cold (auto)
// while a small lane sits resident (preferred) on each of those nodes.
// Making the wide lane resident pays only once all four small lanes have
// moved to the spare nodes: ejecting one lane or two leaves a node
// short, and demoting them to auto does not fit beside a resident wide
// lane.
func TestImproveClearsEveryNodeAWideLaneNeedsToAdmitIt(t *testing.T) {
	wide := []string{"a", "b", "c", "d"}
	parts := []pooltest.Part{
		pooltest.Variant("recipe:wide/rt", 70, pooltest.Kind(model.Recipe), pooltest.On(wide...), pooltest.TP(4),
			pooltest.LoadMs(600000), pooltest.Perf(500, 5000)),
		pooltest.Alias("hot", 1000, "recipe:wide/rt"),
	}
	for i, n := range wide {
		spare := fmt.Sprintf("spare-%d", i)
		parts = append(parts, pooltest.Node(n, 128, pooltest.Spark()), pooltest.Node(spare, 128, pooltest.Spark()))
		for _, m := range wide[i+1:] {
			parts = append(parts, pooltest.Link(n, m))
		}
		id := "recipe:small-" + n + "/rt"
		parts = append(parts,
			pooltest.Variant(id, 60, pooltest.Kind(model.Recipe), pooltest.On(n), pooltest.On(spare), pooltest.Perf(500, 5000)),
			pooltest.Alias("cool-"+n, 1, id))
	}
	p := pooltest.New(parts...)
	pr := newLSProblem(p)
	st := pr.newState()
	index := map[string]int{}
	for vi := range pr.vars {
		index[pr.vars[vi].v.ID] = vi
	}
	at := func(vi int, node string) int {
		for k, pl := range pr.vars[vi].pls {
			if pl.nodes[0] == node {
				return k
			}
		}
		t.Fatalf("%s has no placement on %s", pr.vars[vi].v.ID, node)
		return -1
	}
	w := index["recipe:wide/rt"]
	st.set(w, lsOption{0, model.Auto})
	for _, n := range wide {
		vi := index["recipe:small-"+n+"/rt"]
		st.set(vi, lsOption{at(vi, n), model.Preferred})
	}
	if st.total[0] != 0 {
		t.Fatalf("the start breaks a rule: %v", st.total)
	}
	if st.fits(w, lsOption{0, model.Always}) {
		t.Fatal("the wide lane fits resident beside the small lanes: the test needs it not to")
	}
	before := st.total
	ls := &lsSearch{st: st, rng: rand.New(rand.NewPCG(1, 2)), ctx: context.Background()}
	ls.queued = make([]bool, len(pr.vars))
	changed := ls.improve(w)
	if len(changed) == 0 {
		t.Fatalf("improve made no move from %v", before)
	}
	if !st.total.less(before) || st.cur[w].r == model.Auto || st.cur[w].k < 0 {
		t.Fatalf("after the move: wide lane %+v, cost %v, from %v", st.cur[w], st.total, before)
	}
	r := eval.Check(p, st.assignment())
	if !r.Valid || r.Objective != st.objective() {
		t.Fatalf("eval: valid %v, objective %v, search's %v: %v", r.Valid, r.Objective, st.objective(), r.Violations)
	}
	for _, n := range wide {
		vi := index["recipe:small-"+n+"/rt"]
		if o := st.cur[vi]; o.k < 0 || pr.vars[vi].pls[o.k].nodes[0] == n {
			t.Errorf("%s: %+v, want it moved to its spare node", pr.vars[vi].v.ID, o)
		}
	}
}
