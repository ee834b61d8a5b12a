package lloom

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

	"github.com/poolsolve/poolsolve/internal/jsonpos"
	"github.com/poolsolve/poolsolve/internal/suggest"
)

// decoder copies a value tree into Go values, following the json struct
// tags, and stops at the first value whose JSON type does not fit. Unknown
// object members are ignored unless the struct has a field tagged
// `lloom:"rest"` (a map[string]any) to collect them. JSON null leaves the
// Go value at its zero value, and null map entries are dropped, so an
// absent number and a null one both read as a nil pointer.
type decoder struct {
	file string
	data []byte
	err  *InputError
	// typos are keys no field takes that are one edit from one that does.
	typos Problems
}

// valueDecoder is implemented by types that accept more than one JSON shape
// (an alias that is a string or an object, a namespace that is a string or
// false, ...).
type valueDecoder interface {
	decodeJSON(d *decoder, v *jsonpos.Value, path string)
}

// normalizer is implemented by types that rewrite LLooM's legacy spellings
// right after they are decoded.
type normalizer interface {
	normalize()
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// decodeDocument parses data and decodes it into out, a pointer.
func decodeDocument(data []byte, file string, out any) (*jsonpos.Value, error) {
	tree, err := parseTree(data, file)
	if err != nil {
		return nil, err
	}
	if err := decodeTree(tree, data, file, out); err != nil {
		return nil, err
	}
	return tree, nil
}

// decodeTree decodes an already parsed tree into out, a pointer. A
// document that keeps its misspelt keys (typoKeeper) is given them.
func decodeTree(tree *jsonpos.Value, data []byte, file string, out any) error {
	d := &decoder{file: file, data: data}
	d.decode(tree, jsonpos.Root, reflect.ValueOf(out).Elem())
	if d.err != nil {
		return d.err
	}
	if k, ok := out.(typoKeeper); ok {
		k.keepTypos(d.typos)
	}
	return nil
}

// typoKeeper is a document that reports its misspelt keys as warnings.
type typoKeeper interface{ keepTypos(Problems) }

func (d *decoder) failf(v *jsonpos.Value, path, format string, args ...any) {
	if d.err != nil {
		return
	}
	line, col := jsonpos.Position(d.data, v.Start)
	d.err = &InputError{File: d.file, Path: path, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
}

func (d *decoder) expected(v *jsonpos.Value, path, what string) {
	d.failf(v, path, "expected %s, got %s", what, v.Describe())
}

func (d *decoder) decode(v *jsonpos.Value, path string, rv reflect.Value) {
	if d.err != nil {
		return
	}
	if rv.CanAddr() {
		if vd, ok := rv.Addr().Interface().(valueDecoder); ok {
			vd.decodeJSON(d, v, path)
			return
		}
	}
	if v.Kind == jsonpos.Null {
		rv.SetZero()
		return
	}
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			rv.Set(reflect.New(rv.Type().Elem()))
		}
		d.decode(v, path, rv.Elem())
	case reflect.String:
		if v.Kind != jsonpos.String {
			d.expected(v, path, "a string")
			return
		}
		rv.SetString(v.Text)
	case reflect.Bool:
		if v.Kind != jsonpos.Bool {
			d.expected(v, path, "true or false")
			return
		}
		rv.SetBool(v.Bool)
	case reflect.Float64:
		if v.Kind != jsonpos.Number {
			d.expected(v, path, "a number")
			return
		}
		f, err := strconv.ParseFloat(v.Text, 64)
		if err != nil {
			d.failf(v, path, "number %s is out of range", jsonpos.Shorten(v.Text))
			return
		}
		rv.SetFloat(f)
	case reflect.Int, reflect.Int64:
		if v.Kind != jsonpos.Number {
			d.expected(v, path, "an integer")
			return
		}
		n, ok := parseInt(v.Text)
		if !ok || rv.OverflowInt(n) {
			d.failf(v, path, "expected an integer, got %s", v.Describe())
			return
		}
		rv.SetInt(n)
	case reflect.Slice:
		if rv.Type() == rawMessageType {
			rv.SetBytes(raw(v, d.data))
			return
		}
		if v.Kind != jsonpos.Array {
			d.expected(v, path, "an array")
			return
		}
		s := reflect.MakeSlice(rv.Type(), len(v.Elems), len(v.Elems))
		for i, e := range v.Elems {
			d.decode(e, jsonpos.Index(path, i), s.Index(i))
		}
		rv.Set(s)
	case reflect.Map:
		if v.Kind != jsonpos.Object {
			d.expected(v, path, "an object")
			return
		}
		if rv.IsNil() {
			rv.Set(reflect.MakeMapWithSize(rv.Type(), len(v.Members)))
		}
		for _, m := range v.Members {
			k := reflect.ValueOf(m.Key).Convert(rv.Type().Key())
			if m.Value.Kind == jsonpos.Null {
				rv.SetMapIndex(k, reflect.Value{})
				continue
			}
			e := reflect.New(rv.Type().Elem()).Elem()
			d.decode(m.Value, jsonpos.Key(path, m.Key), e)
			rv.SetMapIndex(k, e)
		}
	case reflect.Struct:
		d.decodeStruct(v, path, rv)
	case reflect.Interface:
		if rv.NumMethod() != 0 {
			d.failf(v, path, "internal error: cannot decode into %s", rv.Type())
			return
		}
		rv.Set(reflect.ValueOf(v.Any(false)))
	default:
		d.failf(v, path, "internal error: cannot decode into %s", rv.Type())
	}
}

// decodeStruct decodes an object into a struct, without looking for a
// valueDecoder on the struct itself (hooks call it on their own fields).
func (d *decoder) decodeStruct(v *jsonpos.Value, path string, rv reflect.Value) {
	if d.err != nil {
		return
	}
	if v.Kind != jsonpos.Object {
		d.expected(v, path, "an object")
		return
	}
	info := structFields(rv.Type())
	for _, m := range v.Members {
		if i, ok := info.byName[m.Key]; ok {
			d.decode(m.Value, jsonpos.Field(path, m.Key), rv.Field(i))
			continue
		}
		if s := suggest.OneEdit(m.Key, info.names); s != "" {
			d.typos = append(d.typos, &InputError{File: d.file, Path: jsonpos.Field(path, m.Key),
				Msg: fmt.Sprintf("key %q is not LLooM's, which ignores it; did you mean %q?", m.Key, s)})
		}
		if info.rest >= 0 {
			rest := rv.Field(info.rest)
			if rest.IsNil() {
				rest.Set(reflect.MakeMap(rest.Type()))
			}
			rest.SetMapIndex(reflect.ValueOf(m.Key), reflect.ValueOf(m.Value.Any(false)))
		}
	}
	if d.err == nil && rv.CanAddr() {
		if n, ok := rv.Addr().Interface().(normalizer); ok {
			n.normalize()
		}
	}
}

func parseInt(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	// JSON has no integer type: 4.0 and 1e3 are integers too.
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

type structInfo struct {
	byName map[string]int
	names  []string // byName's keys, sorted
	rest   int
}

var structCache sync.Map // reflect.Type -> *structInfo

func structFields(t reflect.Type) *structInfo {
	if info, ok := structCache.Load(t); ok {
		return info.(*structInfo)
	}
	info := &structInfo{byName: map[string]int{}, rest: -1}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() || f.Anonymous {
			continue
		}
		if f.Tag.Get("lloom") == "rest" {
			info.rest = i
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		info.byName[name] = i
	}
	info.names = slices.Sorted(maps.Keys(info.byName))
	structCache.Store(t, info)
	return info
}
