package fleet

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
	"github.com/poolsolve/poolsolve/lloom"
)

// examples are the fleet bundles in examples/; every one must load and
// validate cleanly.
var examples = []string{
	"spark-fleet.json",
	"hetero-fleet.json",
	"rule-unlinked-tp.json",
	"rule-arch-mismatch.json",
	"rule-headroom.json",
	"gpu-packing.json",
}

func loadExample(t testing.TB, name string) *Inputs {
	t.Helper()
	in, err := LoadBundle(filepath.Join("..", "examples", name))
	if err != nil {
		t.Fatalf("LoadBundle(%s): %v", name, err)
	}
	return in
}

// withoutProvenance returns a copy of in without what says where the
// documents came from: Sources, the bundle-only description, the File
// fields lloom records, and the layout of the metrics as read. What remains must not depend on the packaging.
func withoutProvenance(in *Inputs) Inputs {
	out := *in
	out.Sources, out.Description = nil, ""
	cfg := *in.Config
	cfg.File = ""
	out.Config = &cfg
	out.Profiles = map[string]*lloom.Profile{}
	for k, p := range in.Profiles {
		c := *p
		c.File = ""
		out.Profiles[k] = &c
	}
	if in.Profiles == nil {
		out.Profiles = nil
	}
	if in.Metrics != nil {
		m := *in.Metrics
		m.File = ""
		out.Metrics = &m
	}
	if in.raw.metrics != nil {
		// Kept as read, so laid out as the file was.
		out.raw.metrics, _ = canonicalJSON(in.raw.metrics)
	}
	out.Benchmarks = nil
	for _, b := range in.Benchmarks {
		c := *b
		c.File = ""
		out.Benchmarks = append(out.Benchmarks, &c)
	}
	out.Recipes = nil
	for _, r := range in.Recipes {
		c := *r
		c.File = ""
		out.Recipes = append(out.Recipes, &c)
	}
	return out
}

func TestEveryExampleLoadsAndValidatesCleanly(t *testing.T) {
	files, err := filepath.Glob("../examples/*.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(examples) {
		t.Errorf("examples/ holds %d bundles, the test knows %d: %v", len(files), len(examples), files)
	}
	for _, name := range examples {
		t.Run(name, func(t *testing.T) {
			in := loadExample(t, name)
			if p := in.Validate(); p != nil {
				t.Errorf("Validate() =\n%v\nwant no problems", p)
			}
			if in.Description == "" {
				t.Errorf("the example has no description")
			}
			if in.Config == nil || in.Policy == nil || len(in.Nodes) == 0 || in.Metrics == nil {
				t.Errorf("the example lacks config, policy, nodes or metrics")
			}
		})
	}
}

func TestTheSparkFleetCarriesTheNumbersThePlannerTestsUse(t *testing.T) {
	in := loadExample(t, "spark-fleet.json")
	cfg := in.Config
	if got := in.NodeIDs(); !reflect.DeepEqual(got, []string{"spark-node-01", "spark-node-02", "spark-node-03"}) {
		t.Errorf("nodes = %v", got)
	}
	linked := map[string]bool{}
	for _, l := range cfg.Cluster.Discovery.Links {
		linked[l.NodeID+"-"+l.PeerNodeID] = true
	}
	if !linked["spark-node-01-spark-node-02"] || !linked["spark-node-01-spark-node-03"] || linked["spark-node-02-spark-node-03"] || linked["spark-node-03-spark-node-02"] {
		t.Errorf("links = %v, want 01-02 and 01-03 only", linked)
	}
	if u := cfg.RuntimePolicy.MaxMemoryUtilization; u == nil || *u != 0.95 {
		t.Errorf("maxMemoryUtilization = %v, want 0.95", u)
	}
	for id, want := range map[string]float64{"qwen38-27b-nvfp4": 40, "qwen3-embedding-4b": 12, "spark03-stt": 6,
		"spark03-tts-custom": 10, "qwen-image-diffusers": 70, "sparkqwen-pair-head": 108, "sparkqwen-pair-worker": 108} {
		if got, _ := lloom.RuntimeMemoryGb(cfg.Runtimes[id]); got != want {
			t.Errorf("runtime %s memory = %g, want %g", id, got, want)
		}
	}
	if !cfg.Runtimes["qwen3-embedding-4b"].KeepWarm || !cfg.Runtimes["qwen-image-diffusers"].PreferredWarm || cfg.Runtimes["qwen38-27b-nvfp4"].KeepWarm {
		t.Errorf("residencies of 03's lanes are not embedding always, image preferred, 27B auto")
	}
	if got := in.Policy.SLO; !reflect.DeepEqual(got, map[string]SLO{"q38fn": {FirstTokenMs: 2000}, "enntity-presence": {FirstTokenMs: 2000}}) {
		t.Errorf("policy SLOs = %v", got)
	}
	requested := map[string]int64{}
	for _, b := range in.Metrics.Requested {
		requested[b.ID] = b.Requests
	}
	if want := map[string]int64{"q38fn": 1840, "enntity-presence": 5200, "embeddings": 22000}; !reflect.DeepEqual(requested, want) {
		t.Errorf("requested demand = %v, want %v (nothing for the 27B or the image model)", requested, want)
	}
	if b := lloom.Bucket(in.Metrics.Models, "qwen3.8-flash-next"); b == nil || b.Requests != 7040 || *b.AvgFirstContentMs != 850 || *b.DecodeTokensPerSecond != 40.1 {
		t.Errorf("pair model bucket = %+v", b)
	}
	st := in.Nodes["spark-node-03"].Status
	if st.Telemetry.Memory.AvailableBytes == nil || *st.Telemetry.Memory.AvailableBytes != 37446574080 {
		t.Errorf("spark-node-03 availableBytes = %v", st.Telemetry.Memory.AvailableBytes)
	}
	if got := st.RuntimeManager.Runtimes["qwen38-27b-nvfp4"].Status; got != "stopped" {
		t.Errorf("27B status = %q, want stopped", got)
	}
	res := in.Benchmarks[0].Results
	if len(res) != 2 || *res[0].Metrics.TimeToFirstTokenMs != 1042 || *res[1].Metrics.GenerationTokPerSec != 47.4 {
		t.Errorf("benchmark results = %+v", res)
	}
	if r := in.Recipes[0]; r.ID != "linux-nvidia-gb10-qwen38-27b-nvfp4-vllm" || *r.Requirements.MemoryGb != 80 || *r.Models[0].Settings.MaxSequences != 4 {
		t.Errorf("recipe = %+v", r)
	}
}

func TestBundleReadsBackWhatItWrote(t *testing.T) {
	for _, name := range examples {
		t.Run(name, func(t *testing.T) {
			first := loadExample(t, name)
			data, err := first.Bundle(false)
			if err != nil {
				t.Fatalf("Bundle: %v", err)
			}
			second, err := ParseBundle(data, "written.json")
			if err != nil {
				t.Fatalf("ParseBundle(Bundle()): %v", err)
			}
			a, b := withoutProvenance(first), withoutProvenance(second)
			if !reflect.DeepEqual(a, b) {
				t.Errorf("the written bundle reads back differently")
			}
			again, err := second.Bundle(false)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(data, again) {
				t.Errorf("writing the bundle twice gives different bytes")
			}
		})
	}
}

func TestBundleWritesSortedKeysWithTwoSpaces(t *testing.T) {
	in := loadExample(t, "rule-headroom.json")
	data, err := in.Bundle(false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("{\n  \"config\": {\n    \"aliases\": {")) {
		t.Errorf("bundle starts %q, want sorted keys and two-space indent", data[:40])
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Errorf("bundle is not JSON: %v", err)
	}
}

func TestRedactedBundleKeepsNoURLOrKeyButStillLoads(t *testing.T) {
	in := loadExample(t, "spark-fleet.json")
	data, err := in.Bundle(true)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"http://10.100.196.2:8206/v1", "/health", "${QWEN27B_BACKEND_KEY}", "https://openrouter.ai", "${LLOOM_API_KEY}"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Errorf("redacted bundle contains %q", secret)
		}
	}
	if !bytes.Contains(data, []byte(`"apiKeyEnv": "OPENROUTER_API_KEY"`)) {
		t.Errorf("redaction removed an environment variable name, which is no secret")
	}
	back, err := ParseBundle(data, "redacted.json")
	if err != nil {
		t.Fatalf("the redacted bundle does not load: %v", err)
	}
	if p := back.Validate(); p != nil {
		t.Errorf("the redacted bundle does not validate:\n%v", p)
	}
	if got, want := back.Config.Models[0].Pool, in.Config.Models[0].Pool; !reflect.DeepEqual(got, want) {
		t.Errorf("redaction lost the model pool block: %+v, want %+v", got, want)
	}
	if reflect.DeepEqual(back.Nodes, in.Nodes) {
		t.Errorf("node statuses were not redacted")
	}
}

const splitDir = "../examples/spark-fleet"

// splitSources is how the spark fleet's separate files are named.
func splitSources(dir string) Sources {
	nodes := []string{"spark-node-01", "spark-node-02", "spark-node-03"}
	src := Sources{
		Config:         filepath.Join(dir, "config.json"),
		ProfilesDir:    filepath.Join(dir, "profiles"),
		Policy:         filepath.Join(dir, "pool.toml"),
		Metrics:        filepath.Join(dir, "metrics.json"),
		Status:         map[string]string{},
		MachineProfile: map[string]string{},
		Inventory:      map[string]string{},
		Benchmarks:     []string{filepath.Join(dir, "benchmarks", "gb10-qwen38-27b-nvfp4-vllm.json")},
		Recipes:        []string{filepath.Join(dir, "recipes", "linux-nvidia-gb10-qwen38-27b-nvfp4-vllm.json")},
	}
	for _, n := range nodes {
		src.Status[n] = filepath.Join(dir, "nodes", n+".status.json")
		src.MachineProfile[n] = filepath.Join(dir, "nodes", n+".profile.json")
		src.Inventory[n] = filepath.Join(dir, "nodes", n+".inventory.json")
	}
	return src
}

// TestSplitFilesAreTheBundleSplit rewrites examples/spark-fleet from the
// example bundle when UPDATE_GOLDEN is set (pool.toml is written by hand),
// and otherwise checks that the files are still the bundle's documents.
func TestSplitFilesAreTheBundleSplit(t *testing.T) {
	in := loadExample(t, "spark-fleet.json")
	src := splitSources(splitDir)
	metrics, err := canonicalJSON(in.raw.metrics) // kept as read
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]json.RawMessage{src.Config: in.ConfigRaw, src.Metrics: metrics,
		src.Benchmarks[0]: in.raw.benchmarks[0], src.Recipes[0]: in.raw.recipes[0]}
	for name, raw := range in.raw.profiles {
		files[filepath.Join(src.ProfilesDir, name+".json")] = raw
	}
	for id, r := range in.raw.nodes {
		files[src.Status[id]], files[src.MachineProfile[id]], files[src.Inventory[id]] = r.status, r.profile, r.inventory
	}
	for path, raw := range files {
		var b bytes.Buffer
		if err := json.Indent(&b, raw, "", "  "); err != nil {
			t.Fatal(err)
		}
		b.WriteByte('\n')
		if os.Getenv("UPDATE_GOLDEN") != "" {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := WriteFileAtomic(path, b.Bytes()); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with UPDATE_GOLDEN=1 to write the split files)", err)
		}
		if !bytes.Equal(got, b.Bytes()) {
			t.Errorf("%s is not the bundle's document any more (run with UPDATE_GOLDEN=1)", path)
		}
	}
}

func TestSeparateFilesAndTheBundleGiveIdenticalInputs(t *testing.T) {
	bundle := loadExample(t, "spark-fleet.json")
	files, err := Load(splitSources(splitDir))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	a, b := withoutProvenance(bundle), withoutProvenance(files)
	if !reflect.DeepEqual(a, b) {
		for _, f := range []string{"Config", "ConfigRaw", "ConfigPool", "Profiles", "Policy", "Nodes", "Metrics", "Benchmarks", "Recipes"} {
			if !reflect.DeepEqual(reflect.ValueOf(a).FieldByName(f).Interface(), reflect.ValueOf(b).FieldByName(f).Interface()) {
				t.Errorf("Inputs.%s differs between the bundle and the separate files", f)
			}
		}
		t.Fatalf("Load(files) != LoadBundle(bundle)")
	}
	files.Description = bundle.Description
	x, err := bundle.Bundle(false)
	if err != nil {
		t.Fatal(err)
	}
	y, err := files.Bundle(false)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x, y) {
		t.Errorf("the bundle written from the separate files differs from the one written from the bundle")
	}
	if got := files.Sources["nodes/spark-node-03/status"]; got.File != filepath.Join(splitDir, "nodes", "spark-node-03.status.json") || got.Path != "" {
		t.Errorf("Sources[nodes/spark-node-03/status] = %v", got)
	}
	if got := bundle.Sources["nodes/spark-node-03/status"]; got.String() != `../examples/spark-fleet.json $.nodes["spark-node-03"].status` {
		t.Errorf("Sources[nodes/spark-node-03/status] = %v", got)
	}
}

func TestReportListsGiveTheSameInputsAsMaps(t *testing.T) {
	asMaps := splitSources(splitDir)
	lists := asMaps
	lists.Status, lists.Inventory = nil, nil
	for _, n := range slices.Sorted(maps.Keys(asMaps.Status)) {
		lists.StatusFiles = append(lists.StatusFiles, asMaps.Status[n])
		lists.InventoryFiles = append(lists.InventoryFiles, asMaps.Inventory[n])
	}
	a, err := Load(asMaps)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(lists)
	if err != nil {
		t.Fatal(err)
	}
	if x, y := withoutProvenance(a), withoutProvenance(b); !reflect.DeepEqual(x, y) {
		t.Errorf("status and inventory lists give other inputs than maps")
	}
}

func TestLoadRefusesAReportGivenTwice(t *testing.T) {
	src := splitSources(splitDir)
	src.StatusFiles = []string{src.Status["spark-node-02"]}
	_, err := Load(src)
	if err == nil || !strings.Contains(err.Error(), `a second status for node "spark-node-02" (the first came from ../examples/spark-fleet/nodes/spark-node-02.status.json)`) {
		t.Errorf("Load = %v, want the second status refused", err)
	}
}

// mutate returns the spark bundle with one JSON member replaced. path is
// a list of object keys; value is the new JSON text, or "" to delete.
func mutate(t *testing.T, value string, path ...string) []byte {
	t.Helper()
	data, err := os.ReadFile("../examples/spark-fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	m := doc
	for _, k := range path[:len(path)-1] {
		next, ok := m[k].(map[string]any)
		if !ok {
			t.Fatalf("mutate: no object at %q", k)
		}
		m = next
	}
	last := path[len(path)-1]
	if value == "" {
		delete(m, last)
	} else {
		var v any
		if err := json.Unmarshal([]byte(value), &v); err != nil {
			t.Fatalf("mutate: %v", err)
		}
		m[last] = v
	}
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestParseBundleErrorsNameFilePathAndExpectation(t *testing.T) {
	spark, err := os.ReadFile("../examples/spark-fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"a truncated bundle names the end of the file",
			spark[:2000],
			fmt.Sprintf("f.json:%d:%d: $.config.cluster.discovery.links[1]: unexpected end of JSON input (is the file truncated?)",
				1+bytes.Count(spark[:2000], []byte("\n")), 2000-bytes.LastIndexByte(spark[:2000], '\n'))},
		{"an empty file is not a bundle",
			[]byte(""),
			"f.json:1:1: empty document: expected a JSON object"},
		{"an array is not a bundle",
			[]byte("[]"),
			"f.json:1:1: $: expected a fleet bundle object, got an array"},
		{"a release that is not major.minor.patch is refused",
			mutate(t, `"0.2"`, "lloomRelease"),
			`$.lloomRelease: LLooM version "0.2": expected major.minor.patch, e.g. 0.2.3`},
		{"a release that is not a string is refused",
			mutate(t, `23`, "lloomRelease"),
			`$.lloomRelease: expected a LLooM release such as "0.2.3", got`},
		{"an unknown top-level key is named with the known ones",
			mutate(t, `"x"`, "polcy"),
			`$: unknown key "polcy" (known: schema, description, lloomRelease, config, profiles, policy, nodes, metrics, demandHistory, benchmarks, recipes)`},
		{"another schema is refused",
			mutate(t, `"poolsolve.fleet/v2"`, "schema"),
			`$.schema: expected "poolsolve.fleet/v1", got string "poolsolve.fleet/v2"`},
		{"a bundle without config says what it needs",
			mutate(t, "", "config"),
			`$.config: missing: a bundle needs LLooM's config.json as "config"`},
		{"a type error inside the config gets the config's path",
			mutate(t, `"forty"`, "config", "runtimes", "qwen38-27b-nvfp4", "memoryGb"),
			`$.config.runtimes["qwen38-27b-nvfp4"].memoryGb: expected a number, got string "forty"`},
		{"an unknown policy key is named under $.policy",
			mutate(t, `1`, "policy", "churnWieght"),
			`f.json: $.policy: unknown key "churnWieght"`},
		{"a negative policy number names the key and the bound",
			mutate(t, `-4`, "policy", "headroomGb"),
			`f.json: $.policy.headroomGb: expected a number >= 0, got number -4`},
		{"a bad residency in the config pool block lists the residencies",
			mutate(t, `{"pins":[{"runtime":"qwen3-embedding-4b","residency":"forever"}]}`, "config", "pool"),
			`f.json: $.config.pool.pins[0].residency: expected "always", "preferred" or "auto", got string "forever"`},
		{"a pin that is both kinds is refused",
			mutate(t, `{"pins":[{"runtime":"qwen3-embedding-4b","alias":"q38fn","route":"cloud"}]}`, "config", "pool"),
			`f.json: $.config.pool.pins[0]: a pin names a runtime (lane pin) or an alias (route pin), not both`},
		{"a status of another node is refused",
			mutate(t, `{"id":"spark-node-02","reachable":true}`, "nodes", "spark-node-01", "status"),
			`$.nodes["spark-node-01"].status: status of node "spark-node-02" given for node "spark-node-01"`},
		{"an inventory of another node is refused",
			mutate(t, `{"schema":"poolsolve.inventory/v1","nodeId":"spark-node-09"}`, "nodes", "spark-node-01", "inventory"),
			`$.nodes["spark-node-01"].inventory.nodeId: inventory of node "spark-node-09" given for node "spark-node-01"`},
		{"an inventory error keeps its inner path",
			mutate(t, `{"schema":"poolsolve.inventory/v1","nodeId":"spark-node-01","modelRoots":[{"path":"/m","freeGb":-1}]}`, "nodes", "spark-node-01", "inventory"),
			`$.nodes["spark-node-01"].inventory.modelRoots[0].freeGb: expected a number >= 0, got number -1`},
		{"an unknown part of a node report is named",
			mutate(t, `{}`, "nodes", "spark-node-01", "telemetry"),
			`$.nodes["spark-node-01"]: unknown key "telemetry" (known: profile, inventory, status, metrics)`},
		{"a gateway error saved as a status says so",
			mutate(t, `{"error":{"message":"missing or invalid admin authorization token","type":"authentication_error","code":"unauthorized"}}`, "nodes", "spark-node-01", "status"),
			`$.nodes["spark-node-01"].status: the gateway answered with an error instead of the document: unauthorized: missing or invalid admin authorization token`},
		{"a profile named otherwise than its key is refused",
			mutate(t, `{"name":"other","routes":{}}`, "profiles", "standalone"),
			`$.profiles["standalone"].name: profile name "other" differs from the name it is given under ("standalone")`},
		{"benchmarks must be a list",
			mutate(t, `{}`, "benchmarks"),
			`$.benchmarks: expected an array of documents, got an object`},
		{"metrics that are neither snapshot nor history are refused",
			mutate(t, `{"hello":1}`, "metrics"),
			`$.metrics: not a metrics document`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := ParseBundle(tc.data, "f.json")
			if err == nil {
				t.Fatalf("ParseBundle = nil error, want %q", tc.want)
			}
			var ie *lloom.InputError
			if !errors.As(err, &ie) || ie.File != "f.json" {
				t.Errorf("error %v (%T) is not an InputError naming the file", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseBundle error =\n  %s\nwant it to contain\n  %s", err, tc.want)
			}
		})
	}
}

// TestErrorPositionsPointIntoTheBundle checks that a position lloom
// reports inside a sub-document lands on the offending bytes of the
// bundle.
func TestErrorPositionsPointIntoTheBundle(t *testing.T) {
	data := mutate(t, `"forty"`, "config", "runtimes", "qwen38-27b-nvfp4", "memoryGb")
	_, err := ParseBundle(data, "f.json")
	var ie *lloom.InputError
	if !errors.As(err, &ie) || ie.Line == 0 {
		t.Fatalf("ParseBundle error = %v, want a positioned InputError", err)
	}
	off, ok := offsetOf(data, ie.Line, ie.Col)
	if !ok || !bytes.HasPrefix(data[off:], []byte(`"forty"`)) {
		t.Errorf("error at %d:%d points at %q, want the value \"forty\"", ie.Line, ie.Col, data[off:min(off+12, len(data))])
	}
}

func TestValidateReportsEveryProblemAtOnce(t *testing.T) {
	data := mutate(t, `{
		"headroomGb": 4,
		"cordons": ["spark-node-09"],
		"slo": {"q39": {"firstTokenMs": 100}},
		"pins": [
			{"runtime": "qwen9", "nodes": ["spark-node-07"]},
			{"alias": "q38fn", "route": "nowhere", "cordons": ["spark-node-02"]},
			{"alias": "nobody", "route": "cloud"}
		],
		"runtimes": {"ghost": {"loadTimeMs": 1}},
		"models": {"ghost/model": {"required": true}}
	}`, "policy")
	in, err := ParseBundle(data, "f.json")
	if err != nil {
		t.Fatal(err)
	}
	in.ConfigPool.Pins = append(in.ConfigPool.Pins, Pin{Runtime: "qwen3-embedding-4b", Nodes: []string{"spark-node-04"}})
	in.Profiles["standalone"].Routes["q38fn"] = "elsewhere"
	in.Config.Fleet.ActiveProfile = "gone"
	got := in.Validate()
	want := []string{
		`f.json: $.config.fleet.activeProfile: active profile "gone" is not among the fleet profiles (sparkqwen-pair-rc16, standalone)`,
		`f.json: $.config.pool.pins[0].nodes[0]: node "spark-node-04" is not a node of the cluster (spark-node-01, spark-node-02, spark-node-03)`,
		`f.json: $.profiles["standalone"].routes["q38fn"]: unknown route "elsewhere": not a route profile of alias "q38fn" (cloud, local-first, standalone) nor a model or alias id`,
		`f.json: $.policy.cordons[0]: cordoned node "spark-node-09" is not a node of the cluster (spark-node-01, spark-node-02, spark-node-03)`,
		`f.json: $.policy.pins[0].runtime: unknown runtime "qwen9"`,
		`f.json: $.policy.pins[0].nodes[0]: node "spark-node-07" is not a node of the cluster (spark-node-01, spark-node-02, spark-node-03)`,
		`f.json: $.policy.pins[1].route: unknown route "nowhere": not a route profile of alias "q38fn" (cloud, local-first, standalone) nor a model or alias id`,
		`f.json: $.policy.pins[2].alias: unknown alias "nobody"`,
		`f.json: $.policy.slo["q39"]: SLO for unknown alias "q39"`,
		`f.json: $.policy.runtimes["ghost"]: unknown runtime "ghost"`,
		`f.json: $.policy.models["ghost/model"]: unknown model "ghost/model"`,
	}
	var lines []string
	for _, p := range got {
		lines = append(lines, p.Error())
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("Validate() =\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

func TestValidateNamesTomlKeysForPoolToml(t *testing.T) {
	dir := t.TempDir()
	policy := filepath.Join(dir, "pool.toml")
	toml := "[[pins]]\nruntime = \"qwen3-embedding-4b\"\nnodes = [\"spark-node-03\", \"spark-node-3\"]\n\n[slo.\"q38fn-fast\"]\nfirstTokenMs = 900\n"
	if err := os.WriteFile(policy, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	src := splitSources(splitDir)
	src.Policy = policy
	in, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%[1]s: pins[0].nodes[1]: node \"spark-node-3\" is not a node of the cluster (spark-node-01, spark-node-02, spark-node-03)\n"+
		"%[1]s: slo.q38fn-fast: SLO for unknown alias \"q38fn-fast\"", policy)
	if got := in.Validate(); got == nil || got.Error() != want {
		t.Errorf("Validate() =\n%v\nwant\n%s", got, want)
	}
}

func TestValidateReportsNodesTheClusterDoesNotDeclare(t *testing.T) {
	in := loadExample(t, "spark-fleet.json")
	data, err := os.ReadFile(filepath.Join(splitDir, "nodes", "spark-node-03.profile.json"))
	if err != nil {
		t.Fatal(err)
	}
	p, raw, err := readMachineProfile(data, "x.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := in.addNodePart("spark-node-04", "profile", p, raw, Source{File: "x.json"}); err != nil {
		t.Fatal(err)
	}
	got := in.Validate()
	want := `x.json: $: report for node "spark-node-04", which the cluster does not declare (spark-node-01, spark-node-02, spark-node-03)`
	if got == nil || got.Error() != want {
		t.Errorf("Validate() = %v, want %s", got, want)
	}
}

func TestPinsAndCordonsMergeThePolicyAndTheConfig(t *testing.T) {
	in := &Inputs{
		Policy: &Policy{Cordons: []string{"b"}, Pins: []Pin{{Alias: "x", Route: "r", Cordons: []string{"c", "a"}, Origin: "policy pins[0]"}}},
		ConfigPool: ConfigPool{Cordons: []string{"b", "d"},
			Pins: []Pin{{Runtime: "rt", Origin: "config pool.pins[0]"}}},
	}
	if got, want := in.Cordons(), []string{"a", "b", "c", "d"}; !reflect.DeepEqual(got, want) {
		t.Errorf("Cordons() = %v, want %v", got, want)
	}
	var origins []string
	for _, p := range in.Pins() {
		origins = append(origins, p.Origin)
	}
	if want := []string{"policy pins[0]", "config pool.pins[0]"}; !reflect.DeepEqual(origins, want) {
		t.Errorf("Pins() origins = %v, want %v", origins, want)
	}
}

func FuzzLoadBundle(f *testing.F) {
	for _, name := range []string{"rule-headroom.json", "rule-arch-mismatch.json", "rule-unlinked-tp.json"} {
		data, err := os.ReadFile(filepath.Join("..", "examples", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"schema":"poolsolve.fleet/v1","config":{}}`))
	f.Add([]byte(`{"schema":"poolsolve.fleet/v1","lloomRelease":"v0.2.3-rc.1","config":{}}`))
	f.Add([]byte(`{"schema":"poolsolve.fleet/v1","config":{"pool":{"pins":[{"alias":"a","route":"b"}]}},"policy":{"pins":[{"runtime":"r"}]}}`))
	f.Add([]byte(`{"schema":"poolsolve.fleet/v1","config":{},"nodes":{"n":{"status":{"id":"n"},"inventory":{"schema":"poolsolve.inventory/v1","nodeId":"n"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := ParseBundle(data, "fuzz.json")
		if err != nil {
			var ie *lloom.InputError
			if !errors.As(err, &ie) || ie.File != "fuzz.json" {
				t.Fatalf("error %v (%T) does not name the file", err, err)
			}
			return
		}
		in.Validate()
		out, err := in.Bundle(false)
		if err != nil {
			t.Fatalf("Bundle: %v", err)
		}
		back, err := ParseBundle(out, "again.json")
		if err != nil {
			t.Fatalf("ParseBundle(Bundle()) = %v\n%s", err, out)
		}
		again, err := back.Bundle(false)
		if err != nil || !bytes.Equal(out, again) {
			t.Fatalf("the bundle does not write back the same:\n%s\n%s", out, again)
		}
		if _, err := in.Bundle(true); err != nil {
			t.Fatalf("Bundle(redact): %v", err)
		}
	})
}

// TestMetricsAsReadWriteTheSameBundle: metrics documents are kept as read
// (a large answer is not re-encoded for a plan), so Bundle makes them
// canonical: the same metrics with their keys in two orders, at the top
// and under a node, write the same bytes.
func TestMetricsAsReadWriteTheSameBundle(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "examples", "spark-fleet.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(doc["metrics"], &members); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(maps.Keys(members))
	ordered := func(keys []string) string {
		var b strings.Builder
		for i, k := range keys {
			if i > 0 {
				b.WriteString(",\n ")
			}
			fmt.Fprintf(&b, "%q: %s", k, members[k])
		}
		return "{" + b.String() + "}"
	}
	reversed := slices.Clone(keys)
	slices.Reverse(reversed)
	delete(doc, "metrics")
	var written [][]byte
	for _, layout := range []string{ordered(keys), ordered(reversed)} {
		var nodes map[string]map[string]json.RawMessage
		if err := json.Unmarshal(doc["nodes"], &nodes); err != nil {
			t.Fatal(err)
		}
		nodes["spark-node-01"]["metrics"] = json.RawMessage(`"@metrics@"`)
		nb, err := json.Marshal(nodes)
		if err != nil {
			t.Fatal(err)
		}
		doc["nodes"] = nb
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Replace(string(b), `"@metrics@"`, layout, 1)
		text = strings.TrimSuffix(text, "}") + `, "metrics": ` + layout + "}"
		in, err := ParseBundle([]byte(text), "bundle.json")
		if err != nil {
			t.Fatal(err)
		}
		out, err := in.Bundle(false)
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, out)
	}
	if !bytes.Equal(written[0], written[1]) {
		t.Error("the same metrics with their keys in two orders write different bundles")
	}
}

// TestBundleSplicesMetricsAsTheEncoderWritesThem: metrics documents are
// written into the bundle as they are rewritten, around placeholders in
// the rest; the bytes are what the encoder writes for the whole bundle
// (two-space indent of its compact form) with each metrics member the
// document's canonical form, redacted when the bundle is, at the top and
// under a node.
func TestBundleSplicesMetricsAsTheEncoderWritesThem(t *testing.T) {
	in := loadExample(t, "spark-fleet.json")
	raw := in.raw.metrics
	if raw == nil {
		t.Fatal("the example has no metrics document")
	}
	// A URL and a key in a metrics text, and the same metrics as a node's.
	var mdoc map[string]any
	if err := json.Unmarshal(raw, &mdoc); err != nil {
		t.Fatal(err)
	}
	recent, _ := mdoc["recent"].([]any)
	mdoc["recent"] = append(recent, map[string]any{"model": "m", "error": "http://10.0.0.9:8000/v1 failed, key sk-canaryMetricsKey1"})
	raw, err := json.MarshalIndent(mdoc, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	m, err := lloom.ParseMetrics(raw, "metrics.json")
	if err != nil {
		t.Fatal(err)
	}
	in.Metrics, in.raw.metrics = m, raw
	if err := in.AddNodeMetrics("spark-node-01", raw, nil, Source{File: "node-metrics.json"}); err != nil {
		t.Fatal(err)
	}
	for _, redact := range []bool{false, true} {
		out, err := in.Bundle(redact)
		if err != nil {
			t.Fatal(err)
		}
		var compact, want bytes.Buffer
		if err := json.Compact(&compact, out); err != nil {
			t.Fatalf("redact %v: not JSON: %v", redact, err)
		}
		if err := json.Indent(&want, compact.Bytes(), "", "  "); err != nil {
			t.Fatal(err)
		}
		want.WriteByte('\n')
		if !bytes.Equal(out, want.Bytes()) {
			t.Errorf("redact %v: the bundle is not laid out as the encoder lays it out", redact)
		}
		doc := map[string]json.RawMessage{}
		var nodes map[string]map[string]json.RawMessage
		if err := json.Unmarshal(compact.Bytes(), &doc); err != nil || json.Unmarshal(doc["nodes"], &nodes) != nil {
			t.Fatal(err)
		}
		wantDoc, err := jsonpos.Canonical(raw)
		if redact {
			wantDoc, err = lloom.RedactJSON(raw)
		}
		if err != nil {
			t.Fatal(err)
		}
		for where, got := range map[string]json.RawMessage{"top": doc["metrics"], "node": nodes["spark-node-01"]["metrics"]} {
			if !bytes.Equal(got, wantDoc) {
				t.Errorf("redact %v: the %s metrics member is not the document's canonical form", redact, where)
			}
		}
		if leaked := bytes.Contains(out, []byte("sk-canaryMetricsKey1")) || bytes.Contains(out, []byte("10.0.0.9")); leaked != !redact {
			t.Errorf("redact %v: the metrics canary is in the bundle: %v", redact, leaked)
		}
		if bytes.Contains(out, []byte("poolsolve-splice-")) {
			t.Errorf("redact %v: a placeholder is left in the bundle", redact)
		}
	}
	var w failingWriter
	if err := in.WriteBundle(&w, true); err == nil {
		t.Error("WriteBundle to a writer that fails gave no error")
	}
}

type failingWriter struct{}

func (*failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }
