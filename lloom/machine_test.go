package lloom

import (
	"errors"
	"testing"
)

func TestParseMachineProfileReadsTheGatewayProfile(t *testing.T) {
	p, err := ParseMachineProfile(readFile(t, gateway+"profile.json"), "profile.json")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "id", p.ID, "linux-x64-23_5gb")
	check(t, "platformId", p.PlatformID, "linux-x64")
	check(t, "totalMemoryGb", deref(p.TotalMemoryGb), 23.5)
	check(t, "logicalCpus", deref(p.LogicalCpus), 2)
	check(t, "isAppleSilicon", p.IsAppleSilicon, false)
	check(t, "fingerprint", p.TopologyFingerprint, "sha256:cc7bca4e637b195585221a28308131415992840b2c9695da864693e057a04bea")
	check(t, "MemoryDomains", MemoryDomains(*p), []MemoryDomain{
		{ID: "system:0", Kind: "system", CapacityGb: ptr(23.5), DeviceIDs: []string{"cpu:0"}},
	})
}

func TestMemoryDomainsFollowsMemoryDomainsForProfile(t *testing.T) {
	tests := []struct {
		name string
		file string
		want []MemoryDomain
	}{
		{
			name: "Apple Silicon has one unified domain over the CPU and every device",
			file: "testdata/machine/mac-m2max.json",
			want: []MemoryDomain{{ID: "unified:0", Kind: "unified", Backend: "metal", CapacityGb: ptr(96.0), DeviceIDs: []string{"apple-gpu", "apple-neural-engine", "cpu:0"}}},
		},
		{
			name: "a GB10 whose GPU reports no memory has only system memory",
			file: "testdata/machine/gb10.json",
			want: []MemoryDomain{{ID: "system:0", Kind: "system", CapacityGb: ptr(121.7), DeviceIDs: []string{"cpu:0"}}},
		},
		{
			name: "discrete GPUs get a device domain each, skipping negative sizes",
			file: "testdata/machine/x64-discrete.json",
			want: []MemoryDomain{
				{ID: "system:0", Kind: "system", CapacityGb: ptr(64.0), AvailableGb: ptr(40.5), DeviceIDs: []string{"cpu:0"}},
				{ID: "device:cuda:1", Kind: "device", Backend: "cuda", CapacityGb: ptr(80.0), DeviceIDs: []string{"cuda:1"}},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := LoadMachineProfile(tc.file)
			if err != nil {
				t.Fatal(err)
			}
			check(t, "MemoryDomains", MemoryDomains(*p), tc.want)
		})
	}

	t.Run("declared domains win and are normalised", func(t *testing.T) {
		p := MachineProfile{TotalMemoryGb: ptr(1.0), MemoryDomains: []MemoryDomain{
			{CapacityGb: ptr(-3.0), DeviceIDs: []string{"b", "a", "b", ""}},
		}}
		check(t, "MemoryDomains", MemoryDomains(p), []MemoryDomain{{ID: "memory", Kind: "system", DeviceIDs: []string{"a", "b"}}})
	})
	t.Run("a profile without memory has no domains", func(t *testing.T) {
		check(t, "MemoryDomains", MemoryDomains(MachineProfile{}), []MemoryDomain(nil))
	})
}

func TestParseMachineProfileReadsDevices(t *testing.T) {
	p, err := LoadMachineProfile("testdata/machine/gb10.json")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "compute capability", p.Devices[0].ComputeCapability, Version("12.1"))
	check(t, "normalised", NormalizeArch(string(p.Devices[0].ComputeCapability)), "sm_121")

	p, err = LoadMachineProfile("testdata/machine/x64-discrete.json")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "a numeric compute capability is kept as text", p.Devices[0].ComputeCapability, Version("9.0"))
	check(t, "platformId is derived from platform and arch", p.PlatformID, "linux-x64")

	p, err = LoadMachineProfile("testdata/machine/mac-m2max.json")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "x-local-modelRoot", p.ModelRoot, "/Users/lloom/.lloom/models")
}

func TestParseMachineProfileRefusesOtherDocuments(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want string
	}{
		{"another schema version", `{"schemaVersion": 2, "platformId": "linux-x64"}`, "m.json: $.schemaVersion: expected machine-profile schemaVersion 1, got 2"},
		{"no platform at all", `{"schemaVersion": 1}`, "m.json: $.platformId: missing (and no platform and arch to derive it from)"},
		{"a gateway error", `{"error": {"message": "nope", "code": "unauthorized"}}`, "m.json: gateway error unauthorized: nope"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseMachineProfile([]byte(tc.doc), "m.json")
			if err == nil || err.Error() != tc.want {
				t.Errorf("error = %v, want %s", err, tc.want)
			}
		})
	}
	_, err := ParseMachineProfile([]byte(`{"error": {"message": "x"}}`), "m.json")
	var ge *GatewayError
	if !errors.As(err, &ge) {
		t.Errorf("error %T is not a *GatewayError", err)
	}
}
