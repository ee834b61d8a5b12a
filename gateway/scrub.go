package gateway

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
	"github.com/poolsolve/poolsolve/internal/safehttp"
	"github.com/poolsolve/poolsolve/lloom"
)

var secretWords = []string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "COOKIE"}

// secretKey reports whether a JSON key names a credential. Names of
// environment variables (apiKeyEnv) are not credentials.
func secretKey(k string) bool {
	up := strings.ToUpper(k)
	if strings.HasSuffix(up, "ENV") {
		return false
	}
	for _, w := range secretWords {
		if strings.Contains(up, w) {
			return true
		}
	}
	return false
}

// publicKeys hold public identifiers that are URLs by design (a machine
// profile's $schema and profile), not endpoints.
var publicKeys = map[string]bool{"$schema": true, "profile": true}

// scrubJSON rewrites a JSON document with every URL in a string replaced
// and every string under a secret-looking key redacted. Numbers are kept
// as written and keys are sorted, so the output is canonical.
// A repeated key is an error: decoding would keep only the last one.
func scrubJSON(data []byte) ([]byte, error) {
	if err := jsonpos.Duplicates(data); err != nil {
		se := err.(*jsonpos.SyntaxError)
		return nil, &lloom.InputError{Line: se.Line, Col: se.Col, Path: se.Path, Msg: se.Msg}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	v = scrubValue("", v)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

func scrubValue(key string, v any) any {
	switch x := v.(type) {
	case string:
		switch {
		case x == "":
			return x
		case secretKey(key):
			return lloom.Redaction
		case publicKeys[key]:
			return x
		}
		return safehttp.ScrubURLs(x)
	case map[string]any:
		for k, e := range x {
			x[k] = scrubValue(k, e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = scrubValue(key, e)
		}
		return x
	}
	return v
}
