package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/internal/bigmetrics"
)

// bigConfig is the example fleet's config.json with one alias "big" of
// members n unknown ids, then n repeats of one (each repeat a problem),
// and a chain of chain aliases, each holding a model and the next alias
// (the last holds the model twice: one problem, so that validate stops
// where the checks end).
func bigConfig(t testing.TB, members, chain int) string {
	t.Helper()
	data, err := os.ReadFile("../examples/spark-fleet/config.json")
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	model := cfg["models"].([]any)[0].(map[string]any)["id"].(string)
	aliases, _ := cfg["aliases"].(map[string]any)
	if aliases == nil {
		aliases = map[string]any{}
		cfg["aliases"] = aliases
	}
	if members > 0 {
		m := make([]string, 0, 2*members)
		for i := range members {
			m = append(m, fmt.Sprintf("unknown-%d", i))
		}
		for range members {
			m = append(m, "unknown-0")
		}
		aliases["big"] = map[string]any{"members": m}
	}
	for i := range chain {
		next := model
		if i+1 < chain {
			next = fmt.Sprintf("chain-%d", i+1)
		}
		aliases[fmt.Sprintf("chain-%d", i)] = map[string]any{"members": []string{model, next}}
	}
	out, err := json.MarshalIndent(cfg, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(p, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// cpu runs validate on config and returns the CPU time it took: on a
// shared machine it says more than wall time.
func cpu(t *testing.T, config string, members, chain int) float64 {
	t.Helper()
	before, ok := bigmetrics.CPUTime()
	if !ok {
		t.Skip("no CPU time on this platform")
	}
	code, _, errOut := run(t, "validate", "--config", config)
	after, _ := bigmetrics.CPUTime()
	wantProblems := 2 * members
	if chain > 0 {
		wantProblems++
	}
	if code != ExitBadInput || !strings.Contains(errOut, fmt.Sprintf("%d problem(s) in the inputs", wantProblems)) {
		t.Fatalf("validate exited %d, want 2 with %d problems; stderr ends %q", code, wantProblems, errOut[max(0, len(errOut)-300):])
	}
	return (after - before).Seconds()
}

func TestValidationTimeGrowsAboutLinearlyWithTheInput(t *testing.T) {
	if testing.Short() {
		t.Skip("validates inputs of 16k and 128k members")
	}
	for _, tc := range []struct {
		name           string
		members, chain int
	}{
		// Each unknown member and each repeat is one problem.
		{"one alias with many unknown and repeated members", 2000, 0},
		// Nested aliases are expanded once each, not once per alias above.
		{"a long chain of nested aliases", 0, 2000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			small := bigConfig(t, tc.members, tc.chain)
			large := bigConfig(t, 8*tc.members, 8*tc.chain)
			cpu(t, small, tc.members, tc.chain) // warm up
			ts := cpu(t, small, tc.members, tc.chain)
			// Quadratic work takes seconds already at this size.
			if ts > 3 {
				t.Fatalf("validating %d members and %d nested aliases took %.1f s of CPU", 2*tc.members, tc.chain, ts)
			}
			tl := cpu(t, large, 8*tc.members, 8*tc.chain)
			// 8 times the input: n log n is about 10 times the time,
			// n squared 64 times; 25 leaves room for noise.
			if tl > 25*ts+0.2 {
				t.Errorf("8 times the input took %.1f times the CPU (%.2f s against %.2f s): worse than n log n", tl/ts, tl, ts)
			}
			t.Logf("%.3f s, 8 times the input %.3f s", ts, tl)
		})
	}
}

// BenchmarkValidateALargeFleet validates one alias of 100k members and
// a chain of 100k nested aliases: validation stays n log n.
func BenchmarkValidateALargeFleet(b *testing.B) {
	config := bigConfig(b, 50000, 100000)
	for b.Loop() {
		Run([]string{"poolsolve", "validate", "--config", config}, strings.NewReader(""), discard{}, discard{})
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
