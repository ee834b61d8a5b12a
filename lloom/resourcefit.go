package lloom

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// DomainNeed is one per-domain memory requirement of a resource estimate,
// read as LLooM 0.2.3's resource fit reads it: id (else name, else
// "memory") and kind (else type, else "system"), the figure requiredGb before memoryGb, the
// estimate's reserveGb added and the sum rounded to 0.01 GiB.
type DomainNeed struct {
	ID         string
	Kind       string
	Backend    string
	DeviceIDs  []string // unique, sorted
	RequiredGb float64
}

// DomainNeeds lists the estimate's per-domain requirements in order. Rows
// without a finite, non-negative figure are dropped, as LLooM drops them;
// a nil estimate, or one without domains, needs nothing per domain (its
// total figure is the node's, drawn from the primary domain).
func (e *ResourceEstimate) DomainNeeds() []DomainNeed {
	if e == nil {
		return nil
	}
	reserve := 0.0
	if r := finiteGb(e.ReserveGb); r != nil {
		reserve = *r
	}
	var out []DomainNeed
	for _, d := range e.Domains {
		gb := finiteGb(d.RequiredGb)
		if d.RequiredGb == nil {
			gb = finiteGb(d.MemoryGb)
		}
		if gb == nil {
			continue
		}
		id, kind := d.ID, d.Kind
		if id == "" {
			id = d.Name
		}
		if kind == "" {
			kind = d.Type
		}
		n := NormalizeDomain(MemoryDomain{ID: id, Kind: kind, Backend: d.Backend, DeviceIDs: d.DeviceIDs})
		out = append(out, DomainNeed{
			ID: n.ID, Kind: n.Kind, Backend: n.Backend, DeviceIDs: n.DeviceIDs,
			RequiredGb: math.Round((*gb+reserve)*100) / 100,
		})
	}
	return out
}

// Matches reports whether the requirement may be met by domain d: an id
// other than "memory" must be d's, a kind or backend must be d's, and
// device ids, when given, must share one with d's.
func (n DomainNeed) Matches(d MemoryDomain) bool {
	if n.ID != "" && n.ID != "memory" && n.ID != d.ID {
		return false
	}
	if n.Kind != "" && n.Kind != d.Kind {
		return false
	}
	if n.Backend != "" && n.Backend != d.Backend {
		return false
	}
	if len(n.DeviceIDs) > 0 && !slices.ContainsFunc(n.DeviceIDs, func(id string) bool { return slices.Contains(d.DeviceIDs, id) }) {
		return false
	}
	return true
}

// Named reports whether the requirement names its domain (an id or device
// ids). LLooM checks every requirement against the first domain that
// matches; a requirement that names none may be met by any matching
// domain, which is the planner's choice.
func (n DomainNeed) Named() bool {
	return n.ID != "" && n.ID != "memory" || len(n.DeviceIDs) > 0
}

// MatchDomain is the domain LLooM checks the requirement against: the
// first of domains that matches, or -1.
func MatchDomain(n DomainNeed, domains []MemoryDomain) int {
	return slices.IndexFunc(domains, n.Matches)
}

// VisibleDevices is which of the host's CUDA devices a launch uses, in
// the order the process numbers them ("cuda:2", "cuda:3"): docker's
// `--gpus device=...` (or NVIDIA_VISIBLE_DEVICES) picks host devices, and
// CUDA_VISIBLE_DEVICES picks among what the process sees. nil means the
// launch does not say (it sees every device and takes the first ones), or
// names devices by something other than their index (GPU UUIDs).
func VisibleDevices(env map[string]string, create []string) []string {
	var host []int // nil: every device
	cvd, cvdSet := env["CUDA_VISIBLE_DEVICES"]
	nvd, nvdSet := env["NVIDIA_VISIBLE_DEVICES"]
	for i := 0; i < len(create); i++ {
		a, next := create[i], ""
		if i+1 < len(create) {
			next = create[i+1]
		}
		val := func(flag string) (string, bool) {
			if a == flag {
				i++
				return next, true
			}
			if v, ok := strings.CutPrefix(a, flag+"="); ok {
				return v, true
			}
			return "", false
		}
		if v, ok := val("--gpus"); ok {
			v = strings.Trim(v, `"'`)
			if ids, ok := strings.CutPrefix(v, "device="); ok {
				nvd, nvdSet = ids, true
			}
			continue
		}
		for _, flag := range []string{"-e", "--env"} {
			if v, ok := val(flag); ok {
				if k, x, ok := strings.Cut(v, "="); ok {
					switch k {
					case "CUDA_VISIBLE_DEVICES":
						cvd, cvdSet = x, true
					case "NVIDIA_VISIBLE_DEVICES":
						nvd, nvdSet = x, true
					}
				}
				break
			}
		}
	}
	if nvdSet && nvd != "all" {
		ids, ok := indices(nvd)
		if !ok {
			return nil
		}
		host = ids
	}
	if cvdSet {
		ids, ok := indices(cvd)
		if !ok {
			return nil
		}
		if host != nil {
			picked := make([]int, 0, len(ids))
			for _, i := range ids {
				if i >= len(host) {
					return nil
				}
				picked = append(picked, host[i])
			}
			ids = picked
		}
		host = ids
	}
	if host == nil {
		return nil
	}
	out := make([]string, len(host))
	for i, h := range host {
		out[i] = "cuda:" + strconv.Itoa(h)
	}
	return out
}

// indices reads "2,3" as device indices; false for anything else.
func indices(s string) ([]int, bool) {
	s = strings.Trim(strings.TrimSpace(s), `"'`)
	if s == "" {
		return nil, false
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 {
			return nil, false
		}
		out = append(out, n)
	}
	return out, true
}
