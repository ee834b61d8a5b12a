package bigmetrics

import (
	"os"
	"strconv"
	"strings"
)

// PeakRSS resets the process's peak resident size and returns a reading
// of the peak since, in bytes. Linux only (/proc/self/clear_refs 5 resets
// VmHWM); ok is false elsewhere.
func PeakRSS() (read func() int64, ok bool) {
	if os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) != nil {
		return nil, false
	}
	return func() int64 {
		data, err := os.ReadFile("/proc/self/status")
		if err != nil {
			return 0
		}
		for _, l := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
				return kb << 10
			}
		}
		return 0
	}, true
}
