package rollout

import (
	"cmp"
	"math"
	"slices"
	"strings"
)

// steps turns an order of lane actions into the rollout's steps: the
// re-routes placed as soon as their lane is up, losses named, and waves.
func (p *problem) steps(order []int) []Step {
	type entry struct {
		act int // -1 for a re-route
		src int
	}
	var seq []entry
	routed := make([]bool, len(p.srcs))
	addReroutes := func(when func(s *source) bool) {
		for i := range p.srcs {
			s := &p.srcs[i]
			if s.Reroute && !routed[i] && when(s) {
				routed[i] = true
				seq = append(seq, entry{act: -1, src: i})
			}
		}
	}
	done := make(set, len(p.acts))
	// A source re-routed to nothing keeps its route until its last lane
	// goes; the others switch as soon as their planned model is served.
	lastStop := func(s *source, x int) bool {
		if len(s.before) == 0 {
			return false
		}
		for _, i := range s.before {
			st := p.insts[i].stop
			if st < 0 || st != x && !done[st] {
				return false
			}
		}
		return true
	}
	addReroutes(func(s *source) bool {
		return s.Planned != "" && (s.after < 0) || s.Planned == "" && !slices.ContainsFunc(s.before, func(i int) bool { return p.insts[i].stop >= 0 })
	})
	for _, x := range order {
		addReroutes(func(s *source) bool { return s.Planned == "" && lastStop(s, x) })
		seq = append(seq, entry{act: x})
		done[x] = true
		addReroutes(func(s *source) bool { return s.Planned != "" && s.after == x })
	}
	addReroutes(func(*source) bool { return true })

	steps := make([]Step, len(seq))
	pos := make([]int, len(p.acts))     // action -> step index
	routeAt := make([]int, len(p.srcs)) // source -> its re-route's step index
	for k, e := range seq {
		if e.act < 0 {
			routeAt[e.src] = k
		}
		if e.act >= 0 {
			pos[e.act] = k
			steps[k] = p.laneStep(e.act)
			continue
		}
		s := &p.srcs[e.src]
		steps[k] = Step{Action: Reroute, Subject: s.Name, From: s.Now, To: s.Planned}
	}
	// Losses: walk the steps, with each start up once its step is done.
	done = make(set, len(p.acts))
	rerouted := make([]bool, len(p.srcs))
	isCovered := func(i int) bool {
		s := &p.srcs[i]
		if s.Reroute && rerouted[i] {
			return s.Planned != "" && (s.after < 0 || done[s.after])
		}
		if s.counted {
			return p.covered(s, done, -1)
		}
		if s.beforeKept {
			return true
		}
		return slices.ContainsFunc(s.before, func(j int) bool { st := p.insts[j].stop; return st < 0 || !done[st] })
	}
	was := make([]bool, len(p.srcs))
	for i := range p.srcs {
		was[i] = p.srcs[i].coveredNow
	}
	for k, e := range seq {
		if e.act >= 0 {
			done[e.act] = true
			if a := p.acts[e.act]; a.adds {
				steps[k].OverBudget = p.over(a.inst, p.after(done))
			}
		} else {
			rerouted[e.src] = true
		}
		for i := range p.srcs {
			now := isCovered(i)
			if was[i] && !now {
				s := &p.srcs[i]
				l := Loss{Source: s.Name, Demand: finite(s.Demand)}
				if s.counted && s.after >= 0 {
					until := pos[s.after]
					if s.Reroute {
						until = routeAt[i] // covered again once its route switches
					}
					for j := k + 1; j <= until; j++ {
						l.ForMs += steps[j].WaitMs
					}
					l.UntilStep = until + 1
				}
				steps[k].Losses = append(steps[k].Losses, l)
			}
			was[i] = now
		}
	}
	p.waves(steps, func(k int) int { return seq[k].act }, func(k int) int { return seq[k].src })
	return steps
}

func (p *problem) laneStep(x int) Step {
	a := p.acts[x]
	in := &p.insts[a.inst]
	st := Step{Action: a.kind, Subject: in.lane.Variant, LaneKind: in.lane.Kind, Nodes: slices.Clone(in.lane.Nodes),
		Devices: slices.Clone(in.lane.Devices), WaitMs: a.dur, Residency: in.lane.Residency}
	switch a.kind {
	case Residency:
		st.From, st.To, st.Residency = string(in.lane.Residency), string(in.to), ""
	case Start, ManualStart:
		for _, o := range p.insts {
			if o.now && o.lane.Variant == in.lane.Variant && o.stop >= 0 {
				st.FromNodes = slices.Clone(o.lane.Nodes)
				break
			}
		}
	}
	return st
}

// waves groups consecutive steps: a step joins the last wave unless it
// waits for a step of it, or its memory does not hold with every start of
// the wave counted and no stop of it.
func (p *problem) waves(steps []Step, actOf, srcOf func(int) int) {
	done := make(set, len(p.acts))
	wave := make(set, len(p.acts))
	inWave := map[int]bool{} // step indexes of the current wave
	stepOfAct := map[int]int{}
	routeStep := map[int]int{}
	w := 1
	for k := range steps {
		if x := actOf(k); x >= 0 {
			stepOfAct[x] = k
		} else {
			routeStep[srcOf(k)] = k
		}
	}
	deps := func(k int) []int {
		var out []int
		x := actOf(k)
		if x < 0 {
			if s := &p.srcs[srcOf(k)]; s.after >= 0 {
				out = append(out, stepOfAct[s.after])
			}
			return out
		}
		a := p.acts[x]
		if a.kind != Stop && a.kind != ManualStop {
			return nil
		}
		for i := range p.srcs {
			s := &p.srcs[i]
			if !slices.Contains(s.before, a.inst) {
				continue
			}
			if s.after >= 0 && stepOfAct[s.after] < k {
				out = append(out, stepOfAct[s.after])
			}
			if r, ok := routeStep[i]; ok && r < k {
				out = append(out, r)
			}
		}
		return out
	}
	for k := range steps {
		x := actOf(k)
		join := true
		for _, d := range deps(k) {
			if inWave[d] {
				join = false
			}
		}
		if join && x >= 0 && p.acts[x].adds && len(p.over(p.acts[x].inst, p.pessimistic(done, wave.with(x)))) > 0 {
			join = false
		}
		if !join {
			w++
			for y := range wave {
				if wave[y] {
					done[y] = true
				}
			}
			wave = make(set, len(p.acts))
			inWave = map[int]bool{}
		}
		if x >= 0 {
			wave[x] = true
		}
		inWave[k] = true
		steps[k].Wave = w
	}
}

// less compares costs with a tolerance for the order sums were made in.
func less(a, b float64) bool { return a < b-1e-9*math.Max(1, math.Abs(b)) }

func sortedLanes(ls []Lane) []Lane {
	out := slices.Clone(ls)
	slices.SortStableFunc(out, func(a, b Lane) int {
		return cmp.Or(strings.Compare(a.Variant, b.Variant), slices.Compare(sorted(a.Nodes), sorted(b.Nodes)))
	})
	return out
}

func sorted(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}

func finite(x float64) float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0
	}
	return x
}
