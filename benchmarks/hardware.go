package benchmarks

import (
	"fmt"
	"math"

	"github.com/poolsolve/poolsolve/model"
)

// hwKind is one kind of machine, with the facts LLooM reports for it.
type hwKind int

const (
	hwSpark hwKind = iota // DGX Spark: GB10, 121.69 GiB shared by CPU and GPU
	hwH100                // 8x H100 80GB box
	hwMac                 // Apple Silicon Mac, unified memory
)

func (k hwKind) prefix() string { return [...]string{"spark", "h100", "mac"}[k] }

func (k hwKind) platform() string {
	return [...]string{"linux-arm64", "linux-x64", "darwin-arm64"}[k]
}

func (k hwKind) arch() string { return [...]string{"sm_121", "sm_90", "apple-metal"}[k] }

// accelerators are what the inventory and profile report.
func (k hwKind) accelerators() []string {
	switch k {
	case hwSpark:
		return []string{"cuda", "nvidia-gpu", "blackwell", "gb10", "dgx-spark"}
	case hwH100:
		return []string{"cuda", "nvidia-gpu", "hopper", "h100"}
	}
	return []string{"apple-gpu", "apple-neural-engine", "metal", "ane"}
}

// configAccelerators are what cluster.nodes[N].resources lists.
func (k hwKind) configAccelerators() []string {
	switch k {
	case hwSpark:
		return []string{"cuda", "nvidia-gpu", "blackwell", "gb10"}
	case hwH100:
		return []string{"cuda", "nvidia-gpu", "hopper", "h100"}
	}
	return nil
}

// recipeAccelerator is the tag a recipe for this hardware requires.
func (k hwKind) recipeAccelerator() string { return [...]string{"gb10", "h100", "apple-gpu"}[k] }

func (k hwKind) chip() string {
	return [...]string{"NVIDIA DGX Spark / GB10", "8x NVIDIA H100 80GB HBM3", "Apple M-series"}[k]
}

const (
	sparkTotalBytes = 130661208064 // what a GB10 reports: 121.69 GiB
	h100HostGb      = 2015.6       // DGX H100 host memory
	h100DeviceGb    = 79.6         // what an H100 80GB reports
	h100GPUs        = 8
	maxUtil         = 0.95
	headroomGb      = 4
)

var macSizesGb = []float64{64, 96, 128, 192}

// totalGb is the node's primary memory total as telemetry reports it.
func totalGb(k hwKind, macGb float64) float64 {
	switch k {
	case hwSpark:
		return float64(sparkTotalBytes) / model.GiB
	case hwH100:
		return h100HostGb
	}
	return macGb
}

// planBudget is what the planner may fill on the node's primary domain:
// LLooM's admission formula with the generated config, minus headroom.
func planBudget(k hwKind, macGb float64) float64 {
	total, util, hr := totalGb(k, macGb), maxUtil, float64(headroomGb)
	in := model.BudgetInputs{Primary: true, TelemetryTotalGb: &total, PolicyMaxUtil: &util, HeadroomGb: hr}
	return model.ComputeBudget(in).PlanGb
}

// gpuBudget is what the planner may fill on one H100's own memory domain.
func gpuBudget() float64 {
	total, util := h100DeviceGb, maxUtil
	return model.ComputeBudget(model.BudgetInputs{TelemetryTotalGb: &total, PolicyMaxUtil: &util, HeadroomGb: headroomGb}).PlanGb
}

// hostGb is what a lane on an H100 box takes of the host's memory: the
// process and its staging buffers, not the weights, which live on the
// GPUs.
func hostGb(gpuGb float64) float64 { return math.Round(8 + 0.1*gpuGb) }

// profile is the node's machine profile v1.
func (n *node) profile() obj {
	total := round2(totalGb(n.hw, n.macGb))
	p := obj{
		"$schema":       "https://lloom.dev/schemas/machine-profile.v1.schema.json",
		"schemaVersion": 1,
		"profile":       "https://lloom.dev/profiles/interchange/v1",
		"platformId":    n.hw.platform(),
		"totalMemoryGb": round1(total),
		"accelerators":  strs(n.hw.accelerators()),
	}
	switch n.hw {
	case hwSpark:
		p["id"], p["platform"], p["arch"], p["cpuBrand"], p["logicalCpus"] = "linux-arm64-121_7gb", "linux", "arm64", "Cortex-X925", 20
		p["devices"] = arr{obj{"id": "cuda:0", "kind": "gpu", "vendor": "nvidia", "name": "NVIDIA GB10", "backend": "cuda",
			"computeCapability": "12.1", "accelerators": strs(n.hw.accelerators())}}
		p["memoryDomains"] = arr{obj{"id": "system:0", "kind": "system", "capacityGb": total, "deviceIds": arr{"cpu:0"}}}
	case hwH100:
		p["id"], p["platform"], p["arch"], p["cpuBrand"], p["logicalCpus"] = "linux-x64-2015_6gb", "linux", "x64", "Intel Xeon Platinum 8480C", 224
		var devs arr
		for i := 0; i < 8; i++ {
			devs = append(devs, obj{"id": fmt.Sprintf("cuda:%d", i), "kind": "gpu", "vendor": "nvidia", "name": "NVIDIA H100 80GB HBM3",
				"backend": "cuda", "memoryGb": h100DeviceGb, "computeCapability": "9.0", "accelerators": strs(n.hw.accelerators())})
		}
		p["devices"] = devs
	case hwMac:
		p["id"] = fmt.Sprintf("darwin-arm64-%.0fgb", n.macGb)
		p["platform"], p["arch"], p["cpuBrand"], p["logicalCpus"], p["isAppleSilicon"] = "darwin", "arm64", "Apple M2 Ultra", 24, true
		p["devices"] = arr{
			obj{"id": "apple-gpu", "kind": "gpu", "vendor": "apple", "name": "Apple GPU", "backend": "metal", "accelerators": arr{"apple-gpu", "metal"}},
			obj{"id": "apple-neural-engine", "kind": "npu", "vendor": "apple", "name": "Apple Neural Engine", "backend": "ane", "accelerators": arr{"apple-neural-engine", "ane"}},
		}
		p["memoryDomains"] = arr{obj{"id": "unified:0", "kind": "unified", "backend": "metal", "capacityGb": total,
			"deviceIds": arr{"apple-gpu", "apple-neural-engine", "cpu:0"}}}
	}
	return p
}

// domains are the inventory's memory domains; an H100 box has system:0
// plus one device domain per GPU.
func (n *node) domains() arr {
	total := round2(totalGb(n.hw, n.macGb))
	switch n.hw {
	case hwSpark:
		return arr{obj{"id": "system:0", "kind": "system", "backend": "cuda", "capacityGb": total, "deviceIds": arr{"cpu:0", "cuda:0"}}}
	case hwH100:
		out := arr{obj{"id": "system:0", "kind": "system", "capacityGb": total, "deviceIds": arr{"cpu:0"}}}
		for i := 0; i < 8; i++ {
			out = append(out, obj{"id": fmt.Sprintf("device:cuda:%d", i), "kind": "device", "backend": "cuda",
				"capacityGb": h100DeviceGb, "deviceIds": arr{fmt.Sprintf("cuda:%d", i)}})
		}
		return out
	}
	return arr{obj{"id": "unified:0", "kind": "unified", "backend": "metal", "capacityGb": total,
		"deviceIds": arr{"apple-gpu", "apple-neural-engine", "cpu:0"}}}
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }
func round2(x float64) float64 { return math.Round(x*100) / 100 }
