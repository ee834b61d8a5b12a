package answer_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/answer"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

func threeNodes() *model.Pool {
	return pooltest.New(
		pooltest.Node("a", 64), pooltest.Node("b", 64), pooltest.Node("c", 64, pooltest.Cordoned()),
		pooltest.Link("a", "b"),
	)
}

func TestParseScenarioReadsNodesAndLinks(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want solver.Scenario
	}{
		{"one node", "a", solver.Scenario{Nodes: []string{"a"}}},
		{"two nodes, sorted, spaces ignored", " b , a ", solver.Scenario{Nodes: []string{"a", "b"}}},
		{"a link either way round", "b<->a", solver.Scenario{Links: []model.Link{{A: "a", B: "b"}}}},
		{"a node and a link", "a, a<->b", solver.Scenario{Nodes: []string{"a"}, Links: []model.Link{{A: "a", B: "b"}}}},
	}
	p := threeNodes()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := answer.ParseScenario(tc.in, p)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseScenarioRefusesWhatThePoolCannotLose(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"nothing", " ", "got nothing"},
		{"an empty item", "a,", "an empty item"},
		{"an unknown node", "z", `"z" is not a node of the pool (nodes: a, b, c)`},
		{"a link the pool lacks", "a<->c", `"a<->c" is not a link of the pool (links: a<->b)`},
		{"a link to itself", "a<->a", "is not a link of the pool"},
		{"a cordoned node", "c", "c is cordoned already"},
		{"a node twice", "a,a", "node a named twice"},
		{"a link twice", "a<->b,b<->a", "link a<->b named twice"},
	}
	p := threeNodes()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := answer.ParseScenario(tc.in, p)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

func TestSingleLossesAreEveryAvailableNodeThenEveryLink(t *testing.T) {
	p := pooltest.New(
		pooltest.Node("a", 64), pooltest.Node("b", 64), pooltest.Node("c", 64, pooltest.Cordoned()),
		pooltest.Link("a", "b"), pooltest.Link("b", "c"),
	)
	var got []string
	for _, sc := range answer.SingleLosses(p) {
		got = append(got, sc.Name())
	}
	want := []string{"a down", "b down", "a<->b link down"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

// FuzzParseScenario: any text either parses into nodes and links of the
// pool, each once, that print back to a scenario that parses the same;
// or is refused with an error naming --scenario. Nothing panics.
func FuzzParseScenario(f *testing.F) {
	for _, s := range []string{"a", "a,b", "a<->b", " b<->a , a", "", ",", "a,,b", "<->", "a<->", "c", "a<->b<->c", "\x00", "ä,b"} {
		f.Add(s)
	}
	p := threeNodes()
	f.Fuzz(func(t *testing.T, s string) {
		sc, err := answer.ParseScenario(s, p)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--scenario ") {
				t.Fatalf("error %q does not name --scenario", err)
			}
			return
		}
		if len(sc.Nodes)+len(sc.Links) == 0 {
			t.Fatalf("%q parsed into an empty scenario", s)
		}
		var items []string
		for _, n := range sc.Nodes {
			if n != "a" && n != "b" {
				t.Fatalf("%q gave node %q", s, n)
			}
			items = append(items, n)
		}
		for _, l := range sc.Links {
			if l != (model.Link{A: "a", B: "b"}) {
				t.Fatalf("%q gave link %+v", s, l)
			}
			items = append(items, l.A+"<->"+l.B)
		}
		again, err := answer.ParseScenario(strings.Join(items, ","), p)
		if err != nil || !reflect.DeepEqual(again, sc) {
			t.Fatalf("%q: %+v prints back to %+v, %v", s, sc, again, err)
		}
	})
}
