package lloom

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestADomainNeedIsReadAsLLooMReadsIt(t *testing.T) {
	tests := []struct {
		name string
		est  string
		want []DomainNeed
	}{
		{"requiredGb is read before memoryGb", `{"domains":[{"kind":"device","requiredGb":20,"memoryGb":30}]}`,
			[]DomainNeed{{ID: "memory", Kind: "device", RequiredGb: 20}}},
		{"memoryGb stands in when requiredGb is absent", `{"domains":[{"id":"device:cuda:0","kind":"device","backend":"cuda","memoryGb":20}]}`,
			[]DomainNeed{{ID: "device:cuda:0", Kind: "device", Backend: "cuda", RequiredGb: 20}}},
		{"the reserve is added to every row and the sum rounded to a hundredth", `{"reserveGb":1.5,"domains":[{"requiredGb":2.004},{"kind":"device","requiredGb":3}]}`,
			[]DomainNeed{{ID: "memory", Kind: "system", RequiredGb: 3.5}, {ID: "memory", Kind: "device", RequiredGb: 4.5}}},
		{"a row with a negative figure is dropped, not read as its memoryGb", `{"domains":[{"kind":"device","requiredGb":-1,"memoryGb":5},{"kind":"unified","memoryGb":7}]}`,
			[]DomainNeed{{ID: "memory", Kind: "unified", RequiredGb: 7}}},
		{"name and type stand in for an absent id and kind", `{"domains":[{"name":"device:cuda:1","type":"device","requiredGb":9},{"id":"system:0","name":"x","kind":"system","type":"device","requiredGb":1}]}`,
			[]DomainNeed{{ID: "device:cuda:1", Kind: "device", RequiredGb: 9}, {ID: "system:0", Kind: "system", RequiredGb: 1}}},
		{"a row without a figure is dropped", `{"domains":[{"kind":"device"}]}`, nil},
		{"device ids come out unique and sorted", `{"domains":[{"kind":"device","deviceIds":["cuda:1","cuda:0","cuda:1"],"requiredGb":1}]}`,
			[]DomainNeed{{ID: "memory", Kind: "device", DeviceIDs: []string{"cuda:0", "cuda:1"}, RequiredGb: 1}}},
		{"an estimate with only a total needs nothing per domain", `{"memoryGb":40}`, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var e ResourceEstimate
			if err := json.Unmarshal([]byte(tc.est), &e); err != nil {
				t.Fatal(err)
			}
			got := e.DomainNeeds()
			if !slices.EqualFunc(got, tc.want, func(a, b DomainNeed) bool {
				return a.ID == b.ID && a.Kind == b.Kind && a.Backend == b.Backend && slices.Equal(a.DeviceIDs, b.DeviceIDs) && a.RequiredGb == b.RequiredGb
			}) {
				t.Errorf("DomainNeeds() = %+v, want %+v", got, tc.want)
			}
		})
	}
	var nilEst *ResourceEstimate
	if got := nilEst.DomainNeeds(); got != nil {
		t.Errorf("a missing estimate needs %+v", got)
	}
}

func TestARequirementIsMatchedToTheFirstDomainThatFitsItsIDKindBackendAndDevices(t *testing.T) {
	cap80 := 80.0
	h100 := MemoryDomains(MachineProfile{
		TotalMemoryGb: ptr(2015.6),
		Devices: []Device{
			{ID: "cuda:0", Backend: "cuda", MemoryGb: &cap80},
			{ID: "cuda:1", Backend: "cuda", MemoryGb: &cap80},
		},
	})
	tests := []struct {
		name string
		need DomainNeed
		want int
	}{
		{"a kind alone takes the first domain of that kind", DomainNeed{ID: "memory", Kind: "device"}, 1},
		{"no kind given reads as system", DomainNeed{ID: "memory", Kind: "system"}, 0},
		{"an id names its domain", DomainNeed{ID: "device:cuda:1", Kind: "device"}, 2},
		{"device ids pick the domain holding one of them", DomainNeed{ID: "memory", Kind: "device", DeviceIDs: []string{"cuda:1", "cuda:9"}}, 2},
		{"a backend the machine lacks matches nothing", DomainNeed{ID: "memory", Kind: "device", Backend: "rocm"}, -1},
		{"the kind must agree with the id's domain", DomainNeed{ID: "device:cuda:0", Kind: "system"}, -1},
		{"unified memory is not a device", DomainNeed{ID: "memory", Kind: "unified"}, -1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MatchDomain(tc.need, h100); got != tc.want {
				t.Errorf("MatchDomain = %d, want %d (domains %+v)", got, tc.want, h100)
			}
		})
	}
}

func TestALaunchSaysWhichGPUsItUses(t *testing.T) {
	tests := []struct {
		name   string
		env    map[string]string
		create []string
		want   []string
	}{
		{"nothing said: every device is seen", nil, nil, nil},
		{"CUDA_VISIBLE_DEVICES names host devices in its order", map[string]string{"CUDA_VISIBLE_DEVICES": "3,1"}, nil, []string{"cuda:3", "cuda:1"}},
		{"docker's --gpus device list picks host devices", nil, []string{"--gpus", `"device=4,5"`}, []string{"cuda:4", "cuda:5"}},
		{"CUDA_VISIBLE_DEVICES inside a container picks among docker's devices", nil, []string{"--gpus=device=4,5,6", "-e", "CUDA_VISIBLE_DEVICES=2"}, []string{"cuda:6"}},
		{"--gpus all says nothing", nil, []string{"--gpus", "all"}, nil},
		{"NVIDIA_VISIBLE_DEVICES in the container env picks host devices", nil, []string{"--env", "NVIDIA_VISIBLE_DEVICES=7"}, []string{"cuda:7"}},
		{"GPU UUIDs are not read as indices", map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-8a1b"}, nil, nil},
		{"an index past docker's devices is not guessed", nil, []string{"--gpus", "device=1", "-e", "CUDA_VISIBLE_DEVICES=1"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := VisibleDevices(tc.env, tc.create); !slices.Equal(got, tc.want) {
				t.Errorf("VisibleDevices = %v, want %v", got, tc.want)
			}
		})
	}
}

func FuzzVisibleDevices(f *testing.F) {
	f.Add("0,1", "--gpus", "device=2,3")
	f.Add("GPU-1", "-e", "CUDA_VISIBLE_DEVICES=9")
	f.Fuzz(func(t *testing.T, cvd, flag, value string) {
		for _, id := range VisibleDevices(map[string]string{"CUDA_VISIBLE_DEVICES": cvd}, []string{flag, value}) {
			if len(id) < 6 || id[:5] != "cuda:" {
				t.Fatalf("device id %q is not cuda:<index>", id)
			}
		}
	})
}
