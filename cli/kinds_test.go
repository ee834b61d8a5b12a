package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestValidateWarnsOfMisspeltKeysAndRefusesAFileOfTheWrongKind(t *testing.T) {
	dir := t.TempDir()
	bundle, err := os.ReadFile(spark)
	if err != nil {
		t.Fatal(err)
	}
	misspelt := filepath.Join(dir, "memorygb.json")
	if err := os.WriteFile(misspelt, []byte(strings.Replace(string(bundle), `"memoryGb": 128`, `"memoryGB": 128`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := filepath.Join(dir, "plan.json")
	if code, _, errOut := run(t, "plan", "--quiet", "--fleet", spark, "--format", "json", "-o", plan); code > ExitChanges {
		t.Fatalf("plan: exit %d\n%s", code, errOut)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		inStderr string
	}{
		{"a key one edit from LLooM's is warned, with its line and the key meant",
			[]string{"validate", "--fleet", misspelt}, ExitOK,
			`poolsolve: warning: ` + misspelt + `:91:25: $.config.cluster.nodes["spark-node-01"].resources.memoryGB: key "memoryGB" is not LLooM's, which ignores it; did you mean "memoryGb"?`},
		{"plan warns the same",
			[]string{"plan", "--quiet", "--fleet", misspelt}, ExitOK,
			`key "memoryGB" is not LLooM's`},
		{"a bundle given as --config is named and sent to --fleet",
			[]string{"validate", "--config", spark}, ExitBadInput,
			spark + `:1:1: $: this is a fleet bundle (give it with --fleet), not LLooM's config.json`},
		{"a plan given as --fleet is named and sent to check --plan",
			[]string{"validate", "--fleet", plan}, ExitBadInput,
			plan + `:1:1: $: this is a plan (check reads it with --plan), not a fleet bundle`},
		{"a config given as --fleet is sent to --config",
			[]string{"validate", "--fleet", "../examples/spark-fleet/config.json"}, ExitBadInput,
			`this is LLooM's config.json (give it with --config), not a fleet bundle`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := run(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s", code, tc.code, errOut)
			}
			if !strings.Contains(errOut, tc.inStderr) {
				t.Errorf("stderr lacks %q:\n%s", tc.inStderr, errOut)
			}
		})
	}
}
