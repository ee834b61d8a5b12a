package deepcopy

import "reflect"

// Copy returns a deep copy of v; v is not changed.
func Copy[T any](v T) T { return Map(v, nil) }

// Map returns a deep copy of v with str applied to every string in it
// (str nil leaves them as they are).
func Map[T any](v T, str func(string) string) T {
	return walk(reflect.ValueOf(&v).Elem(), str).Interface().(T)
}

func walk(v reflect.Value, str func(string) string) reflect.Value {
	switch v.Kind() {
	case reflect.String:
		if str == nil {
			return v
		}
		n := reflect.New(v.Type()).Elem()
		n.SetString(str(v.String()))
		return n
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type().Elem())
		n.Elem().Set(walk(v.Elem(), str))
		return n
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		n := reflect.New(v.Type()).Elem()
		n.Set(walk(v.Elem(), str))
		return n
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			n.Index(i).Set(walk(v.Index(i), str))
		}
		return n
	case reflect.Array:
		n := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			n.Index(i).Set(walk(v.Index(i), str))
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			n.SetMapIndex(it.Key(), walk(it.Value(), str))
		}
		return n
	case reflect.Struct:
		n := reflect.New(v.Type()).Elem()
		n.Set(v)
		for i := range v.NumField() {
			if n.Field(i).CanSet() {
				n.Field(i).Set(walk(v.Field(i), str))
			}
		}
		return n
	}
	return v
}
