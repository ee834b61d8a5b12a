package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docs/plan-json.md shows commands and, abridged, what they print: every
// value it shows must be what the command prints now.
func TestPlanJSONExamplesAreWhatTheCommandsPrint(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "plan-json.md"))
	if err != nil {
		t.Fatal(err)
	}
	pairs := regexp.MustCompile("(?s)```sh\n(poolsolve [^\n]*)\n```.*?```json\n(.*?)```").FindAllStringSubmatch(string(data), -1)
	if len(pairs) < 2 {
		t.Fatalf("docs/plan-json.md shows %d command and document pairs, want the feasible and the infeasible one", len(pairs))
	}
	t.Chdir("..")
	for _, p := range pairs {
		args := strings.Fields(strings.TrimPrefix(p[1], "poolsolve "))
		code, out, errOut := run(t, append(args, "--quiet")...)
		if code != ExitOK && code != ExitChanges && code != ExitInfeasible {
			t.Fatalf("%s: exit %d\n%s", p[1], code, errOut)
		}
		var shown, printed any
		if err := json.Unmarshal([]byte(p[2]), &shown); err != nil {
			t.Fatalf("the document under %q is not JSON: %v", p[1], err)
		}
		if err := json.Unmarshal([]byte(out), &printed); err != nil {
			t.Fatalf("%s printed no JSON: %v", p[1], err)
		}
		if err := within(shown, printed, "$"); err != nil {
			t.Errorf("docs/plan-json.md shows what %q does not print: %v", p[1], err)
		}
	}
}

// within reports where shown is not part of got: objects by their keys,
// arrays element by element as a subsequence (an abridged example leaves
// elements out, never reorders them), other values equal.
func within(shown, got any, path string) error {
	switch s := shown.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: shown an object, printed %v", path, got)
		}
		for k, v := range s {
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s.%s: shown, not printed", path, k)
			}
			if err := within(v, gv, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok {
			return fmt.Errorf("%s: shown an array, printed %v", path, got)
		}
		j := 0
		for i, v := range s {
			for j < len(g) && within(v, g[j], "") != nil {
				j++
			}
			if j == len(g) {
				return fmt.Errorf("%s[%d]: %v is not printed (in this order)", path, i, v)
			}
			j++
		}
		return nil
	}
	if fmt.Sprint(shown) != fmt.Sprint(got) {
		return fmt.Errorf("%s: shown %v, printed %v", path, shown, got)
	}
	return nil
}

// Every relative link in the README and docs/ names a file that exists.
func TestEveryDocLinkResolves(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join("..", "README.md"), filepath.Join("..", "docs", "schema", "README.md"))
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(f), target)); err != nil {
				t.Errorf("%s links %s, which does not exist", f, target)
			}
		}
		// Plain mentions of docs/*.md must name existing files too.
		for _, m := range regexp.MustCompile(`\bdocs/[a-z0-9-]+\.md\b`).FindAllString(string(data), -1) {
			if _, err := os.Stat(filepath.Join("..", m)); err != nil {
				t.Errorf("%s names %s, which does not exist", f, m)
			}
		}
	}
}
