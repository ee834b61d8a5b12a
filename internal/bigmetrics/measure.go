package bigmetrics

import (
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
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

// Bench runs op once alone for the process's peak resident size, then in
// b's loop, and reports what a parse's memory budget is judged by:
// alloc/input (bytes allocated per byte of the input), cpu-s/op (CPU time,
// garbage collection included, which a busy machine does not stretch as
// it does wall time) and, on Linux, peak-RSS-MB next to budget-MB, four
// times the input plus 50 MB.
func Bench(b *testing.B, input int, op func()) {
	debug.FreeOSMemory() // what building the input left
	peak, rssOK := PeakRSS()
	op()
	var peakBytes int64
	if rssOK {
		peakBytes = peak()
	}
	b.ReportAllocs()
	b.SetBytes(int64(input))
	b.ResetTimer()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0, cpuOK := CPUTime()
	n := 0
	for b.Loop() {
		op()
		n++
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n)/float64(input), "alloc/input")
	if cpu1, ok := CPUTime(); ok && cpuOK {
		b.ReportMetric((cpu1-cpu0).Seconds()/float64(n), "cpu-s/op")
	}
	if rssOK {
		b.ReportMetric(float64(peakBytes)/1e6, "peak-RSS-MB")
		b.ReportMetric(float64(4*input+50e6)/1e6, "budget-MB")
	}
}
