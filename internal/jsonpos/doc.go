// Package jsonpos reads JSON the way poolsolve's parsers need to report
// problems in it: with the file position and the JSON path of the value at
// fault.
//
// Parse turns bytes into a tree of Values, each of which remembers the byte
// offsets of its text (so a sub-document can be handed on exactly as
// written) and keeps object members in document order, duplicates
// included. Syntax errors come back as a *SyntaxError with a 1-based line
// and column; Position turns the offset of a value into line and column
// for problems found later.
//
// Paths are spelled as in every message poolsolve prints: Root is `$`,
// Field appends `.name` for plain identifiers and `["other name"]`
// otherwise, Key always appends `["key"]`, and Index appends `[i]`.
// Describe and (*Value).Describe name a value for "expected X, got Y"
// messages: `null`, `boolean true`, `number 4.5`, `string "x"`,
// `an array`, `an object`, with long numbers and strings shortened.
//
// The package has no notion of any schema; callers wrap its errors in
// their own types (lloom's InputError, eval's PlanError), which print
// through Message so that every parser's problems read alike.
package jsonpos
