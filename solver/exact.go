package solver

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver/localsearch"
	"github.com/poolsolve/poolsolve/solver/mip"
)

// ErrMismatch marks a disagreement between the encoding's objective and
// the independent evaluator's, or a plan from the SAT solver that the
// evaluator rejects: a bug in the encoder or in eval, never an input error.
var ErrMismatch = errors.New("solver: encoding and evaluator disagree")

// ErrNoPlan is returned when not even a first valid plan was found before
// the deadline (the warm start failed and the SAT solver timed out).
var ErrNoPlan = errors.New("solver: no valid plan found before the deadline")

// Per-call caps on gini's wall clock.
const (
	lnsTry     = 200 * time.Millisecond
	fullTryMin = 250 * time.Millisecond
	fullTryMax = 2 * time.Second
	probeTry   = 100 * time.Millisecond
	// seedTry caps the Try that seeds gini's phases with the warm plan:
	// on 96x400 it runs past 2 s, and the levels then search well
	// without the seeding.
	seedTry  = 250 * time.Millisecond
	firstTry = 50 * time.Millisecond
)

// exact solves one part of a pool, level by level.
type exact struct {
	run  *run
	p    *model.Pool
	e    *encode.Encoding
	sym  *symmetry
	chk  *eval.Checker
	rng  *rand.Rand
	ass  []z.Lit // pin and cordon assumptions, always assumed
	best model.Assignment
	obj  model.Objective // the encoding's objective of best
	// shared says the encoding serves other searches too (a what-if's
	// scenarios): what holds only for this search never becomes a
	// clause, so levels freeze by assumption (frozen), symmetry is not
	// broken, and no PB worker starts (each scenario's search is short,
	// and a worker process costs more to start than it would save).
	shared bool
	frozen []z.Lit
	// admit, when set, is asked of every plan eval finds valid: a
	// scenario's forced routes, which eval's pins hold for any lane of
	// the model.
	admit func(model.Assignment) bool
	// rep is eval's report of best.
	rep eval.Report
	// fromWarm is true while the incumbent is still the warm start.
	fromWarm bool
	// encodeTook is how long encode.New took on this part.
	encodeTook time.Duration
	levels     [4]Level
	deadline   time.Time
	nodes      []string // nodes that lanes may use, for LNS neighbourhoods
	calls      int
	at         int    // the level being solved, for progress
	fixGen     uint64 // generation of the reduced-cost fixes in the diagram
	// canon is the canonical re-solve handed ahead to level 4's workers.
	canon *canonAhead
	// canonRoot is level 4's root LP with its cuts, kept for the
	// canonical re-solve by branch and cut.
	canonRoot *canonRoot
	// canonSnap is level 4's cut loop as it was at the last rise of its
	// bound (mip.Snapshot), a candidate root for closedRoot.
	canonSnap *canonRoot
	// lpBound is the bound of the LP's last round, for progress reports
	// while the cut loop runs.
	lpBound int64
	// offerErr is the first mismatch found in a plan offered from an LP
	// vertex, where no error can be returned at once; the level's code
	// returns it.
	offerErr error
	// rootLP is level 4's root LP bound (offset included) once every
	// earlier level is proved, when its simplex reached the optimum:
	// a function of the pool, which picks the canonical re-solve.
	rootLP    int64
	rootLPSet bool
	// rootNonzeros is the size of that LP's presolved model, which the
	// canonical PB job shares.
	rootNonzeros int
	// openLoop is level 4's cut loop stopped by the level's proof between
	// two rounds, for canonicalBC to finish; openOffset its offset.
	openLoop   *mip.CutLoop
	openOffset int64
	// presolveTook is the last level's presolve on a part with linear
	// memory, which a level's time must exceed twice for its workers.
	presolveTook time.Duration
	// presolvedAt is the last level's presolved model, which the next
	// level's is made from.
	presolvedAt *presolvedLevel
	// unavoidable are the sources level 1's presolve found uncovered in
	// every plan (linear parts with exact memory).
	unavoidable []string
	// ls is local search on p, built when first asked (searcher).
	ls *localsearch.Searcher
}

// searcher is local search on the part's pool, built once: each polish
// round would build it again, as long as a short round of search.
func (x *exact) searcher() *localsearch.Searcher {
	if x.ls == nil {
		x.ls = x.run.searcher(x.p)
	}
	return x.ls
}

// polishRoom says whether a round of local search can end by end: on
// the wall clock, a round first sets its state from the plan, and a
// part's first round builds the part's searcher, each about as long as
// the warm start's searcher took to build on the whole pool. On
// 1024x4000 at 30 s a level-2 round started 0.7 s before the deadline
// built its searcher in 0.9 s and ended 0.95 s past it.
func (x *exact) polishRoom(end time.Time) bool {
	if x.run == nil || x.clock().Counted() {
		return true // no wall time in a counted search
	}
	need := x.run.lsBuilt
	if x.ls == nil && (x.run.ls == nil || x.run.ls.Pool() != x.p) {
		need *= 2
	}
	return x.clock().Until(end) > need
}

// levelsProved reports whether the levels before i are proved: only then
// can a canonical re-solve follow.
func (x *exact) levelsProved(i int) bool {
	for _, l := range x.levels[:i] {
		if l.Status != Optimal {
			return false
		}
	}
	return true
}

// The encoding must be done by encodeBy (the run's deadline at the
// latest), else newExact fails with encode.ErrDeadline.
func newExact(r *run, p *model.Pool, deadline, encodeBy time.Time, seed uint64, stop func() bool) (*exact, error) {
	opts := encodeOptions(p, encodeBy)
	opts.Stop = stop
	if r != nil {
		opts.Clock = r.clock
	}
	t := time.Now()
	e, err := encode.New(p, opts)
	if err != nil {
		return nil, err
	}
	x := onEncoding(r, p, e, eval.NewChecker(p), deadline, seed)
	x.encodeTook = time.Since(t)
	e.Deadline = deadline
	x.sym = findSymmetry(e)
	x.sym.constrain()
	x.ass = e.AssumptionLits()
	return x, nil
}

// newShared is a search of p on e, an encoding other searches share
// (shared), under the standing assumptions ass; plans are checked by chk
// on p, which may differ from e's pool by its pins and down nodes.
func newShared(r *run, p *model.Pool, e *encode.Encoding, chk *eval.Checker, ass []z.Lit, deadline time.Time, seed uint64) *exact {
	x := onEncoding(r, p, e, chk, deadline, seed)
	x.shared, x.sym, x.ass = true, &symmetry{e: e}, ass
	return x
}

// onEncoding is the search state of p on e, plans checked by chk, before
// its assumptions.
func onEncoding(r *run, p *model.Pool, e *encode.Encoding, chk *eval.Checker, deadline time.Time, seed uint64) *exact {
	x := &exact{run: r, p: p, e: e, chk: chk, deadline: deadline,
		rng: rand.New(rand.NewPCG(seed, 0x1e0c0de))}
	seen := map[string]bool{}
	for _, l := range e.Lanes {
		if len(l.Cordons) > 0 {
			continue
		}
		for _, n := range l.Nodes {
			if !seen[n] {
				seen[n] = true
				x.nodes = append(x.nodes, n)
			}
		}
	}
	return x
}

// try runs one gini call under the standing assumptions plus ms, capped
// by cap and by the time left.
func (x *exact) try(cap time.Duration, ms ...z.Lit) int {
	left := x.clock().Until(x.deadline)
	if err := x.run.ctx.Err(); err != nil || left <= 0 {
		return 0
	}
	x.calls++
	return x.e.TryUnder(min(cap, left), x.ass, x.frozen, ms)
}

// accept checks a plan with the evaluator and the encoding; it becomes the
// incumbent when it is better. A plan the SAT solver produced must be
// valid and both objectives must agree, else ErrMismatch.
func (x *exact) accept(a model.Assignment, fromSAT bool) (bool, error) {
	rep := x.chk.Check(a)
	if !rep.Valid || x.admit != nil && !x.admit(a) {
		if fromSAT {
			return false, fmt.Errorf("%w: SAT plan invalid: %w (or not what a scenario forces)", ErrMismatch, rep.Err())
		}
		return false, nil
	}
	own, err := x.e.Objective(a)
	if err != nil {
		if fromSAT {
			return false, fmt.Errorf("%w: %w", ErrMismatch, err)
		}
		return false, nil // a plan naming a lane or route the encoding lacks
	}
	// A scenario's eval counts on the pool as the scenario leaves it,
	// the shared encoding on the whole pool: their levels 2 and 4 may
	// differ there (Replan reconciles them).
	if own != rep.Objective && !x.shared {
		return false, fmt.Errorf("%w: objective %v, eval %v", ErrMismatch, own, rep.Objective)
	}
	if x.best.Lanes != nil && !own.Less(x.obj) {
		return false, nil
	}
	x.best, x.obj, x.rep = a, own, rep
	x.fromWarm = !fromSAT
	x.run.firstPlan()
	x.run.progress(x.at, x.obj, x.levels[x.at].LowerBound)
	return true, nil
}

// decodeSAT reads the model right after a SAT answer and offers it.
func (x *exact) decodeSAT() (bool, error) {
	return x.accept(x.e.Decode(), true)
}

// seed makes gini's saved phases follow the incumbent: one Try under the
// incumbent's decision literals. Needed again after
// new variables, which reset the phases.
func (x *exact) seed() {
	lits, err := x.e.Lits(x.best)
	if err != nil {
		return
	}
	x.try(probeTry, lits...)
}

// start finds a first plan: the warm start if the encoding takes it, else
// the SAT solver's first model. It reports false when the hard
// constraints are infeasible.
func (x *exact) start(warm model.Assignment, haveWarm bool) (bool, error) {
	if haveWarm {
		warm = x.sym.canonical(warm)
		if ok, err := x.accept(warm, false); err != nil {
			return false, err
		} else if ok {
			lits, _ := x.e.Lits(warm)
			switch x.try(seedTry, lits...) {
			case 0:
				// Seeding the phases took too long (96x400: the Try under
				// the warm plan's literals runs past 2 s); the plan is in
				// hand all the same, and the search starts without them.
				return true, nil
			case 1:
				return true, nil // phases now follow the warm start
			case -1:
				// Valid for eval, refused by the encoding: only memory
				// rounding may do that (e.Exact false). Keep the plan;
				// the search goes on in the rounded encoding. With exact
				// memory it is a bug that would make UNSAT answers lie.
				if x.e.Exact {
					return false, fmt.Errorf("%w: the encoding refuses a plan eval finds valid", ErrMismatch)
				}
				return true, nil
			}
		}
	}
	// A first plan may use the whole run's time, not only this part's
	// share: without one there is no answer at all.
	share := x.deadline
	x.deadline = x.run.deadline
	defer func() { x.deadline = share }()
	for first := true; ; first = false {
		r := 0
		if first && x.clock().Until(x.deadline) < firstTry && x.run.ctx.Err() == nil {
			// Late parts still get one short look: most answer at once.
			x.calls++
			r = x.e.TryUnder(firstTry, x.ass, x.frozen)
		} else {
			r = x.try(fullTryMax)
		}
		switch r {
		case 1:
			if _, err := x.decodeSAT(); err != nil {
				return false, err
			}
			return true, nil
		case -1:
			if !x.e.Exact {
				// Rounded memory may refuse what fits: no proof of
				// infeasibility.
				return false, fmt.Errorf("%w: no plan fits memory rounded to 1/%d GiB, and the figures are too fine to count exactly", ErrNoPlan, x.e.Scale)
			}
			return false, nil
		}
		if x.clock().Until(x.deadline) <= 0 || x.run.ctx.Err() != nil {
			if x.best.Lanes != nil {
				return true, nil
			}
			return false, ErrNoPlan
		}
	}
}

// tryUntil is try with its cap cut to the time left before end.
func (x *exact) tryUntil(end time.Time, cap time.Duration, ms ...z.Lit) int {
	left := x.clock().Until(end)
	if left <= 0 {
		return 0
	}
	return x.try(min(cap, left), ms...)
}

func gap(v, lb int64) float64 {
	if v == 0 || lb >= v {
		return 0
	}
	return float64(v-lb) / float64(v)
}
