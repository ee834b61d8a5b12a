package benchmarks

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Verdict judges one instance by what the planner is held to: the
// exact solver's time to prove all four levels against the fastest
// external solver that proved them in the same run, and whether the exact
// plan is never worse, lexicographically, than greedy's and than each
// external solver's.
type Verdict struct {
	// ExactProof is the exact solver's time to prove all four levels,
	// zero when it did not.
	ExactProof time.Duration
	// Fastest is the external solver that proved all four levels first
	// with a plan the evaluator accepts, "" when none did;
	// FastestProof is its time.
	Fastest      string
	FastestProof time.Duration
	// Speedup is how many times faster the exact solver proved than
	// Fastest (their time / exact's), bounded where one side did not
	// prove; Ok is false when nobody proved, or no external ran.
	Speedup Speedup
	// Externals are the external solvers that ran and returned a plan
	// the evaluator accepts: the ones compared below.
	Externals []string
	// GreedyRan is false when there is no greedy plan to compare with.
	GreedyRan bool
	// WorseThanGreedy names the first level where the exact plan is
	// worse than greedy's without an earlier level being better, "" when
	// it is never worse.
	WorseThanGreedy string
	// WorseThan lists, per external solver whose plan beats the exact
	// one, the first level where it does.
	WorseThan []string
	// ExactFailed says why there is no exact plan to judge, "" when there
	// is one.
	ExactFailed string
	// Refuted lists, per other solver whose valid plan contradicts a
	// lower bound the exact solver claimed, the level and the figures:
	// a bug, whatever the times say.
	Refuted []string
}

// Judge judges one instance's runs.
func Judge(res *Result) Verdict {
	var v Verdict
	exact := res.Run(SolverExact)
	switch {
	case exact == nil:
		v.ExactFailed = "exact did not run"
		return v
	case !exact.OK():
		v.ExactFailed = "exact: " + exact.Skipped + exact.Error
		return v
	case !exact.Verified:
		v.ExactFailed = "exact's plan is not verified"
		return v
	}
	if exact.Proved {
		v.ExactProof = exact.TimeToProof
	}
	var fastest *Run
	minTime := time.Duration(math.MaxInt64)
	for _, name := range ExternalSolvers {
		run := res.Run(name)
		if run == nil || !run.OK() || !run.Verified {
			continue
		}
		v.Externals = append(v.Externals, name)
		if run.Proved && (fastest == nil || run.TimeToProof < fastest.TimeToProof) {
			fastest = run
		}
		minTime = min(minTime, run.Time)
		if ok, why := NotWorse(exact, run); !ok {
			v.WorseThan = append(v.WorseThan, fmt.Sprintf("%s at %s", name, why))
		}
		if why := Refutes(run, exact); why != "" {
			v.Refuted = append(v.Refuted, name+": "+why)
		}
	}
	switch {
	case fastest != nil:
		v.Fastest, v.FastestProof = fastest.Solver, fastest.TimeToProof
		v.Speedup = SpeedupOver(exact, fastest)
	case exact.Proved && len(v.Externals) > 0:
		// No external proved: the fastest could have proved no sooner
		// than the shortest of their runs.
		v.Speedup = Speedup{Lower: ratio(minTime, exact.TimeToProof), Upper: math.Inf(1), Ok: true}
	}
	if g := res.Run(SolverGreedy); g != nil && g.OK() && g.Verified {
		v.GreedyRan = true
		if ok, why := NotWorse(exact, g); !ok {
			v.WorseThanGreedy = why
		}
		if why := Refutes(g, exact); why != "" {
			v.Refuted = append(v.Refuted, SolverGreedy+": "+why)
		}
	}
	return v
}

// Refutes says how run's plan contradicts a lower bound of exact's, ""
// when it does not. Exact's bound on level k holds for every plan that
// keeps the levels before k at exact's values (each level is frozen at
// its value before the next): so at the first level where the two
// plans differ, run's value may not be below exact's bound there.
func Refutes(run, exact *Run) string {
	for k := range run.Objective {
		if run.Objective[k] == exact.Objective[k] {
			continue
		}
		l := exact.Levels[k]
		if l.Status != "" && run.Objective[k] < l.LowerBound {
			return fmt.Sprintf("level %d: a valid plan of %d, below the bound %d the exact solver claimed (%s, %s)",
				k+1, run.Objective[k], l.LowerBound, l.Status, l.Bound)
		}
		return ""
	}
	return ""
}

// Met reports whether the exact solver proved all four levels no later
// than the fastest external solver (or proved them where none did).
func (v Verdict) Met() bool { return v.Speedup.Ok && v.Speedup.Lower >= 1 }

func (v Verdict) speedText() string {
	s := v.Speedup
	var t string
	switch {
	case v.ExactFailed != "":
		return "-"
	case len(v.Externals) == 0:
		return "-"
	case !s.Ok:
		return "neither proved"
	case s.Lower == s.Upper:
		t = fmt.Sprintf("%.3gx", s.Lower)
	case math.IsInf(s.Upper, 1):
		t = fmt.Sprintf(">%.3gx", s.Lower)
	default:
		t = fmt.Sprintf("<%.3gx", s.Upper)
	}
	if v.Met() {
		return t + " (at most the fastest)"
	}
	return t + " (slower)"
}

func (v Verdict) greedyText() string {
	switch {
	case v.ExactFailed != "":
		return v.ExactFailed
	case !v.GreedyRan:
		return "greedy did not run"
	case v.WorseThanGreedy != "":
		return "WORSE at " + v.WorseThanGreedy
	}
	return "yes"
}

func (v Verdict) externalsText() string {
	switch {
	case v.ExactFailed != "":
		return v.ExactFailed
	case len(v.Refuted) > 0:
		return "BOUND REFUTED by " + strings.Join(v.Refuted, "; ")
	case len(v.Externals) == 0:
		return "no external plan"
	case len(v.WorseThan) > 0:
		return "WORSE than " + strings.Join(v.WorseThan, "; ")
	}
	return "yes (" + strings.Join(v.Externals, ", ") + ")"
}
