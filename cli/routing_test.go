package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The config two LLooM 0.2.3 gateways served: alias chat targets primary
// (a lane on node-a) with fallback cloud, which 0.2.3 never tried.
const routingConfig = "../lloom/testdata/lloom-0.2.3-routing/config.json"

// TestAnAliasWhoseTargetIsNotPlannedIsUncoveredUnderLLooM023: with node-a
// cordoned, chat's target cannot run; 0.2.3 fails the request, a later
// release sends it to cloud. plan, explain and resilience all say which.
func TestAnAliasWhoseTargetIsNotPlannedIsUncoveredUnderLLooM023(t *testing.T) {
	base := []string{"--config", routingConfig, "--cordon", "node-a"}
	tests := []struct {
		name    string
		version string
		plan    []string
		explain string
	}{
		{"0.2.3 takes no fallback", "0.2.3", []string{
			"Routing: LLooM 0.2.3 (--lloom-version 0.2.3): an alias goes to its target alone; fallbacks are not taken",
			"! chat loses all coverage: primary via primary-lane on node-a: node-a is cordoned (--cordon); LLooM 0.2.3 sends chat to its target alone, never to cloud",
			"1 coverage            1  uncovered sources",
		}, "Routing: LLooM 0.2.3 (--lloom-version 0.2.3) sends chat to its target alone, never to cloud: a fallback covers nothing."},
		{"a later release takes the fallback", "0.3.0", []string{
			"Routing: LLooM 0.3.0 (--lloom-version 0.3.0): an alias goes to its first available member",
			"  chat         0 req  cloud ",
			"1 coverage            0  uncovered sources",
		}, "chat -> cloud (external)"},
		{"an unknown release is read as 0.2.3, the most conservative", "", []string{
			"Routing: LLooM 0.2.3 (release unknown; the most conservative known reading (--lloom-version to choose))",
			"never to cloud",
		}, "never to cloud"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := base
			if tc.version != "" {
				args = append(args, "--lloom-version", tc.version)
			}
			_, out, errOut := run(t, append([]string{"plan", "--solver", "exact", "--quiet"}, args...)...)
			for _, w := range tc.plan {
				if !strings.Contains(out, w) {
					t.Errorf("plan lacks %q:\n%s%s", w, out, errOut)
				}
			}
			_, out, errOut = run(t, append([]string{"explain", "chat"}, args...)...)
			if !strings.Contains(out, tc.explain) {
				t.Errorf("explain lacks %q:\n%s%s", tc.explain, out, errOut)
			}
		})
	}
	for format, want := range map[string]string{
		"svg": "Routing: LLooM 0.2.3 (--lloom-version 0.2.3): an alias goes to its target alone",
		"json": `"routing": {
    "reading": "target",
    "release": "0.2.3",
    "basis": "--lloom-version 0.2.3"
  }`,
	} {
		if _, out, _ := run(t, append([]string{"plan", "--quiet", "--format", format, "--lloom-version", "0.2.3"}, base...)...); !strings.Contains(out, want) {
			t.Errorf("the %s plan lacks %q:\n%s", format, want, out)
		}
	}
	_, out, _ := run(t, "resilience", "--config", routingConfig, "--lloom-version", "0.2.3")
	for _, w := range []string{
		"Routing: LLooM 0.2.3 (--lloom-version 0.2.3) sends an alias to its target alone",
		"why chat: primary via primary-lane on node-a: node-a is down; LLooM 0.2.3 sends chat to its target alone, never to cloud",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("resilience lacks %q:\n%s", w, out)
		}
	}
}

// TestThePlanCheckerReadsAliasesAsTheReleaseDoes: the evaluator applies
// the reading from the pool on its own: a plan that sends chat to its
// fallback is invalid under 0.2.3, valid under a later release.
func TestThePlanCheckerReadsAliasesAsTheReleaseDoes(t *testing.T) {
	later := filepath.Join(t.TempDir(), "plan.json")
	if code, _, errOut := run(t, "plan", "--config", routingConfig, "--cordon", "node-a", "--lloom-version", "0.3.0", "--quiet", "--format", "json", "-o", later); code != ExitChanges {
		t.Fatalf("plan exited %d: %s", code, errOut)
	}
	data, err := os.ReadFile(later)
	if err != nil || !strings.Contains(string(data), `"reading": "members"`) {
		t.Fatalf("the plan does not state its reading (%v):\n%s", err, data)
	}
	tests := []struct {
		version string
		code    int
		want    string
	}{
		{"0.3.0", ExitOK, "valid, every hard constraint holds"},
		{"0.2.3", ExitChanges, "chat: cloud is not a candidate (candidates: primary)"},
		{"0.2.3", ExitChanges, "note: the plan was made with the members reading of aliases; it is checked with the target reading of LLooM 0.2.3 (--lloom-version 0.2.3)"},
	}
	for _, tc := range tests {
		t.Run("checked as "+tc.version+": "+tc.want, func(t *testing.T) {
			code, out, errOut := run(t, "check", "--plan", later, "--config", routingConfig, "--cordon", "node-a", "--lloom-version", tc.version)
			if code != tc.code || !strings.Contains(out, tc.want) {
				t.Errorf("exit %d, want %d; lacks %q:\n%s%s", code, tc.code, tc.want, out, errOut)
			}
		})
	}
}
