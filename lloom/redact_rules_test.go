package lloom

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

const canary = "sk-canary-XYZ0123"

// TestRedactRemovesEverySecretShape is the rule set on every shape the
// issue lists, one canary each.
func TestRedactRemovesEverySecretShape(t *testing.T) {
	doc := `{
  "cluster": {"nodes": {"n1": {"endpoint": "macbook-private:8100", "labels": {"token": "` + canary + `", "role": "leader"}}}},
  "runtimes": {"r": {
    "command": "vllm serve m --api-key ` + canary + ` --port 8000",
    "args": ["--bearer", "` + canary + `", "--token=` + canary + `", "--password", "` + canary + `", "--tensor-parallel-size", "2"],
    "env": {"MYPAT": "` + canary + `", "CUTE_DSL_ARCH": "sm_121a", "HF_HOME": "` + canary + `"},
    "bootstrap": {"image": "user:` + canary + `@ghcr.io/org/vllm:1", "createArgs": ["-e", "HF_TOKEN=` + canary + `", "-e", "MAX_NUM_SEQS=4", "--env=OTHER=` + canary + `"],
      "command": ["m", "--api-key=` + canary + `"]}}},
  "models": [{"id": "m", "name": "served at http://127.0.0.1:19003/v1 by ` + canary + `"}],
  "backends": {"b": {"baseUrl": "http://10.0.0.1/v1", "apiKey": "` + canary + `", "apiKeyEnv": "OPENROUTER_API_KEY"}},
  "free": "Authorization: Bearer abcdefgh12345678"
}`
	out, err := RedactJSON([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	got := string(out)
	for _, leak := range []string{"canary", "127.0.0.1", "10.0.0.1", "macbook-private", "abcdefgh12345678"} {
		if strings.Contains(got, leak) {
			t.Errorf("RedactJSON kept %q:\n%s", leak, got)
		}
	}
	for _, keep := range []string{`"role":"leader"`, `"CUTE_DSL_ARCH":"sm_121a"`, `"MAX_NUM_SEQS=4"`, `"--tensor-parallel-size","2"`,
		`"apiKeyEnv":"OPENROUTER_API_KEY"`, `[redacted]@ghcr.io/org/vllm:1`, `vllm serve m --api-key [redacted] --port 8000`, `"id":"m"`} {
		if !strings.Contains(got, keep) {
			t.Errorf("RedactJSON lost %s:\n%s", keep, got)
		}
	}

	// The same rules on the Go values.
	cfg, err := ParseConfig([]byte(doc), "config.json")
	if err != nil {
		t.Fatal(err)
	}
	red := cfg.Redacted()
	js, err := MarshalRedacted(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(js), "canary") || strings.Contains(string(js), "127.0.0.1") {
		t.Errorf("Config.Redacted kept a secret:\n%s", js)
	}
	if cfg.Runtimes["r"].Env["MYPAT"] != canary {
		t.Error("Redacted changed its receiver")
	}
	if l := InferFromLaunch(red.Runtimes["r"].Args, red.Runtimes["r"].Env, red.Runtimes["r"].Bootstrap.CreateArgs); l.MaxSequences != 4 || len(l.ComputeArchs) != 1 {
		t.Errorf("what the planner reads from a launch was lost: %+v", l)
	}
}

func TestRedactTextKeepsIdsAndDigests(t *testing.T) {
	for _, s := range []string{"Qwen/Qwen3-Embedding-4B", "vllm/vllm-openai@sha256:13ea", "macbook-local/qwen3-embedding:4b",
		"task-runner-12345678", "ubuntu@sha256:abcdef", "mail me at a@b.com", "--max-num-seqs 4 --tp 2", "spark-node-01"} {
		if got := RedactText(s); got != s {
			t.Errorf("RedactText(%q) = %q, want it unchanged", s, got)
		}
	}
	for in, want := range map[string]string{
		"GET http://host:1/x failed":        "GET [redacted] failed",
		"key " + canary + " refused":        "key [redacted] refused",
		"pull bob:pw@registry.local:5000/a": "pull [redacted]@registry.local:5000/a",
		"run --hf-token=abc -p 1":           "run --hf-token=[redacted] -p 1",
		"run\t--token  abc  -p":             "run\t--token  [redacted]  -p",
		// Error texts from a gateway or agent, as they are quoted.
		"no url here":                      "no url here",
		"see https://h:8/x?k=1 now":        "see [redacted] now",
		`"http://a" and svn+ssh://b/c`:     `"[redacted]" and [redacted]`,
		"connect ECONNREFUSED ://10.0.0.1": "connect ECONNREFUSED [redacted]",
	} {
		if got := RedactText(in); got != want {
			t.Errorf("RedactText(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzRedact: the pass never panics, writes valid JSON, and a second pass
// changes nothing (what is left holds nothing it would remove).
func FuzzRedact(f *testing.F) {
	for _, s := range []string{
		`{"env": {"MYPAT": "x", "CUTE_DSL_ARCH": "sm_121"}, "args": ["--api-key", "k", "-e", "A=b"]}`,
		`{"image": "u:p@ghcr.io/o/i:1", "name": "see http://h:1/v1", "labels": {"token": "t"}}`,
		`["--token=abc", "Bearer abcdefgh", "sk-abcdefgh"]`, `"${HF_TOKEN}"`, `{"nodes": {"wrong-key": {"id": "x"}}}`,
		`{"a": 1, "a": 2}`, `not json`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if once := RedactText(string(data)); RedactText(once) != once {
			t.Fatalf("RedactText is not settled on %q: %q then %q", data, once, RedactText(once))
		}
		out, err := RedactJSON(data)
		tree, terr := redactJSONTree(data)
		if (err == nil) != (terr == nil) || err == nil && !bytes.Equal(out, tree) {
			t.Fatalf("streamed and tree redaction differ on %q:\n%s (%v)\n%s (%v)", data, out, err, tree, terr)
		}
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("RedactJSON(%q) wrote invalid JSON %q", data, out)
		}
		again, err := RedactJSON(out)
		if err != nil || !bytes.Equal(again, out) {
			t.Fatalf("RedactJSON is not settled on %q:\n%s\n%s (%v)", data, out, again, err)
		}
	})
}

// redactJSONTree is RedactJSON the slow way, the reference the streamed
// pass must equal: decode into Go maps, redactValue, encode.
func redactJSONTree(data []byte) ([]byte, error) {
	if err := jsonpos.Duplicates(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more than one value")
	}
	redactValue(reflect.ValueOf(&v).Elem(), "", false)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
