package plan

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/poolsolve/poolsolve/model"
)

// FleetProfile is a LLooM fleet profile (profiles/<name>.json), in the
// shape LLooM's own `save` writes: name, description, routes and
// residency, always present, in that order. LLooM applies it in one config
// swap with its profile switch.
type FleetProfile struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Routes maps an alias to a route profile name, or to a model id as
	// its only member.
	Routes map[string]string `json:"routes"`
	// Residency maps a runtime LLooM manages to always, preferred or auto.
	Residency map[string]model.Residency `json:"residency"`
}

// Marshal writes the profile as LLooM does: two-space indent, a newline
// at the end; keys of routes and residency sorted.
func (f *FleetProfile) Marshal() ([]byte, error) {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(data, '\n'), nil
}

// Profile turns the plan's routes and residency into a fleet profile
// named name, for LLooM to apply. What a profile cannot say comes back as
// notes, one line each: lanes to start, stop or move by hand, aliases left
// uncovered or routed to a model no route profile puts first. Like LLooM's
// save, it routes only aliases that have route profiles (the others route
// by their members, which a profile would replace), and sets residency
// only for runtimes LLooM manages and the plan keeps; a runtime the plan
// stops is left out, since a profile cannot stop one.
func Profile(p *Plan, pool *model.Pool, name string) (*FleetProfile, []string, error) {
	if p == nil || p.Infeasible {
		return nil, nil, fmt.Errorf("no plan to write a profile from: the hard constraints admit none")
	}
	ix := pool.Index()
	f := &FleetProfile{Name: name, Description: "Written by poolsolve plan: the planned routes and residency.",
		Routes: map[string]string{}, Residency: map[string]model.Residency{}}
	var notes []string
	for _, r := range p.Routes {
		i, ok := ix.Alias[r.Source]
		if !ok {
			continue // a model requested by its own id
		}
		a := &pool.Aliases[i]
		if len(a.Routes) == 0 {
			if r.Covered() && len(a.Members) > 0 && r.Model != a.Members[0] {
				notes = append(notes, fmt.Sprintf("%s is served by %s, a fallback of its members: LLooM routes it so while %s is down; the profile leaves it alone", a.ID, r.Model, a.Members[0]))
			}
			continue
		}
		switch {
		case !r.Covered():
			notes = append(notes, fmt.Sprintf("%s is uncovered in the plan: the profile leaves its route alone", a.ID))
		case r.RouteName != "":
			f.Routes[a.ID] = r.RouteName
		default:
			f.Routes[a.ID] = r.Model
			notes = append(notes, fmt.Sprintf("%s: no route profile puts %s first, so the profile makes it the only member (no fallback)", a.ID, r.Model))
		}
	}
	placed := map[string]model.Residency{}
	for _, n := range p.Nodes {
		for _, l := range n.Lanes {
			placed[l.Variant] = l.Residency
		}
	}
	for _, v := range pool.Variants {
		if v.Kind != model.Managed || v.Runtime == "" {
			continue
		}
		if res, ok := placed[v.ID]; ok {
			f.Residency[v.Runtime] = res
		}
	}
	for _, c := range p.Changes {
		switch c.Kind {
		case Stop:
			notes = append(notes, fmt.Sprintf("%s: the plan stops it; a profile cannot stop a runtime (LLooM admits it only where it fits), so stop it by hand to free its memory now", c.Subject))
		case Start, Move:
			if v, ok := ix.Variant[c.Subject]; ok && pool.Variants[v].Kind == model.Recipe {
				notes = append(notes, fmt.Sprintf("%s: a recipe the plan installs on %s; a profile cannot install it", c.Subject, key(c.Nodes)))
			} else if c.Kind == Move {
				notes = append(notes, fmt.Sprintf("%s: the plan moves it to %s; a profile cannot move a runtime", c.Subject, key(c.Nodes)))
			}
		case ManualStop, ManualStart:
			notes = append(notes, fmt.Sprintf("%s: %s on %s by hand; a profile cannot", c.Subject, changeVerb(c.Kind), key(c.Nodes)))
		}
	}
	slices.Sort(notes)
	return f, slices.Compact(notes), nil
}

func changeVerb(k ChangeKind) string {
	if k == ManualStart {
		return "start it"
	}
	return "stop it"
}
