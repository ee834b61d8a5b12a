package solver

import (
	"time"
)

// Work is a re-plan's effort in microseconds of a counted clock
// (internal/clock): gini's propagation ticks, local-search evaluations,
// LP iterations and the variables the encoding adds are charged to it as
// a work limit's plan charges them, and a scenario's fixed costs below
// besides, each at about what it costs on a 2-vCPU machine (a step's
// cost grows with the pool). A search that ends by its work budget ends
// at the same step on every run; WorkPerSecond turns a time limit into
// a budget.
type Work = int64

const (
	// WorkPerSecond is the work a second of re-planning does on a
	// 2-vCPU machine: the unit is about a microsecond there.
	WorkPerSecond Work = 1_000_000

	// The costs besides gini's (encode's TickCost) and local search's
	// (localsearch.EvalCost), measured on the bench suite's 8x20, 24x60
	// and 256x1000 (items: the encoding's lanes and sources).
	varWork2         Work = 5 // two variables encoded
	encodeBaseWork   Work = 2_000
	scenarioItemWork Work = 35 // a scenario's pool, checker, report
	scenarioBaseWork Work = 1_000
	warmItemWork     Work = 25 // the warm start's least local search
)

func (w *WhatIf) items() Work { return Work(len(w.e.Lanes) + len(w.e.Sources)) }

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

// durationOf is the time on a counted clock that work stands for.
func durationOf(w Work) time.Duration { return time.Duration(w) * time.Microsecond }
