package cli

import (
	"strings"
	"testing"
)

func TestResilienceAndExplainRefuseBadInputWithExitTwo(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"a scenario node the pool lacks", []string{"resilience", "--fleet", spark, "--scenario", "spark-node-09"}, `"spark-node-09" is not a node of the pool (nodes: spark-node-01, spark-node-02, spark-node-03)`},
		{"a scenario link the pool lacks", []string{"resilience", "--fleet", spark, "--scenario", "spark-node-02<->spark-node-03"}, "is not a link of the pool"},
		{"a scenario with an empty item", []string{"resilience", "--fleet", spark, "--scenario", "spark-node-01,,spark-node-02"}, "an empty item"},
		{"a cordoned node as a scenario", []string{"resilience", "--fleet", spark, "--cordon", "spark-node-02", "--scenario", "spark-node-02"}, "carries nothing to lose"},
		{"an unknown resilience format", []string{"resilience", "--fleet", spark, "--format", "yaml"}, `--format "yaml": expected text, json or svg`},
		{"a zero replan limit", []string{"resilience", "--fleet", spark, "--replan-limit", "0s"}, "--replan-limit 0s: expected a positive duration"},
		{"an alias the pool lacks", []string{"explain", "nope", "--fleet", spark}, `alias "nope": not in the pool`},
		{"a runtime the pool lacks", []string{"explain", "nope", "--node", "spark-node-01", "--fleet", spark}, `runtime "nope": not in the pool`},
		{"a node the pool lacks", []string{"explain", "qwen38-27b-nvfp4", "--node", "spark-node-09", "--fleet", spark}, `node "spark-node-09": not in the pool`},
		{"no question", []string{"explain", "--fleet", spark}, "explain takes one ALIAS, or one RUNTIME with --node NODE; got none"},
		{"two questions", []string{"explain", "q38fn", "embeddings", "--fleet", spark}, `unexpected argument "embeddings"`},
		{"an unknown explain format", []string{"explain", "q38fn", "--fleet", spark, "--format", "svg"}, `--format "svg": expected text or json`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := run(t, tc.args...)
			if code != ExitBadInput || !strings.Contains(errOut, tc.want) {
				t.Fatalf("exit %d, want %d with %q; stderr:\n%s\nstdout:\n%s", code, ExitBadInput, tc.want, errOut, out)
			}
		})
	}
}

func TestWhatIfCommandsOnInfeasiblePinsExitThreeWithTheReason(t *testing.T) {
	for _, cmd := range [][]string{{"resilience"}, {"explain", "q38fn"}} {
		args := append(cmd, "--fleet", spark, "--pin", "qwen38-27b-nvfp4=spark-node-02")
		code, out, errOut := run(t, args...)
		if code != ExitInfeasible || !strings.Contains(errOut, "qwen38-27b-nvfp4 is a managed runtime") || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr:\n%s", cmd[0], code, out, errOut)
		}
	}
}

// flagsFirst lets flags follow explain's argument, and leaves every
// other command alone.
func TestExplainReadsFlagsAfterItsArgument(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"flags after the alias", "poolsolve explain q38fn --fleet f.json --format json", "poolsolve explain --fleet f.json --format json q38fn"},
		{"a boolean flag takes no value", "poolsolve explain q38fn --consider-installs --fleet f.json", "poolsolve explain --consider-installs --fleet f.json q38fn"},
		{"a flag=value takes no next word", "poolsolve explain --node=n1 rt --fleet f.json", "poolsolve explain --node=n1 --fleet f.json rt"},
		{"-- ends the flags", "poolsolve explain --fleet f.json -- --odd-alias", "poolsolve explain --fleet f.json -- --odd-alias"},
		{"other commands keep their order", "poolsolve plan x --fleet f.json", "poolsolve plan x --fleet f.json"},
	}
	app := newApp(nil, nil, nil)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := strings.Join(flagsFirst(app, strings.Fields(tc.in)), " "); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
