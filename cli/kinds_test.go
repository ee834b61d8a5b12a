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

func TestValidateStopsWherePlanFindsNoPlanForAPin(t *testing.T) {
	data, err := os.ReadFile("../examples/spark-fleet/config.json")
	if err != nil {
		t.Fatal(err)
	}
	// "cluster" misspelt: LLooM ignores the block, the pool is one node
	// "local", and the keepWarm pins on spark-node-03 cannot hold.
	config := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(config, []byte(strings.Replace(string(data), `"cluster":`, `"cluser":`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", config, "--policy", "../examples/spark-fleet/pool.toml", "--profiles", "../examples/spark-fleet/profiles"}
	code, _, errOut := run(t, append([]string{"plan", "--quiet"}, args...)...)
	if code != ExitInfeasible {
		t.Fatalf("plan exits %d, want %d (no plan)\n%s", code, ExitInfeasible, errOut)
	}
	code, _, errOut = run(t, append([]string{"validate"}, args...)...)
	if code != ExitBadInput {
		t.Fatalf("validate exits %d where plan finds no plan, want %d\n%s", code, ExitBadInput, errOut)
	}
	for _, want := range []string{
		`key "cluser" is not LLooM's, which ignores it; did you mean "cluster"?`,
		`poolsolve: keepWarm spark03-stt: spark03-stt cannot run on spark-node-03: node spark-node-03 is not in the pool`,
		`pin(s) that no placement can hold: plan would find no plan`,
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("validate's stderr lacks %q:\n%s", want, errOut)
		}
	}
}
