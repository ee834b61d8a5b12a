//go:build !unix

package lloom

import "time"

func cpuTime() (time.Duration, bool) { return 0, false }
