package gateway

import (
	"context"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/internal/bigmetrics"
)

// BenchmarkFetchLargeMetrics reads a gateway whose node answers a 30 MiB
// /gateway/metrics (31.4 MB: the 0.2.3 capture grown, as
// lloom's BenchmarkParseMetrics/30MB reads it): the answer is read,
// redacted, checked and parsed, as every --gateway command does before it
// plans. Besides time and allocations it reports alloc/input, bytes
// allocated per byte of the answer; cpu-s/op, the CPU time of a fetch,
// garbage collection included; and, on Linux, peak-RSS-MB: the process's
// peak resident memory while it fetches once, next to budget-MB, issue
// 11's four times the input plus 50 MB. The process holds the fake
// gateway's copy of the answer too, so the peak counts the input twice.
func BenchmarkFetchLargeMetrics(b *testing.B) {
	big, err := bigmetrics.Grow(readTestdata("gateway-0.2.3-metrics.json"), 30<<20)
	if err != nil {
		b.Fatal(err)
	}
	gw := newFake(b, "").
		handle("/gateway/node", answer(200, readTestdata("gateway-0.2.3-node-inventory.json"))).
		handle("/gateway/metrics", answer(200, big))
	opts := Options{URL: gw.srv.URL, Timeout: 10 * time.Minute} // the default 32 MiB cap

	fetch := func() {
		fl, err := Fetch(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		if len(fl.MetricsFrom()) != 1 {
			b.Fatalf("metrics from %v; problems %v", fl.MetricsFrom(), fl.Problems)
		}
	}
	debug.FreeOSMemory()
	peak, rssOK := bigmetrics.PeakRSS()
	fetch()
	var peakBytes int64
	if rssOK {
		peakBytes = peak()
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(big)))
	b.ResetTimer()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0, cpuOK := bigmetrics.CPUTime()
	n := 0
	for b.Loop() {
		fetch()
		n++
	}
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(n)/float64(len(big)), "alloc/input")
	if cpu1, ok := bigmetrics.CPUTime(); ok && cpuOK {
		b.ReportMetric((cpu1-cpu0).Seconds()/float64(n), "cpu-s/op")
	}
	if rssOK {
		b.ReportMetric(float64(peakBytes)/1e6, "peak-RSS-MB")
		b.ReportMetric(float64(4*len(big)+50e6)/1e6, "budget-MB")
	}
}
