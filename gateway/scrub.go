package gateway

import "github.com/poolsolve/poolsolve/lloom"

// scrubJSON is lloom's redaction pass on an answer's JSON (see
// lloom.RedactJSON): what the gateway serves is held only redacted.
func scrubJSON(data []byte) ([]byte, error) { return lloom.RedactJSON(data) }
