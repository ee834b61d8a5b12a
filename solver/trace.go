package solver

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/poolsolve/poolsolve/internal/clock"
)

// tracer writes one line per search event (level times, worker answers,
// restarts) to Options.Trace, stamped with the time since start, for
// reading a run's timeline next to a profile. Lines carry no input text
// beyond variant and node names. The zero tracer writes nothing.
type tracer struct {
	out   *traceOut
	start time.Time
}

// traceOut serialises lines: the LP beside a level's search and the
// encoding goroutine trace too.
type traceOut struct {
	mu sync.Mutex
	w  io.Writer
}

func newTracer(w io.Writer, start time.Time) tracer {
	if w == nil {
		return tracer{}
	}
	return tracer{out: &traceOut{w: w}, start: start}
}

// on says whether lines are written, for traces whose arguments cost.
func (t tracer) on() bool { return t.out != nil }

// f writes one trace line.
func (t tracer) f(format string, args ...any) {
	if t.out == nil {
		return
	}
	t.out.mu.Lock()
	defer t.out.mu.Unlock()
	fmt.Fprintf(t.out.w, "trace %8.3fs "+format+"\n", append([]any{time.Since(t.start).Seconds()}, args...)...)
}

// tracer is the run's tracer; parts built without a run (tests) trace
// nothing.
func (x *exact) tracer() tracer {
	if x.run == nil {
		return tracer{}
	}
	return x.run.trace
}

// clock is the run's clock: nil, the wall clock, for parts built without
// a run (tests) and for runs bounded by time.
func (x *exact) clock() *clock.Clock {
	if x.run == nil {
		return nil
	}
	return x.run.clock
}

// within is the budget that ends at end, on the run's clock.
func (x *exact) within(end time.Time) budget { return budget{clock: x.clock(), end: end} }

// options are the run's options; the zero value for parts built without
// a run (tests).
func (x *exact) options() Options {
	if x.run == nil {
		return Options{}
	}
	return x.run.opts
}
