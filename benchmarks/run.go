package benchmarks

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

// Instance is one fleet to measure: a bundle, and the spec it was
// generated from when there is one.
type Instance struct {
	Name   string
	Source string // file it came from, or "generated"
	Spec   *Spec  `json:",omitempty"`
	Bundle []byte `json:"-"`
	// Group is the instance's name under every seed, when SeedInstances
	// made it one of several seeds of one spec; "" otherwise.
	Group string `json:",omitempty"`
}

// Pool reads the instance the way `poolsolve plan --fleet FILE
// --consider-installs` does.
func (in Instance) Pool() (*model.Pool, error) {
	fi, err := fleet.ParseBundle(in.Bundle, in.Name+".json")
	if err != nil {
		return nil, err
	}
	cat, err := catalog.Build(fi, catalog.Options{ConsiderInstalls: true})
	if err != nil {
		return nil, err
	}
	return cat.Pool, nil
}

// SizeInstance is the fleet of one size ("24x60" or "24x60-tight")
// generated from seed, as bench measures it.
func SizeInstance(size string, seed uint64) (Instance, error) {
	sz, err := ParseSize(size)
	if err != nil {
		return Instance{}, err
	}
	insts, err := SizeInstances([]Size{sz}, seed)
	if err != nil {
		return Instance{}, err
	}
	return insts[0], nil
}

// SizePool is the pool bench plans for SizeInstance(size, seed).
func SizePool(size string, seed uint64) (*model.Pool, error) {
	in, err := SizeInstance(size, seed)
	if err != nil {
		return nil, err
	}
	return in.Pool()
}

// Solvers the harness knows, in report order.
const (
	SolverExact  = string(solver.Exact)
	SolverGreedy = string(solver.Greedy)
	SolverCBC    = "cbc"
	SolverHiGHS  = "highs"
	SolverClasp  = "clasp"
)

// AllSolvers lists every solver name.
var AllSolvers = []string{SolverExact, SolverGreedy, SolverCBC, SolverHiGHS, SolverClasp}

// ExternalSolvers are the solvers run as separate programs.
var ExternalSolvers = []string{SolverCBC, SolverHiGHS, SolverClasp}

// IsExternal reports whether the named solver is run as a separate program.
func IsExternal(name string) bool { return slices.Contains(ExternalSolvers, name) }

// Options steer a benchmark run.
type Options struct {
	// TimeLimit bounds each solver on each instance (the four levels of
	// an external solver together). Zero means 10 s.
	TimeLimit time.Duration
	Seed      uint64
	// Solvers to run, from AllSolvers; exact is always run.
	Solvers []string
	// Externals run the external solvers by name; a missing one is
	// reported as skipped.
	Externals map[string]External
	// TempDir holds the LP and OPB files while an external solver reads them;
	// empty means the system's temporary folder.
	TempDir string
	// Progress, if set, is called after each instance.
	Progress func(done, total int, r *Result)
}

// RunLevel is one level of one solver's answer.
type RunLevel struct {
	Value      int64  `json:"value"`
	Status     string `json:"status"` // optimal, bounded, heuristic, or "" when not reached
	LowerBound int64  `json:"lowerBound"`
	Bound      string `json:"boundSource,omitempty"`
}

// Run is one solver on one instance.
type Run struct {
	Solver    string          `json:"solver"`
	Version   string          `json:"version,omitempty"`
	Objective model.Objective `json:"objective"`
	Levels    [4]RunLevel     `json:"levels"`
	// Proved is true when every level is proved optimal.
	Proved bool `json:"proved"`
	// Stop is why poolsolve's own solver ended (solver.Stop: proved,
	// deadline, interrupted, infeasible, heuristic); empty for the external ones.
	Stop string `json:"stop,omitempty"`
	// Verified is true when the plan passed the independent evaluator
	// with the objective the solver claimed (externals: decoded from
	// their answer and judged).
	Verified    bool          `json:"verified"`
	TimeToFirst time.Duration `json:"-"`
	TimeToProof time.Duration `json:"-"` // zero unless Proved
	Time        time.Duration `json:"-"` // the whole run
	// Components is how many independent parts the exact solver split the
	// pool into; it solves them one after the other.
	Components int `json:"components,omitempty"`
	Vars       int `json:"vars,omitempty"`
	Clauses    int `json:"clauses,omitempty"`
	// Trace is the exact solver's progress reports (solver.Options.Progress),
	// in order; the solver reports only after its first second.
	Trace   []TracePoint `json:"-"`
	Skipped string       `json:"skipped,omitempty"`
	Error   string       `json:"error,omitempty"`
	Note    string       `json:"note,omitempty"`
}

// TracePoint is one progress report of the exact solver: the level being
// solved, the incumbent's vector, that level's lower bound, and when.
type TracePoint struct {
	At        time.Duration
	Level     int // 1..4
	Incumbent model.Objective
	Bound     int64
}

// OK reports whether the run produced a plan.
func (r *Run) OK() bool { return r.Skipped == "" && r.Error == "" }

// Result is every solver's run on one instance.
type Result struct {
	Instance   Instance `json:"instance"`
	Nodes      int      `json:"nodes"`
	Variants   int      `json:"variants"`
	Placements int      `json:"placements"`
	Runs       []Run    `json:"runs"`
	Error      string   `json:"error,omitempty"`
}

// Run returns the named solver's run, or nil.
func (r *Result) Run(name string) *Run {
	for i := range r.Runs {
		if r.Runs[i].Solver == name {
			return &r.Runs[i]
		}
	}
	return nil
}

// Measure runs every asked-for solver on every instance, one after the
// other (the machine's cores belong to the solver under test).
func Measure(ctx context.Context, insts []Instance, opts Options) ([]Result, error) {
	if opts.TimeLimit <= 0 {
		opts.TimeLimit = 10 * time.Second
	}
	solvers := opts.Solvers
	if len(solvers) == 0 {
		solvers = []string{SolverExact, SolverGreedy}
	}
	for _, s := range solvers {
		if !slices.Contains(AllSolvers, s) {
			return nil, fmt.Errorf("benchmarks: unknown solver %q (want %v)", s, AllSolvers)
		}
	}
	if !slices.Contains(solvers, SolverExact) {
		solvers = append([]string{SolverExact}, solvers...)
	}
	dir := opts.TempDir
	if dir == "" {
		d, err := os.MkdirTemp("", "poolsolve-bench-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	var out []Result
	for i, in := range insts {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		r := measureOne(ctx, in, solvers, opts, dir)
		out = append(out, r)
		if opts.Progress != nil {
			opts.Progress(i+1, len(insts), &out[len(out)-1])
		}
	}
	return out, nil
}

func measureOne(ctx context.Context, in Instance, solvers []string, opts Options, dir string) Result {
	res := Result{Instance: in}
	p, err := in.Pool()
	if err != nil {
		res.Error = err.Error()
		return res
	}
	res.Nodes, res.Variants = len(p.Nodes), len(p.Variants)
	for _, v := range p.Variants {
		res.Placements += len(v.Placements)
	}
	for _, s := range AllSolvers {
		if !slices.Contains(solvers, s) {
			continue
		}
		switch s {
		case SolverExact, SolverGreedy:
			res.Runs = append(res.Runs, runOwn(ctx, p, s, opts))
		default:
			ext := opts.Externals[s]
			if ext == nil {
				res.Runs = append(res.Runs, Run{Solver: s, Skipped: "not configured"})
				continue
			}
			if err := ext.Ready(); err != nil {
				res.Runs = append(res.Runs, Run{Solver: s, Skipped: err.Error()})
				continue
			}
			r := solveLex(ctx, ext, p, in.Name, dir, opts.TimeLimit)
			r.Version = ext.Version()
			res.Runs = append(res.Runs, r)
		}
	}
	return res
}

// runOwn runs poolsolve's exact or greedy solver and checks its plan with
// the evaluator.
func runOwn(ctx context.Context, p *model.Pool, kind string, opts Options) Run {
	run := Run{Solver: kind}
	so := solver.Options{Solver: solver.Algorithm(kind), TimeLimit: opts.TimeLimit, Seed: opts.Seed}
	var (
		mu    sync.Mutex
		trace []TracePoint
	)
	if kind == SolverExact {
		so.Progress = func(pr solver.Progress) {
			mu.Lock()
			trace = append(trace, TracePoint{At: pr.Elapsed, Level: pr.Level, Incumbent: pr.Incumbent, Bound: pr.Bound})
			mu.Unlock()
		}
	}
	start := time.Now()
	res, err := solver.Solve(ctx, p, so)
	run.Time = time.Since(start)
	mu.Lock()
	run.Trace = slices.Clone(trace)
	mu.Unlock()
	if err != nil {
		run.Error = err.Error()
		return run
	}
	run.Stop = string(res.Stop)
	if res.Infeasible {
		run.Error = "infeasible: the hard constraints admit no plan"
		return run
	}
	run.Objective = res.Objective
	run.Vars, run.Clauses, run.Components = res.Stats.Vars, res.Stats.Clauses, res.Stats.Components
	run.TimeToFirst = res.Stats.TimeToFirst
	run.Proved = true
	for i, l := range res.Levels {
		run.Levels[i] = RunLevel{Value: l.Value, Status: string(l.Status), LowerBound: l.LowerBound, Bound: string(l.BoundSource)}
		run.Proved = run.Proved && l.Status == solver.Optimal
	}
	if run.Proved {
		run.TimeToProof = res.Stats.TimeTotal
	}
	rep := eval.Check(p, res.Assignment)
	run.Verified = rep.Valid && rep.Objective == res.Objective
	switch {
	case !rep.Valid:
		run.Note = "the plan fails the evaluator: " + rep.Err().Error()
	case rep.Objective != res.Objective:
		run.Note = fmt.Sprintf("the solver claims %v, the evaluator says %v", res.Objective, rep.Objective)
	}
	return run
}

// Compare says how a run stands against the greedy baseline, level by
// level: negative where it is better, positive where worse.
func Compare(r, greedy *Run) [4]int64 {
	var d [4]int64
	for i := range d {
		d[i] = r.Objective[i] - greedy.Objective[i]
	}
	return d
}

// NotWorse reports whether r is never worse than greedy (or any other
// run) on a level unless an earlier level is strictly better: what a
// lexicographic optimum owes the baseline. It names the first level that
// breaks this.
func NotWorse(r, greedy *Run) (bool, string) {
	for i := range r.Objective {
		switch {
		case r.Objective[i] < greedy.Objective[i]:
			return true, ""
		case r.Objective[i] > greedy.Objective[i]:
			return false, fmt.Sprintf("level %d (%s): %d, %s %d", i+1, model.LevelNames[i], r.Objective[i], cmp.Or(greedy.Solver, "greedy"), greedy.Objective[i])
		}
	}
	return true, ""
}

// ErrNoInstances is returned for an empty suite.
var ErrNoInstances = errors.New("benchmarks: no instances")
