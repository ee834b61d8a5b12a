package cli

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// TestALiveRunSplitsByTheReadingsBeforeIt reads spark-node-01's real
// answers at three readings (5 q38fn, then 40 and 15 enntity-presence)
// through --gateway, keeping one --demand-history: each run counts the
// entries its own reading adds, and says whether the split came from
// this reading alone or from the history of readings.
func TestALiveRunSplitsByTheReadingsBeforeIt(t *testing.T) {
	t.Setenv("LLOOM_CLUSTER_KEY", "test-key")
	hist := filepath.Join(t.TempDir(), "history.json")
	serving := func(reading string) func(cfg, cluster, metrics map[string]any) {
		return func(_, _, metrics map[string]any) {
			data, err := os.ReadFile("../catalog/testdata/lloom-0.2.3-federated-demand/" + reading + "-spark-node-01.json")
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			clear(metrics)
			maps.Copy(metrics, m)
		}
	}
	tests := []struct {
		name, reading            string
		q38fn, presence          float64
		q38fnSource, presenceSrc string
	}{
		{"the first reading counts its own recent entries", "reading1", 5, 0, "split:recent", ""},
		{"the second adds its new entries to the history", "reading2", 5, 40, "split:history", "split:history"},
		{"the third too", "reading3", 5, 55, "split:history", "split:history"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newLiveFleet(t, "test-key", olderGateway, serving(tc.reading))
			code, stdout, stderr := runCLI(t, f.args("catalog", "--format", "json", "--demand-history", hist)...)
			if code != ExitOK {
				t.Fatalf("catalog = %d: %s", code, stderr)
			}
			var out struct {
				Pool struct {
					Aliases []struct {
						ID           string  `json:"id"`
						Demand       float64 `json:"demand"`
						DemandSource string  `json:"demandSource"`
					} `json:"aliases"`
				} `json:"pool"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatal(err)
			}
			for _, a := range out.Pool.Aliases {
				want, src := -1.0, ""
				switch a.ID {
				case "q38fn":
					want, src = tc.q38fn, tc.q38fnSource
				case "enntity-presence":
					want, src = tc.presence, tc.presenceSrc
				}
				if want >= 0 && (a.Demand != want || a.DemandSource != src) {
					t.Errorf("%s: %v (%s), want %v (%s)", a.ID, a.Demand, a.DemandSource, want, src)
				}
			}
		})
	}
}
