package inventory

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// nvidiaSMIArgs is the one query the GPU probe runs, as argv.
var nvidiaSMIArgs = []string{"--query-gpu=index,name,memory.total,compute_cap", "--format=csv,noheader"}

// GPU is one row of nvidia-smi's answer.
type GPU struct {
	Index int
	Name  string
	// MemoryMiB is nil when nvidia-smi reports no dedicated memory, as it
	// does ("[N/A]") on GB10, whose GPU shares the host's unified memory.
	MemoryMiB *float64
	// ComputeCap is "major.minor" as reported, e.g. "12.1"; "" if unknown.
	ComputeCap string
}

// maxGPUs bounds what one nvidia-smi answer may describe; more rows than
// this is garbage, not a machine.
const maxGPUs = 64

// ParseNvidiaSMI reads the CSV (no header) of
// nvidia-smi --query-gpu=index,name,memory.total,compute_cap. Memory
// comes as "97871 MiB" or "[N/A]". A malformed line is an error naming
// the line; blank lines are skipped.
func ParseNvidiaSMI(out []byte) ([]GPU, error) {
	var gpus []GPU
	for n, line := range strings.Split(string(out), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if len(gpus) == maxGPUs {
			return nil, fmt.Errorf("inventory: nvidia-smi: more than %d GPUs", maxGPUs)
		}
		// GPU names carry no commas; split from the right anyway so the
		// numeric columns stay put if one ever does.
		f := strings.Split(line, ",")
		if len(f) < 4 {
			return nil, fmt.Errorf("inventory: nvidia-smi line %d: want 4 fields, got %d in %q", n+1, len(f), clip(line))
		}
		idx, name := f[0], strings.Join(f[1:len(f)-2], ",")
		mem, cc := f[len(f)-2], f[len(f)-1]
		i, err := strconv.Atoi(strings.TrimSpace(idx))
		if err != nil || i < 0 || i >= 1<<16 {
			return nil, fmt.Errorf("inventory: nvidia-smi line %d: bad index %q", n+1, clip(idx))
		}
		if slices.ContainsFunc(gpus, func(g GPU) bool { return g.Index == i }) {
			return nil, fmt.Errorf("inventory: nvidia-smi line %d: GPU index %d repeated", n+1, i)
		}
		g := GPU{Index: i, Name: strings.TrimSpace(name)}
		if g.MemoryMiB, err = parseMiB(mem); err != nil {
			return nil, fmt.Errorf("inventory: nvidia-smi line %d: %w", n+1, err)
		}
		cc = strings.TrimSpace(cc)
		if !notAvailable(cc) {
			if _, _, ok := splitComputeCap(cc); !ok {
				return nil, fmt.Errorf("inventory: nvidia-smi line %d: bad compute capability %q", n+1, clip(cc))
			}
			g.ComputeCap = cc
		}
		gpus = append(gpus, g)
	}
	return gpus, nil
}

func notAvailable(s string) bool {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "[N/A]", "N/A", "[NOT SUPPORTED]", "":
		return true
	}
	return false
}

// parseMiB reads "97871 MiB" (or a bare number of MiB); N/A is nil.
func parseMiB(s string) (*float64, error) {
	s = strings.TrimSpace(s)
	if notAvailable(s) {
		return nil, nil
	}
	num := strings.TrimSpace(strings.TrimSuffix(s, "MiB"))
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil, fmt.Errorf("bad memory %q", clip(s))
	}
	if v == 0 {
		return nil, nil
	}
	return &v, nil
}

// splitComputeCap reads "12.1", "9.0" or "12.1a" into major and minor.
func splitComputeCap(cc string) (major, minor int, ok bool) {
	cc = strings.TrimSuffix(strings.TrimSpace(cc), "a")
	maj, min, found := strings.Cut(cc, ".")
	if !found {
		return 0, 0, false
	}
	a, err1 := strconv.Atoi(maj)
	b, err2 := strconv.Atoi(min)
	if err1 != nil || err2 != nil || a < 1 || a > 99 || b < 0 || b > 9 {
		return 0, 0, false
	}
	return a, b, true
}

// ComputeArch normalises a compute capability or arch name the way recipes
// name archs: "12.1", "12.1a", "sm_121a" and "sm_121" all give "sm_121";
// "9.0" gives "sm_90". Anything else gives "".
func ComputeArch(s string) string {
	s = strings.TrimSpace(s)
	if rest, ok := strings.CutPrefix(strings.ToLower(s), "sm_"); ok {
		rest = strings.TrimSuffix(rest, "a")
		if n, err := strconv.Atoi(rest); err == nil && n >= 10 && n < 1000 && rest[0] != '0' {
			return "sm_" + rest
		}
		return ""
	}
	major, minor, ok := splitComputeCap(s)
	if !ok {
		return ""
	}
	return fmt.Sprintf("sm_%d%d", major, minor)
}

var sparkName = regexp.MustCompile(`(?i)gb10|dgx spark`)

// nvidiaAccelerators are LLooM's machine-profile tags for one GPU: cuda and
// nvidia-gpu always, blackwell from compute capability 12, dgx-spark and
// gb10 when the name says so.
func nvidiaAccelerators(g GPU) []string {
	tags := []string{"cuda", "nvidia-gpu"}
	if major, _, ok := splitComputeCap(g.ComputeCap); ok && major >= 12 {
		tags = append(tags, "blackwell")
	}
	if sparkName.MatchString(g.Name) {
		tags = append(tags, "dgx-spark", "gb10")
	}
	return tags
}

// appleAccelerators are LLooM's tags for Apple Silicon, in its order.
var appleAccelerators = []string{"apple-gpu", "apple-neural-engine", "metal", "ane"}

// clip shortens text quoted in errors and notes.
func clip(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
