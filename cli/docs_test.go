package cli

import (
	"encoding/json"
	"fmt"
	"github.com/poolsolve/poolsolve/internal/shellwords"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
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

// readmeCommands are the lines of the README's sh code blocks, without
// a trailing # comment, split at spaces and single quotes as a shell
// does for these lines.
func readmeCommands(t *testing.T) [][]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in:
			words := shellwords.Split(l)
			if len(words) > 0 {
				out = append(out, words)
			}
		}
	}
	return out
}

// TestTheReadmesSeparateFilesGiveTheBundlesPlan: the README's plan of
// examples/spark-fleet/ file by file is the plan of the bundle it was
// split from; only the plan's fleet name differs.
func TestTheReadmesSeparateFilesGiveTheBundlesPlan(t *testing.T) {
	var separate []string
	for _, words := range readmeCommands(t) {
		if len(words) > 3 && words[0] == "poolsolve" && words[1] == "plan" && strings.Join(words[2:4], " ") == "--config examples/spark-fleet/config.json" &&
			!slices.Contains(words, "--gateway") {
			separate = words[1:]
			break
		}
	}
	if separate == nil {
		t.Fatal("the README plans no examples/spark-fleet/config.json file by file")
	}
	t.Chdir("..")
	planOf := func(args ...string) map[string]any {
		code, out, errOut := run(t, append(args, "--format", "json", "--quiet")...)
		if code != ExitOK && code != ExitChanges {
			t.Fatalf("poolsolve %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
		var doc map[string]any
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		delete(doc, "fleet")
		return doc
	}
	bundle := planOf("plan", "--fleet", "examples/spark-fleet.json")
	files := planOf(separate...)
	if !reflect.DeepEqual(bundle, files) {
		b, _ := json.MarshalIndent(bundle, "", "  ")
		f, _ := json.MarshalIndent(files, "", "  ")
		t.Errorf("the README's `poolsolve %s` plans otherwise than the bundle:\n%s", strings.Join(separate, " "), firstDiff(string(b), string(f)))
	}
}

// firstDiff is the first line where a and b differ, with both versions.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return fmt.Sprintf("line %d: bundle %q, files %q", i+1, al[i], bl[i])
		}
	}
	return fmt.Sprintf("bundle %d lines, files %d", len(al), len(bl))
}

// TestTheReadmesInstallCommandsBuildTheBinary runs the README's go build
// and go install lines as written, in the repository's root (go install
// into a temporary GOBIN): a fresh machine with Go gets a binary by them.
func TestTheReadmesInstallCommandsBuildTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary twice")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	gobin := t.TempDir()
	ran := map[string]bool{}
	for _, words := range readmeCommands(t) {
		if len(words) < 2 || words[0] != "go" || words[1] != "build" && words[1] != "install" {
			continue
		}
		cmd := exec.Command(words[0], words[1:]...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOBIN="+gobin)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("README: %s: %v\n%s", strings.Join(words, " "), err, out)
			continue
		}
		ran[words[1]] = true
		if i := slices.Index(words, "-o"); i >= 0 && i+1 < len(words) {
			built := filepath.Join(root, words[i+1])
			if _, err := os.Stat(built); err != nil {
				t.Errorf("README: %s wrote no %s: %v", strings.Join(words, " "), words[i+1], err)
			}
			os.Remove(built)
		}
	}
	if !ran["build"] || !ran["install"] {
		t.Fatalf("the README's sh blocks have no go build and go install lines to run (ran %v)", ran)
	}
	if _, err := os.Stat(filepath.Join(gobin, "poolsolve")); err != nil {
		t.Errorf("go install . put no poolsolve in GOBIN: %v", err)
	}
}

// TestTheGlossaryDefinesTheWordsTheOutputUses: docs/glossary.md has an
// entry for each word a newcomer meets in a plan, and the README links it.
func TestTheGlossaryDefinesTheWordsTheOutputUses(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "docs", "glossary.md"))
	if err != nil {
		t.Fatal(err)
	}
	entries := map[string]bool{}
	for _, l := range strings.Split(string(data), "\n") {
		if h, ok := strings.CutPrefix(l, "### "); ok {
			for _, w := range regexp.MustCompile(`[, ]+(and )?`).Split(h, -1) {
				entries[w] = true
			}
		}
	}
	for _, w := range []string{"lane", "variant", "residency", "keepWarm", "always", "level", "unit", "alias", "domain", "source", "node", "link", "pin", "route", "churn", "rollout", "fleet bundle"} {
		if !entries[w] && !strings.Contains(string(data), "### "+w+"\n") {
			t.Errorf("docs/glossary.md has no entry (### %s)", w)
		}
	}
	for _, r := range []string{"`always`", "`preferred`", "`auto`"} {
		if !strings.Contains(string(data), "- "+r+":") {
			t.Errorf("docs/glossary.md does not define the residency %s", r)
		}
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(docs/glossary.md)") {
		t.Error("the README does not link docs/glossary.md")
	}
}
