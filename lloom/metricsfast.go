package lloom

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// A metrics answer can be tens of megabytes, and the positioned tree
// costs about 23 times the input in allocations. parseMetricsFast decodes
// with encoding/json instead, and only when the result is what the tree
// decoder would give; anything else (a syntax or type error, a repeated
// key, a key that encoding/json would match case-insensitively, an error
// envelope) sends ParseMetrics to the tree, which words the error with
// its position.

// metricsWire is both documents' top level at once. The keys that decide
// the kind are kept raw, so that presence (null included) is seen as the
// tree sees it.
type metricsWire struct {
	Error       json.RawMessage `json:"error"`
	Object      json.RawMessage `json:"object"`
	GeneratedAt json.RawMessage `json:"generatedAt"`
	Totals      json.RawMessage `json:"totals"`
	Version     json.RawMessage `json:"version"`
	Metrics     json.RawMessage `json:"metrics"`

	Period    string          `json:"period"`
	Models    []MetricsBucket `json:"models"`
	Routes    []MetricsBucket `json:"routes"`
	Requested []MetricsBucket `json:"requested"`
	Recent    []MetricsEntry  `json:"recent"`
	Active    []MetricsEntry  `json:"active"`
	CreatedAt string          `json:"createdAt"`
	UpdatedAt string          `json:"updatedAt"`

	Persistence MetricsPersistence `json:"persistence"`
}

func parseMetricsFast(data []byte, file string) (*Metrics, bool) {
	// json.Unmarshal checks the syntax before it decodes anything.
	ok, lens := jsonpos.CheckKeysCounting(data, exactMetricsKey)
	if !ok {
		return nil, false
	}
	// The lists are made at their final size: encoding/json fills a
	// slice's capacity before it grows it, and growing a 55,000-entry
	// recent[] one step at a time copies it over and over.
	var w metricsWire
	if n := lens["recent"]; n > 0 {
		w.Recent = make([]MetricsEntry, 0, n)
	}
	if n := lens["active"]; n > 0 {
		w.Active = make([]MetricsEntry, 0, n)
	}
	for _, l := range []struct {
		key  string
		list *[]MetricsBucket
	}{{"models", &w.Models}, {"routes", &w.Routes}, {"requested", &w.Requested}} {
		if n := lens[l.key]; n > 0 {
			*l.list = make([]MetricsBucket, 0, n)
		}
	}
	if json.Unmarshal(data, &w) != nil || w.Error != nil {
		return nil, false
	}
	m := &Metrics{File: file}
	switch {
	case isObject(w.Metrics) && w.Version != nil:
		m.Kind = MetricsHistory
		var version int
		if json.Unmarshal(w.Version, &version) != nil || version != 1 {
			return nil, false
		}
		var mw struct {
			Totals    MetricsBucket   `json:"totals"`
			Models    []MetricsBucket `json:"models"`
			Routes    []MetricsBucket `json:"routes"`
			Requested []MetricsBucket `json:"requested"`
			History   struct {
				Days []MetricsDay `json:"days"`
			} `json:"history"`
		}
		if json.Unmarshal(w.Metrics, &mw) != nil {
			return nil, false
		}
		m.CreatedAt, m.UpdatedAt = w.CreatedAt, w.UpdatedAt
		m.Totals, m.Models, m.Routes, m.Requested = mw.Totals, mw.Models, mw.Routes, mw.Requested
		m.Days = mw.History.Days
	case w.Totals != nil || w.GeneratedAt != nil || isString(w.Object, "gateway.metrics"):
		m.Kind = MetricsSnapshot
		if json.Unmarshal(orNull(w.GeneratedAt), &m.GeneratedAt) != nil || json.Unmarshal(orNull(w.Totals), &m.Totals) != nil {
			return nil, false
		}
		// The tree decoder checks "object" as a string wherever it is.
		if w.Object != nil && json.Unmarshal(w.Object, new(string)) != nil {
			return nil, false
		}
		m.Period = w.Period
		m.Models, m.Routes, m.Requested = w.Models, w.Routes, w.Requested
		m.Recent, m.Active = w.Recent, w.Active
		m.PersistenceSince = w.Persistence.Since
	default:
		return nil, false
	}
	m.derive()
	return m, true
}

func isObject(raw json.RawMessage) bool { return len(raw) > 0 && raw[0] == '{' }

func isString(raw json.RawMessage, want string) bool {
	var s string
	return len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil && s == want
}

func orNull(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return json.RawMessage("null")
	}
	return raw
}

// metricsKeys are the field names of every type the fast path decodes;
// foldedKeys the same names in lower case.
var metricsKeys, foldedKeys = func() (map[string]bool, map[string]bool) {
	exact, folded := map[string]bool{}, map[string]bool{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] {
			return
		}
		seen[t] = true
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			exact[name], folded[strings.ToLower(name)] = true, true
			walk(f.Type)
		}
	}
	walk(reflect.TypeFor[metricsWire]())
	walk(reflect.TypeFor[metricsHistoryWire]())
	return exact, folded
}()

// exactMetricsKey refuses a key that is not one of the decoded names but
// that encoding/json would take for one (it matches names without regard
// to case; the tree decoder, like LLooM, does not).
func exactMetricsKey(k []byte) bool {
	if metricsKeys[string(k)] {
		return true
	}
	var buf [64]byte
	if len(k) > len(buf) {
		return true // longer than any name
	}
	for i, c := range k {
		if c >= utf8.RuneSelf {
			return !foldsToAName(k)
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return !foldedKeys[string(buf[:len(k)])]
}

// foldsToAName is the slow check for keys with non-ASCII letters, some of
// which fold to ASCII ones (the Kelvin sign to k).
func foldsToAName(k []byte) bool {
	for name := range metricsKeys {
		if bytes.EqualFold(k, []byte(name)) {
			return true
		}
	}
	return false
}
