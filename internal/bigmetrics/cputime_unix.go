//go:build unix

package bigmetrics

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time the process has used, user and system, all
// threads (the garbage collector's included): on a shared machine it
// says more than wall time.
func CPUTime() (time.Duration, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
