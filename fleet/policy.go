package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/poolsolve/poolsolve/internal/jsonpos"
	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

// Policy is poolsolve's own policy: pool.toml, or the "policy" object of a
// fleet bundle (same keys). Keys left out keep DefaultPolicy's values.
// docs/policy.md documents every key.
type Policy struct {
	// HeadroomGb is kept free on every memory domain on top of LLooM's
	// admission budget.
	HeadroomGb float64 `json:"headroomGb" check:"min=0"`
	// LoadSecondsPerGb estimates a lane's load time from its memory when
	// neither the policy nor a benchmark says how long it takes.
	LoadSecondsPerGb float64 `json:"loadSecondsPerGb" check:"min=0"`
	// Cordons are nodes that take no lanes.
	Cordons []string `json:"cordons,omitempty" check:"nonempty"`

	Objective ObjectivePolicy `json:"objective"`
	Solver    SolverPolicy    `json:"solver"`
	External  ExternalPolicy  `json:"external"`
	// SLO bounds latency per alias id.
	SLO  map[string]SLO `json:"slo,omitempty"`
	Pins []Pin          `json:"pins,omitempty"`
	// Runtimes and Models hold facts per runtime id and model id.
	Runtimes map[string]RuntimePolicy `json:"runtimes,omitempty"`
	Models   map[string]ModelPolicy   `json:"models,omitempty"`
	Demand   DemandPolicy             `json:"demand"`
}

// ObjectivePolicy weighs the objective; see docs/objective.md.
type ObjectivePolicy struct {
	ColdFractionAuto      float64 `json:"coldFractionAuto" check:"min=0,max=1"`
	ColdFractionPreferred float64 `json:"coldFractionPreferred" check:"min=0,max=1"`
	ChurnWeight           float64 `json:"churnWeight" check:"min=0"`
	HysteresisMs          float64 `json:"hysteresisMs" check:"min=0"`
	LatencyUnitMs         float64 `json:"latencyUnitMs" check:"gt=0"`
	DefaultFirstTokenMs   float64 `json:"defaultFirstTokenMs" check:"min=0"`
}

// SolverPolicy bounds the search.
type SolverPolicy struct {
	TimeLimit Duration `json:"timeLimit"`
	Seed      uint64   `json:"seed" check:"min=0"`
}

// ExternalPolicy says whether cloud models may serve aliases first.
type ExternalPolicy struct {
	Allowed bool `json:"allowed"`
	// FirstTokenMs is assumed for external models without metrics.
	FirstTokenMs float64 `json:"firstTokenMs" check:"min=0"`
}

// SLO bounds one alias's expected latency; zero fields are unset.
type SLO struct {
	FirstTokenMs float64 `json:"firstTokenMs,omitempty" check:"min=0"`
	TotalMs      float64 `json:"totalMs,omitempty" check:"min=0"`
}

// RuntimePolicy holds facts about one runtime that LLooM does not record.
type RuntimePolicy struct {
	// LoadTimeMs is how long the lane takes to load; 0 means estimate it.
	LoadTimeMs float64 `json:"loadTimeMs,omitempty" check:"min=0"`
}

// ModelPolicy holds poolsolve's wishes about one model.
type ModelPolicy struct {
	// Required keeps the model covered even without demand.
	Required bool `json:"required,omitempty"`
}

// DemandPolicy says which metrics window is demand.
type DemandPolicy struct {
	Period string `json:"period" check:"enum=today|7d|30d|all"`
}

// Pin is one [[pins]] entry (or one config pool.pins element). A lane pin
// names a runtime, and optionally the nodes it must run on and its
// residency. A route pin names an alias and a route: a route profile name
// of the alias, or a model id that becomes the alias's sole member. Either
// kind may carry cordons, nodes that take no lanes while the pin holds.
type Pin struct {
	Runtime   string          `json:"runtime,omitempty" check:"nonempty"`
	Nodes     []string        `json:"nodes,omitempty" check:"nonempty"`
	Residency model.Residency `json:"residency,omitempty" check:"enum=always|preferred|auto"`
	Alias     string          `json:"alias,omitempty" check:"nonempty"`
	Route     string          `json:"route,omitempty" check:"nonempty"`
	Cordons   []string        `json:"cordons,omitempty" check:"nonempty"`
	// Origin says where the pin was written, for messages: "policy
	// pins[0]" or "config pool.pins[1]". It names no file, so inputs read
	// from a bundle and from separate files compare equal.
	Origin string `json:"-"`
}

// IsRoute reports whether p is a route pin.
func (p Pin) IsRoute() bool { return p.Alias != "" }

// String writes the pin the way an operator reads it, e.g. `runtime
// qwen3-embedding-4b on spark-node-03 always` or `alias q38fn route
// standalone, cordon spark-node-02`.
func (p Pin) String() string {
	var parts []string
	switch {
	case p.IsRoute():
		parts = append(parts, "alias "+p.Alias+" route "+p.Route)
	case p.Runtime != "":
		s := "runtime " + p.Runtime
		if len(p.Nodes) > 0 {
			s += " on " + strings.Join(p.Nodes, "+")
		}
		if p.Residency != "" {
			s += " " + string(p.Residency)
		}
		parts = append(parts, s)
	}
	if len(p.Cordons) > 0 {
		parts = append(parts, "cordon "+strings.Join(p.Cordons, ", "))
	}
	return strings.Join(parts, ", ")
}

// Duration is a Go duration written as a string ("5s", "1m30s").
type Duration time.Duration

func (d *Duration) decodeTree(t *tree, v any, path string) {
	s, ok := v.(string)
	if !ok {
		t.expected(v, path, `a duration such as "5s"`)
		return
	}
	x, err := time.ParseDuration(s)
	if err != nil || x <= 0 {
		t.expected(v, path, `a positive duration such as "5s" or "1m30s"`)
		return
	}
	*d = Duration(x)
}

// MarshalJSON writes the duration as pool.toml spells it.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// DefaultPolicy is the policy of an empty pool.toml; its Settings are
// model.DefaultSettings.
func DefaultPolicy() *Policy {
	s := model.DefaultSettings()
	return &Policy{
		HeadroomGb:       s.HeadroomGb,
		LoadSecondsPerGb: 2,
		Objective: ObjectivePolicy{
			ColdFractionAuto:      s.ColdFractionAuto,
			ColdFractionPreferred: s.ColdFractionPreferred,
			ChurnWeight:           s.ChurnWeight,
			HysteresisMs:          s.HysteresisMs,
			LatencyUnitMs:         s.LatencyUnitMs,
			DefaultFirstTokenMs:   s.DefaultFirstTokenMs,
		},
		Solver:   SolverPolicy{TimeLimit: Duration(5 * time.Second), Seed: 1},
		External: ExternalPolicy{Allowed: s.ExternalAllowed, FirstTokenMs: s.ExternalFirstTokenMs},
		Demand:   DemandPolicy{Period: "all"},
	}
}

// Settings converts the policy into the planner's settings.
func (p *Policy) Settings() model.Settings {
	return model.Settings{
		HeadroomGb:            p.HeadroomGb,
		ColdFractionAuto:      p.Objective.ColdFractionAuto,
		ColdFractionPreferred: p.Objective.ColdFractionPreferred,
		ChurnWeight:           p.Objective.ChurnWeight,
		HysteresisMs:          p.Objective.HysteresisMs,
		LatencyUnitMs:         p.Objective.LatencyUnitMs,
		DefaultFirstTokenMs:   p.Objective.DefaultFirstTokenMs,
		ExternalFirstTokenMs:  p.External.FirstTokenMs,
		ExternalAllowed:       p.External.Allowed,
	}
}

// LoadPolicy reads a pool.toml file; errors name it as path.
func LoadPolicy(path string) (*Policy, error) {
	data, err := lloom.ReadInput(path)
	if err != nil {
		return nil, err
	}
	return ParsePolicy(data, path)
}

// ParsePolicy reads pool.toml. It is strict: an unknown key is an error
// naming it (`pool.toml: unknown key "objective.churnWieght"`), and so is
// a value of the wrong type or out of range (`pool.toml:
// objective.coldFractionAuto: expected a number from 0 to 1, got number
// 1.5`). Errors are *lloom.InputError.
func ParsePolicy(data []byte, file string) (*Policy, error) {
	var doc map[string]any
	if _, err := toml.Decode(string(data), &doc); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			// The byte offset is exact; the parser's line can be one past
			// an error at a newline.
			line, col := jsonpos.Position(data, pe.Position.Start)
			return nil, &lloom.InputError{File: file, Line: line, Col: col, Msg: pe.Message}
		}
		return nil, &lloom.InputError{File: file, Msg: err.Error()}
	}
	return decodePolicy(doc, &tree{file: file, style: tomlPaths, data: data}, "")
}

// decodePolicy reads a policy from a generic TOML or JSON tree at path,
// over DefaultPolicy.
func decodePolicy(doc any, t *tree, path string) (*Policy, error) {
	p := DefaultPolicy()
	if doc == nil {
		return p, nil
	}
	if _, ok := doc.(map[string]any); !ok {
		t.expected(doc, path, t.object())
		return nil, t.err
	}
	t.decode(doc, path, reflect.ValueOf(p).Elem(), fieldTag{})
	if t.err != nil {
		return nil, t.err
	}
	p.normalize()
	pinsPath := t.field(path, "pins")
	for i := range p.Pins {
		p.Pins[i].Origin = fmt.Sprintf("policy pins[%d]", i)
		if err := checkPin(t, p.Pins[i], t.index(pinsPath, i)); err != nil {
			return nil, err
		}
	}
	for _, alias := range slices.Sorted(maps.Keys(p.SLO)) {
		if p.SLO[alias] == (SLO{}) {
			t.failf(t.key(t.field(path, "slo"), alias), "expected firstTokenMs or totalMs (or both)")
			return nil, t.err
		}
	}
	return p, nil
}

// normalize makes empty lists and tables nil, so that `cordons = []`
// reads like no cordons at all (and a bundle, which leaves them out, reads
// back the same).
func (p *Policy) normalize() {
	p.Cordons = nilIfEmpty(p.Cordons)
	p.Pins = nilIfEmpty(p.Pins)
	normalizePins(p.Pins)
	if len(p.SLO) == 0 {
		p.SLO = nil
	}
	if len(p.Runtimes) == 0 {
		p.Runtimes = nil
	}
	if len(p.Models) == 0 {
		p.Models = nil
	}
}

func normalizePins(pins []Pin) {
	for i := range pins {
		pins[i].Nodes = nilIfEmpty(pins[i].Nodes)
		pins[i].Cordons = nilIfEmpty(pins[i].Cordons)
	}
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

// checkPin checks that a pin is one kind or the other. t keeps its first
// problem, which is also returned.
func checkPin(t *tree, p Pin, path string) error {
	switch {
	case p.Runtime != "" && p.Alias != "":
		t.failf(path, "a pin names a runtime (lane pin) or an alias (route pin), not both")
	case p.Alias != "" && p.Route == "":
		t.failf(path, "route pin for alias %q needs route: a route profile name or a model id", p.Alias)
	case p.Alias != "" && (len(p.Nodes) > 0 || p.Residency != ""):
		t.failf(path, "nodes and residency belong to lane pins (runtime = ...), not to route pins")
	case p.Runtime != "" && p.Route != "":
		t.failf(path, "route belongs to route pins (alias = ...), not to lane pins")
	case p.Runtime == "" && p.Alias == "":
		t.failf(path, "expected runtime (a lane pin) or alias and route (a route pin)")
	case hasDuplicate(p.Nodes):
		t.failf(path, "nodes name a node twice")
	}
	if t.err != nil {
		return t.err
	}
	return nil
}

func hasDuplicate(s []string) bool {
	c := slices.Clone(s)
	slices.Sort(c)
	return len(slices.Compact(c)) != len(s)
}
