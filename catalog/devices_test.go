package catalog

import (
	"fmt"
	"strings"
	"testing"
)

// drawsText is a placement's draws as "node/domain=gb" joined by spaces.
func drawsText(t *testing.T, fleetFile, variantID string) string {
	t.Helper()
	c := build(t, loadBundle(t, fleetFile), Options{ConsiderInstalls: true})
	v := variant(t, c.Pool, variantID)
	var parts []string
	for _, d := range v.Placements[0].Draws {
		parts = append(parts, fmt.Sprintf("%s/%s=%g", d.Node, d.Domain, d.Gb))
	}
	if len(v.Placements) > 1 {
		parts = append(parts, fmt.Sprintf("(first of %d: %s ... %s)", len(v.Placements), v.Placements[0].Key(), v.Placements[len(v.Placements)-1].Key()))
	}
	return strings.Join(parts, " ")
}

func TestALaneDrawsFromTheDomainsLLooMMatchesItsRequirementsTo(t *testing.T) {
	tests := []struct {
		name, fleet, variant, want string
	}{
		{"a runtime's gpuMemoryGb draws from the box's one GPU beside its host memory", "testdata/gpu-box-fleet.json", "chat-a",
			"gpu-box/system:0=8 gpu-box/device:cuda:0=60"},
		{"a recipe's per-domain requiredGb draws from the GPU, its total from system memory", "testdata/gpu-box-fleet.json", "recipe:big-chat-vllm/big-chat",
			"gpu-box/system:0=16 gpu-box/device:cuda:0=90"},
		{"a one-GPU lane on an 8xH100 profile takes one device", "testdata/h100-box-fleet.json", "tp1",
			"h100-01/system:0=16 h100-01/device:cuda:0=40"},
		{"a TP2 lane splits its gpuMemoryGb over two devices", "testdata/h100-box-fleet.json", "tp2",
			"h100-01/system:0=16 h100-01/device:cuda:0=60 h100-01/device:cuda:1=60"},
		{"a TP8 lane takes all eight devices of the box", "testdata/h100-box-fleet.json", "tp8",
			"h100-01/system:0=16 h100-01/device:cuda:0=75 h100-01/device:cuda:1=75 h100-01/device:cuda:2=75 h100-01/device:cuda:3=75 " +
				"h100-01/device:cuda:4=75 h100-01/device:cuda:5=75 h100-01/device:cuda:6=75 h100-01/device:cuda:7=75"},
		{"a requirement that names a device id draws from that device", "testdata/h100-box-fleet.json", "named",
			"h100-01/system:0=16 h100-01/device:cuda:5=30"},
		{"a launch's CUDA_VISIBLE_DEVICES picks the devices its lane draws from", "testdata/h100-box-fleet.json", "pinned",
			"h100-01/system:0=16 h100-01/device:cuda:6=50 h100-01/device:cuda:7=50"},
		{"docker's --gpus device list picks the device of a container lane", "testdata/h100-box-fleet.json", "docker-gpu3",
			"h100-01/system:0=16 h100-01/device:cuda:3=20"},
		{"a TP4 recipe may take any four of the box's eight devices, each set its own placement", "testdata/h100-box-fleet.json", "recipe:tp4-chat-vllm/tp4-chat",
			"h100-01/system:0=16 h100-01/device:cuda:0=70 h100-01/device:cuda:1=70 h100-01/device:cuda:2=70 h100-01/device:cuda:3=70 " +
				"(first of 70: h100-01[device:cuda:0,device:cuda:1,device:cuda:2,device:cuda:3] ... h100-01[device:cuda:4,device:cuda:5,device:cuda:6,device:cuda:7])"},
		{"a lane without device figures draws from the primary domain alone", "../examples/spark-fleet.json", "qwen3-embedding-4b",
			"spark-node-03/unified:0=12"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := drawsText(t, tc.fleet, tc.variant); got != tc.want {
				t.Errorf("draws of %s:\n got %s\nwant %s", tc.variant, got, tc.want)
			}
		})
	}
}

func TestValidateSaysWhenAConfiguredLaneFitsNoDevice(t *testing.T) {
	_, err := Build(loadBundle(t, "testdata/gpu-misfit-fleet.json"), Options{})
	if err == nil {
		t.Fatal("Build accepted runtimes that fit no GPU")
	}
	for _, want := range []string{
		`$.config.runtimes["too-big"]: the lane needs 90 GiB on gpu-box device:cuda:0, whose plan budget is 80 GiB: it fits no device`,
		`$.config.runtimes["too-wide"]: the lane needs 2 GPUs on gpu-box (tensor parallel 2), the node has fewer device domains it may use: it fits no device set there`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("problems lack %q:\n%v", want, err)
		}
	}
}
