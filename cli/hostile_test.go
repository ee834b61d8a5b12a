package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// hostileFleet is the example fleet with ids that carry what a terminal
// acts on: an OSC title sequence and a BEL, a right-to-left override, a
// colour sequence, a NUL, and a line break that would start a row of an
// exported file.
func hostileFleet(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(spark)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.NewReplacer(
		`"spark-node-01"`, `"\u001b]0;PWNED\u0007n01\u202e10-edon"`,
		`"qwen38-27b-nvfp4"`, `"q\u001b[31mRED\u0000\n+1 x1 >= 1 ;\nx"`,
		`"q38fn"`, `"q38\u009b2Jfn"`,
	).Replace(string(data))
	p := filepath.Join(t.TempDir(), "hostile.json")
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// terminalSafe reports the first character of out a terminal would act
// on, other than the line breaks between lines.
func terminalSafe(out string) (rune, bool) {
	for _, r := range out {
		if r == '\n' || r == ' ' {
			continue
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar {
			return r, false
		}
	}
	return 0, true
}

// TestTextOutputEscapesWhatATerminalWouldActOn: ids holding ESC, BEL, NUL
// or U+202E were printed raw by plan's text (an OSC sequence set the
// terminal's title). Text output, messages and exported comments now
// escape them as error messages do, and still name the id.
func TestTextOutputEscapesWhatATerminalWouldActOn(t *testing.T) {
	fleet := hostileFleet(t)
	dir := t.TempDir()
	planFile := filepath.Join(dir, "plan.json")
	if code, _, errOut := run(t, "plan", "--fleet", fleet, "--format", "json", "-o", planFile); code > ExitChanges {
		t.Fatalf("plan: exit %d\n%s", code, errOut)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"plan text", []string{"plan", "--fleet", fleet}, `\x1b]0;PWNED\an01\u202e10-edon`},
		{"catalog text", []string{"catalog", "--fleet", fleet}, `q\x1b[31mRED\x00\n+1 x1 >= 1 ;\nx`},
		{"check text", []string{"check", "--fleet", fleet, "--plan", planFile}, "valid"},
		{"resilience text", []string{"resilience", "--fleet", fleet, "--scenario", "\x1b]0;PWNED\an01\u202e10-edon", "--replan-limit", "2s"}, `\x1b]0;PWNED\an01\u202e10-edon`},
		{"explain text of a route", []string{"explain", "q38\u009b2Jfn", "--fleet", fleet}, `q38\u009b2Jfn`},
		{"explain text of a lane", []string{"explain", "q\x1b[31mRED\x00\n+1 x1 >= 1 ;\nx", "--node", "\x1b]0;PWNED\an01\u202e10-edon", "--fleet", fleet}, `\x1b]0;PWNED\an01\u202e10-edon`},
		{"a problem on stderr", []string{"plan", "--fleet", fleet, "--cordon", "q38\u009b2Jfn\u202e"}, `q38\u009b2Jfn\u202e`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, out, errOut := run(t, tc.args...)
			for what, text := range map[string]string{"stdout": out, "stderr": errOut} {
				if r, ok := terminalSafe(text); !ok {
					t.Errorf("%s holds %U:\n%s", what, r, text)
				}
			}
			if !strings.Contains(out+errOut, tc.want) {
				t.Errorf("the output does not name %s:\n%s%s", tc.want, out, errOut)
			}
		})
	}
	for _, format := range []string{"opb", "lp", "wcnf"} {
		file := filepath.Join(dir, "l4."+format)
		if code, _, errOut := run(t, "export", "--fleet", fleet, "--format", format, "--level", "4", "-o", file); code != ExitOK {
			t.Fatalf("export %s: exit %d\n%s", format, code, errOut)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := terminalSafe(string(data)); !ok {
			t.Errorf("the %s file holds %U", format, r)
		}
		for _, l := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(l, "+1 x1 >= 1 ;") {
				t.Errorf("an id started a row of the %s file: %q", format, l)
			}
		}
	}
}
