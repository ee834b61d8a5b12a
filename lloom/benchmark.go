package lloom

import (
	"encoding/json"
	"fmt"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// BenchmarkSuite is a benchmark-suite v1 document (benchmarks/community).
type BenchmarkSuite struct {
	File          string            `json:"-"`
	Schema        string            `json:"$schema,omitempty"`
	SchemaVersion int               `json:"schemaVersion,omitempty"`
	Profile       string            `json:"profile,omitempty"`
	ID            string            `json:"id,omitempty"`
	Name          string            `json:"name,omitempty"`
	Summary       string            `json:"summary,omitempty"`
	SubmittedAt   string            `json:"submittedAt,omitempty"`
	License       json.RawMessage   `json:"license,omitempty"`
	Source        json.RawMessage   `json:"source,omitempty"`
	Provenance    json.RawMessage   `json:"provenance,omitempty"`
	Methodology   map[string]any    `json:"methodology,omitempty"`
	Results       []BenchmarkResult `json:"results,omitempty"`
}

// BenchmarkResult is one measured result. LLooM matches results to a
// recipe by recipeId and recipeVersion, then by gatewayModel or model;
// hardware and concurrency are not part of that match, so a planner must
// filter on Machine and Workload itself.
type BenchmarkResult struct {
	ID            string           `json:"id,omitempty"`
	RecipeID      string           `json:"recipeId,omitempty"`
	RecipeVersion Version          `json:"recipeVersion,omitempty"`
	BackendID     string           `json:"backendId,omitempty"`
	Model         string           `json:"model,omitempty"`
	GatewayModel  string           `json:"gatewayModel,omitempty"`
	Machine       BenchmarkMachine `json:"machine"`
	// Settings is free-form (tensorParallelSize, maxNumSeqs, ...).
	Settings map[string]any   `json:"settings,omitempty"`
	Workload *Workload        `json:"workload,omitempty"`
	Metrics  BenchmarkMetrics `json:"metrics"`
	Ranking  *bool            `json:"x-rankingEligible,omitempty"`
	Notes    any              `json:"notes,omitempty"`
	// Extra keeps the members not named above.
	Extra map[string]any `json:"-" lloom:"rest"`
}

// BenchmarkMachine is the hardware a result was measured on.
type BenchmarkMachine struct {
	PlatformID      string   `json:"platformId,omitempty"`
	Chip            string   `json:"chip,omitempty"`
	MemoryGb        *float64 `json:"memoryGb,omitempty"`
	Accelerators    []string `json:"accelerators,omitempty"`
	NodeCount       *int     `json:"nodeCount,omitempty"`
	ClusterMemoryGb *float64 `json:"clusterMemoryGb,omitempty"`
}

// Workload is the traffic a result was measured under.
type Workload struct {
	Type         string `json:"type,omitempty"`
	Category     string `json:"category,omitempty"`
	Concurrency  *int   `json:"concurrency,omitempty"`
	PromptTokens *int   `json:"promptTokens,omitempty"`
	OutputTokens *int   `json:"outputTokens,omitempty"`
}

// BenchmarkMetrics are a result's measurements; Extra keeps the others
// (x-* and newer fields).
type BenchmarkMetrics struct {
	GenerationTokPerSec       *float64       `json:"generationTokPerSec,omitempty"`
	OutputThroughputTokPerSec *float64       `json:"outputThroughputTokPerSec,omitempty"`
	PrefillTokPerSec          *float64       `json:"prefillTokPerSec,omitempty"`
	TimeToFirstTokenMs        *float64       `json:"timeToFirstTokenMs,omitempty"`
	TotalTokPerSec            *float64       `json:"totalTokPerSec,omitempty"`
	ContextWindow             *int           `json:"contextWindow,omitempty"`
	PeakMemoryGb              *float64       `json:"peakMemoryGb,omitempty"`
	GenerationSeconds         *float64       `json:"generationSeconds,omitempty"`
	ImagesPerMinute           *float64       `json:"imagesPerMinute,omitempty"`
	Extra                     map[string]any `json:"-" lloom:"rest"`
}

// ParseBenchmarkSuite reads a benchmark-suite v1 document.
func ParseBenchmarkSuite(data []byte, file string) (*BenchmarkSuite, error) {
	s := &BenchmarkSuite{}
	if _, err := decodeDocument(data, file, s); err != nil {
		return nil, err
	}
	if s.SchemaVersion != 0 && s.SchemaVersion != 1 {
		return nil, &InputError{File: file, Path: jsonpos.Field(jsonpos.Root, "schemaVersion"), Msg: fmt.Sprintf("expected benchmark-suite schemaVersion 1, got %d", s.SchemaVersion)}
	}
	s.File = file
	return s, nil
}

// LoadBenchmarkSuite reads and parses the benchmark suite at path.
func LoadBenchmarkSuite(path string) (*BenchmarkSuite, error) {
	data, err := readInput(path)
	if err != nil {
		return nil, err
	}
	return ParseBenchmarkSuite(data, path)
}

// Validate checks that every result has the members LLooM requires (id,
// recipeId, backendId, model) and no negative measurement.
func (s *BenchmarkSuite) Validate() error {
	p := &problems{file: s.File}
	ids := map[string]bool{}
	for i, r := range s.Results {
		rp := jsonpos.Index(jsonpos.Field(jsonpos.Root, "results"), i)
		for _, req := range []struct{ name, val string }{
			{"id", r.ID}, {"recipeId", r.RecipeID}, {"backendId", r.BackendID}, {"model", r.Model},
		} {
			if req.val == "" {
				p.add(jsonpos.Field(rp, req.name), "missing")
			}
		}
		if r.ID != "" && ids[r.ID] {
			p.add(jsonpos.Field(rp, "id"), "duplicate result id %q", r.ID)
		}
		ids[r.ID] = true
		mp := jsonpos.Field(rp, "metrics")
		m := r.Metrics
		for _, f := range []struct {
			name string
			v    *float64
		}{
			{"generationTokPerSec", m.GenerationTokPerSec},
			{"outputThroughputTokPerSec", m.OutputThroughputTokPerSec},
			{"prefillTokPerSec", m.PrefillTokPerSec},
			{"timeToFirstTokenMs", m.TimeToFirstTokenMs},
			{"totalTokPerSec", m.TotalTokPerSec},
			{"peakMemoryGb", m.PeakMemoryGb},
			{"generationSeconds", m.GenerationSeconds},
			{"imagesPerMinute", m.ImagesPerMinute},
		} {
			nonNegativeGb(p, jsonpos.Field(mp, f.name), f.v)
		}
		if r.Workload != nil {
			atLeastOne(p, jsonpos.Field(jsonpos.Field(rp, "workload"), "concurrency"), r.Workload.Concurrency)
		}
	}
	return p.err()
}
