package apply

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
)

// State is the part of a fleet a rollout changes.
type State struct {
	// Lanes are "variant@node" for every node a running lane spans.
	Lanes map[string]bool
	// Residency is the residency of lanes some step changes, by variant.
	Residency map[string]model.Residency
	// Routes is what each alias some step re-routes serves first.
	Routes map[string]string
}

func newState() State {
	return State{Lanes: map[string]bool{}, Residency: map[string]model.Residency{}, Routes: map[string]string{}}
}

func (s State) clone() State {
	return State{Lanes: maps.Clone(s.Lanes), Residency: maps.Clone(s.Residency), Routes: maps.Clone(s.Routes)}
}

func laneKey(variant, node string) string { return variant + "@" + node }

// Live is the state the fleet's reading shows, on the keys the plan's
// rollout touches. Lanes whose node could not be read are left out, as
// the plan leaves them out.
func Live(p *plan.Plan, cur model.Current) State {
	s := newState()
	for _, l := range cur.Lanes {
		if model.IsLaneUnknown(l.Status) || onDemand(l.Status) {
			continue
		}
		for _, n := range l.Nodes {
			s.Lanes[laneKey(l.Variant, n)] = true
		}
	}
	resTouched, routeTouched := touched(p)
	for _, l := range cur.Lanes {
		if resTouched[l.Variant] {
			s.Residency[l.Variant] = l.Residency
		}
	}
	for _, r := range cur.Routes {
		if _, seen := s.Routes[r.Alias]; routeTouched[r.Alias] && !seen {
			s.Routes[r.Alias] = r.Primary
		}
	}
	for a := range routeTouched {
		if _, ok := s.Routes[a]; !ok {
			s.Routes[a] = ""
		}
	}
	return s
}

// onDemand is the status of an auto lane that rests unloaded: the plan
// counts it as running, since LLooM loads it on its first request, but it
// holds no memory, and a stop leaves it so. Apply compares what holds
// memory, where a start or a stop shows.
func onDemand(status string) bool { return strings.HasSuffix(status, "loaded on demand") }

// touched are the variants whose residency and the aliases whose route a
// step of the rollout changes.
func touched(p *plan.Plan) (res, routes map[string]bool) {
	res, routes = map[string]bool{}, map[string]bool{}
	if p.Rollout == nil {
		return
	}
	for _, st := range p.Rollout.Steps {
		switch st.Action {
		case "residency":
			res[st.Subject] = true
		case "reroute":
			routes[st.Subject] = true
		}
	}
	return
}

// Expected is the state before the rollout (index 0) and after each of
// its steps (index k: after step k), as the plan read the fleet.
func Expected(p *plan.Plan) []State {
	s := newState()
	for _, l := range p.Now {
		if !l.Running || onDemand(l.Status) || model.IsLaneUnknown(l.Status) {
			continue
		}
		for _, n := range l.Nodes {
			s.Lanes[laneKey(l.Variant, n)] = true
		}
	}
	if p.Rollout == nil {
		return []State{s}
	}
	resTouched, _ := touched(p)
	for _, st := range p.Rollout.Steps {
		switch st.Action {
		case "residency":
			if _, ok := s.Residency[st.Subject]; !ok {
				s.Residency[st.Subject] = model.Residency(st.From)
			}
		case "reroute":
			if _, ok := s.Routes[st.Subject]; !ok {
				s.Routes[st.Subject] = st.From
			}
		}
	}
	// A lane started with a residency the rollout also changes runs with
	// it until then.
	out := []State{s}
	for _, st := range p.Rollout.Steps {
		s = s.clone()
		switch st.Action {
		case "start", "manual-start":
			for _, n := range st.Nodes {
				s.Lanes[laneKey(st.Subject, n)] = true
			}
			if resTouched[st.Subject] && st.Residency != "" {
				s.Residency[st.Subject] = st.Residency
			}
		case "stop", "manual-stop":
			for _, n := range st.Nodes {
				delete(s.Lanes, laneKey(st.Subject, n))
			}
		case "residency":
			s.Residency[st.Subject] = model.Residency(st.To)
			if model.Residency(st.To) == model.Always {
				for _, n := range st.Nodes {
					s.Lanes[laneKey(st.Subject, n)] = true
				}
			}
		case "reroute":
			s.Routes[st.Subject] = st.To
		}
		out = append(out, s)
	}
	return out
}

// Match returns how many steps of the rollout the live state shows done:
// the last k whose expected state it equals. When it equals none, k is
// -1 and diffs say how it differs from the state the plan started from.
func Match(expected []State, live State) (k int, diffs []string) {
	for k := len(expected) - 1; k >= 0; k-- {
		if len(Diff(expected[k], live)) == 0 {
			return k, nil
		}
	}
	return -1, Diff(expected[0], live)
}

// Diff lists, in a stable order, how live differs from want.
func Diff(want, live State) []string {
	var out []string
	byVariant := func(m map[string]bool) map[string][]string {
		r := map[string][]string{}
		for k := range m {
			v, n, _ := strings.Cut(k, "@")
			r[v] = append(r[v], n)
		}
		return r
	}
	w, l := byVariant(want.Lanes), byVariant(live.Lanes)
	for _, v := range sortedUnion(w, l) {
		wn, ln := sorted(w[v]), sorted(l[v])
		switch {
		case slices.Equal(wn, ln):
		case len(ln) == 0:
			out = append(out, fmt.Sprintf("lane %s: the plan saw it run on %s; it does not run now", v, strings.Join(wn, ",")))
		case len(wn) == 0:
			out = append(out, fmt.Sprintf("lane %s: runs now on %s; the plan saw it stopped", v, strings.Join(ln, ",")))
		default:
			out = append(out, fmt.Sprintf("lane %s: runs now on %s; the plan saw it on %s", v, strings.Join(ln, ","), strings.Join(wn, ",")))
		}
	}
	for _, v := range sortedUnion(want.Residency, live.Residency) {
		wr, ok := want.Residency[v]
		lr, lok := live.Residency[v]
		if !ok || !lok {
			continue // residency of a lane that does not run is none
		}
		if wr != lr {
			out = append(out, fmt.Sprintf("lane %s: residency %s now; the plan saw %s", v, lr, wr))
		}
	}
	for _, a := range sortedUnion(want.Routes, live.Routes) {
		if want.Routes[a] != live.Routes[a] {
			out = append(out, fmt.Sprintf("alias %s: routes to %s now; the plan saw %s", a, orNone(live.Routes[a]), orNone(want.Routes[a])))
		}
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

func sortedUnion[A, B any](a map[string]A, b map[string]B) []string {
	var out []string
	for k := range a {
		out = append(out, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
