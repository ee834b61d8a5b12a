package cli

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/internal/golden"
)

type planDoc struct {
	Rollout *struct {
		Steps []struct {
			Step    int    `json:"step"`
			Subject string `json:"subject"`
		} `json:"steps"`
	} `json:"rollout"`
	Fleet     string `json:"fleet"`
	Objective []int64
	Levels    []struct {
		Level  int    `json:"level"`
		Value  int64  `json:"value"`
		Status string `json:"status"`
	} `json:"levels"`
	Nodes []struct {
		ID          string `json:"id"`
		Unavailable string `json:"unavailable"`
		Lanes       []struct {
			Variant   string `json:"variant"`
			Residency string `json:"residency"`
		} `json:"lanes"`
	} `json:"nodes"`
	Routes []struct {
		Source string `json:"source"`
		Model  string `json:"model"`
		Route  string `json:"routeName"`
	} `json:"routes"`
	Changes []struct {
		Kind    string `json:"kind"`
		Subject string `json:"subject"`
	} `json:"changes"`
	Unknown []struct {
		Variant string `json:"variant"`
		Status  string `json:"status"`
	} `json:"unknown"`
}

func planJSON(t *testing.T, args ...string) (int, planDoc, string) {
	t.Helper()
	code, out, errOut := run(t, append([]string{"plan", "--format", "json", "--quiet"}, args...)...)
	var doc planDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("plan JSON: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	return code, doc, out
}

func (d planDoc) route(source string) (model, route string) {
	for _, r := range d.Routes {
		if r.Source == source {
			return r.Model, r.Route
		}
	}
	return "", ""
}

func (d planDoc) residency(node, variant string) string {
	for _, n := range d.Nodes {
		if n.ID != node {
			continue
		}
		for _, l := range n.Lanes {
			if l.Variant == variant {
				return l.Residency
			}
		}
	}
	return ""
}

func (d planDoc) allOptimal(t *testing.T) {
	t.Helper()
	for _, l := range d.Levels {
		if l.Status != "optimal" {
			t.Errorf("level %d is %s, want optimal", l.Level, l.Status)
		}
	}
}

func TestAllNodesPresentMatchesTheRC16ProfileWithNoChanges(t *testing.T) {
	code, doc, _ := planJSON(t, "--fleet", spark)
	if code != ExitOK {
		t.Fatalf("exit %d, want %d (no changes)", code, ExitOK)
	}
	doc.allOptimal(t)
	if len(doc.Changes) != 0 {
		t.Errorf("changes: %+v", doc.Changes)
	}
	// sparkqwen-pair-rc16: q38fn -> local-first, enntity-presence -> local;
	// embeddings/stt/tts always, image preferred, 27B auto.
	for src, want := range map[string][2]string{
		"q38fn":            {"qwen3.8-flash-next", "local-first"},
		"enntity-presence": {"qwen3.8-flash-next", "local"},
		"embeddings":       {"Qwen/Qwen3-Embedding-4B", ""},
	} {
		if m, r := doc.route(src); m != want[0] || r != want[1] {
			t.Errorf("%s routes to %s (route %q), want %s (route %q)", src, m, r, want[0], want[1])
		}
	}
	for v, want := range map[string]string{
		"qwen3-embedding-4b": "always", "spark03-stt": "always", "spark03-tts-custom": "always",
		"qwen-image-diffusers": "preferred", "qwen38-27b-nvfp4": "auto",
	} {
		if got := doc.residency("spark-node-03", v); got != want {
			t.Errorf("%s residency %q, want %q", v, got, want)
		}
	}
	_, text, _ := run(t, "plan", "--fleet", spark, "--quiet")
	golden.Check(t, "plan-spark-all-present.txt", []byte(text))
}

func TestThePairCordonedMovesCognitionToThe27BAlwaysResident(t *testing.T) {
	args := []string{"--fleet", spark, "--cordon", "spark-node-01", "--cordon", "spark-node-02"}
	code, doc, _ := planJSON(t, args...)
	if code != ExitChanges {
		t.Fatalf("exit %d, want %d (changes)", code, ExitChanges)
	}
	doc.allOptimal(t)
	checkStandalone(t, doc, "manual-stop")
	_, text, _ := run(t, append([]string{"plan", "--quiet"}, args...)...)
	golden.Check(t, "plan-spark-pair-cordoned.txt", []byte(text))
}

// checkStandalone asserts the plan the standalone profile describes; pair
// is what becomes of the unmanaged pair: a manual stop when its nodes are
// cordoned, nothing ("") when they could not be asked.
func checkStandalone(t *testing.T, doc planDoc, pair string) {
	t.Helper()
	for _, src := range []string{"q38fn", "enntity-presence"} {
		if m, r := doc.route(src); m != "qwen38-27b-nvfp4" || r != "standalone" {
			t.Errorf("%s routes to %s (route %q), want the 27B (standalone)", src, m, r)
		}
	}
	if got := doc.residency("spark-node-03", "qwen38-27b-nvfp4"); got != "always" {
		t.Errorf("27B residency %q, want always", got)
	}
	kinds := map[string]string{}
	for _, c := range doc.Changes {
		kinds[c.Subject] = c.Kind
	}
	if kinds["sparkqwen-pair"] != pair {
		t.Errorf("the unmanaged pair gets %q, want %q; changes %+v", kinds["sparkqwen-pair"], pair, doc.Changes)
	}
	// 12+6+10 always plus the 27B's 40 leave 43.6 of 111.6 GiB: the 70 GiB
	// image lane fits neither resident nor on demand, so it stops.
	if kinds["qwen-image-diffusers"] != "stop" {
		t.Errorf("the image lane gets %q, want stop (it no longer fits)", kinds["qwen-image-diffusers"])
	}
}

func TestThePairUnreachablePlansLikeACordon(t *testing.T) {
	var b map[string]any
	data, err := os.ReadFile(spark)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	nodes := b["nodes"].(map[string]any)
	for _, id := range []string{"spark-node-01", "spark-node-02"} {
		n := nodes[id].(map[string]any)
		n["status"] = map[string]any{"ok": true, "node": map[string]any{
			"id": id, "reachable": false, "error": "connect timeout after 3000 ms", "telemetry": nil, "runtimeManager": map[string]any{"runtimes": map[string]any{}},
		}}
	}
	out, _ := json.Marshal(b)
	path := filepath.Join(t.TempDir(), "pair-down.json")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	code, doc, _ := planJSON(t, "--fleet", path)
	if code != ExitChanges {
		t.Fatalf("exit %d, want %d", code, ExitChanges)
	}
	// Whether the pair still runs is unknown: no stop is asked for, and
	// the plan says so.
	checkStandalone(t, doc, "")
	if len(doc.Unknown) != 1 || doc.Unknown[0].Variant != "sparkqwen-pair" || doc.Unknown[0].Status != "unknown (not read: spark-node-01: connect timeout after 3000 ms)" {
		t.Errorf("unknown lanes = %+v, want the pair as not read, naming spark-node-01 and why", doc.Unknown)
	}
	if doc.Rollout != nil {
		for _, s := range doc.Rollout.Steps {
			if s.Subject == "sparkqwen-pair" {
				t.Errorf("rollout step %d acts on the pair, whose status is unknown: %+v", s.Step, s)
			}
		}
	}
	for _, n := range doc.Nodes {
		if n.ID != "spark-node-03" && !strings.HasPrefix(n.Unavailable, "unreachable: connect timeout") {
			t.Errorf("%s unavailable = %q", n.ID, n.Unavailable)
		}
	}
}

// offlineArgs are the input flags of the example fleet as separate files
// in dir (a copy of examples/spark-fleet/, ending in a slash).
func offlineArgs(dir string) []string {
	args := []string{"--config", dir + "config.json", "--profiles", dir + "profiles", "--policy", dir + "pool.toml",
		"--metrics", dir + "metrics.json", "--benchmarks", dir + "benchmarks/gb10-qwen38-27b-nvfp4-vllm.json",
		"--recipes", dir + "recipes/linux-nvidia-gb10-qwen38-27b-nvfp4-vllm.json"}
	for _, n := range []string{"spark-node-01", "spark-node-02", "spark-node-03"} {
		args = append(args, "--status", n+"="+dir+"nodes/"+n+".status.json", "--inventory", n+"="+dir+"nodes/"+n+".inventory.json")
		if _, err := os.Stat(dir + "nodes/" + n + ".profile.json"); err == nil {
			args = append(args, "--machine-profile", n+"="+dir+"nodes/"+n+".profile.json")
		}
	}
	return args
}

func TestOfflineFilesGiveTheSamePlanAsTheBundle(t *testing.T) {
	args := offlineArgs("../examples/spark-fleet/")
	for _, extra := range [][]string{nil, {"--cordon", "spark-node-01", "--cordon", "spark-node-02"}} {
		_, _, files := planJSON(t, append(args, extra...)...)
		_, _, bundle := planJSON(t, append([]string{"--fleet", spark}, extra...)...)
		if stripFleet(t, files) != stripFleet(t, bundle) {
			t.Errorf("offline files and the bundle plan differently (%v):\n--- files\n%s\n--- bundle\n%s", extra, files, bundle)
		}
	}
}

// TestFilesWithAByteOrderMarkReadAsWithout: some Windows editors start a
// file with a UTF-8 byte order mark, which once failed with "invalid
// character 'ï'". Every JSON input (each separate file, a bundle, a plan
// for check) is read as if it were not there.
func TestFilesWithAByteOrderMarkReadAsWithout(t *testing.T) {
	dir := t.TempDir() + "/"
	src := "../examples/spark-fleet/"
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.HasSuffix(path, ".json") {
			data = append([]byte("\uFEFF"), data...)
		}
		dst := filepath.Join(dir, strings.TrimPrefix(path, src))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, want := planJSON(t, offlineArgs(src)...)
	if _, _, got := planJSON(t, offlineArgs(dir)...); stripFleet(t, got) != stripFleet(t, want) {
		t.Errorf("files with a byte order mark plan differently:\n%s", got)
	}
	bundle, err := os.ReadFile(spark)
	if err != nil {
		t.Fatal(err)
	}
	marked := filepath.Join(dir, "fleet.json")
	if err := os.WriteFile(marked, append([]byte("\uFEFF"), bundle...), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, doc := planJSON(t, "--fleet", marked)
	if code > ExitChanges {
		t.Fatalf("a bundle with a byte order mark: exit %d", code)
	}
	planFile := filepath.Join(dir, "plan.json")
	if err := os.WriteFile(planFile, append([]byte("\uFEFF"), doc...), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := run(t, "check", "--fleet", marked, "--plan", planFile); code != ExitOK {
		t.Errorf("check of a plan with a byte order mark: exit %d\n%s%s", code, out, errOut)
	}
}

func stripFleet(t *testing.T, doc string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "fleet")
	b, _ := json.Marshal(m)
	return string(b)
}

func TestPlanIsByteForByteDeterministic(t *testing.T) {
	args := []string{"--fleet", "../examples/hetero-fleet.json", "--consider-installs"}
	_, _, first := planJSON(t, args...)
	for range 2 {
		if _, _, again := planJSON(t, args...); again != first {
			t.Fatal("two runs of the same plan differ")
		}
	}
}

// On this generated fleet the LP and a PB worker prove the largest
// part's level 4 at about the same time, and either may come first: the
// plan must not depend on which did (it did, in 3 runs of 10, before
// the canonical re-solve was chosen by the pool alone), and neither may
// the document, byte for byte (its levels once named the prover).
func TestAProvedPlanDoesNotDependOnWhichProverFinishedFirst(t *testing.T) {
	if testing.Short() {
		t.Skip("six solves of a 24x60 fleet")
	}
	file := filepath.Join(t.TempDir(), "fleet.json")
	if code, out, errOut := run(t, "bench", "--sizes", "24x60-tight", "--write-fleet", file); code != ExitOK {
		t.Fatalf("write-fleet: exit %d\n%s%s", code, out, errOut)
	}
	var first string
	for i := range 6 {
		code, doc, out := planJSON(t, "--fleet", file, "--time-limit", "10s")
		if code != ExitOK && code != ExitChanges {
			t.Fatalf("run %d: exit %d", i, code)
		}
		for _, l := range doc.Levels {
			if l.Status != "optimal" {
				t.Fatalf("run %d: level %d is %s: the test needs every level proved", i, l.Level, l.Status)
			}
		}
		if strings.Contains(out, "boundSource") {
			t.Fatalf("run %d: the document names the prover, which depends on timing", i)
		}
		if i == 0 {
			first = out
		} else if out != first {
			t.Fatalf("run %d gave another document than run 0", i)
		}
	}
}

func TestConflictingPinsAreAnExplainedInfeasibility(t *testing.T) {
	// The image lane (70 GiB) and the 27B (40 GiB) both always-resident next
	// to 28 GiB of keepWarm lanes need 138 of 111.6 GiB.
	code, out, errOut := run(t, "plan", "--fleet", spark, "--quiet",
		"--pin", "qwen38-27b-nvfp4=spark-node-03", "--profile", "standalone", "--pin", "qwen-image-diffusers=spark-node-03")
	if code != ExitInfeasible {
		t.Fatalf("exit %d, want %d\n%s%s", code, ExitInfeasible, out, errOut)
	}
	for _, w := range []string{"qwen-image-diffusers", "qwen38-27b-nvfp4", "spark-node-03"} {
		if !strings.Contains(out, w) {
			t.Errorf("the explanation does not name %s:\n%s", w, out)
		}
	}
}

func TestPlanWritesItsOutputAtomically(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plan.json")
	code, out, errOut := run(t, "plan", "--fleet", spark, "--quiet", "--format", "json", "-o", path)
	if code != ExitOK || out != "" {
		t.Fatalf("exit %d, stdout %q, stderr %s", code, out, errOut)
	}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(data, []byte(`"schema": "poolsolve.plan/v1"`)) {
		t.Fatalf("plan file: %v\n%s", err, data)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func BenchmarkPlan(b *testing.B) {
	for _, f := range []string{"spark-fleet", "hetero-fleet", "rule-arch-mismatch", "rule-headroom", "rule-unlinked-tp"} {
		b.Run(f, func(b *testing.B) {
			for b.Loop() {
				var out, errOut bytes.Buffer
				code := Run([]string{"poolsolve", "plan", "--quiet", "--fleet", "../examples/" + f + ".json"}, nil, &out, &errOut)
				if code != ExitOK && code != ExitChanges {
					b.Fatalf("exit %d: %s", code, errOut.String())
				}
			}
		})
	}
}

func TestPlanDrawsAnSVGOnStdout(t *testing.T) {
	code, out, errOut := run(t, "plan", "--fleet", spark, "--quiet", "--format", "svg")
	if code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if !strings.HasPrefix(out, `<svg xmlns="http://www.w3.org/2000/svg"`) || !strings.HasSuffix(out, "</svg>\n") ||
		!strings.Contains(out, ">TP1 sparkqwen-pair (always): spark-node-01 + spark-node-02<") {
		t.Fatalf("not the plan's picture:\n%.400s", out)
	}
}
