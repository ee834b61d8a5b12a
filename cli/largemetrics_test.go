package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/internal/bigmetrics"
)

// TestServeALargeMetricsAnswer is not a test but the fake gateway that
// docs/reliability.md's whole-process memory figures were measured
// against: the example live fleet, with a 31.4 MB /gateway/metrics answer
// (the 0.2.3 capture grown, as BenchmarkParseMetrics/30MB reads it) as the
// gateway's own node's metrics. With POOLSOLVE_LARGE_GATEWAY=DIR it writes
// the live-fleet flags to DIR/args, one a line, and serves until DIR/stop
// exists (at most an hour):
//
//	POOLSOLVE_LARGE_GATEWAY=/tmp/lg go test ./cli/ -run TestServeALargeMetricsAnswer -timeout 0 &
//	/usr/bin/time -f '%M KB %U s' poolsolve $(cat /tmp/lg/args | sed 1s/^/catalog/) ...
func TestServeALargeMetricsAnswer(t *testing.T) {
	dir := os.Getenv("POOLSOLVE_LARGE_GATEWAY")
	if dir == "" {
		t.Skip("set POOLSOLVE_LARGE_GATEWAY=DIR to serve a 31 MB metrics answer for measuring")
	}
	capture, err := os.ReadFile(filepath.Join("..", "lloom", "testdata", "lloom-gateway-0.2.3", "metrics.json"))
	if err != nil {
		t.Fatal(err)
	}
	big, err := bigmetrics.Grow(capture, 30<<20)
	if err != nil {
		t.Fatal(err)
	}
	var grown map[string]any
	if err := json.Unmarshal(big, &grown); err != nil {
		t.Fatal(err)
	}
	f := newLiveFleet(t, "", newerGateway, func(_, _, metrics map[string]any) {
		clear(metrics)
		for k, v := range grown {
			metrics[k] = v
		}
	})
	grown = nil
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// The command name is the first line, for the caller to replace.
	args := f.args("COMMAND")
	if err := os.WriteFile(filepath.Join(dir, "args"), []byte(strings.Join(args, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("serving %d-byte metrics answers at %s", len(big), f.gw.URL)
	for end := time.Now().Add(time.Hour); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "stop")); err == nil {
			return
		}
	}
}
