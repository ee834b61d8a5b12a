package jsonpos

import "strconv"

// Root is the path of the document itself.
const Root = "$"

// Field is the path of an object member read as a field: `path.name` when
// name is an identifier, `path["name"]` otherwise.
func Field(path, name string) string {
	if IsIdentifier(name) {
		return path + "." + name
	}
	return Key(path, name)
}

// Key is the path of an object member read as a map entry, always
// bracketed: `path["key"]`.
func Key(path, k string) string { return path + "[" + strconv.Quote(k) + "]" }

// Index is the path of an array element: `path[i]`.
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// IsIdentifier reports whether a field name can follow a dot in a path: a
// letter, '_' or '$', then letters, digits, '_' or '$' (ASCII only).
func IsIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_' || r == '$' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}
