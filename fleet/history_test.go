package fleet

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/lloom"
)

func TestDemandHistoryErrorsNameThePath(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"another schema", `{"schema":"x"}`, `h.json: $.schema: expected "poolsolve.demand-history/v1", got "x"`},
		{"an unknown key", `{"schema":"poolsolve.demand-history/v1","nodez":{}}`, `unknown key "nodez"`},
		{"a count that is not a number", `{"schema":"poolsolve.demand-history/v1","nodes":{"a":{"models":{"m":{"q":"3"}}}}}`, `$.nodes["a"].models["m"]["q"]: expected a number`},
		{"a negative count", `{"schema":"poolsolve.demand-history/v1","nodes":{"a":{"models":{"m":{"q":-1}}}}}`, `$.nodes["a"].models["m"]["q"]: expected a count of requests (0 or more), got -1`},
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

func TestDemandHistoryRoundTripsAndCountsEachEntryOnce(t *testing.T) {
	m, err := lloom.ParseMetrics([]byte(`{"object":"gateway.metrics","models":[{"id":"m","requests":4}],"recent":[
		{"id":"conn_1","at":"2026-11-29T14:00:00Z","model":"m","requestedModel":"a","status":200},
		{"id":"conn_2","at":"2026-11-29T14:00:01Z","model":"m","requestedModel":"b","status":200},
		{"id":"conn_3","at":"2026-11-29T14:00:02Z","model":"m","requestedModel":"a","status":503},
		{"id":"conn_1","at":"2026-11-29T15:00:00Z","model":"m","requestedModel":"a","status":200}]}`), "m.json")
	if err != nil {
		t.Fatal(err)
	}
	h := &DemandHistory{}
	if n := h.Record("n1", m); n != 3 {
		t.Errorf("recorded %d, want 3 (the 503 is not demand; conn_1 after a restart is a new entry)", n)
	}
	if n := h.Record("n1", m); n != 0 {
		t.Errorf("recorded %d again, want 0", n)
	}
	if s := h.Split("n1", "m"); s["a"] != 2 || s["b"] != 1 {
		t.Errorf("split = %v", s)
	}
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
}

func FuzzParseDemandHistory(f *testing.F) {
	f.Add([]byte(`{"schema":"poolsolve.demand-history/v1","nodes":{"a":{"models":{"m":{"q":3}},"seen":["t conn_1"]}}}`))
	f.Add([]byte(`{"schema":"poolsolve.demand-history/v1"}`))
	f.Add([]byte(`{"schema":"poolsolve.demand-history/v1","nodes":{"a":null}}`))
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
