package solver

import (
	"context"
	"time"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/solver/localsearch"
)

// Work counts a re-plan's effort in units that do not depend on the
// machine or its load: gini's propagation ticks, local-search evaluations, LP
// iterations, variables the lazy bounds add, and the fixed costs of a
// scenario, each weighted by about what it costs in microseconds on a
// 2-vCPU machine (a step's cost grows with the pool). A search that ends
// by its work budget ends at the same step on every run; WorkPerSecond
// turns a time limit into a budget.
type Work = int64

const (
	// WorkPerSecond is the work a second of re-planning does on a
	// 2-vCPU machine: the unit is about a microsecond there.
	WorkPerSecond Work = 1_000_000

	// The costs besides gini's (encode's TickCost) and local search's
	// (localsearch.EvalCost), measured on the bench suite's 8x20, 24x60
	// and 256x1000 (items: the encoding's lanes and sources).
	lpStopWork       Work = 300    // lp's 8 iterations between stop checks
	lpItemWork       Work = 30     // the scenario's LP, before iterating
	varWork2         Work = 5      // two variables encoded
	growVarsDiv      Work = 50_000 // and one added later, per 50,000 there
	encodeBaseWork   Work = 2_000
	scenarioItemWork Work = 35 // a scenario's pool, checker, report
	scenarioBaseWork Work = 1_000
	warmItemWork     Work = 25 // the warm start's least local search
	askItemDiv       Work = 8  // weighing an option with eval
)

// costs are the pool's step costs in work units.
type costs struct {
	call, tick, check, ask, lp Work
}

func (w *WhatIf) items() Work { return Work(len(w.e.Lanes) + len(w.e.Sources)) }

func (w *WhatIf) costs() costs {
	n := w.items()
	tick, call := w.e.TickCost()
	return costs{
		call:  workOf(call),
		tick:  workOf(tick),
		check: workOf(localsearch.EvalCost(int(n))),
		ask:   10 + n/askItemDiv,
		lp:    n * lpItemWork,
	}
}

// EncodeWork is the work encoding the pool for the what-if questions
// stands for, estimated from the encoding's size.
func (w *WhatIf) EncodeWork() Work {
	return Work(w.e.MaxVar())*varWork2/2 + encodeBaseWork
}

// ScenarioWork is the least work a re-plan takes: what it does besides
// its search, estimated from the pool's size (the scenario's pool, its
// checker, local search's tables, the report), and the warm start's local
// search. ReplanWork charges the first to its budget before it searches.
func (w *WhatIf) ScenarioWork() Work {
	return w.overheadWork() + w.warmWork()
}

func (w *WhatIf) overheadWork() Work {
	return w.items()*scenarioItemWork + scenarioBaseWork
}

// warmWork is the least the warm start's local search gets: enough to
// re-route most sources the scenario took away, which are otherwise
// each explained at a cost.
func (w *WhatIf) warmWork() Work {
	return w.items() * warmItemWork
}

// workMeter is a re-plan's work budget, with the clock (deadline, ctx)
// as a safety cap only: clock records that the cap, not the budget,
// stopped a step, so that the step's answer may differ between runs.
type workMeter struct {
	left, used Work
	deadline   time.Time
	ctx        context.Context
	clock      bool
	costs
}

// spent reports whether the budget is spent or the clock stopped the
// search.
func (m *workMeter) spent() bool {
	return m.left <= 0 || m.timeUp()
}

// timeUp reports whether the safety cap has passed, and notes it.
func (m *workMeter) timeUp() bool {
	if !m.clock && (m.ctx.Err() != nil || !time.Now().Before(m.deadline)) {
		m.clock = true
	}
	return m.clock
}

func (m *workMeter) spend(w Work) {
	m.left -= w
	m.used += w
}

// forTime is the work a time cap of the clock-bound search stands for.
func forTime(d time.Duration) Work {
	return Work(d.Seconds() * float64(WorkPerSecond))
}

// workOf is a step's cost in work units, at least 1.
func workOf(d time.Duration) Work { return max(1, Work(d/time.Microsecond)) }

// sat is one gini call under assume with a budget of ticks
// (encode.TryTicks): until it answers, cap work is spent, the budget is,
// or the clock stops it (0). A gini TryTicks cannot budget leaves the
// call to the clock, which the meter then records.
func (m *workMeter) sat(e *encode.Encoding, cap Work, assume ...[]z.Lit) int {
	ticks := min((min(cap, m.left)-m.call)/m.tick, encode.MaxCallTicks)
	if ticks <= 0 || m.timeUp() {
		return 0
	}
	r, used := e.TryTicks(ticks, max(time.Until(m.deadline), time.Nanosecond), assume...)
	if used < 0 {
		m.clock = true
		used = ticks
	}
	m.spend(m.call + used*m.tick)
	if r == 0 && used < ticks {
		m.clock = true
	}
	return r
}

// checks is how many local-search evaluations share buys (at least 1,
// as 0 means no cap).
func (m *workMeter) checks(share Work) int {
	return max(1, int(share/m.check))
}

// spendChecks charges n evaluations and notes a search the clock cut.
func (m *workMeter) spendChecks(n int, clock bool) {
	m.spend(Work(n) * m.check)
	m.clock = m.clock || clock
}
