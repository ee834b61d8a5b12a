package inventory

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/lloom"
)

const sparkInventory = `{
  "schema": "poolsolve.inventory/v1",
  "nodeId": "spark-node-03",
  "collectedAt": "2026-11-29T14:08:03Z",
  "platformId": "linux-arm64",
  "computeArchs": ["sm_121"],
  "accelerators": ["cuda", "nvidia-gpu", "blackwell", "gb10", "dgx-spark"],
  "memoryDomains": [
    {"id": "system:0", "kind": "system", "capacityGb": 121.69, "availableGb": 34.87, "deviceIds": ["cpu:0", "cuda:0"]}
  ],
  "modelRoots": [{"path": "/home/lloom/.cache/huggingface", "freeGb": 900}],
  "cachedWeights": [{"repo": "unsloth/Qwen3.8-27B-NVFP4", "root": "/home/lloom/.cache/huggingface", "sizeGb": 19.5}],
  "commands": ["docker", "nvidia-smi"],
  "dockerImages": ["vllm/vllm-openai:v0.25.0"],
  "links": [{"peerNodeId": "spark-node-01", "localInterface": "enp1s0f0np0", "localAddress": "10.100.196.2", "peerAddress": "10.100.196.1", "prefixlen": 24}],
  "notes": ["GB10 reports no memory.total; system:0 is the unified pool"],
  "x-collector": "hand-written"
}`

func TestParseReadsEveryField(t *testing.T) {
	got, err := Parse([]byte(sparkInventory), "spark-node-03.json")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	avail := 34.87
	want := &Inventory{
		Schema:       Schema,
		NodeID:       "spark-node-03",
		CollectedAt:  time.Date(2026, 11, 29, 14, 8, 3, 0, time.UTC),
		PlatformID:   "linux-arm64",
		ComputeArchs: []string{"sm_121"},
		Accelerators: []string{"cuda", "nvidia-gpu", "blackwell", "gb10", "dgx-spark"},
		MemoryDomains: []Domain{{
			ID: "system:0", Kind: "system", CapacityGb: 121.69, AvailableGb: &avail,
			DeviceIDs: []string{"cpu:0", "cuda:0"},
		}},
		ModelRoots:    []ModelRoot{{Path: "/home/lloom/.cache/huggingface", FreeGb: 900}},
		CachedWeights: []CachedWeight{{Repo: "unsloth/Qwen3.8-27B-NVFP4", Root: "/home/lloom/.cache/huggingface", SizeGb: 19.5}},
		Commands:      []string{"docker", "nvidia-smi"},
		DockerImages:  []string{"vllm/vllm-openai:v0.25.0"},
		Links: []Link{{
			PeerNodeID: "spark-node-01", LocalInterface: "enp1s0f0np0",
			LocalAddress: "10.100.196.2", PeerAddress: "10.100.196.1", Prefixlen: 24,
		}},
		Notes: []string{"GB10 reports no memory.total; system:0 is the unified pool"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Parse = %+v,\nwant %+v", got, want)
	}
}

func TestParseReadsBackWhatMarshalWrites(t *testing.T) {
	first, err := Parse([]byte(sparkInventory), "a.json")
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	second, err := Parse(data, "b.json")
	if err != nil {
		t.Fatalf("Parse(Marshal(inv)): %v\n%s", err, data)
	}
	if !reflect.DeepEqual(first, second) {
		t.Errorf("round trip changed the inventory:\n%+v\n%+v", first, second)
	}
}

func TestParseAcceptsTheSmallestInventory(t *testing.T) {
	inv, err := Parse([]byte(`{"schema":"poolsolve.inventory/v1","nodeId":"n1","memoryDomains":null}`), "n1.json")
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if inv.NodeID != "n1" || inv.MemoryDomains != nil || !inv.CollectedAt.IsZero() {
		t.Errorf("Parse = %+v, want only the node id set", inv)
	}
}

func TestParseErrorsNameFilePathAndExpectation(t *testing.T) {
	const head = `{"schema":"poolsolve.inventory/v1","nodeId":"n1",`
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"an unknown key is named with the object it sits in",
			head + `"memoryDomains":[{"id":"system:0","kind":"system","capacityGB":12}]}`,
			`n1.json: $.memoryDomains[0]: unknown key "capacityGB" (known: id, kind, backend, capacityGb, availableGb, deviceIds)`},
		{"a negative capacity names the field and the expectation",
			head + `"memoryDomains":[{"id":"system:0","kind":"system","capacityGb":-1}]}`,
			`n1.json: $.memoryDomains[0].capacityGb: expected a number >= 0, got number -1`},
		{"a long negative number is printed whole",
			head + `"memoryDomains":[{"id":"system:0","kind":"system","capacityGb":-12345678901234567890123456789012345678901234567890}]}`,
			`n1.json: $.memoryDomains[0].capacityGb: expected a number >= 0, got number -12345678901234567890123456789012345678901234567890`},
		{"a long string is shortened at a character boundary",
			head + `"modelRoots":[{"path":"/m","freeGb":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\u00e9\u00e9"}]}`,
			`n1.json: $.modelRoots[0].freeGb: expected a number >= 0, got string "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…"`},
		{"a string where a number belongs is quoted",
			head + `"modelRoots":[{"path":"/m","freeGb":"lots"}]}`,
			`n1.json: $.modelRoots[0].freeGb: expected a number >= 0, got string "lots"`},
		{"a missing capacity is reported at its key",
			head + `"memoryDomains":[{"id":"system:0","kind":"system"}]}`,
			`n1.json: $.memoryDomains[0].capacityGb: missing: expected a number >= 0`},
		{"an unknown domain kind lists the kinds",
			head + `"memoryDomains":[{"id":"gpu:0","kind":"gpu","capacityGb":1}]}`,
			`n1.json: $.memoryDomains[0].kind: expected one of unified, system, device, got "gpu"`},
		{"two domains with one id are refused",
			head + `"memoryDomains":[{"id":"system:0","kind":"system","capacityGb":1},{"id":"system:0","kind":"system","capacityGb":2}]}`,
			`n1.json: $.memoryDomains[1].id: duplicate memory domain "system:0"`},
		{"a key given twice names both places",
			head + "\n" + `"memoryDomains":[],` + "\n" + `"memoryDomains":[{"id":"system:0","kind":"system","capacityGb":1}]}`,
			`n1.json:3:1: $.memoryDomains: duplicate key "memoryDomains" (first at line 2, column 1)`},
		{"another schema version is refused",
			`{"schema":"poolsolve.inventory/v2","nodeId":"n1"}`,
			`n1.json: $.schema: unsupported schema "poolsolve.inventory/v2": expected "poolsolve.inventory/v1"`},
		{"a missing schema is reported",
			`{"nodeId":"n1"}`,
			`n1.json: $.schema: missing: expected a non-empty string`},
		{"an empty node id is refused",
			`{"schema":"poolsolve.inventory/v1","nodeId":""}`,
			`n1.json: $.nodeId: must not be empty`},
		{"a time that is not RFC 3339 is refused",
			head + `"collectedAt":"yesterday"}`,
			`n1.json: $.collectedAt: expected an RFC 3339 time such as 2026-11-29T14:08:03Z, got "yesterday"`},
		{"a prefix length past 128 is refused",
			head + `"links":[{"peerNodeId":"n2","prefixlen":129}]}`,
			`n1.json: $.links[0].prefixlen: expected an integer from 0 to 128, got number 129`},
		{"a link to the node itself is refused",
			head + `"links":[{"peerNodeId":"n1"}]}`,
			`n1.json: $.links[0].peerNodeId: a node cannot link to itself ("n1")`},
		{"an empty string in a list names its index",
			head + `"commands":["docker",""]}`,
			`n1.json: $.commands[1]: expected a non-empty string, got string ""`},
		{"a list that is not an array is refused",
			head + `"accelerators":"cuda"}`,
			`n1.json: $.accelerators: expected an array of strings, got string "cuda"`},
		{"a truncated document names line and column",
			"{\n  \"schema\": \"poolsolve.inventory/v1\",\n  \"nodeId\": \"n1\",",
			`n1.json:3:18: unexpected end of JSON input`},
		{"data after the document is refused",
			`{"schema":"poolsolve.inventory/v1","nodeId":"n1"} {}`,
			`n1.json:1:51: unexpected data after the top-level value`},
		{"an array at the top is not an inventory",
			`[]`,
			`n1.json: $: expected an object, got an array`},
		{"an empty file says so",
			"  \n",
			`n1.json:2:1: empty document: expected a JSON object`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse([]byte(tc.in), "n1.json")
			if err == nil {
				t.Fatalf("Parse(%s) = nil error, want %q", tc.in, tc.want)
			}
			var ie *lloom.InputError
			if !errors.As(err, &ie) {
				t.Errorf("Parse error is %T, want *lloom.InputError", err)
			}
			if err.Error() != tc.want {
				t.Errorf("Parse error = %q,\n            want %q", err, tc.want)
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(sparkInventory))
	f.Add([]byte(`{"schema":"poolsolve.inventory/v1","nodeId":"n"}`))
	f.Add([]byte(`{"schema":"poolsolve.inventory/v1","nodeId":"n","links":[{"peerNodeId":"m","prefixlen":1e2}]}`))
	f.Add([]byte(`{"schema":1}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		inv, err := Parse(data, "fuzz.json")
		if err != nil {
			var ie *lloom.InputError
			if !errors.As(err, &ie) || ie.File != "fuzz.json" {
				t.Fatalf("error %v (%T) does not name the file", err, err)
			}
			if !strings.HasPrefix(err.Error(), "fuzz.json") {
				t.Fatalf("error %q does not start with the file", err)
			}
			return
		}
		out, err := json.Marshal(inv)
		if err != nil {
			t.Fatalf("Marshal: %v", err)
		}
		again, err := Parse(out, "again.json")
		if err != nil {
			t.Fatalf("Parse(Marshal(inv)) = %v\n%s", err, out)
		}
		if !reflect.DeepEqual(inv, again) {
			t.Fatalf("round trip changed the inventory:\n%+v\n%+v", inv, again)
		}
	})
}
