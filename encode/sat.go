package encode

import (
	"github.com/poolsolve/poolsolve/internal/clock"
	"math"
	"reflect"
	"time"
	"unsafe"

	"github.com/go-air/gini"

	"github.com/go-air/gini/z"
)

// The solver is reached through these methods only, so that every call
// is a Try with a time cap: after a Try that timed out, gini's Solve
// inherits the expired deadline and returns at once.

// TryUnder asks gini for a model of the clauses under the literals of
// every set in assume, within d: 1 satisfiable (Decode reads the model),
// -1 unsatisfiable (Why names the assumptions at fault), 0 undecided.
// The assumptions hold for this call only.
//
// On a counted clock (Options.Clock) d is a budget of ticks instead, at
// what a tick of this encoding stands for (tickCost), and the ticks used
// are charged to the clock.
func (e *Encoding) TryUnder(d time.Duration, assume ...[]z.Lit) int {
	if e.noSAT {
		return 0
	}
	if e.Clock.Counted() {
		tick, call := e.TickCost()
		e.Clock.Charge(call)
		if d <= call {
			return 0
		}
		r, used := e.TryTicks(max(1, int64((d-call)/tick)), 0, assume...)
		e.Clock.Charge(time.Duration(max(used, 0)) * tick)
		return r
	}
	for _, ms := range assume {
		e.sat.Assume(ms...)
	}
	return e.sat.Try(d)
}

// SetClock makes c the clock the encoding reads its Deadline on and
// charges its work to (TryUnder's ticks, each variable it adds): a
// search on a shared encoding sets its own.
func (e *Encoding) SetClock(c *clock.Clock) {
	e.Clock, e.cnf.clock = c, c
}

// TickCost is what a tick of gini's search and a call besides its ticks
// stand for in work: a tick is 20,000 propagations, about 0.5 ms on a
// small pool and up to 4 ms on a large one, whose clauses are longer
// and colder in cache; a call, which sets its assumptions, 0.5-2 ms and
// 4 ms at 256x1000 (measured on the bench suite's 8x20, 24x60 and
// 256x1000, items being the encoding's lanes and sources).
func (e *Encoding) TickCost() (tick, call time.Duration) {
	items := time.Duration(len(e.Lanes) + len(e.Sources))
	tick = 500*time.Microsecond + min(3*time.Microsecond*items, 3500*time.Microsecond)
	call = time.Millisecond + items*250*time.Nanosecond
	return tick, call
}

// TickProps is how many of gini's propagations make one tick: gini
// answers a pause or a stop only between ticks.
const TickProps = 20_000

// MaxCallTicks caps one TryTicks call: its budget is a channel buffer of
// that many messages, filled and read back at about 50 ns each (1,000
// ticks: 70 µs; 131,072: 7 ms and 128 KiB), for a search of one to eight
// minutes. A call past it ends there, as at its own budget.
const MaxCallTicks = 1 << 17

// TryTicks is TryUnder with a budget of ticks (TickProps propagations
// each) that ends the search at the same point on every machine, under
// any load; d, when positive, caps it in time too. It returns the answer,
// 0 when either ran out, and the ticks used: the budget when it ran out,
// fewer when the search answered or d stopped it first. When gini's
// control channel cannot be reached (tickBudget), the call is bounded by
// d alone and used is -1.
//
// gini v1.0.4 stops a search only by the clock, and a pause or stop sent
// from another goroutine lands at whichever tick the search has reached
// by then, which depends on the scheduler. But at every tick the search
// takes one message from its control channel if one is waiting: false
// means pause (it answers true on the same channel), true means stop. So
// the call runs the search in this goroutine with a buffered channel in
// place of the control channel, holding budget-1 pauses and then a stop:
// each tick takes a pause and leaves its answer behind the stop, and tick
// budget takes the stop. No other goroutine is involved.
func (e *Encoding) TryTicks(ticks int64, d time.Duration, assume ...[]z.Lit) (int, int64) {
	if ticks <= 0 || e.noSAT {
		return 0, 0
	}
	ticks = min(ticks, MaxCallTicks)
	if d <= 0 {
		d = math.MaxInt64
	}
	for _, ms := range assume {
		e.sat.Assume(ms...)
	}
	ctl, ok := tickBudget(e.sat)
	if !ok {
		return e.sat.Try(d), -1
	}
	orig := ctl.Interface().(chan bool)
	defer ctl.Set(reflect.ValueOf(orig))
	budget := make(chan bool, ticks)
	for range ticks - 1 {
		budget <- false
	}
	budget <- true
	ctl.Set(reflect.ValueOf(budget))
	r := e.sat.Try(d)
	// Each tick took a pause and put its answer (true) behind the stop.
	left, n := int64(0), int64(len(budget))
	for range n {
		if !<-budget {
			left++
		}
	}
	used := ticks - 1 - left
	if n < ticks {
		used = ticks // the stop was taken
	}
	return r, used
}

// tickBudget is the settable control channel of g's search, reached by
// reflection: gini exports no way to set it. ok is false when gini's
// layout is not the one this was written for (gini v1.0.4: Gini.xo,
// xo.S.control, xo.Ctl.cStopOrPause).
func tickBudget(g *gini.Gini) (reflect.Value, bool) {
	v := reflect.ValueOf(g).Elem()
	for _, name := range []string{"xo", "control", "cStopOrPause"} {
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return reflect.Value{}, false
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		v = v.FieldByName(name)
		if !v.IsValid() {
			return reflect.Value{}, false
		}
	}
	if v.Type() != reflect.TypeFor[chan bool]() || !v.CanAddr() {
		return reflect.Value{}, false
	}
	return reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem(), true
}

// Why appends to dst the assumptions of the last unsatisfiable TryUnder
// that the answer rests on, and returns it.
func (e *Encoding) Why(dst []z.Lit) []z.Lit {
	if e.noSAT {
		return dst
	}
	return e.sat.Why(dst)
}

// Value is m's value in the model of the last satisfiable TryUnder.
func (e *Encoding) Value(m z.Lit) bool { return !e.noSAT && e.sat.Value(m) }

// NoSAT reports whether gini is kept out of the encoding (Options.NoSAT).
func (e *Encoding) NoSAT() bool { return e.noSAT }

// MaxVar is the highest variable the encoding holds.
func (e *Encoding) MaxVar() z.Var {
	if e.noSAT {
		return e.nvars
	}
	return e.sat.MaxVar()
}

// AssumptionLits are the pin and cordon literals that a normal solve
// assumes, in the order of Assumptions.
func (e *Encoding) AssumptionLits() []z.Lit {
	out := make([]z.Lit, len(e.Assumptions))
	for i, a := range e.Assumptions {
		out[i] = a.Lit
	}
	return out
}
