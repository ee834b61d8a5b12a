package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run drives the CLI in-process and returns exit code, stdout, stderr.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Run(append([]string{"poolsolve"}, args...), strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

const spark = "../examples/spark-fleet.json"

func TestBadInputExitsTwoWithAClearMessage(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	truncated := write("truncated.json", `{"schema": "poolsolve.fleet/v1", "config": {"cluster": {"nodes": {`)
	badToml := write("pool.toml", "headroomGb = 4\n[objective]\nchurnWieght = 2\n")
	negative := write("config.json", `{"cluster":{"nodes":{"a":{"endpoint":"http://a","resources":{"memoryGb":64}}}},
		"runtimes":{"r":{"enabled":true,"node":"a","memoryGb":-4}},
		"backends":{"b":{"type":"openai","baseUrl":"http://x"}},
		"models":[{"id":"m","backend":"b","runtime":"r"}]}`)
	cycle := write("cycle.json", `{"cluster":{"nodes":{"a":{"endpoint":"http://a"}}},
		"backends":{"b":{"type":"openai","baseUrl":"http://x"}},
		"models":[{"id":"m","backend":"b"}],
		"aliases":{"x":{"members":["y"]},"y":{"members":["x"]}}}`)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"no inputs at all", []string{"plan"}, []string{"no inputs: give --fleet FILE"}},
		{"a truncated bundle names the file and where it ends", []string{"plan", "--fleet", truncated}, []string{"truncated.json"}},
		{"a missing bundle file", []string{"catalog", "--fleet", filepath.Join(dir, "nope.json")}, []string{"nope.json"}},
		{"a misspelt pool.toml key names the key", []string{"plan", "--fleet", spark, "--policy", badToml}, []string{"pool.toml", "churnWieght"}},
		{"a negative memory names the JSON path", []string{"validate", "--config", negative}, []string{`$.runtimes["r"].memoryGb`, "config.json"}},
		{"an alias cycle is reported", []string{"validate", "--config", cycle}, []string{"cycle"}},
		{"a pin to an unknown node", []string{"plan", "--fleet", spark, "--pin", "qwen38-27b-nvfp4=spark-node-09"}, []string{`"spark-node-09", which is not in the pool`}},
		{"a cordon of an unknown node", []string{"plan", "--fleet", spark, "--cordon", "spark-node-09"}, []string{`"spark-node-09"`}},
		{"a profile that does not exist", []string{"plan", "--fleet", spark, "--profile", "nope"}, []string{`no fleet profile "nope"`}},
		{"an unknown output format", []string{"plan", "--fleet", spark, "--format", "yaml"}, []string{`--format "yaml": expected text, json or svg`}},
		{"an unknown solver", []string{"plan", "--fleet", spark, "--solver", "magic"}, []string{`--solver "magic"`}},
		{"an unknown flag", []string{"plan", "--fleet", spark, "--frobnicate"}, []string{"frobnicate"}},
		{"a bundle with separate inputs too", []string{"plan", "--fleet", spark, "--config", negative}, []string{"do not also give --config"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.args...)
			if code != ExitBadInput {
				t.Fatalf("exit %d, want %d; stderr:\n%s\nstdout:\n%s", code, ExitBadInput, errOut, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
		})
	}
}

func TestValidateAcceptsTheExamples(t *testing.T) {
	for _, f := range []string{"spark-fleet.json", "hetero-fleet.json", "rule-arch-mismatch.json", "rule-headroom.json", "rule-unlinked-tp.json"} {
		t.Run(f, func(t *testing.T) {
			code, out, errOut := run(t, "validate", "--fleet", "../examples/"+f)
			if code != ExitOK || !strings.Contains(out, "inputs are valid") {
				t.Fatalf("exit %d\n%s%s", code, out, errOut)
			}
		})
	}
}

func TestCatalogJSONIsVersionedAndHasNoSecrets(t *testing.T) {
	code, out, errOut := run(t, "catalog", "--fleet", spark, "--format", "json")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		Schema string `json:"schema"`
		Pool   struct {
			Nodes []struct{ ID string } `json:"nodes"`
		} `json:"pool"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Schema != "poolsolve.catalog/v1" || len(doc.Pool.Nodes) != 3 {
		t.Errorf("schema %q, %d nodes", doc.Schema, len(doc.Pool.Nodes))
	}
	for _, secret := range []string{"http://", "https://", "apiKey", "QWEN27B_BACKEND_KEY", "sk-"} {
		if strings.Contains(out, secret) {
			t.Errorf("catalog output contains %q", secret)
		}
	}
}

func TestHelpDocumentsExitCodesAndExamples(t *testing.T) {
	code, out, _ := run(t, "plan", "--help")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, w := range []string{"Exit codes, and what each means for a CI job", "0  a plan was found and it changes nothing", "3  the hard constraints", "Examples:", "--cordon", "--pin", "--time-limit"} {
		if !strings.Contains(out, w) {
			t.Errorf("plan --help lacks %q", w)
		}
	}
	for _, cmd := range []string{"catalog", "validate"} {
		if _, out, _ := run(t, cmd, "--help"); !strings.Contains(out, "Examples:") {
			t.Errorf("%s --help has no examples", cmd)
		}
	}
}
