package fleet

import (
	"bytes"
	"errors"
	"maps"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/lloom"
)

func TestDemandHistoryErrorsNameThePath(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"another schema", `{"schema":"x"}`, `h.json: $.schema: expected "poolsolve.demand-history/v2", got "x"`},
		{"a v1 history, which has no readings", `{"schema":"poolsolve.demand-history/v1","nodes":{"a":{"models":{"m":{"q":3}}}}}`, `$.schema: expected "poolsolve.demand-history/v2", got "poolsolve.demand-history/v1": a v1 history has no readings to split by; remove the file`},
		{"an unknown key", `{"schema":"poolsolve.demand-history/v2","nodez":{}}`, `unknown key "nodez"`},
		{"a count that is not a number", `{"schema":"poolsolve.demand-history/v2","nodes":{"a":{"models":{"m":{"requested":{"q":"3"}}}}}}`, `$.nodes["a"].models["m"].requested["q"]: expected a number`},
		{"a negative count", `{"schema":"poolsolve.demand-history/v2","nodes":{"a":{"models":{"m":{"requested":{"q":-1}}}}}}`, `$.nodes["a"].models["m"].requested["q"]: expected a count of requests (0 or more), got -1`},
		{"a negative uncounted", `{"schema":"poolsolve.demand-history/v2","nodes":{"a":{"models":{"m":{"uncounted":-2}}}}}`, `$.nodes["a"].models["m"].uncounted: expected a count of requests (0 or more), got -2`},
		{"a null model", `{"schema":"poolsolve.demand-history/v2","nodes":{"a":{"models":{"m":null}}}}`, `$.nodes["a"].models["m"]: expected an object`},
		{"not an object", `[]`, `h.json`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDemandHistory([]byte(tc.in), "h.json")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func metricsOf(t *testing.T, doc string) *lloom.Metrics {
	t.Helper()
	m, err := lloom.ParseMetrics([]byte(doc), "m.json")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestAReadingCountsOnlyTheRequestsItsCountsGrewBy(t *testing.T) {
	first := metricsOf(t, `{"object":"gateway.metrics","generatedAt":"2026-11-29T14:00:03Z","persistence":{"since":"s1"},"models":[{"id":"m","requests":5,"errors":1}],"recent":[
		{"id":"conn_1","at":"2026-11-29T14:00:00Z","model":"m","requestedModel":"a","status":200,"ok":true},
		{"id":"conn_2","at":"2026-11-29T14:00:01Z","model":"m","requestedModel":"b","status":200,"ok":true},
		{"id":"conn_3","at":"2026-11-29T14:00:02Z","model":"m","requestedModel":"a","status":503,"ok":false}]}`)
	// 10 more answered, of which recent[] shows the last 2 (and conn_2 again).
	second := metricsOf(t, `{"object":"gateway.metrics","generatedAt":"2026-11-29T15:00:00Z","persistence":{"since":"s1"},"models":[{"id":"m","requests":15,"errors":1}],"recent":[
		{"id":"conn_2","at":"2026-11-29T14:00:01Z","model":"m","requestedModel":"b","status":200,"ok":true},
		{"id":"conn_14","at":"2026-11-29T14:59:00Z","model":"m","requestedModel":"b","node":"n2","status":200,"ok":true},
		{"id":"conn_15","at":"2026-11-29T14:59:01Z","model":"m","requestedModel":"m","status":200,"ok":true}]}`)
	// A restart without persistence: counts start over.
	restarted := metricsOf(t, `{"object":"gateway.metrics","generatedAt":"2026-11-29T16:00:00Z","persistence":{"since":"s2"},"models":[{"id":"m","requests":1}],"recent":[
		{"id":"conn_1","at":"2026-11-29T15:59:00Z","model":"m","requestedModel":"a","status":200,"ok":true}]}`)
	// The same, with more requests since the restart than before it: only
	// persistence.since tells that the counts started over.
	busy := metricsOf(t, `{"object":"gateway.metrics","generatedAt":"2026-11-29T16:00:00Z","persistence":{"since":"s2"},"models":[{"id":"m","requests":20}],"recent":[
		{"id":"conn_1","at":"2026-11-29T15:59:00Z","model":"m","requestedModel":"a","status":200,"ok":true}]}`)
	tests := []struct {
		name      string
		readings  []*lloom.Metrics
		counted   int
		requested map[string]float64
		targets   map[string]float64
		uncounted float64
		over      []string
	}{
		{"a first reading whose recent entries show every answered request", []*lloom.Metrics{first}, 2, map[string]float64{"a": 1, "b": 1}, nil, 2, nil},
		{"the same answer read twice adds nothing", []*lloom.Metrics{first, first}, 0, map[string]float64{"a": 1, "b": 1}, nil, 2, nil},
		{"a second reading keeps what its entries do not show apart", []*lloom.Metrics{first, second}, 2, map[string]float64{"a": 1, "b": 2, "m": 1}, map[string]float64{"n2": 1}, 10, nil},
		{"a gateway whose counts started over starts its history over", []*lloom.Metrics{first, second, restarted}, 1, map[string]float64{"a": 1}, nil, 0, []string{"m"}},
		{"a new persistence.since starts the history over though the counts grew", []*lloom.Metrics{first, second, busy}, 1, map[string]float64{"a": 1}, nil, 19, []string{"m"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := &DemandHistory{}
			// The first reading of "m" counts 4 answered requests (5 less
			// one error): 2 shown, 2 not (before the reading began).
			var rec Recorded
			for _, m := range tc.readings {
				rec = h.Record("n1", m)
			}
			mh := h.Nodes["n1"].Models["m"]
			if rec.Counted != tc.counted || !maps.Equal(mh.Requested, tc.requested) || !maps.Equal(mh.Targets, tc.targets) || mh.Uncounted != tc.uncounted {
				t.Errorf("counted %d, requested %v, targets %v, uncounted %v; want %d, %v, %v, %v", rec.Counted, mh.Requested, mh.Targets, mh.Uncounted, tc.counted, tc.requested, tc.targets, tc.uncounted)
			}
			if len(rec.StartedOver) != len(tc.over) || len(tc.over) > 0 && rec.StartedOver[0] != tc.over[0] {
				t.Errorf("started over %v, want %v", rec.StartedOver, tc.over)
			}
			if got := mh.Total(); got != float64(tc.readings[len(tc.readings)-1].Models[0].Requests-tc.readings[len(tc.readings)-1].Models[0].Errors) {
				t.Errorf("the history holds %v requests, not the gateway's count", got)
			}
		})
	}
}

func TestAPeriodsCountsAreNotRecorded(t *testing.T) {
	h := &DemandHistory{}
	m := metricsOf(t, `{"object":"gateway.metrics","period":"7d","models":[{"id":"m","requests":5}]}`)
	if rec := h.Record("n1", m); rec.Counted != 0 || h.Nodes != nil {
		t.Errorf("a 7d window was recorded: %+v", h)
	}
}

func TestDemandHistoryRoundTrips(t *testing.T) {
	h := &DemandHistory{}
	h.Record("n1", metricsOf(t, `{"object":"gateway.metrics","generatedAt":"2026-11-29T14:00:03Z","models":[{"id":"m","requests":3}],"recent":[
		{"id":"conn_1","at":"2026-11-29T14:00:00Z","model":"m","requestedModel":"a","node":"n2","status":200,"ok":true}]}`))
	data, err := h.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := ParseDemandHistory(data, "h.json")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := back.Marshal()
	if !bytes.Equal(data, again) {
		t.Errorf("the history does not round-trip:\n%s\n%s", data, again)
	}
	clone, _ := h.Clone().Marshal()
	if !bytes.Equal(data, clone) {
		t.Errorf("the clone differs:\n%s\n%s", data, clone)
	}
}

func FuzzParseDemandHistory(f *testing.F) {
	f.Add([]byte(`{"schema":"poolsolve.demand-history/v2","nodes":{"a":{"at":"t","since":"s","seen":["t conn_1"],"models":{"m":{"requested":{"q":3},"targets":{"n":1},"uncounted":2}}}}}`))
	f.Add([]byte(`{"schema":"poolsolve.demand-history/v2"}`))
	f.Add([]byte(`{"schema":"poolsolve.demand-history/v2","nodes":{"a":null}}`))
	f.Add([]byte(`{"schema":"poolsolve.demand-history/v1","nodes":{"a":{"models":{"m":{"q":3}}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseDemandHistory(data, "fuzz.json")
		if err != nil {
			var ie *lloom.InputError
			if !errors.As(err, &ie) || ie.File != "fuzz.json" {
				t.Fatalf("error %v (%T) does not name the file", err, err)
			}
			return
		}
		out, err := h.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseDemandHistory(out, "again.json"); err != nil {
			t.Fatalf("a history it read does not read back: %v\n%s", err, out)
		}
	})
}
