package eval_test

import (
	"reflect"
	"testing"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
)

// decodeAssignment turns fuzz bytes into an assignment over p's names,
// with some names the pool does not know, odd residencies and duplicates.
func decodeAssignment(p *model.Pool, data []byte) model.Assignment {
	next := func() int {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return int(b)
	}
	pick := func(ids []string) string {
		i := next()
		if i >= len(ids) {
			return []string{"", "ghost", "model:ghost", "spark-01+"}[i%4]
		}
		return ids[i]
	}
	var nodes, variants, models, sources []string
	for _, n := range p.Nodes {
		nodes = append(nodes, n.ID)
	}
	for _, v := range p.Variants {
		variants = append(variants, v.ID)
	}
	for _, m := range p.Models {
		models = append(models, m.ID)
		sources = append(sources, model.DirectSource(m.ID))
	}
	for _, a := range p.Aliases {
		sources = append(sources, a.ID)
	}
	residencies := []model.Residency{model.Always, model.Preferred, model.Auto, "", "warm"}
	var a model.Assignment
	for range next() % 12 {
		lc := model.LaneChoice{Variant: pick(variants), Residency: residencies[next()%len(residencies)]}
		for range next() % 4 {
			lc.Nodes = append(lc.Nodes, pick(nodes))
		}
		a.Lanes = append(a.Lanes, lc)
	}
	for range next() % 12 {
		a.Routes = append(a.Routes, model.RouteChoice{Source: pick(sources), Model: pick(models), Variant: pick(variants)})
	}
	return a
}

func FuzzCheck(f *testing.F) {
	pools := []*model.Pool{basePool(pooltest.PinRoute("q", "gpt", "qwen"), pooltest.PinLane("llama", model.Always)),
		pooltest.Random(7, 4, 9)}
	f.Add(byte(0), []byte{})
	f.Add(byte(1), []byte{3, 0, 2, 1, 0, 1, 1, 2, 1, 2, 3, 0, 1, 2, 1, 5, 2, 0})
	f.Add(byte(0), []byte{4, 2, 9, 2, 0, 1, 250, 3, 4, 1, 200, 0, 1, 0, 6, 6, 6, 9, 9, 9, 1, 1, 1})
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		p := pools[int(which)%len(pools)]
		a := decodeAssignment(p, data)
		r := eval.Check(p, a)
		if again := eval.Check(p, a); !reflect.DeepEqual(r, again) {
			t.Fatalf("Check is not deterministic: %+v then %+v", r, again)
		}
		if r.Valid != (len(r.Violations) == 0) {
			t.Fatalf("Valid = %v with %d violations", r.Valid, len(r.Violations))
		}
		var sum int64
		for _, term := range r.Terms {
			sum += term.Units
		}
		if sum != r.Objective[3] {
			t.Fatalf("terms add up to %d, level 4 is %d", sum, r.Objective[3])
		}
	})
}
