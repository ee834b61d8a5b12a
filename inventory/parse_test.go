package inventory

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

func TestParseNvidiaSMI(t *testing.T) {
	t.Parallel()
	mib := func(f float64) *float64 { return &f }
	tests := []struct {
		name    string
		in      string
		want    []GPU
		wantErr string
	}{
		{"a GB10 reports no memory of its own", "0, NVIDIA GB10, [N/A], 12.1\n", []GPU{{Index: 0, Name: "NVIDIA GB10", ComputeCap: "12.1"}}, ""},
		{"discrete GPUs report MiB", "0, NVIDIA H100 80GB HBM3, 81559 MiB, 9.0\n1, NVIDIA RTX 4090, 24564 MiB, 8.9\n",
			[]GPU{{0, "NVIDIA H100 80GB HBM3", mib(81559), "9.0"}, {1, "NVIDIA RTX 4090", mib(24564), "8.9"}}, ""},
		{"blank lines and CRLF are fine", "\r\n0, A, 100 MiB, 8.0\r\n\r\n", []GPU{{0, "A", mib(100), "8.0"}}, ""},
		{"a name with a comma keeps the numbers in place", "0, Odd, Name, 100 MiB, 8.0\n", []GPU{{0, "Odd, Name", mib(100), "8.0"}}, ""},
		{"an unknown compute capability is empty", "0, Old GPU, 100 MiB, [N/A]\n", []GPU{{0, "Old GPU", mib(100), ""}}, ""},
		{"nothing is no GPUs", "", nil, ""},
		{"too few fields is an error naming the line", "0, GB10\n", nil, "line 1: want 4 fields, got 2"},
		{"a bad index is an error", "x, A, 1 MiB, 8.0\n", nil, `line 1: bad index "x"`},
		{"bad memory is an error", "0, A, lots, 8.0\n", nil, `line 1: bad memory "lots"`},
		{"a repeated index is an error", "0, A, 1 MiB, 8.0\n0, B, 1 MiB, 8.0\n", nil, "line 2: GPU index 0 repeated"},
		{"a bad compute capability is an error", "0, A, 1 MiB, twelve\n", nil, `line 1: bad compute capability "twelve"`},
		{"an nvidia-smi failure message is an error, not a GPU", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n", nil, "want 4 fields"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseNvidiaSMI([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseNvidiaSMI(%q) error = %v, want %q", tc.in, err, tc.wantErr)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ParseNvidiaSMI(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestComputeArch(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"12.1": "sm_121", "12.1a": "sm_121", "sm_121a": "sm_121", "sm_121": "sm_121", "SM_90": "sm_90",
		"9.0": "sm_90", "8.6": "sm_86", "10.0": "sm_100",
		"": "", "12": "", "twelve": "", "sm_": "", "sm_0": "", "12.10": "", "-1.0": "",
	} {
		if got := ComputeArch(in); got != want {
			t.Errorf("ComputeArch(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAcceleratorTagsFollowLLooMsMachineProfile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		gpu  GPU
		want []string
	}{
		{"a GB10 is Blackwell and a DGX Spark", GPU{Name: "NVIDIA GB10", ComputeCap: "12.1"}, []string{"cuda", "nvidia-gpu", "blackwell", "dgx-spark", "gb10"}},
		{"a name saying DGX Spark counts too", GPU{Name: "NVIDIA DGX Spark", ComputeCap: "12.1"}, []string{"cuda", "nvidia-gpu", "blackwell", "dgx-spark", "gb10"}},
		{"a Hopper GPU is plain CUDA", GPU{Name: "NVIDIA H100", ComputeCap: "9.0"}, []string{"cuda", "nvidia-gpu"}},
		{"an unknown capability is not Blackwell", GPU{Name: "NVIDIA X"}, []string{"cuda", "nvidia-gpu"}},
	}
	for _, tc := range tests {
		if got := nvidiaAccelerators(tc.gpu); !slices.Equal(got, tc.want) {
			t.Errorf("%s: nvidiaAccelerators = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestParseMeminfo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    HostMemory
		wantErr string
	}{
		{"MemAvailable is used when present", sparkMeminfo,
			HostMemory{TotalBytes: 127598836 << 10, AvailableBytes: 36568920 << 10, FreeBytes: 3588140 << 10, Source: "linux-memavailable"}, ""},
		{"old kernels fall back to MemFree and say so", "MemTotal: 1000 kB\nMemFree: 400 kB\n",
			HostMemory{TotalBytes: 1000 << 10, AvailableBytes: 400 << 10, FreeBytes: 400 << 10, Source: "linux-memfree"}, ""},
		{"available above total is capped", "MemTotal: 1000 kB\nMemFree: 10 kB\nMemAvailable: 5000 kB\n",
			HostMemory{TotalBytes: 1000 << 10, AvailableBytes: 1000 << 10, FreeBytes: 10 << 10, Source: "linux-memavailable"}, ""},
		{"no MemTotal is an error", "MemFree: 1 kB\n", HostMemory{}, "no MemTotal"},
		{"a zero MemTotal is an error", "MemTotal: 0 kB\nMemFree: 0 kB\n", HostMemory{}, "no MemTotal"},
		{"a bad number is an error naming the key", "MemTotal: lots kB\n", HostMemory{}, `MemTotal: bad value "lots kB"`},
		{"an absurd number is an error", "MemTotal: 99999999999999999999 kB\n", HostMemory{}, "MemTotal: bad value"},
		{"an unknown unit is an error", "MemTotal: 5 MB\n", HostMemory{}, "MemTotal: bad value"},
		{"neither free figure is an error", "MemTotal: 5 kB\n", HostMemory{}, "neither MemAvailable nor MemFree"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseMeminfo([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseMeminfo error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("ParseMeminfo = %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

func TestParseVMStat(t *testing.T) {
	t.Parallel()
	const out = "Mach Virtual Memory Statistics: (page size of 16384 bytes)\n" +
		"Pages free:                                3000.\n" +
		"Pages active:                             99999.\n" +
		"Pages inactive:                            2000.\n" +
		"Pages speculative:                         1000.\n" +
		"Pages wired down:                         50000.\n"
	avail, free, err := ParseVMStat([]byte(out))
	if err != nil || avail != 6000*16384 || free != 3000*16384 {
		t.Errorf("ParseVMStat = %d, %d, %v; want %d, %d", avail, free, err, 6000*16384, 3000*16384)
	}
	for _, bad := range []string{"", "Pages free: 1.\n", "Mach Virtual Memory Statistics: (page size of 0 bytes)\nPages free: 1.\n",
		"Mach Virtual Memory Statistics: (page size of 4096 bytes)\nPages active: 1.\n",
		"Mach Virtual Memory Statistics: (page size of 4096 bytes)\nPages free: many.\n"} {
		if _, _, err := ParseVMStat([]byte(bad)); err == nil {
			t.Errorf("ParseVMStat(%q) = nil error", bad)
		}
	}
}

func TestParseDockerImages(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []string
		wantErr string
	}{
		{"a tagged image with a digest gives both references",
			"vllm/vllm-openai:v0.11.0@sha256:0123abcd\n", []string{"vllm/vllm-openai:v0.11.0", "vllm/vllm-openai@sha256:0123abcd"}, ""},
		{"a local build has no digest", "lloom/sparkqwen:dev@<none>\n", []string{"lloom/sparkqwen:dev"}, ""},
		{"an untagged pull keeps its digest", "nvcr.io/nvidia/vllm:<none>@sha256:beef\n", []string{"nvcr.io/nvidia/vllm@sha256:beef"}, ""},
		{"dangling images are skipped", "<none>:<none>@<none>\n<none>:<none>@sha256:aa\n", nil, ""},
		{"a registry port is not a tag", "registry.local:5000/team/img:1.2@<none>\n", []string{"registry.local:5000/team/img:1.2"}, ""},
		{"output comes sorted without duplicates", "b:1@<none>\na:1@<none>\nb:1@<none>\n", []string{"a:1", "b:1"}, ""},
		{"a line without a digest part is an error", "vllm:latest\n", nil, "line 1: no @digest"},
		{"a line that is not a reference is an error", "Cannot connect to the Docker daemon:x@y\n", nil, "not an image reference"},
		{"a digest without an algorithm is an error", "a:1@abc\n", nil, `bad digest "abc"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := ParseDockerImages([]byte(tc.in))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ParseDockerImages error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("ParseDockerImages = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func FuzzParseNvidiaSMI(f *testing.F) {
	for _, s := range []string{"0, NVIDIA GB10, [N/A], 12.1\n", "0, A, 81559 MiB, 9.0\n1, B, 1 MiB, 8.6", "x", "0,,,", "0, a, -1 MiB, 1.1", "0, a, NaN, 1.1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		gpus, err := ParseNvidiaSMI(in)
		if err != nil {
			return
		}
		for _, g := range gpus {
			if g.MemoryMiB != nil && !(*g.MemoryMiB > 0) {
				t.Fatalf("GPU %+v has memory %v", g, *g.MemoryMiB)
			}
			if g.ComputeCap != "" && ComputeArch(g.ComputeCap) == "" {
				t.Fatalf("GPU %+v kept a compute capability that names no arch", g)
			}
		}
		// What hardware() builds from any parsed answer must be a valid
		// inventory, and every message must be printable text.
		archs, _, doms, notes := hardware(false, gpus, HostMemory{TotalBytes: 1 << 30, AvailableBytes: 1 << 29}, nil)
		inv := &Inventory{Schema: Schema, NodeID: "n", ComputeArchs: archs, MemoryDomains: doms, Notes: notes}
		if _, err := Parse(mustJSON(t, inv), "fuzz"); err != nil {
			t.Fatalf("inventory from %q does not parse: %v", in, err)
		}
	})
}

func FuzzParseMeminfo(f *testing.F) {
	for _, s := range []string{sparkMeminfo, "MemTotal: 1 kB\nMemFree: 2 kB\n", "MemTotal: 18446744073709551615 kB\n", ":", "MemTotal:\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m, err := ParseMeminfo(in)
		if err != nil {
			return
		}
		if m.TotalBytes == 0 || m.AvailableBytes > m.TotalBytes || m.FreeBytes > m.TotalBytes || m.Source == "" {
			t.Fatalf("ParseMeminfo(%q) = %+v", in, m)
		}
	})
}

func FuzzParseVMStat(f *testing.F) {
	f.Add([]byte("Mach Virtual Memory Statistics: (page size of 16384 bytes)\nPages free: 3.\nPages inactive: 2.\n"))
	f.Add([]byte("Mach Virtual Memory Statistics: (page size of 18446744073709551615 bytes)\nPages free: 18446744073709551615.\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		avail, free, err := ParseVMStat(in)
		if err == nil && avail < free {
			t.Fatalf("ParseVMStat(%q) = available %d < free %d", in, avail, free)
		}
	})
}

func FuzzParseDockerImages(f *testing.F) {
	for _, s := range []string{"vllm/vllm-openai:v0.11.0@sha256:abc\n", "<none>:<none>@<none>", "a:b@c:d\nh:5000/x:y@<none>", "@", ":@"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		refs, err := ParseDockerImages(in)
		if err != nil {
			return
		}
		if !slices.IsSorted(refs) || len(slices.Compact(slices.Clone(refs))) != len(refs) {
			t.Fatalf("ParseDockerImages(%q) = %q: not sorted and unique", in, refs)
		}
		for _, r := range refs {
			if r == "" || strings.ContainsAny(r, " \t\n\"'`$\\") || strings.Contains(r, "<none>") {
				t.Fatalf("ParseDockerImages(%q) gave reference %q", in, r)
			}
		}
	})
}
