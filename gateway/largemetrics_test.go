package gateway

import (
	"context"
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
	bigmetrics.Bench(b, len(big), fetch)
}
