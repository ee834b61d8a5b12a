package catalog

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/model"
)

// A recipe's placements are every linked clique of its size, in
// lexicographic order of the sorted node ids: the neighbour lists the
// search walks must give what checking every node against every member
// gives, on graphs dense and sparse, and after links are added.
func TestRecipePlacementsAreEveryLinkedCliqueInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 1))
	for _, tc := range []struct {
		nodes int
		p     float64
	}{{6, 0.5}, {12, 0.3}, {12, 0.8}, {20, 0.15}} {
		b := &builder{pool: &model.Pool{}}
		for i := range tc.nodes {
			b.pool.Nodes = append(b.pool.Nodes, model.Node{ID: fmt.Sprintf("n%02d", (i*7)%tc.nodes)})
		}
		linked := map[[2]string]bool{}
		link := func(a, c string) {
			b.pool.Links = append(b.pool.Links, model.Link{A: a, B: c})
			linked[[2]string{a, c}], linked[[2]string{c, a}] = true, true
		}
		for i := range tc.nodes {
			for j := i + 1; j < tc.nodes; j++ {
				if rng.Float64() < tc.p {
					link(fmt.Sprintf("n%02d", i), fmt.Sprintf("n%02d", j))
				}
			}
		}
		for round := range 2 {
			for k := 2; k <= 4; k++ {
				var want []string
				var brute func(cur []string, from int)
				brute = func(cur []string, from int) {
					if len(cur) == k {
						want = append(want, strings.Join(cur, "+"))
						return
					}
					for i := from; i < tc.nodes; i++ {
						id := fmt.Sprintf("n%02d", i)
						if !slices.ContainsFunc(cur, func(c string) bool { return !linked[[2]string{c, id}] }) {
							brute(append(cur, id), i+1)
						}
					}
				}
				brute(nil, 0)
				var got []string
				for _, p := range b.cliquePlacements(k, 10) {
					got = append(got, strings.Join(p.Nodes, "+"))
				}
				if !slices.Equal(got, want) {
					t.Errorf("%d nodes, p %.2f, round %d, k %d: placements %v, want %v", tc.nodes, tc.p, round, k, got, want)
				}
			}
			// Links added after a first search are seen by the next.
			link("n00", fmt.Sprintf("n%02d", tc.nodes-1))
		}
	}
}
