package solver

import (
	"fmt"
	"os"
	"time"
)

// traceOn is set by POOLSOLVE_TRACE=1: the solver then writes one line
// per search event (level times, worker answers, restarts) to stderr, for
// reading a run's timeline next to a profile. Lines carry no input text
// beyond variant and node names.
var traceOn = os.Getenv("POOLSOLVE_TRACE") == "1"

// tracef writes one trace line, stamped with the time since start.
func tracef(start time.Time, format string, args ...any) {
	if !traceOn {
		return
	}
	fmt.Fprintf(os.Stderr, "trace %8.3fs "+format+"\n", append([]any{time.Since(start).Seconds()}, args...)...)
}

// traceStart is the run's start, for traces of parts built without a run
// (tests).
func (x *exact) traceStart() time.Time {
	if x.run == nil {
		return time.Now()
	}
	return x.run.start
}
