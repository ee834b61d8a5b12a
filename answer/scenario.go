package answer

import (
	"fmt"
	"slices"
	"strings"

	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

// ParseScenario reads one --scenario value: nodes and links taken away
// together, comma-separated, a link written A<->B ("spark-node-01,
// spark-node-02" or "spark-node-01<->spark-node-02"). Spaces around items
// are ignored. Every item must name a node or a link of the pool, once;
// an unavailable node is refused, since it carries nothing to lose.
func ParseScenario(s string, p *model.Pool) (solver.Scenario, error) {
	var sc solver.Scenario
	if strings.TrimSpace(s) == "" {
		return sc, fmt.Errorf("--scenario %q: expected NODE[,NODE...] or A<->B, got nothing", s)
	}
	ix := p.Index()
	seen := map[string]bool{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return sc, fmt.Errorf("--scenario %q: an empty item (two commas, or a comma at an end)", s)
		}
		if a, b, ok := strings.Cut(item, "<->"); ok {
			a, b = strings.TrimSpace(a), strings.TrimSpace(b)
			if a == b || !ix.Linked(a, b) {
				return sc, fmt.Errorf("--scenario %q: %q is not a link of the pool (links: %s)", s, item, linkNames(p))
			}
			l := model.Link{A: min(a, b), B: max(a, b)}
			key := l.A + "<->" + l.B
			if seen[key] {
				return sc, fmt.Errorf("--scenario %q: link %s named twice", s, key)
			}
			seen[key] = true
			sc.Links = append(sc.Links, l)
			continue
		}
		i, ok := ix.Node[item]
		if !ok {
			return sc, fmt.Errorf("--scenario %q: %q is not a node of the pool (nodes: %s)", s, item, nodeNames(p))
		}
		if p.Nodes[i].Unavailable != "" {
			return sc, fmt.Errorf("--scenario %q: %s is %s already; it carries nothing to lose", s, item, p.Nodes[i].Unavailable)
		}
		if seen[item] {
			return sc, fmt.Errorf("--scenario %q: node %s named twice", s, item)
		}
		seen[item] = true
		sc.Nodes = append(sc.Nodes, item)
	}
	slices.Sort(sc.Nodes)
	slices.SortFunc(sc.Links, func(x, y model.Link) int { return strings.Compare(x.A+"\x00"+x.B, y.A+"\x00"+y.B) })
	return sc, nil
}

// SingleLosses are the N-1 scenarios: every available node alone, then
// every link whose two nodes are available, in pool order.
func SingleLosses(p *model.Pool) []solver.Scenario {
	var out []solver.Scenario
	up := map[string]bool{}
	for _, n := range p.Nodes {
		if n.Unavailable == "" {
			up[n.ID] = true
			out = append(out, solver.Scenario{Nodes: []string{n.ID}})
		}
	}
	for _, l := range p.Links {
		if up[l.A] && up[l.B] {
			out = append(out, solver.Scenario{Links: []model.Link{l}})
		}
	}
	return out
}

func nodeNames(p *model.Pool) string {
	var ns []string
	for _, n := range p.Nodes {
		ns = append(ns, n.ID)
	}
	return capped(ns)
}

func linkNames(p *model.Pool) string {
	var ls []string
	for _, l := range p.Links {
		ls = append(ls, l.A+"<->"+l.B)
	}
	if len(ls) == 0 {
		return "none"
	}
	return capped(ls)
}

// capped lists up to eight names, then how many more.
func capped(xs []string) string {
	if len(xs) > 8 {
		return fmt.Sprintf("%s and %d more", strings.Join(xs[:8], ", "), len(xs)-8)
	}
	return strings.Join(xs, ", ")
}
