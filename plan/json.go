package plan

import (
	"bytes"
	"encoding/json"
	"io"
)

// WriteJSON writes the plan as a "poolsolve.plan/v1" document
// (docs/plan-json.md): two-space indent, fields in struct order, slices
// as Build sorted them, memory rounded to 0.1 GiB and latency to 1 ms, so
// the same plan gives the same bytes. HTML characters are not escaped. A
// nil plan is an error.
func WriteJSON(w io.Writer, p *Plan) error {
	if p == nil {
		return errNilPlan
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
