package printable

import (
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// String escapes what a terminal would act on: control characters (line
// breaks and tabs included), format characters such as the bidi
// overrides, anything else strconv.IsPrint refuses but the space, and
// bytes that are not UTF-8.
func String(s string) string { return escape(s, false) }

// Lines is String that keeps '\n', for text of several lines.
func Lines(s string) string { return escape(s, true) }

func escape(s string, keepNewlines bool) string {
	i := 0
	for i < len(s) && (' ' <= s[i] && s[i] < utf8.RuneSelf && s[i] != 0x7f || keepNewlines && s[i] == '\n') {
		i++
	}
	if i == len(s) {
		return s // plain ASCII: the common case costs no copy
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteString(strconv.FormatUint(uint64(s[i])>>4, 16))
			b.WriteString(strconv.FormatUint(uint64(s[i])&0xf, 16))
		case r == ' ' || r == '\n' && keepNewlines || strconv.IsPrint(r):
			b.WriteString(s[i : i+n])
		default:
			q := strconv.QuoteRune(r) // '\x1b', '\u202e', '\n'
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

// Copy returns a deep copy of v with String applied to every string in
// it; v is not changed. Map keys stay as they are (two keys could escape
// alike, and a renderer looks things up by them), and so do unexported
// fields.
func Copy[T any](v T) T {
	return escapeValue(reflect.ValueOf(&v).Elem()).Interface().(T)
}

func escapeValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.String:
		n := reflect.New(v.Type()).Elem()
		n.SetString(String(v.String()))
		return n
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type().Elem())
		n.Elem().Set(escapeValue(v.Elem()))
		return n
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type()).Elem()
		n.Set(escapeValue(v.Elem()))
		return n
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			n.Index(i).Set(escapeValue(v.Index(i)))
		}
		return n
	case reflect.Array:
		n := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			n.Index(i).Set(escapeValue(v.Index(i)))
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			n.SetMapIndex(it.Key(), escapeValue(it.Value()))
		}
		return n
	case reflect.Struct:
		n := reflect.New(v.Type()).Elem()
		n.Set(v)
		for i := range v.NumField() {
			if n.Field(i).CanSet() {
				n.Field(i).Set(escapeValue(v.Field(i)))
			}
		}
		return n
	}
	return v
}
