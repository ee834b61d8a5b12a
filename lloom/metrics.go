package lloom

import (
	"fmt"
	"math"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// MetricsKind says which metrics document a file is.
type MetricsKind string

const (
	// MetricsSnapshot is a `GET /gateway/metrics` answer.
	MetricsSnapshot MetricsKind = "snapshot"
	// MetricsHistory is the persisted history file (metrics-history.json).
	MetricsHistory MetricsKind = "history"
)

// Metrics holds either metrics document in one normalised shape. Fields
// that only one kind has are empty for the other: GeneratedAt, Period,
// Recent and Active come from snapshots; CreatedAt, UpdatedAt and Days
// from history files.
type Metrics struct {
	Kind MetricsKind
	File string

	GeneratedAt string
	Period      string
	CreatedAt   string
	UpdatedAt   string
	// PersistenceSince is a snapshot's persistence.since: when the counts
	// began. It changes at a restart only when the gateway keeps no
	// metrics history, and then the counts start over.
	PersistenceSince string

	Totals MetricsBucket
	// Models are keyed by the resolved model id; Routes by HTTP path.
	Models []MetricsBucket
	Routes []MetricsBucket
	// Requested are keyed by the id the client asked for (an alias or a
	// model). Only newer gateways and poolsolve write them; for older ones
	// demand per alias must come from Recent's RequestedModel.
	Requested []MetricsBucket

	Recent []MetricsEntry
	Active []MetricsEntry
	Days   []MetricsDay
}

// MetricsBucket is one aggregate. Counters absent from the file read as
// zero. The derived averages are nil when there is nothing to average;
// ParseMetrics fills them in when a file leaves them out.
type MetricsBucket struct {
	ID                     string        `json:"id,omitempty"`
	Requests               int64         `json:"requests"`
	Errors                 int64         `json:"errors"`
	Streams                int64         `json:"streams"`
	DurationMs             float64       `json:"durationMs"`
	ResponseBytes          int64         `json:"responseBytes"`
	FirstContentCount      int64         `json:"firstContentCount"`
	FirstContentMs         float64       `json:"firstContentMs"` // a sum
	MinFirstContentMs      *float64      `json:"minFirstContentMs,omitempty"`
	MaxFirstContentMs      *float64      `json:"maxFirstContentMs,omitempty"`
	GenerationDurationMs   float64       `json:"generationDurationMs"`
	DecodeTokens           int64         `json:"decodeTokens"`
	DecodeSamples          int64         `json:"decodeSamples"`
	EstimatedDecodeSamples int64         `json:"estimatedDecodeSamples"`
	RecentDecodeRates      []float64     `json:"recentDecodeRates,omitempty"`
	InputTokens            int64         `json:"inputTokens"`
	OutputTokens           int64         `json:"outputTokens"`
	TotalTokens            int64         `json:"totalTokens"`
	Last                   *MetricsEntry `json:"last,omitempty"`

	AvgDurationMs *float64 `json:"avgDurationMs,omitempty"`
	// AvgFirstContentMs is the time-to-first-token proxy.
	AvgFirstContentMs     *float64 `json:"avgFirstContentMs,omitempty"`
	OutputTokensPerSecond *float64 `json:"outputTokensPerSecond,omitempty"`
	// DecodeTokensPerSecond is the mean of the last streaming decode rates;
	// nil without streaming samples.
	DecodeTokensPerSecond       *float64 `json:"decodeTokensPerSecond,omitempty"`
	ActiveDecodeTokensPerSecond *float64 `json:"activeDecodeTokensPerSecond,omitempty"`
	ActiveDecodeRateEstimated   *bool    `json:"activeDecodeRateEstimated,omitempty"`
}

// MetricsEntry is one request (recent[], active[]) or a bucket's `last`.
type MetricsEntry struct {
	ID             string   `json:"id,omitempty"`
	At             string   `json:"at,omitempty"`
	Route          string   `json:"route,omitempty"`
	Model          string   `json:"model,omitempty"`
	RequestedModel string   `json:"requestedModel,omitempty"`
	UpstreamModel  string   `json:"upstreamModel,omitempty"`
	Kind           string   `json:"kind,omitempty"`
	Backend        string   `json:"backend,omitempty"`
	Runtime        string   `json:"runtime,omitempty"`
	Target         string   `json:"target,omitempty"`
	Node           string   `json:"node,omitempty"`
	Status         *int     `json:"status,omitempty"` // 499 = client disconnect
	OK             *bool    `json:"ok,omitempty"`
	Stream         bool     `json:"stream,omitempty"`
	DurationMs     *float64 `json:"durationMs,omitempty"`
	FirstContentMs *float64 `json:"firstContentMs,omitempty"`
	LastContentMs  *float64 `json:"lastContentMs,omitempty"`
	ResponseBytes  *int64   `json:"responseBytes,omitempty"`
	RequestBytes   *int64   `json:"requestBytes,omitempty"`
	OutputChars    *int64   `json:"outputChars,omitempty"`
	Usage          *Usage   `json:"usage,omitempty"`
	Error          Message  `json:"error,omitempty"`
	RequestClass   string   `json:"requestClass,omitempty"`
	QueueWaitMs    *float64 `json:"queueWaitMs,omitempty"`
}

// Usage is a request's token usage.
type Usage struct {
	InputTokens  *int64 `json:"input_tokens,omitempty"`
	OutputTokens *int64 `json:"output_tokens,omitempty"`
	TotalTokens  *int64 `json:"total_tokens,omitempty"`
}

// MetricsDay is one day of the history file.
type MetricsDay struct {
	Date      string          `json:"date,omitempty"` // YYYY-MM-DD
	Totals    MetricsBucket   `json:"totals"`
	Models    []MetricsBucket `json:"models,omitempty"`
	Routes    []MetricsBucket `json:"routes,omitempty"`
	Requested []MetricsBucket `json:"requested,omitempty"`
}

type metricsSnapshotWire struct {
	Object      string             `json:"object"`
	GeneratedAt string             `json:"generatedAt"`
	Period      string             `json:"period"`
	Totals      MetricsBucket      `json:"totals"`
	Models      []MetricsBucket    `json:"models"`
	Routes      []MetricsBucket    `json:"routes"`
	Requested   []MetricsBucket    `json:"requested"`
	Recent      []MetricsEntry     `json:"recent"`
	Active      []MetricsEntry     `json:"active"`
	Persistence MetricsPersistence `json:"persistence"`
}

// MetricsPersistence is a snapshot's persistence block.
type MetricsPersistence struct {
	Enabled *bool  `json:"enabled,omitempty"`
	Scope   string `json:"scope,omitempty"`
	Since   string `json:"since,omitempty"`
}

type metricsHistoryWire struct {
	Version   int    `json:"version"`
	CreatedAt string `json:"createdAt"`
	UpdatedAt string `json:"updatedAt"`
	Metrics   struct {
		Totals    MetricsBucket   `json:"totals"`
		Models    []MetricsBucket `json:"models"`
		Routes    []MetricsBucket `json:"routes"`
		Requested []MetricsBucket `json:"requested"`
		History   struct {
			Days []MetricsDay `json:"days"`
		} `json:"history"`
	} `json:"metrics"`
}

// DetectMetricsKind says whether data is a metrics snapshot or a history
// file, without decoding it further.
func DetectMetricsKind(data []byte) (MetricsKind, error) {
	tree, err := parseTree(data, "")
	if err != nil {
		return "", err
	}
	return metricsKind(tree, "")
}

func metricsKind(tree *jsonpos.Value, file string) (MetricsKind, error) {
	if g := gatewayError(tree, file); g != nil {
		return "", g
	}
	if m := tree.Get("metrics"); m != nil && m.Kind == jsonpos.Object && tree.Get("version") != nil {
		return MetricsHistory, nil
	}
	if o := tree.Get("object"); o != nil && o.Kind == jsonpos.String && o.Text == "gateway.metrics" {
		return MetricsSnapshot, nil
	}
	if tree.Get("totals") != nil || tree.Get("generatedAt") != nil {
		return MetricsSnapshot, nil
	}
	return "", &InputError{File: file, Path: jsonpos.Root, Msg: "not a metrics document: expected a /gateway/metrics answer or a metrics history file"}
}

// ParseMetrics reads a `/gateway/metrics` answer or a metrics history file
// (see DetectMetricsKind) into one Metrics. An error envelope comes back
// as a *GatewayError. Sound documents are decoded without a positioned
// tree (see parseMetricsFast); the tree is built only to word an error.
func ParseMetrics(data []byte, file string) (*Metrics, error) {
	if m, ok := parseMetricsFast(data, file); ok {
		return m, nil
	}
	return parseMetricsTree(data, file)
}

// parseMetricsTree is ParseMetrics through the positioned tree, the
// reference the fast path must agree with.
func parseMetricsTree(data []byte, file string) (*Metrics, error) {
	tree, err := parseTree(data, file)
	if err != nil {
		return nil, err
	}
	k, err := metricsKind(tree, file)
	if err != nil {
		return nil, err
	}
	m := &Metrics{Kind: k, File: file}
	switch k {
	case MetricsSnapshot:
		var w metricsSnapshotWire
		if err := decodeTree(tree, data, file, &w); err != nil {
			return nil, err
		}
		m.GeneratedAt, m.Period = w.GeneratedAt, w.Period
		m.Totals, m.Models, m.Routes, m.Requested = w.Totals, w.Models, w.Routes, w.Requested
		m.Recent, m.Active = w.Recent, w.Active
		m.PersistenceSince = w.Persistence.Since
	case MetricsHistory:
		var w metricsHistoryWire
		if err := decodeTree(tree, data, file, &w); err != nil {
			return nil, err
		}
		if w.Version != 1 {
			return nil, &InputError{File: file, Path: jsonpos.Field(jsonpos.Root, "version"), Msg: fmt.Sprintf("expected metrics history version 1, got %d", w.Version)}
		}
		m.CreatedAt, m.UpdatedAt = w.CreatedAt, w.UpdatedAt
		mw := w.Metrics
		m.Totals, m.Models, m.Routes, m.Requested = mw.Totals, mw.Models, mw.Routes, mw.Requested
		m.Days = mw.History.Days
	}
	m.derive()
	return m, nil
}

// LoadMetrics reads and parses a saved metrics snapshot or history file.
func LoadMetrics(path string) (*Metrics, error) {
	data, err := readInput(path)
	if err != nil {
		return nil, err
	}
	return ParseMetrics(data, path)
}

func (m *Metrics) derive() {
	m.Totals.derive()
	for _, list := range [][]MetricsBucket{m.Models, m.Routes, m.Requested} {
		for i := range list {
			list[i].derive()
		}
	}
	for d := range m.Days {
		day := &m.Days[d]
		day.Totals.derive()
		for _, list := range [][]MetricsBucket{day.Models, day.Routes, day.Requested} {
			for i := range list {
				list[i].derive()
			}
		}
	}
}

// derive fills in the averages LLooM computes when it serves a bucket, for
// files that only carry the sums.
func (b *MetricsBucket) derive() {
	if b.AvgDurationMs == nil && b.Requests > 0 {
		b.AvgDurationMs = ptr(round2(b.DurationMs / float64(b.Requests)))
	}
	if b.AvgFirstContentMs == nil && b.FirstContentCount > 0 {
		b.AvgFirstContentMs = ptr(round2(b.FirstContentMs / float64(b.FirstContentCount)))
	}
	if b.OutputTokensPerSecond == nil && b.DurationMs > 0 {
		b.OutputTokensPerSecond = ptr(round2(float64(b.OutputTokens) / (b.DurationMs / 1000)))
	}
	if b.DecodeTokensPerSecond == nil && len(b.RecentDecodeRates) > 0 {
		sum := 0.0
		for _, r := range b.RecentDecodeRates {
			sum += r
		}
		b.DecodeTokensPerSecond = ptr(round2(sum / float64(len(b.RecentDecodeRates))))
	}
}

func round2(f float64) float64 {
	r := math.Round(f*100) / 100
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return f
	}
	return r
}

// Bucket returns the bucket with the given id from list, or nil.
func Bucket(list []MetricsBucket, id string) *MetricsBucket {
	for i := range list {
		if list[i].ID == id {
			return &list[i]
		}
	}
	return nil
}
