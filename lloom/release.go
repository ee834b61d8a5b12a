package lloom

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Release is a LLooM release, major.minor.patch.
type Release struct{ Major, Minor, Patch int }

// ParseRelease reads "0.2.3" or "v0.2.3"; a pre-release or build suffix
// ("0.2.4-rc.1") is ignored.
func ParseRelease(s string) (Release, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	if i := strings.IndexAny(t, "-+"); i >= 0 {
		t = t[:i]
	}
	parts := strings.Split(t, ".")
	if len(parts) != 3 {
		return Release{}, fmt.Errorf("LLooM version %q: expected major.minor.patch, e.g. 0.2.3", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Release{}, fmt.Errorf("LLooM version %q: expected major.minor.patch, e.g. 0.2.3", s)
		}
		n[i] = v
	}
	return Release{n[0], n[1], n[2]}, nil
}

func (v Release) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// AtMost reports whether v is o or older.
func (v Release) AtMost(o Release) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor < o.Minor
	}
	return v.Patch <= o.Patch
}

// legacyUntil is the newest LLooM that reads only the legacy alias form
// (target + fallbacks), and no route profiles, preferred residency or
// fleet profiles: 0.2.3, the npm package at a3f88a4 (src/config.mjs
// validates `target`; nothing in src/ reads members, routeProfiles,
// activeRoute, preferredWarm or fleet).
var legacyUntil = Release{0, 2, 3}

// VersionWarnings lists what a config, as written (raw JSON), holds that
// LLooM version v refuses or does not read, one line each, sorted. A
// config valid to poolsolve may still be one that LLooM v exits on.
func VersionWarnings(raw []byte, v Release) ([]string, error) {
	if !v.AtMost(legacyUntil) {
		return nil, nil
	}
	var doc struct {
		Aliases  map[string]json.RawMessage `json:"aliases"`
		Runtimes map[string]map[string]json.RawMessage
		Models   []struct {
			ID string `json:"id"`
		} `json:"models"`
		Fleet         map[string]json.RawMessage `json:"fleet"`
		RuntimePolicy map[string]json.RawMessage `json:"runtimePolicy"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	models := map[string]bool{}
	for _, m := range doc.Models {
		models[m.ID] = true
	}
	var out []string
	for _, id := range slices.Sorted(maps.Keys(doc.Aliases)) {
		var a map[string]json.RawMessage
		if json.Unmarshal(doc.Aliases[id], &a) != nil {
			continue // a bare id string: read by every version
		}
		var target string
		if t, ok := a["target"]; ok {
			json.Unmarshal(t, &target)
		}
		switch {
		case target == "":
			out = append(out, fmt.Sprintf("LLooM %s refuses this config: alias %s is missing target (it reads the legacy form, target + fallbacks, not members)", v, id))
		case !models[target]:
			out = append(out, fmt.Sprintf("LLooM %s refuses this config: alias %s targets unknown model %s (its target must be a model id)", v, id, target))
		}
		var unread []string
		for _, k := range []string{"members", "optionalMembers", "suspendedMembers", "routeProfiles", "activeRoute", "strategy", "performanceMetric"} {
			if _, ok := a[k]; ok {
				unread = append(unread, k)
			}
		}
		if len(unread) > 0 {
			out = append(out, fmt.Sprintf("LLooM %s does not read aliases.%s %s: it routes by target alone, so a route profile the plan picks is not one it can switch to", v, id, strings.Join(unread, ", ")))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(doc.Runtimes)) {
		if _, ok := doc.Runtimes[id]["preferredWarm"]; ok {
			out = append(out, fmt.Sprintf("LLooM %s does not read runtimes.%s.preferredWarm: the lane is auto (on demand) there", v, id))
		}
	}
	if _, ok := doc.Fleet["activeProfile"]; ok {
		out = append(out, fmt.Sprintf("LLooM %s does not read fleet.activeProfile: it has no fleet profiles", v))
	}
	if _, ok := doc.RuntimePolicy["preferredWarmIdleMs"]; ok {
		out = append(out, fmt.Sprintf("LLooM %s does not read runtimePolicy.preferredWarmIdleMs", v))
	}
	sort.Strings(out)
	return out, nil
}

// ProfilesSupported reports whether LLooM v applies fleet profiles
// (profiles/<name>.json): releases after 0.2.3.
func ProfilesSupported(v Release) bool { return !v.AtMost(legacyUntil) }
