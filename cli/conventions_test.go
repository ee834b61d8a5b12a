package cli

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionSaysModuleVersionAndCommit(t *testing.T) {
	tests := []struct {
		name string
		bi   debug.BuildInfo
		want string
	}{
		{"go install at a version", debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v1.4.0"}},
			"v1.4.0 (go1.26.1)"},
		{"a build in a checkout", debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "3ee86b7a1b2c3d4e5f60718293a4b5c6d7e8f901"}, {Key: "vcs.time", Value: "2026-05-01T10:00:00Z"}, {Key: "vcs.modified", Value: "true"}}},
			"devel (commit 3ee86b7a1b2c, 2026-05-01T10:00:00Z, modified, go1.26.1)"},
		{"a build without VCS stamps", debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}},
			"devel (commit unknown, go1.26.1)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionOf(&tc.bi); got != tc.want {
				t.Errorf("versionOf = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestATypoIsNearItsWordAndAnotherWordIsNot(t *testing.T) {
	words := []string{"plan", "catalog", "validate", "export", "check", "help", "h"}
	tests := []struct{ typed, want string }{
		{"plna", "plan"},
		{"pln", "plan"},
		{"validat", "validate"},
		{"chek", "check"},
		{"hlep", "help"},
		{"frobnicate", ""},
		{"x", ""},
	}
	for _, tc := range tests {
		if got := nearest(tc.typed, words); got != tc.want {
			t.Errorf("nearest(%q) = %q, want %q", tc.typed, got, tc.want)
		}
	}
}

func TestEveryCommandTakesHelpAndRefusesStrayWords(t *testing.T) {
	for _, cmd := range newApp(nil, nil, nil).Commands {
		t.Run(cmd.Name, func(t *testing.T) {
			code, out, errOut := run(t, cmd.Name, "-h")
			if code != ExitOK || !strings.Contains(out, "poolsolve "+cmd.Name+" - ") {
				t.Errorf("%s -h: exit %d\n%s%s", cmd.Name, code, out, errOut)
			}
			if code, out, _ := run(t, "help", cmd.Name); code != ExitOK || !strings.Contains(out, "Exit codes") {
				t.Errorf("help %s: exit %d, or no exit codes in the help:\n%s", cmd.Name, code, out)
			}
			if cmd.Name == "completion" {
				return
			}
			if code, _, errOut := run(t, cmd.Name, "stray"); code != ExitBadInput || !strings.Contains(errOut, `unexpected argument "stray"`) {
				t.Errorf("%s stray: exit %d, stderr %q", cmd.Name, code, errOut)
			}
		})
	}
}
