package solver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/fleet"
)

func TestScratchExplain(t *testing.T) {
	for _, f := range []string{"spark-fleet", "rule-arch-mismatch"} {
		in, err := fleet.LoadBundle("../examples/" + f + ".json")
		if err != nil {
			t.Fatal(err)
		}
		cat, err := catalog.Build(in, catalog.Options{})
		if err != nil {
			t.Fatal(err)
		}
		p := cat.Pool
		base, err := Solve(context.Background(), p, Options{})
		if err != nil {
			t.Fatal(err)
		}
		w, err := NewWhatIf(p, base, 0, time.Now().Add(time.Second))
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		for _, a := range p.Aliases {
			ans, err := w.WhyRoute(context.Background(), a.ID, true, time.Now().Add(2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.MarshalIndent(ans, "", " ")
			os.Stdout.Write(b)
		}
		for _, n := range p.Nodes {
			for _, v := range p.Variants {
				ans, err := w.WhyLane(context.Background(), v.ID, n.ID, true, time.Now().Add(2*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				for _, o := range ans.Options {
					fmt.Println(v.ID, n.ID, o.Chosen, o.Possible, o.Reasons, o.Best)
				}
			}
		}
		fmt.Println(time.Since(t0))
	}
}
