//go:build !unix

package answer_test

import "time"

// cpuTime is not measured here; benchmarks report 0.
func cpuTime() time.Duration { return 0 }
