package pb

import (
	"fmt"
	"os"
	"sync/atomic"
)

// WorkerEnv, set to "1" by the parent in a worker's environment, turns
// the process into a worker when its main calls ServeIfWorker.
const WorkerEnv = "POOLSOLVE_PB_WORKER"

// workersServed is set by ServeIfWorker: this executable, re-run, serves
// as a PB worker, so a solve may start workers.
var workersServed atomic.Bool

// ServeIfWorker is the PB worker's entry point; main calls it before
// anything else. In a process its parent started as a worker it serves
// the one job on stdin and exits. Otherwise it returns, and from then on
// the exact solver may re-run this executable as its workers. A program
// that never calls it still plans, without PB workers
// (Stats.Workers says so).
func ServeIfWorker() {
	if os.Getenv(WorkerEnv) == "1" {
		code := 0
		if err := Serve(os.Stdin, os.Stdout, true); err != nil {
			fmt.Fprintln(os.Stderr, "poolsolve pb worker:", err)
			code = 1
		}
		os.Exit(code)
	}
	workersServed.Store(true)
}

// Served reports whether ServeIfWorker ran in this process: this
// executable, re-run, serves as a PB worker, so a solve may start
// workers.
func Served() bool { return workersServed.Load() }
