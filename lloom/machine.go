package lloom

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// MachineProfile is a machine-profile v1 document: what LLooM detected
// about one host (`GET /gateway/profile`, and `profile` in node status).
type MachineProfile struct {
	Schema        string `json:"$schema,omitempty"`
	SchemaVersion int    `json:"schemaVersion,omitempty"`
	Profile       string `json:"profile,omitempty"`
	ID            string `json:"id,omitempty"`
	Platform      string `json:"platform,omitempty"`
	Arch          string `json:"arch,omitempty"`
	// PlatformID is "<platform>-<arch>": linux-arm64, darwin-arm64, linux-x64.
	PlatformID string `json:"platformId,omitempty"`
	CPUBrand   string `json:"cpuBrand,omitempty"`
	// TotalMemoryGb is GiB, rounded to 0.1.
	TotalMemoryGb       *float64       `json:"totalMemoryGb,omitempty"`
	AvailableMemoryGb   *float64       `json:"availableMemoryGb,omitempty"`
	LogicalCpus         *int           `json:"logicalCpus,omitempty"`
	Accelerators        []string       `json:"accelerators,omitempty"`
	Devices             []Device       `json:"devices,omitempty"`
	IsAppleSilicon      bool           `json:"isAppleSilicon,omitempty"`
	MemoryDomains       []MemoryDomain `json:"memoryDomains,omitempty"`
	TopologyFingerprint string         `json:"topologyFingerprint,omitempty"`
	// ModelRoot is `x-local-modelRoot`, where the host keeps model weights.
	ModelRoot string `json:"x-local-modelRoot,omitempty"`
	// Cluster is the optional NVIDIA Sync discovery result, kept as written.
	Cluster json.RawMessage `json:"cluster,omitempty"`
}

// Device is one accelerator of a machine profile.
type Device struct {
	ID     string `json:"id,omitempty"`     // cuda:0, apple-gpu, ...
	Kind   string `json:"kind,omitempty"`   // gpu or npu
	Vendor string `json:"vendor,omitempty"` // nvidia, apple
	Name   string `json:"name,omitempty"`
	// Backend is cuda, metal or ane.
	Backend string `json:"backend,omitempty"`
	// MemoryGb is absent on GB10, whose GPU shares system memory.
	MemoryGb          *float64 `json:"memoryGb,omitempty"`
	AvailableMemoryGb *float64 `json:"availableMemoryGb,omitempty"`
	// ComputeCapability is nvidia-smi's compute_cap, e.g. "12.1"
	// (NormalizeArch turns it into sm_121).
	ComputeCapability Version  `json:"computeCapability,omitempty"`
	Accelerators      []string `json:"accelerators,omitempty"`
}

// MemoryDomain is one pool of memory lanes draw from.
type MemoryDomain struct {
	ID          string   `json:"id"`
	Kind        string   `json:"kind"` // unified, system or device
	Backend     string   `json:"backend,omitempty"`
	CapacityGb  *float64 `json:"capacityGb,omitempty"`
	AvailableGb *float64 `json:"availableGb,omitempty"`
	DeviceIDs   []string `json:"deviceIds,omitempty"`
}

// MemoryDomains returns the profile's memory domains as LLooM's
// memoryDomainsForProfile does: the declared memoryDomains when there are
// any; otherwise one unified domain "unified:0" (backend metal, covering
// cpu:0 and every device) on Apple Silicon; otherwise "system:0" for the
// system memory plus one "device:<id>" per device that reports memoryGb.
// Negative or non-finite sizes read as unknown; device ids come out
// unique and sorted.
func MemoryDomains(p MachineProfile) []MemoryDomain {
	if len(p.MemoryDomains) > 0 {
		out := make([]MemoryDomain, len(p.MemoryDomains))
		for i, d := range p.MemoryDomains {
			out[i] = NormalizeDomain(d)
		}
		return out
	}
	total, avail := finiteGb(p.TotalMemoryGb), finiteGb(p.AvailableMemoryGb)
	if p.IsAppleSilicon {
		ids := []string{"cpu:0"}
		for _, d := range p.Devices {
			ids = append(ids, d.ID)
		}
		return []MemoryDomain{NormalizeDomain(MemoryDomain{
			ID: "unified:0", Kind: "unified", Backend: "metal", CapacityGb: total, AvailableGb: avail, DeviceIDs: ids,
		})}
	}
	var out []MemoryDomain
	if total != nil {
		out = append(out, NormalizeDomain(MemoryDomain{
			ID: "system:0", Kind: "system", CapacityGb: total, AvailableGb: avail, DeviceIDs: []string{"cpu:0"},
		}))
	}
	for _, d := range p.Devices {
		capGb := finiteGb(d.MemoryGb)
		if capGb == nil {
			continue
		}
		out = append(out, NormalizeDomain(MemoryDomain{
			ID: "device:" + d.ID, Kind: "device", Backend: d.Backend, CapacityGb: capGb,
			AvailableGb: d.AvailableMemoryGb, DeviceIDs: []string{d.ID},
		}))
	}
	return out
}

// NormalizeDomain fills a domain's defaults as LLooM does: id "memory",
// kind "system"; unknown sizes nil; device ids unique and sorted.
func NormalizeDomain(d MemoryDomain) MemoryDomain {
	if d.ID == "" {
		d.ID = "memory"
	}
	if d.Kind == "" {
		d.Kind = "system"
	}
	d.CapacityGb = finiteGb(d.CapacityGb)
	d.AvailableGb = finiteGb(d.AvailableGb)
	ids := uniqueStrings(d.DeviceIDs)
	slices.Sort(ids)
	d.DeviceIDs = ids
	return d
}

// finiteGb is LLooM's finiteNumber: a copy of a finite, non-negative value,
// else nil.
func finiteGb(p *float64) *float64 {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) || *p < 0 {
		return nil
	}
	return ptr(*p)
}

// ParseMachineProfile reads a machine-profile v1 document, as written by
// LLooM or returned by `GET /gateway/profile`. A gateway error envelope
// comes back as a *GatewayError.
func ParseMachineProfile(data []byte, file string) (*MachineProfile, error) {
	tree, err := parseTree(data, file)
	if err != nil {
		return nil, err
	}
	if gerr := gatewayError(tree, file); gerr != nil {
		return nil, gerr
	}
	p := &MachineProfile{}
	if err := decodeTree(tree, data, file, p); err != nil {
		return nil, err
	}
	if p.SchemaVersion != 1 {
		return nil, &InputError{File: file, Path: jsonpos.Field(jsonpos.Root, "schemaVersion"), Msg: fmt.Sprintf("expected machine-profile schemaVersion 1, got %d", p.SchemaVersion)}
	}
	if p.PlatformID == "" && p.Platform != "" && p.Arch != "" {
		p.PlatformID = p.Platform + "-" + p.Arch
	}
	if p.PlatformID == "" {
		return nil, &InputError{File: file, Path: jsonpos.Field(jsonpos.Root, "platformId"), Msg: "missing (and no platform and arch to derive it from)"}
	}
	return p, nil
}

// LoadMachineProfile reads and parses the machine profile at path.
func LoadMachineProfile(path string) (*MachineProfile, error) {
	data, err := readInput(path)
	if err != nil {
		return nil, err
	}
	return ParseMachineProfile(data, path)
}
