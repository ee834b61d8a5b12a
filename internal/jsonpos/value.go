package jsonpos

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// Get returns the last member of an object named k, as encoding/json
// would read it; nil when v is nil, not an object, or has no such member.
func (v *Value) Get(k string) *Value {
	if v == nil || v.Kind != Object {
		return nil
	}
	for i := len(v.Members) - 1; i >= 0; i-- {
		if v.Members[i].Key == k {
			return v.Members[i].Value
		}
	}
	return nil
}

// Distinct returns an object's members without duplicates: each key once,
// where it first appears, with the value it last has.
func (v *Value) Distinct() []Member {
	var out []Member
	seen := map[string]int{}
	for _, m := range v.Members {
		if i, ok := seen[m.Key]; ok {
			out[i] = m
			continue
		}
		seen[m.Key] = len(out)
		out = append(out, m)
	}
	return out
}

// Bytes returns the value's text in data, the input it was parsed from,
// exactly as written. It shares data's memory.
func (v *Value) Bytes(data []byte) []byte { return data[v.Start:v.End] }

// Any converts the value the way encoding/json decodes into an interface{}:
// objects become map[string]any (the last of duplicate keys winning) and
// arrays []any. Numbers become json.Number when useNumber is set, as with
// json.Decoder.UseNumber; otherwise float64, or json.Number when the
// literal is out of a float64's range.
func (v *Value) Any(useNumber bool) any {
	switch v.Kind {
	case Bool:
		return v.Bool
	case Number:
		if useNumber {
			return json.Number(v.Text)
		}
		f, err := strconv.ParseFloat(v.Text, 64)
		if err != nil {
			return json.Number(v.Text)
		}
		return f
	case String:
		return v.Text
	case Array:
		out := make([]any, len(v.Elems))
		for i, e := range v.Elems {
			out[i] = e.Any(useNumber)
		}
		return out
	case Object:
		out := make(map[string]any, len(v.Members))
		for _, m := range v.Members {
			out[m.Key] = m.Value.Any(useNumber)
		}
		return out
	}
	return nil
}

// Describe names the value for "expected X, got Y" messages, as the
// package-level Describe names the same value decoded by encoding/json.
func (v *Value) Describe() string {
	switch v.Kind {
	case Null:
		return "null"
	case Bool:
		return "boolean " + strconv.FormatBool(v.Bool)
	case Number:
		return "number " + Shorten(v.Text)
	case String:
		return "string " + strconv.Quote(Shorten(v.Text))
	case Array:
		return "an array"
	case Object:
		return "an object"
	}
	return "a value"
}

// Describe names a value decoded by encoding/json (with or without
// UseNumber) for "expected X, got Y" messages: `null`, `boolean false`,
// `number 1e3`, `string "x"`, `an array`, `an object`, and `a value` for
// any other Go value. Number literals and strings are shortened.
func Describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean " + strconv.FormatBool(v)
	case json.Number:
		return "number " + Shorten(string(v))
	case float64:
		return "number " + strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return "string " + strconv.Quote(Shorten(v))
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return "a value"
}

// Shorten cuts s to at most 40 bytes, at a rune boundary, and marks the
// cut with "…".
func Shorten(s string) string {
	const n = 40
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
