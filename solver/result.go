package solver

import (
	"io"
	"strings"
	"time"

	"github.com/poolsolve/poolsolve/model"
)

// Status says how much a level's value is worth.
type Status string

const (
	// Optimal: proved, by an UNSAT answer one below the value or by a
	// lower bound equal to it.
	Optimal Status = "optimal"
	// Bounded: the best value found before the deadline, with a lower
	// bound below it.
	Bounded Status = "bounded"
	// Heuristic: the value of a heuristic plan, nothing proved.
	Heuristic Status = "heuristic"
)

// BoundSource names what proves a level's lower bound. A level merged from
// parts solved apart joins its parts' distinct sources with "+" (e.g.
// "lp+sat-unsat"); the constants are the single sources.
type BoundSource string

// The single bound sources.
const (
	BoundSATUnsat     BoundSource = "sat-unsat"      // an UNSAT answer
	BoundLP           BoundSource = "lp"             // the LP relaxation with its cuts
	BoundBranchAndCut BoundSource = "branch-and-cut" // the search from the LP ended
	BoundLagrangian   BoundSource = "lagrangian"     // the subgradient bound, on models too large for the simplex
	BoundPB           BoundSource = "pb"             // a clause-learning PB worker's search ended
	BoundReducedCost  BoundSource = "reduced-cost"   // an UNSAT answer under the LP's reduced-cost fixings
	BoundRelaxation   BoundSource = "relaxation"     // level 4's per-group minima
	BoundPresolve     BoundSource = "presolve"       // what presolve's forced columns cost, every other at its cheapest
	BoundTrivial      BoundSource = "trivial"        // the level's constant offset
)

// Sources splits a merged source into its single ones.
func (b BoundSource) Sources() []BoundSource {
	if b == "" {
		return nil
	}
	var out []BoundSource
	for s := range strings.SplitSeq(string(b), "+") {
		out = append(out, BoundSource(s))
	}
	return out
}

// Level reports one objective level.
type Level struct {
	Index       int           `json:"level"` // 1..4
	Name        string        `json:"name"`
	Value       int64         `json:"value"`
	Status      Status        `json:"status"`
	LowerBound  int64         `json:"lowerBound"`
	BoundSource BoundSource   `json:"boundSource,omitempty"`
	Gap         float64       `json:"gap"` // (value - lowerBound) / value, 0 when value is 0
	Elapsed     time.Duration `json:"-"`
}

// Explanation says, in operator terms, why something the operator asked
// for or expects cannot hold: an uncovered source, or a pin that fails.
type Explanation struct {
	Subject string   `json:"subject"` // alias id, model:<id>, or pin label
	Reason  string   `json:"reason"`
	Pins    []string `json:"pins,omitempty"` // the minimal set of conflicting pins/cordons
}

// Stop says why a solve ended.
type Stop string

const (
	// StopProved: every level is optimal.
	StopProved Stop = "proved"
	// StopDeadline: the time limit (or the context's deadline, or a
	// level's share of the time) ran out with a level unproved.
	StopDeadline Stop = "deadline"
	// StopInterrupted: the context was cancelled (plan's first Ctrl-C)
	// with a level unproved.
	StopInterrupted Stop = "interrupted"
	// StopInfeasible: the hard constraints admit no plan.
	StopInfeasible Stop = "infeasible"
	// StopHeuristic: the greedy solver answered with its plan, which
	// proves nothing beyond the trivial bounds.
	StopHeuristic Stop = "heuristic"
)

// Result is what a solve returns: always a complete assignment that passed
// the independent evaluator, unless Infeasible is set.
type Result struct {
	Assignment model.Assignment `json:"assignment"`
	Objective  model.Objective  `json:"objective"`
	Levels     [4]Level         `json:"levels"`
	// Infeasible is set when the hard constraints admit no plan at all
	// (e.g. pins that cannot hold together); Explanations then say why.
	Infeasible   bool          `json:"infeasible,omitempty"`
	Explanations []Explanation `json:"explanations,omitempty"`
	// Stop says why the solve ended; it is set on every Result.
	Stop  Stop  `json:"stop"`
	Stats Stats `json:"stats"`
}

// Stats describes the work done.
type Stats struct {
	Solver     Algorithm `json:"solver"`
	Vars       int       `json:"vars"`
	Clauses    int       `json:"clauses"`
	SolveCalls int       `json:"solveCalls"`
	Components int       `json:"components"`
	// Workers says whether the search could start PB workers.
	Workers     Workers       `json:"-"`
	TimeToFirst time.Duration `json:"-"`
	TimeTotal   time.Duration `json:"-"`
}

// WorkUnit is what a unit of Options.WorkLimit stands for: about a
// millisecond of search on one core of a 2-vCPU machine.
const WorkUnit = time.Millisecond

// MaxWorkLimit is the largest Options.WorkLimit: a billion units, about
// eleven days of search, far below where the counted clock's time would
// overflow.
const MaxWorkLimit = 1_000_000_000

// Workers says how the exact solver ran its pseudo-boolean workers.
type Workers string

const (
	// WorkersProcesses: as child processes of this executable, whose
	// main called pb.ServeIfWorker.
	WorkersProcesses Workers = "processes"
	// WorkersNone: main did not call pb.ServeIfWorker, so the executable
	// cannot serve as a worker; the levels are searched in this process
	// by the other techniques (gini, LP, local search), and only small
	// canonical re-solves use the PB solver, in-process.
	WorkersNone Workers = "none"
)

// Progress is reported while a long solve runs.
type Progress struct {
	Level     int
	Incumbent model.Objective
	Bound     int64
	Elapsed   time.Duration
}

// Algorithm names a solver of this package.
type Algorithm string

const (
	// Exact is the lexicographic search on gini, from a greedy warm start.
	Exact Algorithm = "exact"
	// Greedy is the warm start alone: greedy and local search.
	Greedy Algorithm = "greedy"
)

// Options steer a solve. The zero value is usable: exact, 5 s.
type Options struct {
	// Solver is Exact (also when empty) or Greedy.
	Solver Algorithm
	// TimeLimit bounds the whole solve; the best plan found by then is
	// returned. Zero means 5 s.
	TimeLimit time.Duration
	// WorkLimit, when positive, bounds the solve by work instead of time:
	// WorkLimit units (WorkUnit each) of gini's ticks, LP iterations and
	// local-search moves, each charged at what it costs on one core of a
	// 2-vCPU machine. The plan then depends on the pool, the seed and
	// the work limit only: the same on any machine, under any load
	// (TimeLimit and ctx's deadline are not read; cancelling ctx still
	// stops it). The search runs in this goroutine, without PB workers.
	WorkLimit int64
	// Seed seeds every random choice (LNS neighbourhoods, local search).
	Seed uint64
	// Progress, if set, is called from the solving goroutine.
	Progress func(Progress)

	// Diagnostics: the library reads no environment; the CLI sets these
	// from POOLSOLVE_TRACE, POOLSOLVE_DUMP_RELAX, POOLSOLVE_DUMP_PB and
	// POOLSOLVE_PB_CORES.

	// Trace, when set, gets one line per search event (level times,
	// worker answers, restarts), stamped with the time since the start.
	Trace io.Writer
	// DumpRelax, when set, is the path prefix under which each presolved
	// level model the LP solves is written as CPLEX LP (relaxdump.go).
	DumpRelax string
	// DumpPB, when set, is the path prefix under which each PB worker's
	// job is written as the worker reads it.
	DumpPB string
	// Cores is the CPUs the PB workers are planned for; zero means
	// GOMAXPROCS. Set, it measures one machine's policy on another.
	Cores int
}
