package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/poolsolve/poolsolve/inventory"
	"github.com/poolsolve/poolsolve/lloom"
)

// LLooM's machine-profile identifiers, so tools that read profiles accept
// the one derived here.
const (
	profileSchema  = "https://lloom.dev/schemas/machine-profile.v1.schema.json"
	profileProfile = "https://lloom.dev/profiles/interchange/v1"
)

// errInventoryPending is a collection that did not finish within the
// wait; it goes on in the background.
var errInventoryPending = errors.New("inventory is still being collected; retry in a few seconds")

// localStatus is this node in LLooM's node-status shape. The inventory and
// the profile derived from it come only when asked for, so plain status
// polls never wait for a collection.
func (h *handler) localStatus(ctx context.Context, withInventory bool, wait time.Duration) (*lloom.NodeStatus, error) {
	st := &lloom.NodeStatus{
		ID: h.cfg.NodeID, Name: h.cfg.Name, Local: true, Reachable: true,
		System:    h.system(),
		Telemetry: h.telemetry(ctx),
	}
	if !withInventory {
		return st, nil
	}
	ictx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	inv, err := h.cfg.Inventory.Inventory(ictx)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return st, errInventoryPending
		}
		return st, fmt.Errorf("inventory unavailable: %w", err)
	}
	// The agent's id names the node, whatever the collector was told.
	inv.NodeID = h.cfg.NodeID
	raw, err := json.Marshal(inv)
	if err != nil {
		return st, fmt.Errorf("inventory unavailable: %w", err)
	}
	st.Inventory = raw
	st.Profile = profileOf(inv, runtime.NumCPU())
	return st, nil
}

// system is the node's OS facts, named as Node.js names them (LLooM's
// system block): linux/darwin/win32, x64/arm64.
func (h *handler) system() *lloom.NodeSystem {
	goos, goarch := h.cfg.Prober.Platform()
	platform, arch, _ := strings.Cut(inventory.PlatformID(goos, goarch), "-")
	host, _ := h.cfg.Prober.Hostname()
	return &lloom.NodeSystem{Hostname: host, Platform: platform, Arch: arch}
}

// telemetry samples memory now, in LLooM's telemetry shape. A failed
// sample leaves memory out rather than failing the status.
func (h *handler) telemetry(ctx context.Context) *lloom.Telemetry {
	cpus := runtime.NumCPU()
	t := &lloom.Telemetry{
		SampledAt: h.cfg.Now().UTC().Format("2006-01-02T15:04:05.000Z"),
		CPU:       &lloom.CPUTelemetry{LogicalCpus: &cpus},
	}
	m, err := inventory.SampleHostMemory(ctx, h.cfg.Prober, 5*time.Second)
	if err != nil || m.TotalBytes == 0 || m.TotalBytes > math.MaxInt64 {
		return t
	}
	total, avail, free := int64(m.TotalBytes), int64(m.AvailableBytes), int64(m.FreeBytes)
	used := total - free
	util := round(100 * float64(used) / float64(total))
	pressure := round(100 * float64(total-avail) / float64(total))
	t.Memory = &lloom.MemoryTelemetry{
		UsedBytes: &used, FreeBytes: &free, AvailableBytes: &avail, TotalBytes: &total,
		Utilization: &util, PressureUtilization: &pressure, Source: m.Source,
	}
	return t
}

func round(x float64) float64 { return math.Round(x*100) / 100 }

// profileOf derives a machine-profile v1 from an inventory, for tools that
// know only profiles (LLooM's cluster add-node, older planners). It has
// no devices and no topology fingerprint: the inventory does not keep what
// LLooM hashes.
func profileOf(inv *inventory.Inventory, cpus int) *lloom.MachineProfile {
	platform, arch, _ := strings.Cut(inv.PlatformID, "-")
	p := &lloom.MachineProfile{
		Schema: profileSchema, SchemaVersion: 1, Profile: profileProfile,
		ID: inv.PlatformID, Platform: platform, Arch: arch, PlatformID: inv.PlatformID,
		LogicalCpus:    &cpus,
		Accelerators:   append([]string(nil), inv.Accelerators...),
		IsAppleSilicon: inv.PlatformID == "darwin-arm64",
	}
	for _, d := range inv.MemoryDomains {
		capGb := d.CapacityGb
		md := lloom.MemoryDomain{ID: d.ID, Kind: d.Kind, Backend: d.Backend, CapacityGb: &capGb, DeviceIDs: append([]string(nil), d.DeviceIDs...)}
		if d.AvailableGb != nil {
			a := *d.AvailableGb
			md.AvailableGb = &a
		}
		p.MemoryDomains = append(p.MemoryDomains, md)
		if p.TotalMemoryGb == nil && d.Kind != "device" {
			// LLooM rounds the total to 0.1 GiB and names the profile by it.
			total := math.Round(d.CapacityGb*10) / 10
			p.TotalMemoryGb = &total
			p.ID = fmt.Sprintf("%s-%sgb", inv.PlatformID, strings.ReplaceAll(strconv.FormatFloat(total, 'f', -1, 64), ".", "_"))
		}
	}
	if len(inv.ModelRoots) > 0 {
		p.ModelRoot = inv.ModelRoots[0].Path
	}
	return p
}
