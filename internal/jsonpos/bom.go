package jsonpos

import "bytes"

// bom is the UTF-8 byte order mark.
var bom = []byte("\uFEFF")

// TrimBOM drops a UTF-8 byte order mark before a document, which some
// Windows editors write: RFC 8259 (section 8.1) lets a reader ignore it,
// and encoding/json does not. Readers call it on a file's bytes before
// anything else, so that offsets, lines and columns all count from the
// first byte of the value (the mark takes no column in an editor either).
func TrimBOM(data []byte) []byte { return bytes.TrimPrefix(data, bom) }
