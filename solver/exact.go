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
)

// ErrMismatch marks a disagreement between the encoding's objective and
// the independent evaluator's, or a plan from the SAT solver that the
// evaluator rejects: a bug in the encoder or in eval, never an input error.
var ErrMismatch = errors.New("solver: encoding and evaluator disagree")

// ErrNoPlan is returned when not even a first valid plan was found before
// the deadline (the warm start failed and the SAT solver timed out).
var ErrNoPlan = errors.New("solver: no valid plan found before the deadline")

// Per-call caps on gini's wall clock (solver-notes §6.5).
const (
	lnsTry     = 200 * time.Millisecond
	fullTryMin = 250 * time.Millisecond
	fullTryMax = 2 * time.Second
	probeTry   = 100 * time.Millisecond
)

// levelShare is each level's share of the time left when it starts
// (L1 15%, L2 25%, L3 15%, L4 the rest, solver-notes §6.5); a level that
// proves early leaves its time to the next.
var levelShare = [4]float64{0.15, 0.25 / 0.85, 0.15 / 0.60, 1}

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
	obj  model.Objective
	// fromWarm is true while the incumbent is still the warm start.
	fromWarm bool
	levels   [4]Level
	deadline time.Time
	nodes    []string // nodes that lanes may use, for LNS neighbourhoods
	calls    int
}

func newExact(r *run, p *model.Pool, deadline time.Time, seed uint64) (*exact, error) {
	e, err := encode.New(p, encode.Options{})
	if err != nil {
		return nil, err
	}
	x := &exact{run: r, p: p, e: e, chk: eval.NewChecker(p), deadline: deadline,
		rng: rand.New(rand.NewPCG(seed, 0x1e0c0de))}
	x.sym = findSymmetry(e)
	x.sym.constrain()
	for _, a := range e.Assumptions {
		x.ass = append(x.ass, a.Lit)
	}
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
	return x, nil
}

// try runs one bounded gini call under the standing assumptions plus ms.
// Only Try is ever used, with the time left: a plain Solve after an
// expired Try would inherit the stale deadline (solver-notes §1.3).
func (x *exact) try(cap time.Duration, ms ...z.Lit) int {
	left := time.Until(x.deadline)
	if err := x.run.ctx.Err(); err != nil || left <= 0 {
		return 0
	}
	x.e.S.Assume(x.ass...)
	x.e.S.Assume(ms...)
	x.calls++
	return x.e.S.Try(min(cap, left))
}

// accept checks a plan with the evaluator and the encoding; it becomes the
// incumbent when it is better. A plan the SAT solver produced must be
// valid and both objectives must agree, else ErrMismatch.
func (x *exact) accept(a model.Assignment, fromSAT bool) (bool, error) {
	rep := x.chk.Check(a)
	if !rep.Valid {
		if fromSAT {
			return false, fmt.Errorf("%w: SAT plan invalid: %v", ErrMismatch, rep.Err())
		}
		return false, nil
	}
	own, err := x.e.Objective(a)
	if err != nil {
		if fromSAT {
			return false, fmt.Errorf("%w: %v", ErrMismatch, err)
		}
		return false, nil // e.g. a warm start finer than the memory resolution
	}
	if own != rep.Objective {
		return false, fmt.Errorf("%w: objective %v, eval %v", ErrMismatch, own, rep.Objective)
	}
	if x.best.Lanes != nil && !rep.Objective.Less(x.obj) {
		return false, nil
	}
	x.best, x.obj = a, rep.Objective
	x.fromWarm = !fromSAT
	x.run.firstPlan()
	return true, nil
}

// decodeSAT reads the model right after a SAT answer and offers it.
func (x *exact) decodeSAT() (bool, error) {
	return x.accept(x.e.Decode(), true)
}

// seed makes gini's saved phases follow the incumbent: one Try under the
// incumbent's decision literals (solver-notes §1.5). Needed again after
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
			switch x.try(fullTryMax, lits...) {
			case 1:
				return true, nil // phases now follow the warm start
			case -1:
				// Valid for eval, refused by the encoding: only memory
				// rounding can do that; fall back to the solver.
				x.best, x.fromWarm = model.Assignment{}, false
			}
		}
	}
	for {
		switch x.try(fullTryMax) {
		case 1:
			if _, err := x.decodeSAT(); err != nil {
				return false, err
			}
			return true, nil
		case -1:
			return false, nil
		}
		if time.Until(x.deadline) <= 0 || x.run.ctx.Err() != nil {
			if x.best.Lanes != nil {
				return true, nil
			}
			return false, ErrNoPlan
		}
	}
}

// solve runs the lexicographic loop over the four levels.
func (x *exact) solve() error {
	for i := range x.levels {
		now := time.Now()
		end := now.Add(time.Duration(float64(x.deadline.Sub(now)) * levelShare[i]))
		if err := x.level(i, end); err != nil {
			return err
		}
		x.levels[i].Elapsed = time.Since(now)
	}
	return nil
}

func (x *exact) level(i int, end time.Time) error {
	lv := &x.levels[i]
	lv.Index, lv.Name = i+1, model.LevelNames[i]
	lb, src := x.e.Offset(i), "trivial"
	if b, ok := lpBound(x, i, end); ok && b > lb {
		lb, src = b, "lp"
	}
	ub := x.obj[i]
	proved := func() {
		lv.LowerBound, lv.BoundSource = ub, src
	}
	lv.LowerBound, lv.BoundSource = min(lb, ub), src
	if lb < ub {
		bl := x.e.LevelBound(i, ub-1)
		x.seed()
		// A cheap probe at the lower bound: the optimum is often there.
		switch x.try(probeTry, x.e.LevelBound(i, lb)) {
		case 1:
			if _, err := x.decodeSAT(); err != nil {
				return err
			}
			ub = x.obj[i]
		case -1:
			lb, src = lb+1, "sat-unsat"
		}
		if lb < ub {
			bl = x.e.LevelBound(i, ub-1)
		}
		cap := fullTryMin
		for lb < ub && time.Now().Before(end) && x.run.ctx.Err() == nil {
			x.run.progress(i, x.obj, lb)
			switch x.tryUntil(end, cap, bl) {
			case 1:
				if _, err := x.decodeSAT(); err != nil {
					return err
				}
				ub = x.obj[i]
				if lb < ub {
					bl = x.e.LevelBound(i, ub-1)
				}
				continue
			case -1:
				lb, src = ub, "sat-unsat"
				continue
			}
			// Timed out: a few neighbourhood searches, then a longer try.
			for range 4 {
				if !time.Now().Before(end) {
					break
				}
				improved, err := x.lns(i, end, bl)
				if err != nil {
					return err
				}
				if improved {
					ub = x.obj[i]
					if lb < ub {
						bl = x.e.LevelBound(i, ub-1)
					}
				}
				if lb >= ub {
					break
				}
			}
			cap = min(2*cap, fullTryMax)
		}
		lv.LowerBound, lv.BoundSource = min(lb, ub), src
	}
	lv.Value = ub
	switch {
	case lv.LowerBound >= ub:
		proved()
		lv.Status = Optimal
	case x.fromWarm:
		lv.Status = Heuristic
	default:
		lv.Status = Bounded
	}
	lv.Gap = gap(ub, lv.LowerBound)
	// Freeze the level at its value before the next (decoding is done).
	if i < 3 {
		x.e.Freeze(i, ub)
	} else {
		x.e.ReleaseBound()
	}
	return nil
}

func (x *exact) tryUntil(end time.Time, cap time.Duration, ms ...z.Lit) int {
	left := time.Until(end)
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
