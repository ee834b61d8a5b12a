package fleet

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/poolsolve/poolsolve/internal/jsonpos"
	"github.com/poolsolve/poolsolve/internal/suggest"
	"github.com/poolsolve/poolsolve/lloom"
)

// poolsolve's own documents (pool.toml, the policy and the config pool
// block inside JSON, the bundle's envelope) are decoded in two steps: the
// bytes become a generic tree (TOML tables or JSON objects), and the tree
// is copied into Go values by a strict decoder that knows the path of every
// value. One decoder serves both syntaxes, so pool.toml and a bundle's
// "policy" accept the same keys and fail with the same messages.

// pathStyle says how paths are spelled in messages.
type pathStyle uint8

const (
	jsonPaths pathStyle = iota // $.objective.churnWeight, $.slo["q38fn"]
	tomlPaths                  // objective.churnWeight, slo.q38fn, pins[1]
)

// tree decodes one generic document and keeps the first problem.
type tree struct {
	file  string
	style pathStyle
	err   *lloom.InputError
	// data is the TOML text, when there is one, to find a key's line.
	data []byte
}

// treeDecoder is implemented by types that read a value themselves.
type treeDecoder interface {
	decodeTree(t *tree, v any, path string)
}

func (t *tree) field(path, name string) string {
	if t.style == tomlPaths {
		k := toml.Key{name}.String()
		if path == "" {
			return k
		}
		return path + "." + k
	}
	return jsonpos.Field(path, name)
}

// key spells a map entry: always bracketed in JSON, as lloom spells
// `$.runtimes["x"]`; a dotted key in TOML.
func (t *tree) key(path, k string) string {
	if t.style == tomlPaths {
		return t.field(path, k)
	}
	return jsonpos.Key(path, k)
}

func (t *tree) index(path string, i int) string { return jsonpos.Index(path, i) }

func (t *tree) failf(path, format string, args ...any) {
	if t.err == nil {
		t.err = &lloom.InputError{File: t.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	}
}

func (t *tree) expected(v any, path, what string) {
	t.failf(path, "expected %s, got %s", what, t.describe(v))
}

// describe names a value for "expected X, got Y" messages.
func (t *tree) describe(v any) string {
	switch v.(type) {
	case map[string]any:
		return t.object()
	}
	return describe(v)
}

// object is what the syntax calls a keyed value.
func (t *tree) object() string {
	if t.style == tomlPaths {
		return "a table"
	}
	return "an object"
}

// unknownKey reports a key no field takes. TOML messages name the whole
// dotted key, as an operator would search for it in pool.toml.
func (t *tree) unknownKey(path, k string, known []string) {
	hint := ""
	if s := suggest.Nearest(k, known); s != "" {
		hint = fmt.Sprintf("; did you mean %q?", s)
	}
	if t.style == tomlPaths {
		full := t.field(path, k)
		t.failf("", "unknown key %q%s", full, hint)
		if t.err != nil && t.data != nil {
			t.err.Line, t.err.Col = tomlKeyPosition(t.data, full)
		}
		return
	}
	t.failf(path, "unknown key %q%s", k, hint)
}

// tomlKeyPosition is where the dotted key full is written in TOML text:
// as a table header or as a key under one; 0, 0 when it cannot be found
// (a key in an inline table).
func tomlKeyPosition(data []byte, full string) (line, col int) {
	table := ""
	arrays := map[string]int{} // [[name]] tables seen, by name
	for i, text := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(text)
		indent := len(text) - len(strings.TrimLeft(text, " \t"))
		if strings.HasPrefix(trimmed, "[") {
			name := strings.Trim(strings.TrimSpace(strings.SplitN(trimmed, "#", 2)[0]), "[] \t")
			table = normalKey(name)
			if strings.HasPrefix(trimmed, "[[") {
				table, arrays[table] = fmt.Sprintf("%s[%d]", table, arrays[table]), arrays[table]+1
			}
			if table == full {
				return i + 1, indent + 1
			}
			continue
		}
		k, _, ok := strings.Cut(trimmed, "=")
		if !ok || strings.HasPrefix(trimmed, "#") {
			continue
		}
		key := normalKey(k)
		if table != "" {
			key = table + "." + key
		}
		if key == full || strings.HasPrefix(full, key+".") {
			return i + 1, indent + 1
		}
	}
	return 0, 0
}

// normalKey spells a TOML key as toml.Key's String does: parts split on
// dots, each trimmed, quoted only where it must be.
func normalKey(k string) string {
	var parts toml.Key
	for _, p := range strings.Split(k, ".") {
		p = strings.TrimSpace(p)
		if uq, err := strconv.Unquote(p); err == nil {
			p = uq
		} else {
			p = strings.Trim(p, "'")
		}
		parts = append(parts, p)
	}
	return parts.String()
}

// decode copies v into rv. A missing or null value leaves rv as it was,
// so callers pre-fill defaults.
func (t *tree) decode(v any, path string, rv reflect.Value, tag fieldTag) {
	if t.err != nil || v == nil {
		return
	}
	if rv.CanAddr() {
		if d, ok := rv.Addr().Interface().(treeDecoder); ok {
			d.decodeTree(t, v, path)
			return
		}
	}
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			rv.Set(reflect.New(rv.Type().Elem()))
		}
		t.decode(v, path, rv.Elem(), tag)
	case reflect.String:
		s, ok := v.(string)
		if !ok {
			t.expected(v, path, tag.stringWant())
			return
		}
		if len(tag.enum) > 0 && !slices.Contains(tag.enum, s) {
			t.expected(v, path, tag.stringWant())
			return
		}
		if tag.nonEmpty && s == "" {
			t.expected(v, path, "a non-empty string")
			return
		}
		rv.SetString(s)
	case reflect.Bool:
		b, ok := v.(bool)
		if !ok {
			t.expected(v, path, "true or false")
			return
		}
		rv.SetBool(b)
	case reflect.Float64:
		f, ok := number(v)
		if !ok || !tag.admits(f) {
			t.expected(v, path, tag.numberWant())
			return
		}
		rv.SetFloat(f)
	case reflect.Int, reflect.Int64, reflect.Uint64:
		f, ok := number(v)
		if !ok || f != math.Trunc(f) || !tag.admits(f) || math.Abs(f) >= 1<<53 {
			t.expected(v, path, tag.integerWant())
			return
		}
		if rv.Kind() == reflect.Uint64 {
			if f < 0 {
				t.expected(v, path, tag.integerWant())
				return
			}
			rv.SetUint(uint64(f))
			return
		}
		rv.SetInt(int64(f))
	case reflect.Slice:
		elems, ok := asList(v)
		if !ok {
			t.expected(v, path, "an array")
			return
		}
		s := reflect.MakeSlice(rv.Type(), len(elems), len(elems))
		for i, e := range elems {
			if e == nil {
				t.expected(e, t.index(path, i), "a value")
				return
			}
			t.decode(e, t.index(path, i), s.Index(i), tag)
		}
		rv.Set(s)
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			t.expected(v, path, t.object())
			return
		}
		if rv.IsNil() {
			rv.Set(reflect.MakeMapWithSize(rv.Type(), len(m)))
		}
		for _, k := range slices.Sorted(maps.Keys(m)) {
			if k == "" {
				t.failf(path, "empty name")
				return
			}
			e := reflect.New(rv.Type().Elem()).Elem()
			t.decode(m[k], t.key(path, k), e, fieldTag{})
			rv.SetMapIndex(reflect.ValueOf(k).Convert(rv.Type().Key()), e)
		}
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			t.expected(v, path, t.object())
			return
		}
		info := fieldsOf(rv.Type())
		for _, k := range slices.Sorted(maps.Keys(m)) {
			f, ok := info[k]
			if !ok {
				t.unknownKey(path, k, slices.Sorted(maps.Keys(info)))
				return
			}
			t.decode(m[k], t.field(path, k), rv.Field(f.index), f.tag)
		}
	default:
		t.failf(path, "internal error: cannot decode into %s", rv.Type())
	}
}

// number reads a JSON or TOML number.
func number(v any) (float64, bool) {
	var f float64
	switch n := v.(type) {
	case json.Number:
		var err error
		if f, err = strconv.ParseFloat(string(n), 64); err != nil {
			return 0, false
		}
	case int64:
		f = float64(n)
	case float64:
		f = n
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

// asList accepts JSON arrays and TOML arrays (of values or of tables).
func asList(v any) ([]any, bool) {
	switch l := v.(type) {
	case []any:
		return l, true
	case []map[string]any:
		out := make([]any, len(l))
		for i, m := range l {
			out[i] = m
		}
		return out, true
	}
	return nil, false
}

// fieldTag holds the `check` struct tag: the range or values a field
// admits, so that range errors are found with their path while decoding.
//
//	check:"min=0"          a number >= 0
//	check:"min=0,max=1"    a fraction
//	check:"gt=0"           a number > 0
//	check:"enum=a|b|c"     one of the strings
//	check:"nonempty"       a non-empty string
type fieldTag struct {
	min, max *float64
	gt       *float64
	enum     []string
	nonEmpty bool
}

func parseTag(s string) fieldTag {
	var ft fieldTag
	for _, part := range strings.Split(s, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "min", "max", "gt":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				panic("fleet: bad check tag " + s)
			}
			switch k {
			case "min":
				ft.min = &f
			case "max":
				ft.max = &f
			default:
				ft.gt = &f
			}
		case "enum":
			ft.enum = strings.Split(v, "|")
		case "nonempty":
			ft.nonEmpty = true
		case "":
		default:
			panic("fleet: bad check tag " + s)
		}
	}
	return ft
}

func (ft fieldTag) admits(f float64) bool {
	return (ft.min == nil || f >= *ft.min) && (ft.max == nil || f <= *ft.max) && (ft.gt == nil || f > *ft.gt)
}

func (ft fieldTag) bounds() string {
	switch {
	case ft.min != nil && ft.max != nil:
		return fmt.Sprintf(" from %g to %g", *ft.min, *ft.max)
	case ft.min != nil:
		return fmt.Sprintf(" >= %g", *ft.min)
	case ft.gt != nil:
		return fmt.Sprintf(" > %g", *ft.gt)
	}
	return ""
}

func (ft fieldTag) numberWant() string  { return "a number" + ft.bounds() }
func (ft fieldTag) integerWant() string { return "an integer" + ft.bounds() }

func (ft fieldTag) stringWant() string {
	switch len(ft.enum) {
	case 0:
		return "a string"
	case 1:
		return strconv.Quote(ft.enum[0])
	}
	q := make([]string, len(ft.enum))
	for i, e := range ft.enum {
		q[i] = strconv.Quote(e)
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

type fieldInfo struct {
	index int
	tag   fieldTag
}

var fieldCache sync.Map // reflect.Type -> map[string]fieldInfo

// fieldsOf maps the json names of a struct's fields. Fields tagged
// json:"-" are not read from documents.
func fieldsOf(t reflect.Type) map[string]fieldInfo {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]fieldInfo)
	}
	m := map[string]fieldInfo{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		m[name] = fieldInfo{index: i, tag: parseTag(f.Tag.Get("check"))}
	}
	fieldCache.Store(t, m)
	return m
}

// describe names a value for "expected X, got Y" messages, including the
// values only TOML has.
func describe(v any) string {
	switch v := v.(type) {
	case int64:
		return "number " + strconv.FormatInt(v, 10)
	case []map[string]any:
		return "an array"
	case time.Time:
		return "a date or time"
	}
	return jsonpos.Describe(v)
}
