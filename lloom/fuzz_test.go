package lloom

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// The fuzz targets check that no input makes a parser panic, that every
// failure is one of the package's error types, and that whatever parses can
// be validated, redacted and marshalled without panicking either.

func seed(f *testing.F, dirs ...string) {
	f.Helper()
	for _, dir := range dirs {
		files, err := filepath.Glob(filepath.Join("testdata", dir, "*.json"))
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(shrink(data))
		}
	}
	f.Add([]byte(`{"aliases": {"a": {"members": ["a", "b"]}, "b": "a"}}`))
	f.Add([]byte(`{"runtimes": {"g": {"placement": {"mode": "distributed", "members": [{"runtime": "g"}]}}}}`))
}

// shrink keeps every shape of a large seed (over 8 KiB: the gateway's
// node, cluster and metrics answers) but cuts each array to one element and
// each object to two object-valued members, and drops the indentation. The
// fuzzer minimises every new interesting input for up to a minute, which
// with 40 KB seeds leaves no time for fuzzing.
func shrink(data []byte) []byte {
	const small = 8 << 10
	var v any
	if len(data) <= small || json.Unmarshal(data, &v) != nil {
		return data
	}
	var cut func(any) any
	cut = func(v any) any {
		switch v := v.(type) {
		case []any:
			v = v[:min(len(v), 1)]
			for i := range v {
				v[i] = cut(v[i])
			}
			return v
		case map[string]any:
			kept := 0
			for _, k := range slices.Sorted(maps.Keys(v)) {
				if _, isObject := v[k].(map[string]any); isObject {
					if kept++; kept > 2 {
						delete(v, k)
						continue
					}
				}
				v[k] = cut(v[k])
			}
		}
		return v
	}
	out, err := json.Marshal(cut(v))
	if err != nil {
		return data
	}
	return out
}

func checkErr(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var ie *InputError
	var ge *GatewayError
	if !errors.As(err, &ie) && !errors.As(err, &ge) {
		t.Fatalf("error %T is neither *InputError nor *GatewayError: %v", err, err)
	}
	_ = err.Error()
}

func FuzzParseConfig(f *testing.F) {
	seed(f, "lloom-gateway-0.2.3", "fleet")
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data, "fuzz.json")
		checkErr(t, err)
		if err != nil {
			return
		}
		// A misspelt key is one the document holds, at the path named.
		for _, p := range cfg.Typos {
			if _, exact, ferr := jsonpos.Find(data, p.Path); ferr != nil || !exact || p.File != "fuzz.json" {
				t.Fatalf("typo %v: its path is not in the document (%v)", p, ferr)
			}
		}
		_ = cfg.Validate()
		current := cfg.CurrentNodeID("")
		for id, rt := range cfg.Runtimes {
			RuntimePlacement(rt, id, current)
			RuntimeMemoryGb(rt)
			cfg.RuntimeResourcesByNode(id, current)
		}
		for _, m := range cfg.Models {
			ModelTargets(m)
			m.External()
		}
		for id := range cfg.Aliases {
			_, _ = cfg.ExpandAlias(id)
		}
		if _, err := MarshalRedacted(cfg); err != nil {
			t.Fatalf("MarshalRedacted: %v", err)
		}
		MaterializeFederated(cfg)
		_ = cfg.Validate()
	})
}

func FuzzParseProfile(f *testing.F) {
	seed(f, "profiles")
	cfg, err := LoadConfig("testdata/fleet/config.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseProfile(data, "fuzz.json")
		checkErr(t, err)
		if err != nil {
			return
		}
		_ = p.Validate(nil)
		_ = p.Validate(cfg)
	})
}

func FuzzParseMachineProfile(f *testing.F) {
	seed(f, "machine", "lloom-gateway-0.2.3")
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseMachineProfile(data, "fuzz.json")
		checkErr(t, err)
		if err == nil {
			MemoryDomains(*p)
		}
	})
}

func FuzzParseNodeStatus(f *testing.F) {
	seed(f, "lloom-gateway-0.2.3", "lloom-gateway-0.2.3-runtime-state/fresh", "lloom-gateway-0.2.3-runtime-state/dead")
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := ParseNodeStatus(data, "fuzz.json")
		checkErr(t, err)
		if err != nil {
			return
		}
		if _, err := MarshalRedacted(n); err != nil {
			t.Fatalf("MarshalRedacted: %v", err)
		}
		if n.Profile != nil {
			MemoryDomains(*n.Profile)
		}
		readRows(*n)
	})
}

// readRows reads every runtime row as the catalog does.
func readRows(n NodeStatus) {
	for _, row := range n.RuntimeManager.Runtimes {
		_, _, _ = row.Serves(), row.ShowsHealthy(), row.Reading()
	}
}

func FuzzParseClusterStatus(f *testing.F) {
	seed(f, "lloom-gateway-0.2.3", "lloom-gateway-0.2.3-runtime-state/fresh", "lloom-gateway-0.2.3-runtime-state/dead")
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseClusterStatus(data, "fuzz.json")
		checkErr(t, err)
		if err != nil {
			return
		}
		for _, n := range c.Nodes {
			readRows(n)
		}
		if _, err := MarshalRedacted(c); err != nil {
			t.Fatalf("MarshalRedacted: %v", err)
		}
	})
}

func FuzzParseMetrics(f *testing.F) {
	seed(f, "lloom-gateway-0.2.3")
	// Where the fast path and the tree could part.
	for _, s := range []string{
		`{"totals": {"REQUESTS": 4}}`, `{"totals": {"requests": 4.0}}`, `{"totals": null, "recent": [{"error": {"message": "x"}}, {"error": 7}]}`,
		`{"version": 1, "metrics": {"history": {"days": [{"date": "2026-11-29", "totals": {"requests": 2}}]}}}`,
		`{"object": "gateway.metrics", "generatedAt": null, "models": [{"id": "m", "recentDecodeRates": [1, 2.5]}]}`,
		`{"object": 5, "totals": {}}`, `{"totals": {}, "Recent": []}`, `{"totals": {}, "models": [{"last": {"status": 499, "ok": false}}]}`,
		`{"totals": {}, "persistence": {"enabled": true, "scope": "all-time", "since": "2026-12-04T16:50:37.543Z"}}`,
		`{"totals": {}, "persistence": {"Since": "x"}}`, `{"totals": {}, "persistence": null}`, `{"totals": {}, "persistence": {"since": 3}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseMetrics(data, "fuzz.json")
		checkErr(t, err)
		// The fast path must read what the tree reads, or step aside.
		if fast, ok := parseMetricsFast(data, "fuzz.json"); ok {
			slow, serr := parseMetricsTree(data, "fuzz.json")
			if serr != nil {
				t.Fatalf("the fast path read %q, the tree refuses it: %v", data, serr)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Fatalf("the fast path and the tree differ on %q:\n%+v\n%+v", data, fast, slow)
			}
		}
		kind, kerr := DetectMetricsKind(data)
		if (err == nil) && (kerr != nil || kind != m.Kind) {
			t.Fatalf("ParseMetrics read a %s but DetectMetricsKind says %q, %v", m.Kind, kind, kerr)
		}
	})
}

func FuzzParseBenchmarkSuite(f *testing.F) {
	seed(f, "benchmarks")
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseBenchmarkSuite(data, "fuzz.json")
		checkErr(t, err)
		if err == nil {
			_ = s.Validate()
			if _, err := json.Marshal(s); err != nil {
				t.Fatalf("Marshal: %v", err)
			}
		}
	})
}

func FuzzParseRecipe(f *testing.F) {
	seed(f, "recipes")
	f.Add([]byte(`{"schemaVersion":1,"id":"r","requirements":{"resourceEstimate":{"reserveGb":1,"domains":[{"kind":"device","backend":"cuda","deviceIds":["cuda:0"],"requiredGb":90},{"memoryGb":8}]}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRecipe(data, "fuzz.json")
		checkErr(t, err)
		if err != nil {
			return
		}
		_ = r.Validate()
		for _, m := range r.Models {
			m.Launch()
		}
		for _, n := range r.Requirements.ResourceEstimate.DomainNeeds() {
			if !(n.RequiredGb >= 0) || math.IsInf(n.RequiredGb, 0) || n.ID == "" || n.Kind == "" {
				t.Fatalf("need %+v: expected an id, a kind and a finite, non-negative figure", n)
			}
			MatchDomain(n, MemoryDomains(MachineProfile{TotalMemoryGb: ptr(1.0), Devices: []Device{{ID: "cuda:0", MemoryGb: ptr(1.0)}}}))
		}
	})
}

func FuzzNormalizeArch(f *testing.F) {
	for _, s := range []string{"sm_121a", "12.1a", "9.0", "apple-metal", "gfx90a", "8.6+PTX", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := NormalizeArch(s)
		if n != "" && NormalizeArch(n) != n {
			t.Fatalf("NormalizeArch is not idempotent: %q -> %q -> %q", s, n, NormalizeArch(n))
		}
		InferFromLaunch([]string{s, "--tp", s}, map[string]string{"TORCH_CUDA_ARCH_LIST": s}, []string{"-e", s})
	})
}

// FuzzCheckUTF8: any input is refused exactly when it is not UTF-8, at
// the line and column of its first bad byte.
func FuzzCheckUTF8(f *testing.F) {
	f.Add([]byte("{\"id\": \"a\xffb\"}"))
	f.Add([]byte("line one\nlin\xc3"))
	f.Add([]byte("caf\xc3\xa9"))
	f.Fuzz(func(t *testing.T, data []byte) {
		err := CheckUTF8(data, "f.json")
		if (err == nil) != utf8.Valid(data) {
			t.Fatalf("CheckUTF8(%q) = %v, utf8.Valid says %v", data, err, utf8.Valid(data))
		}
		if err == nil {
			return
		}
		ie := err.(*InputError)
		off := -1
		for i, r := range string(data) {
			if r == utf8.RuneError && !strings.HasPrefix(string(data[i:]), "\uFFFD") {
				off = i
				break
			}
		}
		line, col := jsonpos.Position(data, off)
		if ie.Line != line || ie.Col != col {
			t.Fatalf("CheckUTF8(%q) at %d:%d, the first bad byte is at %d:%d", data, ie.Line, ie.Col, line, col)
		}
	})
}
