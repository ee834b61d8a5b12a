package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestNoKeyIsEchoedWhateverFlagItIsPassedTo gives the key itself, in many
// shapes, to every flag that takes a key or a key's name, on every command
// that has one, on the command line and through the flag's environment
// variable: the run is refused (exit 2) and the key appears on neither
// stdout nor stderr.
func TestNoKeyIsEchoedWhateverFlagItIsPassedTo(t *testing.T) {
	keys := []struct{ name, key string }{
		{"a long secret with dashes", "hunter2-long-secret"},
		{"a short key that looks like a variable name", "abc"},
		{"an unset upper-case name", "ZZ_SECRET_KEY_7F3E"},
		{"a JWT", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJwb29sIn0.c2lnbmF0dXJlLXF3ZXJ0eQ"},
		{"an OpenAI-style key", "sk-proj-Zx9aQ1bW2cE3dR4fT5gY6hU7"},
		{"a key with spaces", "correct horse battery staple"},
		{"a key with dashes only", "a1-b2-c3-d4"},
	}
	app := newApp(strings.NewReader(""), nil, nil)
	type target struct{ command, flag string }
	var targets []target
	var walk func(prefix string, cmds []*cli.Command)
	walk = func(prefix string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			for _, f := range cmd.Flags {
				if name := f.Names()[0]; strings.Contains(name, "key") || strings.Contains(name, "token") || strings.Contains(name, "secret") {
					targets = append(targets, target{strings.TrimSpace(prefix + " " + cmd.Name), name})
				}
			}
			walk(prefix+" "+cmd.Name, cmd.Subcommands)
		}
	}
	walk("", app.Commands)
	if len(targets) < 2 {
		t.Fatalf("found %v; want at least plan's and serve's --api-key-env", targets)
	}
	for _, tg := range targets {
		var base []string
		if tg.command == "serve" {
			base = []string{"serve", "--listen", "127.0.0.1:0", "--node-id", "n1"}
		} else {
			base = append(strings.Fields(tg.command), "--gateway", "http://127.0.0.1:9", "--config", "../examples/spark-fleet/config.json")
		}
		// What each command needs besides, so the run reaches the key.
		switch tg.command {
		case "check":
			plan := filepath.Join(t.TempDir(), "plan.json")
			if err := os.WriteFile(plan, []byte(`{"schema": "poolsolve.plan/v1", "nodes": [], "routes": []}`), 0o644); err != nil {
				t.Fatal(err)
			}
			base = append(base, "--plan", plan)
		case "export":
			base = append(base, "--format", "json")
		case "explain":
			base = append(base, "q38fn")
		}
		for _, k := range keys {
			t.Run(tg.command+" --"+tg.flag+" given "+k.name, func(t *testing.T) {
				check := func(how string, code int, stdout, stderr string) {
					t.Helper()
					if code != ExitBadInput {
						t.Errorf("%s: exit %d, want %d: %s", how, code, ExitBadInput, stderr)
					}
					if !strings.Contains(stderr, "--"+tg.flag) {
						t.Errorf("%s: the refusal does not name the flag: %q", how, stderr)
					}
					if strings.Contains(stdout, k.key) || strings.Contains(stderr, k.key) {
						t.Errorf("%s: the key is echoed:\nstdout: %s\nstderr: %s", how, stdout, stderr)
					}
				}
				code, stdout, stderr := runCLI(t, append(append([]string{}, base...), "--"+tg.flag, k.key)...)
				check("on the command line", code, stdout, stderr)
				code, stdout, stderr = runCLI(t, append(append([]string{}, base...), "--"+tg.flag+"="+k.key)...)
				check("as --flag=value", code, stdout, stderr)
				t.Setenv(envVar(tg.flag), k.key)
				code, stdout, stderr = runCLI(t, base...)
				check("through "+envVar(tg.flag), code, stdout, stderr)
			})
		}
	}
}
