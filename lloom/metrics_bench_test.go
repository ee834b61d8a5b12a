package lloom

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	"github.com/poolsolve/poolsolve/internal/bigmetrics"
)

// bigMetrics grows the captured 0.2.3 /gateway/metrics answer to about
// size bytes (bigmetrics.Grow).
func bigMetrics(tb testing.TB, size int) []byte {
	tb.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "lloom-gateway-0.2.3", "metrics.json"))
	if err != nil {
		tb.Fatal(err)
	}
	out, err := bigmetrics.Grow(data, size)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// BenchmarkParseMetrics reads metrics answers of 1 and 30 MB. Besides
// time and allocations per parse it reports alloc/input: bytes allocated
// per byte of input, which bounds the peak heap a parse adds; cpu-s/op,
// the CPU time of a parse, garbage collection included, which a busy
// machine does not stretch as it does the wall time; and, on Linux,
// peak-RSS-MB: the process's peak resident memory while it parses once,
// the input and the test binary included, next to budget-MB, the budget
// a parse is held to: four times the input plus 50 MB.
func BenchmarkParseMetrics(b *testing.B) {
	for _, size := range []struct {
		name  string
		bytes int
	}{{"1MB", 1 << 20}, {"30MB", 30 << 20}} {
		data := bigMetrics(b, size.bytes)
		b.Run(size.name, func(b *testing.B) {
			bigmetrics.Bench(b, len(data), func() {
				if _, err := ParseMetrics(data, "metrics.json"); err != nil {
					b.Fatal(err)
				}
			})
		})
	}
}

// TestMetricsFastPathReadsWhatTheTreeReads: the fast path must give what
// the positioned tree gives, and step aside where encoding/json would
// read a document differently.
func TestMetricsFastPathReadsWhatTheTreeReads(t *testing.T) {
	docs := map[string][]byte{"1MB answer": bigMetrics(t, 1<<20)}
	for _, f := range []string{"metrics.json", "metrics-history.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", "lloom-gateway-0.2.3", f))
		if err != nil {
			t.Fatal(err)
		}
		docs[f] = data
	}
	for name, data := range docs {
		fast, ok := parseMetricsFast(data, "m.json")
		if !ok {
			t.Errorf("%s: the fast path stepped aside for a sound document", name)
			continue
		}
		slow, err := parseMetricsTree(data, "m.json")
		if err != nil || !reflect.DeepEqual(fast, slow) {
			t.Errorf("%s: the fast path and the tree differ (tree error %v)", name, err)
		}
	}
	for _, tc := range []struct {
		name, doc string
		fast      bool
	}{
		{"a sound answer", `{"object": "gateway.metrics", "totals": {"requests": 4}}`, true},
		{"null totals still say snapshot", `{"totals": null}`, true},
		{"an error text as an object", `{"totals": {}, "recent": [{"error": {"message": "boom"}}]}`, true},
		{"a key in other case, which encoding/json would take", `{"totals": {"REQUESTS": 4}}`, false},
		{"a key with a Kelvin sign, which folds to k", `{"totals": {}, "models": [{"id": "m", "decodeTo\u212aens": 4}]}`, false},
		{"an integer written 4.0", `{"totals": {"requests": 4.0}}`, false},
		{"a repeated key", `{"totals": {"requests": 4, "requests": 5}}`, false},
		{"an error envelope", `{"error": {"message": "unauthorized"}}`, false},
		{"a history file of another version", `{"version": 2, "metrics": {}}`, false},
		{"a syntax error", `{"totals": {"requests": 4}`, false},
		{"neither kind", `{"hello": 1}`, false},
	} {
		_, ok := parseMetricsFast([]byte(tc.doc), "m.json")
		if ok != tc.fast {
			t.Errorf("%s: fast path taken = %v, want %v", tc.name, ok, tc.fast)
		}
		m, err := ParseMetrics([]byte(tc.doc), "m.json")
		slow, serr := parseMetricsTree([]byte(tc.doc), "m.json")
		if (err == nil) != (serr == nil) || (err == nil && !reflect.DeepEqual(m, slow)) || (err != nil && err.Error() != serr.Error()) {
			t.Errorf("%s: ParseMetrics = %+v, %v; the tree gives %+v, %v", tc.name, m, err, slow, serr)
		}
	}
	m, err := ParseMetrics([]byte(`{"totals": {}, "recent": [{"error": {"message": "boom"}}, {"error": 7}]}`), "m.json")
	if err != nil || m.Recent[0].Error != "boom" || m.Recent[1].Error != "7" {
		t.Errorf("error texts = %+v, %v; want boom and 7", m, err)
	}
}

// TestParseMetricsStaysWithinItsMemoryBudget: a 30 MB answer once took
// 2.4 GB. A parse may allocate at most four times its input plus 50 MB.
func TestParseMetricsStaysWithinItsMemoryBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 30 MB document")
	}
	data := bigMetrics(t, 30<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := ParseMetrics(data, "metrics.json"); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc, budget := after.TotalAlloc-before.TotalAlloc, uint64(4*len(data)+50<<20)
	if alloc > budget {
		t.Errorf("parsing %d bytes allocated %d bytes, over the budget of %d", len(data), alloc, budget)
	}
}
