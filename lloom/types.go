package lloom

import (
	"encoding/json"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Version is a version LLooM writes either as a number (recipe `version: 7`)
// or as a string. It keeps the text as written.
type Version string

func (ver *Version) decodeJSON(d *decoder, v *value, path string) {
	switch v.kind {
	case kindNull:
		*ver = ""
	case kindString, kindNumber:
		*ver = Version(v.s)
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

func (m *Message) decodeJSON(d *decoder, v *value, path string) {
	switch v.kind {
	case kindNull:
		*m = ""
	case kindString:
		*m = Message(v.s)
	case kindObject:
		if msg := v.get("message"); msg != nil && msg.kind == kindString {
			*m = Message(msg.s)
			return
		}
		*m = Message(v.raw(d.data))
	default:
		*m = Message(v.raw(d.data))
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
	for _, x := range s {
		if x != "" && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}

// Env is an environment block. Like the processes LLooM spawns, it accepts
// numbers and booleans as values and keeps them as text.
type Env map[string]string

func (e *Env) decodeJSON(d *decoder, v *value, path string) {
	if v.kind == kindNull {
		*e = nil
		return
	}
	if v.kind != kindObject {
		d.expected(v, path, "an object")
		return
	}
	out := make(Env, len(v.obj))
	for _, m := range v.obj {
		switch m.val.kind {
		case kindString, kindNumber:
			out[m.key] = m.val.s
		case kindBool:
			out[m.key] = strconv.FormatBool(m.val.b)
		case kindNull:
			delete(out, m.key)
		default:
			d.expected(m.val, key(path, m.key), "a string")
			return
		}
	}
	*e = out
}
