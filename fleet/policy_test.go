package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

// fullPolicy sets every key docs/policy.md documents, none to its default.
const fullPolicy = `
headroomGb = 6
loadSecondsPerGb = 1.5
cordons = ["spark-node-02"]

[objective]
coldFractionAuto = 0.3
coldFractionPreferred = 0.05
churnWeight = 2
hysteresisMs = 60000
latencyUnitMs = 500
defaultFirstTokenMs = 1200

[solver]
timeLimit = "1m30s"
seed = 7

[external]
allowed = false
firstTokenMs = 1800

[slo."q38fn"]
firstTokenMs = 2000
totalMs = 30000

[[pins]]
runtime = "qwen3-embedding-4b"
nodes = ["spark-node-03"]
residency = "always"

[[pins]]
alias = "q38fn"
route = "standalone"
cordons = ["spark-node-01"]

[runtimes."qwen38-27b-nvfp4"]
loadTimeMs = 90000

[models."Qwen/Qwen3-Embedding-4B"]
required = true

[demand]
period = "7d"
`

func TestParsePolicyReadsEveryKey(t *testing.T) {
	got, err := ParsePolicy([]byte(fullPolicy), "pool.toml")
	if err != nil {
		t.Fatalf("ParsePolicy: %v", err)
	}
	want := &Policy{
		HeadroomGb:       6,
		LoadSecondsPerGb: 1.5,
		Cordons:          []string{"spark-node-02"},
		Objective: ObjectivePolicy{
			ColdFractionAuto: 0.3, ColdFractionPreferred: 0.05, ChurnWeight: 2,
			HysteresisMs: 60000, LatencyUnitMs: 500, DefaultFirstTokenMs: 1200,
		},
		Solver:   SolverPolicy{TimeLimit: Duration(90 * time.Second), Seed: 7},
		External: ExternalPolicy{Allowed: false, FirstTokenMs: 1800},
		SLO:      map[string]SLO{"q38fn": {FirstTokenMs: 2000, TotalMs: 30000}},
		Pins: []Pin{
			{Runtime: "qwen3-embedding-4b", Nodes: []string{"spark-node-03"}, Residency: model.Always, Origin: "policy pins[0]"},
			{Alias: "q38fn", Route: "standalone", Cordons: []string{"spark-node-01"}, Origin: "policy pins[1]"},
		},
		Runtimes: map[string]RuntimePolicy{"qwen38-27b-nvfp4": {LoadTimeMs: 90000}},
		Models:   map[string]ModelPolicy{"Qwen/Qwen3-Embedding-4B": {Required: true}},
		Demand:   DemandPolicy{Period: "7d"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParsePolicy =\n%+v\nwant\n%+v", got, want)
	}
	s := got.Settings()
	wantSettings := model.Settings{
		HeadroomGb: 6, ColdFractionAuto: 0.3, ColdFractionPreferred: 0.05, ChurnWeight: 2, HysteresisMs: 60000,
		LatencyUnitMs: 500, DefaultFirstTokenMs: 1200, ExternalFirstTokenMs: 1800, ExternalAllowed: false,
	}
	if s != wantSettings {
		t.Errorf("Settings() = %+v, want %+v", s, wantSettings)
	}
}

func TestAnEmptyPoolTomlIsTheDefaultPolicy(t *testing.T) {
	for _, doc := range []string{"", "# nothing set\n", "[objective]\n[solver]\n"} {
		p, err := ParsePolicy([]byte(doc), "pool.toml")
		if err != nil {
			t.Fatalf("ParsePolicy(%q): %v", doc, err)
		}
		if !reflect.DeepEqual(p, DefaultPolicy()) {
			t.Errorf("ParsePolicy(%q) = %+v, want DefaultPolicy()", doc, p)
		}
	}
}

func TestTheDefaultPolicyGivesTheModelsDefaultSettings(t *testing.T) {
	if got, want := DefaultPolicy().Settings(), model.DefaultSettings(); got != want {
		t.Errorf("DefaultPolicy().Settings() = %+v, want %+v", got, want)
	}
	p := DefaultPolicy()
	if p.LoadSecondsPerGb != 2 || time.Duration(p.Solver.TimeLimit) != 5*time.Second || p.Solver.Seed != 1 || p.Demand.Period != "all" {
		t.Errorf("DefaultPolicy() = %+v, want loadSecondsPerGb 2, timeLimit 5s, seed 1, period all", p)
	}
}

func TestParsePolicyErrorsNameTheKeyAndTheExpectation(t *testing.T) {
	tests := []struct {
		name string
		toml string
		want string
	}{
		{"a misspelt key is named in full, at its line, with the key meant",
			"[objective]\nchurnWieght = 2\n",
			`pool.toml:2:1: unknown key "objective.churnWieght"; did you mean "churnWeight"?`},
		{"an unknown table is named at its header",
			"[solvr]\nseed = 2\n",
			`pool.toml:1:1: unknown key "solvr"; did you mean "solver"?`},
		{"an unknown key inside a pin names the pin and its line",
			"[[pins]]\nruntime = \"a\"\n[[pins]]\n  runtme = \"b\"\n",
			`pool.toml:4:3: unknown key "pins[1].runtme"; did you mean "runtime"?`},
		{"a dotted key is found on its line",
			"headroomGb = 4\n\nobjective.churnWieght = 2\n",
			`pool.toml:3:1: unknown key "objective.churnWieght"; did you mean "churnWeight"?`},
		{"a key far from every known one gets no suggestion",
			"[objective]\nzzz = 1\n",
			`pool.toml:2:1: unknown key "objective.zzz"`},
		{"a negative headroom names the bound",
			"headroomGb = -4\n",
			`pool.toml: headroomGb: expected a number >= 0, got number -4`},
		{"a cold fraction above one names the range",
			"[objective]\ncoldFractionAuto = 1.5\n",
			`pool.toml: objective.coldFractionAuto: expected a number from 0 to 1, got number 1.5`},
		{"a zero latency unit is refused, it divides",
			"[objective]\nlatencyUnitMs = 0\n",
			`pool.toml: objective.latencyUnitMs: expected a number > 0, got number 0`},
		{"a string where a number belongs is quoted",
			"[objective]\nchurnWeight = \"high\"\n",
			`pool.toml: objective.churnWeight: expected a number >= 0, got string "high"`},
		{"infinity is not a number here",
			"headroomGb = inf\n",
			`pool.toml: headroomGb: expected a number >= 0, got number +Inf`},
		{"a duration needs a unit",
			"[solver]\ntimeLimit = \"5\"\n",
			`pool.toml: solver.timeLimit: expected a positive duration such as "5s" or "1m30s", got string "5"`},
		{"a duration is a string",
			"[solver]\ntimeLimit = 5\n",
			`pool.toml: solver.timeLimit: expected a duration such as "5s", got number 5`},
		{"a negative seed is refused",
			"[solver]\nseed = -1\n",
			`pool.toml: solver.seed: expected an integer >= 0, got number -1`},
		{"a fractional seed is refused",
			"[solver]\nseed = 1.5\n",
			`pool.toml: solver.seed: expected an integer >= 0, got number 1.5`},
		{"allowed is true or false",
			"[external]\nallowed = \"yes\"\n",
			`pool.toml: external.allowed: expected true or false, got string "yes"`},
		{"a residency outside the three is refused",
			"[[pins]]\nruntime = \"a\"\nresidency = \"warm\"\n",
			`pool.toml: pins[0].residency: expected "always", "preferred" or "auto", got string "warm"`},
		{"a pin must be one kind",
			"[[pins]]\nruntime = \"a\"\nalias = \"b\"\nroute = \"c\"\n",
			`pool.toml: pins[0]: a pin names a runtime (lane pin) or an alias (route pin), not both`},
		{"a route pin needs a route",
			"[[pins]]\nalias = \"q38fn\"\n",
			`pool.toml: pins[0]: route pin for alias "q38fn" needs route: a route profile name or a model id`},
		{"a route pin takes no residency",
			"[[pins]]\nalias = \"q38fn\"\nroute = \"cloud\"\nresidency = \"always\"\n",
			`pool.toml: pins[0]: nodes and residency belong to lane pins (runtime = ...), not to route pins`},
		{"a lane pin takes no route",
			"[[pins]]\nruntime = \"a\"\nroute = \"cloud\"\n",
			`pool.toml: pins[0]: route belongs to route pins (alias = ...), not to lane pins`},
		{"a pin with only cordons points at both kinds",
			"[[pins]]\ncordons = [\"n\"]\n",
			`pool.toml: pins[0]: expected runtime (a lane pin) or alias and route (a route pin)`},
		{"a pin naming a node twice is refused",
			"[[pins]]\nruntime = \"a\"\nnodes = [\"n\", \"n\"]\n",
			`pool.toml: pins[0]: nodes name a node twice`},
		{"an empty node name is refused",
			"cordons = [\"\"]\n",
			`pool.toml: cordons[0]: expected a non-empty string, got string ""`},
		{"pins must be an array of tables",
			"pins = 3\n",
			`pool.toml: pins: expected an array, got number 3`},
		{"an SLO with no bound is refused",
			"[slo.q38fn]\n",
			`pool.toml: slo.q38fn: expected firstTokenMs or totalMs (or both)`},
		{"an SLO must be a table",
			"slo = 3\n",
			`pool.toml: slo: expected a table, got number 3`},
		{"a negative load time names the runtime",
			"[runtimes.\"qwen38-27b-nvfp4\"]\nloadTimeMs = -1\n",
			`pool.toml: runtimes.qwen38-27b-nvfp4.loadTimeMs: expected a number >= 0, got number -1`},
		{"a model id with a slash is quoted",
			"[models.\"Qwen/Qwen3-Embedding-4B\"]\nrequired = 1\n",
			`pool.toml: models."Qwen/Qwen3-Embedding-4B".required: expected true or false, got number 1`},
		{"a demand period outside the windows is refused",
			"[demand]\nperiod = \"1d\"\n",
			`pool.toml: demand.period: expected "today", "7d", "30d" or "all", got string "1d"`},
		{"a date is not a number",
			"headroomGb = 2026-11-29\n",
			`pool.toml: headroomGb: expected a number >= 0, got a date or time`},
		{"a TOML syntax error names line and column",
			"headroomGb = 4\n[objective\n",
			`pool.toml:2:11: expected '.' or ']' to end table name, but got '\n' instead`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParsePolicy([]byte(tc.toml), "pool.toml")
			if err == nil {
				t.Fatalf("ParsePolicy(%q) = nil error, want %q", tc.toml, tc.want)
			}
			var ie *lloom.InputError
			if !errors.As(err, &ie) {
				t.Errorf("error is %T, want *lloom.InputError", err)
			}
			if got := err.Error(); got != tc.want {
				t.Errorf("ParsePolicy error =\n  %s\nwant\n  %s", got, tc.want)
			}
		})
	}
}

func TestPolicyAsJSONReadsLikePoolToml(t *testing.T) {
	fromToml, err := ParsePolicy([]byte(fullPolicy), "pool.toml")
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(fromToml)
	if err != nil {
		t.Fatal(err)
	}
	fromJSON, err := parsePolicyJSON(data, "f.json", "$.policy")
	if err != nil {
		t.Fatalf("parsePolicyJSON(%s): %v", data, err)
	}
	if !reflect.DeepEqual(fromToml, fromJSON) {
		t.Errorf("the policy written as JSON reads back as\n%+v\nwant\n%+v", fromJSON, fromToml)
	}
	if !strings.Contains(string(data), `"timeLimit":"1m30s"`) {
		t.Errorf("timeLimit is not written the way pool.toml spells it: %s", data)
	}
}

func TestPolicyAsJSONNamesJSONPaths(t *testing.T) {
	tests := []struct {
		json, want string
	}{
		{`{"objective":{"churnWieght":1}}`, `f.json: $.policy.objective: unknown key "churnWieght"; did you mean "churnWeight"?`},
		{`{"slo":{"q38fn":{"firstTokenMs":-1}}}`, `f.json: $.policy.slo["q38fn"].firstTokenMs: expected a number >= 0, got number -1`},
		{`{"pins":[{"runtime":"a"},null]}`, `f.json: $.policy.pins[1]: expected a value, got null`},
		{`[]`, `f.json: $.policy: expected an object, got an array`},
		{`{"solver":{"seed":1e400}}`, `f.json: $.policy.solver.seed: expected an integer >= 0, got number 1e400`},
	}
	for _, tc := range tests {
		_, err := parsePolicyJSON([]byte(tc.json), "f.json", "$.policy")
		if err == nil || err.Error() != tc.want {
			t.Errorf("parsePolicyJSON(%s) = %v, want %s", tc.json, err, tc.want)
		}
	}
}

func TestAJSONNullKeepsTheDefault(t *testing.T) {
	p, err := parsePolicyJSON([]byte(`{"headroomGb":null,"objective":null}`), "f.json", "$.policy")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, DefaultPolicy()) {
		t.Errorf("nulls changed the policy: %+v", p)
	}
}

func TestPinStringReadsLikeThePin(t *testing.T) {
	tests := []struct {
		pin  Pin
		want string
	}{
		{Pin{Runtime: "qwen3-embedding-4b", Nodes: []string{"spark-node-03"}, Residency: model.Always}, "runtime qwen3-embedding-4b on spark-node-03 always"},
		{Pin{Runtime: "pair", Nodes: []string{"a", "b"}}, "runtime pair on a+b"},
		{Pin{Runtime: "x"}, "runtime x"},
		{Pin{Alias: "q38fn", Route: "standalone", Cordons: []string{"spark-node-01", "spark-node-02"}}, "alias q38fn route standalone, cordon spark-node-01, spark-node-02"},
	}
	for _, tc := range tests {
		if got := tc.pin.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", tc.pin, got, tc.want)
		}
	}
}

func FuzzLoadPolicy(f *testing.F) {
	f.Add([]byte(fullPolicy))
	f.Add([]byte("headroomGb = 4\n[slo.a]\nfirstTokenMs = 1\n"))
	f.Add([]byte("[[pins]]\nalias = \"a\"\nroute = \"b\"\n"))
	f.Add([]byte("[solver]\ntimeLimit = \"1h\"\nseed = 9007199254740991\n"))
	f.Add([]byte("x = [1, 2.5, \"s\", true, 1979-05-27]\n"))
	f.Add([]byte("[objectiv]\nchurnWeight = 1\n[[pins]]\n  runtme = \"a\"\n"))
	f.Add([]byte("objective . \"churnWieght\" = 1 # x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePolicy(data, "pool.toml")
		if err != nil {
			var ie *lloom.InputError
			if !errors.As(err, &ie) || ie.File != "pool.toml" {
				t.Fatalf("error %v (%T) does not name the file", err, err)
			}
			// A line given is one of the file's.
			if lines := bytes.Count(data, []byte("\n")) + 1; ie.Line < 0 || ie.Line > lines || ie.Line > 0 && ie.Col < 1 {
				t.Fatalf("error at %d:%d, the file has %d lines: %v", ie.Line, ie.Col, lines, err)
			}
			return
		}
		// Whatever pool.toml accepts, the bundle's JSON policy accepts too.
		js, err := json.Marshal(p)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		back, err := parsePolicyJSON(js, "f.json", "$.policy")
		if err != nil {
			t.Fatalf("parsePolicyJSON(Marshal(p)) = %v\n%s", err, js)
		}
		if !reflect.DeepEqual(p, back) {
			t.Fatalf("JSON round trip changed the policy:\n%+v\n%+v", p, back)
		}
		p.Settings()
	})
}

// parsePolicyJSON reads a policy given as JSON at path inside file.
func parsePolicyJSON(data []byte, file, path string) (*Policy, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, &lloom.InputError{File: file, Path: path, Msg: err.Error()}
	}
	return decodePolicy(doc, &tree{file: file, style: jsonPaths}, path)
}
