// Package schema_test holds the documents' JSON Schemas to what poolsolve
// writes and documents: every example bundle and inventory, every golden
// plan, the JSON examples of the docs, and what the commands print now.
package schema_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/poolsolve/poolsolve/benchmarks"
	"github.com/poolsolve/poolsolve/cli"
)

const base = "https://raw.githubusercontent.com/poolsolve/poolsolve/main/docs/schema/"

// schemas compiles the schemas, each under its $id, so references
// between them resolve without the network.
func schemas(t *testing.T) map[string]*jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	names := []string{"fleet", "plan", "inventory", "resilience", "explain"}
	for _, n := range names {
		f, err := os.Open(n + ".schema.json")
		if err != nil {
			t.Fatal(err)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s.schema.json: %v", n, err)
		}
		if id := doc.(map[string]any)["$id"]; id != base+n+".schema.json" {
			t.Fatalf("%s.schema.json: $id %v, want %s", n, id, base+n+".schema.json")
		}
		if err := c.AddResource(base+n+".schema.json", doc); err != nil {
			t.Fatal(err)
		}
	}
	out := map[string]*jsonschema.Schema{}
	for _, n := range names {
		s, err := c.Compile(base + n + ".schema.json")
		if err != nil {
			t.Fatalf("compile %s: %v", n, err)
		}
		out[n] = s
	}
	return out
}

func validate(t *testing.T, s *jsonschema.Schema, what string, data []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Errorf("%s: not JSON: %v", what, err)
		return
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("%s does not hold to its schema:\n%v", what, err)
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func glob(t *testing.T, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("%s matches nothing (%v)", pattern, err)
	}
	return files
}

// poolsolve runs the CLI in-process; tests move to the repository's root
// first, as the examples' paths are from there.
func poolsolve(t *testing.T, args ...string) (int, []byte) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := cli.Run(append([]string{"poolsolve"}, args...), strings.NewReader(""), &out, &errOut)
	if code != cli.ExitOK && code != cli.ExitChanges && code != cli.ExitInfeasible {
		t.Fatalf("poolsolve %s: exit %d\n%s", strings.Join(args, " "), code, errOut.String())
	}
	return code, out.Bytes()
}

// jsonBlocks are the ```json blocks of a markdown file.
func jsonBlocks(t *testing.T, path string) []string {
	t.Helper()
	re := regexp.MustCompile("(?s)```json\n(.*?)```")
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(read(t, path)), -1) {
		out = append(out, m[1])
	}
	if len(out) == 0 {
		t.Fatalf("%s has no json blocks", path)
	}
	return out
}

func TestEveryFleetBundleHoldsToTheFleetSchema(t *testing.T) {
	s := schemas(t)["fleet"]
	files := append(glob(t, "../../examples/*.json"), glob(t, "../../benchmarks/fixtures/*.json")...)
	for _, f := range files {
		data := read(t, f)
		if !bytes.Contains(data, []byte(`"schema": "poolsolve.fleet/v1"`)) {
			continue // suite.json lists the suite
		}
		validate(t, s, f, data)
	}
	// Generated fleets, as bench --write-fleet writes them.
	insts, err := benchmarks.SizeInstances([]benchmarks.Size{{Nodes: 3, Variants: 10}, {Nodes: 24, Variants: 60, Tight: true}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range insts {
		validate(t, s, "generated "+in.Name, in.Bundle)
	}
	// The docs' fragments ("config": {...}), each as the part of a bundle
	// it shows; the Shape block's placeholders are not a bundle.
	for _, doc := range []string{"../fleet-bundle.md", "../policy.md"} {
		for i, b := range jsonBlocks(t, doc) {
			if strings.Contains(b, `"...":`) {
				continue
			}
			frag := strings.TrimSpace(b)
			if !strings.HasPrefix(frag, `"`) {
				t.Errorf("%s block %d: not a bundle fragment:\n%s", doc, i, b)
				continue
			}
			key, _, _ := strings.Cut(frag[1:], `"`)
			var bundle string
			switch key {
			case "config":
				bundle = `{"schema": "poolsolve.fleet/v1", ` + frag + `}`
			case "pool":
				bundle = `{"schema": "poolsolve.fleet/v1", "config": {` + frag + `}}`
			default:
				bundle = `{"schema": "poolsolve.fleet/v1", "config": {}, ` + frag + `}`
			}
			validate(t, s, doc+" block "+key, []byte(bundle))
		}
	}
}

func TestEveryPlanHoldsToThePlanSchema(t *testing.T) {
	s := schemas(t)["plan"]
	for _, f := range append(glob(t, "../../plan/testdata/*.json.golden"), glob(t, "../../plan/testdata/*.plan.json")...) {
		validate(t, s, f, read(t, f))
	}
	for i, b := range jsonBlocks(t, "../plan-json.md") {
		validate(t, s, "docs/plan-json.md block "+string(rune('1'+i)), []byte(b))
	}
	runs := [][]string{
		{"--fleet", "examples/spark-fleet.json"},
		{"--fleet", "examples/spark-fleet.json", "--cordon", "spark-node-02"},
		{"--fleet", "examples/spark-fleet.json", "--cordon", "spark-node-03"},
		{"--fleet", "examples/spark-fleet.json", "--pin", "qwen38-27b-nvfp4=spark-node-02"},
		{"--fleet", "examples/spark-fleet.json", "--solver", "greedy", "--time-limit", "2s"},
		{"--fleet", "examples/hetero-fleet.json", "--consider-installs"},
		{"--fleet", "examples/rule-arch-mismatch.json"},
		{"--fleet", "examples/rule-headroom.json"},
		{"--fleet", "examples/rule-unlinked-tp.json"},
		{"--fleet", "benchmarks/fixtures/8x20.json", "--consider-installs"},
		{"--fleet", "examples/gpu-packing.json", "--consider-installs"},
	}
	t.Chdir(filepath.Join("..", ".."))
	for _, args := range runs {
		_, out := poolsolve(t, append([]string{"plan", "--quiet", "--format", "json"}, args...)...)
		validate(t, s, "plan "+strings.Join(args, " "), out)
	}
}

func TestEveryInventoryHoldsToTheInventorySchema(t *testing.T) {
	s := schemas(t)["inventory"]
	for _, f := range glob(t, "../../examples/spark-fleet/nodes/*.inventory.json") {
		validate(t, s, f, read(t, f))
	}
	for i, b := range jsonBlocks(t, "../inventory-json.md") {
		validate(t, s, "docs/inventory-json.md block "+string(rune('1'+i)), []byte(b))
	}
	t.Chdir(filepath.Join("..", ".."))
	_, out := poolsolve(t, "inventory", "--format", "json", "--node-id", "this-machine")
	validate(t, s, "poolsolve inventory --format json", out)
}

// The resilience reports and explain answers: the golden ones, and what
// the commands print now on the example fleets.
func TestEveryResilienceReportAndExplainAnswerHoldsToItsSchema(t *testing.T) {
	all := schemas(t)
	for _, f := range glob(t, "../../answer/testdata/resilience-*.json") {
		validate(t, all["resilience"], f, read(t, f))
	}
	for _, f := range glob(t, "../../answer/testdata/explain-*.json") {
		validate(t, all["explain"], f, read(t, f))
	}
	t.Chdir(filepath.Join("..", ".."))
	for _, args := range [][]string{
		{"resilience", "--fleet", "examples/spark-fleet.json"},
		{"resilience", "--fleet", "examples/spark-fleet.json", "--scenario", "spark-node-01,spark-node-03"},
		{"resilience", "--fleet", "examples/hetero-fleet.json", "--consider-installs"},
		{"resilience", "--fleet", "benchmarks/fixtures/8x20.json", "--consider-installs", "--replan-limit", "3s"},
		{"resilience", "--fleet", "examples/gpu-packing.json", "--consider-installs"},
	} {
		_, out := poolsolve(t, append(args, "--format", "json")...)
		validate(t, all["resilience"], strings.Join(args, " "), out)
	}
	for _, args := range [][]string{
		{"explain", "q38fn", "--fleet", "examples/spark-fleet.json"},
		{"explain", "embeddings", "--fleet", "examples/hetero-fleet.json", "--consider-installs"},
		{"explain", "qwen38-27b-nvfp4", "--node", "spark-node-02", "--fleet", "examples/spark-fleet.json"},
		{"explain", "recipe:tp4-chat-vllm/tp4-chat", "--node", "h100-01", "--fleet", "examples/gpu-packing.json", "--consider-installs"},
	} {
		_, out := poolsolve(t, append(args, "--format", "json")...)
		validate(t, all["explain"], strings.Join(args, " "), out)
	}
}

// The schemas refuse what the readers refuse, so that the tests above
// can fail.
func TestTheSchemasRefuseBrokenDocuments(t *testing.T) {
	all := schemas(t)
	mutate := func(path string, edit func(map[string]any)) []byte {
		var doc map[string]any
		if err := json.Unmarshal(read(t, path), &doc); err != nil {
			t.Fatal(err)
		}
		edit(doc)
		out, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	nodes := func(doc map[string]any) map[string]any { return doc["nodes"].(map[string]any) }
	tests := []struct {
		name, schema string
		doc          []byte
	}{
		{"a bundle with an unknown top-level key", "fleet", mutate("../../examples/spark-fleet.json", func(d map[string]any) { d["extra"] = 1 })},
		{"a bundle of another version", "fleet", mutate("../../examples/spark-fleet.json", func(d map[string]any) { d["schema"] = "poolsolve.fleet/v2" })},
		{"a misspelt policy key", "fleet", mutate("../../examples/spark-fleet.json", func(d map[string]any) {
			d["policy"].(map[string]any)["headroomGB"] = 4
		})},
		{"a negative runtime memory", "fleet", mutate("../../examples/spark-fleet.json", func(d map[string]any) {
			for _, r := range d["config"].(map[string]any)["runtimes"].(map[string]any) {
				r.(map[string]any)["memoryGb"] = -4
			}
		})},
		{"an inventory with an unknown key inside a bundle", "fleet", mutate("../../examples/spark-fleet.json", func(d map[string]any) {
			nodes(d)["spark-node-03"].(map[string]any)["inventory"].(map[string]any)["memoryDomain"] = []any{}
		})},
		{"a plan without its summary", "plan", mutate("../../plan/testdata/cordoned-pair.json.golden", func(d map[string]any) { delete(d, "summary") })},
		{"a plan with a change of no kind", "plan", mutate("../../plan/testdata/cordoned-pair.json.golden", func(d map[string]any) {
			d["changes"].([]any)[0].(map[string]any)["kind"] = "restart"
		})},
		{"an infeasible plan with routes", "plan", mutate("../../plan/testdata/cordoned-pair.json.golden", func(d map[string]any) { d["infeasible"] = true })},
		{"a resilience scenario of an unknown status", "resilience", mutate("../../answer/testdata/resilience-spark.json", func(d map[string]any) {
			d["scenarios"].([]any)[0].(map[string]any)["status"] = "fine"
		})},
		{"a resilience report without its summary", "resilience", mutate("../../answer/testdata/resilience-spark.json", func(d map[string]any) { delete(d, "summary") })},
		{"an explain answer with a reason of no rule", "explain", mutate("../../answer/testdata/explain-chat-arch.json", func(d map[string]any) {
			d["route"].(map[string]any)["options"].([]any)[0].(map[string]any)["reasons"].([]any)[0].(map[string]any)["rule"] = "vibes"
		})},
		{"an inventory with a negative capacity", "inventory", mutate("../../examples/spark-fleet/nodes/spark-node-03.inventory.json", func(d map[string]any) {
			d["memoryDomains"].([]any)[0].(map[string]any)["capacityGb"] = -1
		})},
		{"an inventory with a misspelt key", "inventory", mutate("../../examples/spark-fleet/nodes/spark-node-03.inventory.json", func(d map[string]any) { d["nodeID"] = "x" })},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			if all[tc.schema].Validate(inst) == nil {
				t.Errorf("the %s schema accepts it", tc.schema)
			}
		})
	}
	// An x- extension is allowed in an inventory.
	validate(t, all["inventory"], "an inventory with an x- key", mutate("../../examples/spark-fleet/nodes/spark-node-03.inventory.json", func(d map[string]any) { d["x-rack"] = "b2" }))
}
