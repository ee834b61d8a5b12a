package lloom

import (
	"errors"
	"testing"
)

func TestParseMetricsReadsTheRealSnapshot(t *testing.T) {
	m, err := LoadMetrics(gateway + "metrics.json")
	if err != nil {
		t.Fatal(err)
	}
	emb := Bucket(m.Models, "Qwen/Qwen3-Embedding-4B")
	if emb == nil {
		t.Fatal("no bucket for Qwen/Qwen3-Embedding-4B")
	}
	perRequested := map[string]int{}
	for _, e := range m.Recent {
		perRequested[e.RequestedModel]++
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"it is a snapshot", m.Kind, MetricsSnapshot},
		{"the period is all", m.Period, "all"},
		{"41 requests in total", m.Totals.Requests, int64(41)},
		{"the embedding model served 20 requests", emb.Requests, int64(20)},
		{"its average duration is read", deref(emb.AvgDurationMs), 52.95},
		{"its average first content is read", deref(emb.AvgFirstContentMs), 52.55},
		{"without streams there is no decode rate", emb.DecodeTokensPerSecond, (*float64)(nil)},
		{"its last request succeeded", deref(emb.Last.OK), true},
		{"models are keyed by resolved id", len(m.Models), 3},
		{"routes are keyed by path", Bucket(m.Routes, "/v1/chat/completions").Requests, int64(21)},
		{"this gateway has no requested buckets", len(m.Requested), 0},
		{"recent holds every request", len(m.Recent), 41},
		{"the first request asked for q38fn", m.Recent[0].RequestedModel, "q38fn"},
		{"and was resolved to the pair model", m.Recent[0].Model, "qwen3.8-flash-next"},
		{"through the default target", m.Recent[0].Target, "default"},
		{"with no node", m.Recent[0].Node, ""},
		{"its status is read", deref(m.Recent[0].Status), 200},
		{"its usage is read", deref(m.Recent[0].Usage.OutputTokens), int64(20)},
		{"demand per requested id: q38fn", perRequested["q38fn"], 13},
		{"demand per requested id: enntity-presence", perRequested["enntity-presence"], 5},
		{"demand per requested id: embeddings", perRequested["embeddings"], 20},
		{"demand per requested id: the 27B directly", perRequested["qwen38-27b-nvfp4"], 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.name, tc.got, tc.want) })
	}
}

func TestParseMetricsReadsTheRealHistoryFile(t *testing.T) {
	m, err := LoadMetrics(gateway + "metrics-history.json")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "kind", m.Kind, MetricsHistory)
	check(t, "createdAt", m.CreatedAt, "2026-11-29T14:07:47.912Z")
	check(t, "totals", m.Totals.Requests, int64(41))
	check(t, "embedding bucket", Bucket(m.Models, "Qwen/Qwen3-Embedding-4B").Requests, int64(20))
	if len(m.Days) != 1 {
		t.Fatalf("days = %d, want 1", len(m.Days))
	}
	check(t, "date", m.Days[0].Date, "2026-11-29")
	check(t, "day totals", m.Days[0].Totals.Requests, int64(41))
	check(t, "day models", len(m.Days[0].Models), 3)
	check(t, "no recent entries", len(m.Recent), 0)
}

func TestDetectMetricsKindTellsTheTwoShapesApart(t *testing.T) {
	tests := []struct {
		name string
		doc  []byte
		want MetricsKind
	}{
		{"a /gateway/metrics answer", readFile(t, gateway+"metrics.json"), MetricsSnapshot},
		{"the history file", readFile(t, gateway+"metrics-history.json"), MetricsHistory},
		{"a snapshot without its object marker", []byte(`{"totals": {}}`), MetricsSnapshot},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := DetectMetricsKind(tc.doc)
			if err != nil || got != tc.want {
				t.Errorf("DetectMetricsKind = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if _, err := DetectMetricsKind(readFile(t, gateway+"node.json")); err == nil {
		t.Error("a node answer is not metrics")
	}
	var ge *GatewayError
	if _, err := DetectMetricsKind(readFile(t, gateway+"node-noauth.json")); !errors.As(err, &ge) {
		t.Errorf("error %v is not a *GatewayError", err)
	}
}

func TestParseMetricsReadsRequestedBuckets(t *testing.T) {
	snapshot := `{"object": "gateway.metrics", "totals": {"requests": 3},
		"requested": [{"id": "q38fn", "requests": 1840, "avgFirstContentMs": 910, "decodeTokensPerSecond": 40.1}]}`
	m, err := ParseMetrics([]byte(snapshot), "m.json")
	if err != nil {
		t.Fatal(err)
	}
	q := Bucket(m.Requested, "q38fn")
	check(t, "requests", q.Requests, int64(1840))
	check(t, "ttft", deref(q.AvgFirstContentMs), 910.0)
	check(t, "decode", deref(q.DecodeTokensPerSecond), 40.1)

	history := `{"version": 1, "metrics": {"totals": {}, "requested": [{"id": "embeddings", "requests": 22000}],
		"history": {"days": [{"date": "2026-09-20", "totals": {}, "requested": [{"id": "embeddings", "requests": 900}]}]}}}`
	m, err = ParseMetrics([]byte(history), "h.json")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "history requested", Bucket(m.Requested, "embeddings").Requests, int64(22000))
	check(t, "day requested", Bucket(m.Days[0].Requested, "embeddings").Requests, int64(900))
}

func TestParseMetricsDerivesMissingAverages(t *testing.T) {
	doc := `{"object": "gateway.metrics", "totals": {"requests": 4, "durationMs": 1000, "firstContentCount": 3, "firstContentMs": 100,
		"outputTokens": 500, "recentDecodeRates": [40, 41, 42.5]}, "models": [{"id": "idle"}]}`
	m, err := ParseMetrics([]byte(doc), "m.json")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "avgDurationMs", deref(m.Totals.AvgDurationMs), 250.0)
	check(t, "avgFirstContentMs", deref(m.Totals.AvgFirstContentMs), 33.33)
	check(t, "outputTokensPerSecond", deref(m.Totals.OutputTokensPerSecond), 500.0)
	check(t, "decodeTokensPerSecond", deref(m.Totals.DecodeTokensPerSecond), 41.17)
	check(t, "an idle bucket has no averages", m.Models[0].AvgDurationMs, (*float64)(nil))
}

func TestParseMetricsRefusesOtherVersionsAndShapes(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"a history file of another version", `{"version": 2, "metrics": {}}`, "m.json: $.version: expected metrics history version 1, got 2"},
		{"a document that is neither", `{"hello": 1}`, "m.json: $: not a metrics document: expected a /gateway/metrics answer or a metrics history file"},
		{"a count that is not a number", `{"totals": {"requests": "many"}}`, `m.json:1:25: $.totals.requests: expected an integer, got string "many"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMetrics([]byte(tc.doc), "m.json")
			if err == nil || err.Error() != tc.want {
				t.Errorf("error = %v, want %s", err, tc.want)
			}
		})
	}
}

func TestASnapshotSaysWhenItsCountsBegan(t *testing.T) {
	tests := []struct{ name, file, since string }{
		{"a gateway that keeps its metrics", "../catalog/testdata/lloom-0.2.3-federated-demand/reading3-spark-node-01.json", "2026-12-04T16:50:37.543Z"},
		{"a gateway restarted without metrics persistence", "../catalog/testdata/lloom-0.2.3-federated-demand/reading5-nopersist-spark-node-03.json", "2026-12-04T16:51:48.640Z"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := LoadMetrics(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			if m.PersistenceSince != tc.since {
				t.Errorf("persistence since %q, want %q", m.PersistenceSince, tc.since)
			}
		})
	}
}
