package solver

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/fleet"
)

func TestScratchForced(t *testing.T) {
	in, _ := fleet.LoadBundle("../examples/spark-fleet.json")
	cat, _ := catalog.Build(in, catalog.Options{})
	p := cat.Pool
	base, _ := Solve(context.Background(), p, Options{})
	w, _ := NewWhatIf(p, base, 0, time.Now().Add(time.Second))
	k := w.asker(time.Now().Add(3 * time.Second))
	_, cands := k.candidates("q38fn")
	for _, c := range cands {
		t0 := time.Now()
		c0 := k.calls
		o := k.weigh("q38fn", c)
		fmt.Println(o.Model, time.Since(t0), k.calls-c0)
	}
}
