package lloom

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// Version is a version LLooM writes either as a number (recipe `version: 7`)
// or as a string. It keeps the text as written.
type Version string

func (ver *Version) decodeJSON(d *decoder, v *jsonpos.Value, path string) {
	switch v.Kind {
	case jsonpos.Null:
		*ver = ""
	case jsonpos.String, jsonpos.Number:
		*ver = Version(v.Text)
	default:
		d.expected(v, path, "a version string or number")
	}
}

// MarshalJSON writes a numeric version back as a number.
func (ver Version) MarshalJSON() ([]byte, error) {
	if json.Valid([]byte(ver)) && isNumberLiteral(string(ver)) {
		return []byte(ver), nil
	}
	return json.Marshal(string(ver))
}

func isNumberLiteral(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789-+.eE", r) {
			return false
		}
	}
	return true
}

// Message is an error text that gateways write as a string or as an object
// with a message; other shapes are kept as compact JSON text.
type Message string

// UnmarshalJSON reads the shapes decodeJSON reads, for ParseMetrics' fast
// path through encoding/json.
func (m *Message) UnmarshalJSON(data []byte) error {
	switch data[0] {
	case 'n':
		*m = ""
	case '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*m = Message(s)
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); err != nil {
			return err
		}
		var s string
		if raw := obj["message"]; len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
			*m = Message(s)
			return nil
		}
		*m = Message(data)
	default:
		*m = Message(data)
	}
	return nil
}

func (m *Message) decodeJSON(d *decoder, v *jsonpos.Value, path string) {
	switch v.Kind {
	case jsonpos.Null:
		*m = ""
	case jsonpos.String:
		*m = Message(v.Text)
	case jsonpos.Object:
		if msg := v.Get("message"); msg != nil && msg.Kind == jsonpos.String {
			*m = Message(msg.Text)
			return
		}
		*m = Message(raw(v, d.data))
	default:
		*m = Message(raw(v, d.data))
	}
}

func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func ptr[T any](v T) *T { return &v }

// uniqueStrings returns the non-empty strings of s without repeats, in order.
func uniqueStrings(s []string) []string {
	var out []string
	seen := make(map[string]bool, len(s))
	for _, x := range s {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// setOf is s as a set, for lookups in lists that may be long.
func setOf(s []string) map[string]bool {
	out := make(map[string]bool, len(s))
	for _, x := range s {
		out[x] = true
	}
	return out
}

// firstIndex maps each string of s to where it first appears, so that a
// repeat is found in one pass.
func firstIndex(s []string) map[string]int {
	out := make(map[string]int, len(s))
	for i, x := range s {
		if _, ok := out[x]; !ok {
			out[x] = i
		}
	}
	return out
}

// Env is an environment block. Like the processes LLooM spawns, it accepts
// numbers and booleans as values and keeps them as text.
type Env map[string]string

func (e *Env) decodeJSON(d *decoder, v *jsonpos.Value, path string) {
	if v.Kind == jsonpos.Null {
		*e = nil
		return
	}
	if v.Kind != jsonpos.Object {
		d.expected(v, path, "an object")
		return
	}
	out := make(Env, len(v.Members))
	for _, m := range v.Members {
		switch m.Value.Kind {
		case jsonpos.String, jsonpos.Number:
			out[m.Key] = m.Value.Text
		case jsonpos.Bool:
			out[m.Key] = strconv.FormatBool(m.Value.Bool)
		case jsonpos.Null:
			delete(out, m.Key)
		default:
			d.expected(m.Value, jsonpos.Key(path, m.Key), "a string")
			return
		}
	}
	*e = out
}
