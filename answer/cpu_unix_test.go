//go:build unix

package answer_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used, user and system, so
// that a benchmark on a shared machine can report work beside wall time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
