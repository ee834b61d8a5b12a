package bigmetrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Grow returns answer, a /gateway/metrics answer, grown to about size
// bytes: its recent[] entries and model buckets are repeated with new
// ids (nine parts recent, one part buckets), as a busy gateway's answer
// would be. The result is compact, keys sorted.
func Grow(answer []byte, size int) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(answer, &doc); err != nil {
		return nil, err
	}
	var recent, models []map[string]json.RawMessage
	if err := json.Unmarshal(doc["recent"], &recent); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(doc["models"], &models); err != nil {
		return nil, err
	}
	if len(recent) == 0 || len(models) == 0 {
		return nil, errors.New("bigmetrics: the answer has no recent entries or no model buckets to repeat")
	}
	list := func(items []map[string]json.RawMessage, prefix string, budget int) (json.RawMessage, error) {
		var b bytes.Buffer
		b.WriteByte('[')
		for i := 0; b.Len() < budget; i++ {
			e := items[i%len(items)]
			e["id"] = json.RawMessage(fmt.Sprintf("%q", fmt.Sprintf("%s-%d", prefix, i)))
			line, err := json.Marshal(e)
			if err != nil {
				return nil, err
			}
			if i > 0 {
				b.WriteString(",\n")
			}
			b.Write(line)
		}
		b.WriteByte(']')
		return b.Bytes(), nil
	}
	var err error
	if doc["recent"], err = list(recent, "conn", size*9/10); err != nil {
		return nil, err
	}
	if doc["models"], err = list(models, "model", size/10); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
}
