// Package deepcopy copies a value and everything it points to, by
// reflection, optionally rewriting every string on the way: the one walk
// behind redaction's copies (package lloom) and terminal-safe copies
// (package printable).
//
// Map keys and unexported fields are copied as they are; channels and
// functions are shared, not copied.
package deepcopy
