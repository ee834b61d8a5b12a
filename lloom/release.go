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

// VersionWarning is one thing a config holds that a LLooM release refuses
// (Refused: the gateway exits at load) or does not read.
type VersionWarning struct {
	Text    string
	Refused bool
}

// VersionWarnings lists what a config, as written (raw JSON), holds that
// LLooM version v refuses or does not read, sorted. A config valid to
// poolsolve may still be one that LLooM v exits on. local is the node that
// will read the config (a gateway's reported node id), or "" when unknown:
// then cluster.nodeId stands for it.
func VersionWarnings(raw []byte, v Release, local string) ([]VersionWarning, error) {
	var doc struct {
		KeepWarm      json.RawMessage            `json:"keepWarm"`
		PreferredWarm json.RawMessage            `json:"preferredWarm"`
		Aliases       map[string]json.RawMessage `json:"aliases"`
		Runtimes      map[string]map[string]json.RawMessage
		Cluster       struct {
			NodeID string                                `json:"nodeId"`
			Nodes  map[string]map[string]json.RawMessage `json:"nodes"`
		} `json:"cluster"`
		Fleet         map[string]json.RawMessage `json:"fleet"`
		RuntimePolicy map[string]json.RawMessage `json:"runtimePolicy"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	var out []VersionWarning
	refuse := func(format string, args ...any) {
		out = append(out, VersionWarning{Text: fmt.Sprintf("LLooM %s refuses this config: ", v) + fmt.Sprintf(format, args...), Refused: true})
	}
	unread := func(format string, args ...any) {
		out = append(out, VersionWarning{Text: fmt.Sprintf("LLooM %s ", v) + fmt.Sprintf(format, args...)})
	}
	// Every release refuses these at load (0.2.3: src/config.mjs loadConfig).
	if doc.KeepWarm != nil {
		refuse("top-level keepWarm is not supported (set runtimes.<id>.keepWarm)")
	}
	if doc.PreferredWarm != nil && !v.AtMost(legacyUntil) {
		refuse("top-level preferredWarm is not supported (set runtimes.<id>.preferredWarm)")
	}
	if !v.AtMost(legacyUntil) {
		return sortWarnings(out), nil
	}
	cfg, err := ParseConfig(raw, "")
	if err != nil {
		return nil, err
	}
	MaterializeFederated(cfg)
	models := cfg.modelSet()
	out = append(out, endpointRefusals(v, doc.Cluster.Nodes, doc.Cluster.NodeID, local)...)
	for _, id := range slices.Sorted(maps.Keys(doc.Aliases)) {
		var a map[string]json.RawMessage
		if json.Unmarshal(doc.Aliases[id], &a) != nil {
			continue // a bare id string: checked as a target below
		}
		var target string
		if t, ok := a["target"]; ok {
			json.Unmarshal(t, &target)
		}
		switch {
		case target == "":
			refuse("alias %s is missing target (it reads the legacy form, target + fallbacks, not members)", id)
		case !models[target]:
			refuse("alias %s targets unknown model %s (its target must be a model id, a federated one included)", id, target)
		}
		if fb := idList(a["fallbacks"]); len(fb) > 0 && target != "" {
			unread("does not read aliases.%s.fallbacks (%s): a request goes to %s alone, and fails when it fails", id, strings.Join(fb, ", "), target)
		}
		var names []string
		for _, k := range []string{"members", "optionalMembers", "suspendedMembers", "routeProfiles", "activeRoute", "strategy", "performanceMetric", "optionalFallbacks"} {
			if _, ok := a[k]; ok {
				names = append(names, k)
			}
		}
		if len(names) > 0 {
			unread("does not read aliases.%s %s: it routes by target alone, so a route profile the plan picks is not one it can switch to", id, strings.Join(names, ", "))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(doc.Aliases)) {
		var target string
		if json.Unmarshal(doc.Aliases[id], &target) == nil && !models[target] {
			refuse("alias %s targets unknown model %s (its target must be a model id, a federated one included)", id, target)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(doc.Runtimes)) {
		if _, ok := doc.Runtimes[id]["preferredWarm"]; ok {
			unread("does not read runtimes.%s.preferredWarm: the lane is auto (on demand) there", id)
		}
	}
	if _, ok := doc.Fleet["activeProfile"]; ok {
		unread("does not read fleet.activeProfile: it has no fleet profiles")
	}
	if _, ok := doc.RuntimePolicy["preferredWarmIdleMs"]; ok {
		unread("does not read runtimePolicy.preferredWarmIdleMs")
	}
	return sortWarnings(out), nil
}

// endpointRefusals is 0.2.3's "cluster node X is missing endpoint" for
// every node but the local one (src/cluster.mjs validateClusterConfig).
// The local node is the gateway's LLOOM_NODE_ID, else cluster.nodeId; when
// neither is known, two nodes without an endpoint are still a refusal (only
// one can be local), and one is a warning naming the node it must run as.
func endpointRefusals(v Release, nodes map[string]map[string]json.RawMessage, nodeID, local string) []VersionWarning {
	if local == "" && !IsPlaceholder(nodeID) {
		local = nodeID
	}
	var missing []string
	for _, id := range slices.Sorted(maps.Keys(nodes)) {
		var ep string
		json.Unmarshal(nodes[id]["endpoint"], &ep)
		if ep == "" && id != local {
			missing = append(missing, id)
		}
	}
	var out []VersionWarning
	switch {
	case len(missing) == 0:
	case local != "":
		for _, id := range missing {
			out = append(out, VersionWarning{Text: fmt.Sprintf("LLooM %s refuses this config: cluster node %s is missing endpoint (every node but the local one, %s, needs one)", v, id, local), Refused: true})
		}
	case len(missing) == 1:
		out = append(out, VersionWarning{Text: fmt.Sprintf("LLooM %s refuses this config on any node but %s: cluster node %s is missing endpoint", v, missing[0], missing[0])})
	default:
		out = append(out, VersionWarning{Text: fmt.Sprintf("LLooM %s refuses this config: cluster nodes %s are missing endpoint (only the local node may go without)", v, strings.Join(missing, ", ")), Refused: true})
	}
	return out
}

func idList(raw json.RawMessage) []string {
	var l []string
	if json.Unmarshal(raw, &l) != nil {
		return nil
	}
	return slices.DeleteFunc(l, func(s string) bool { return s == "" })
}

func sortWarnings(ws []VersionWarning) []VersionWarning {
	sort.Slice(ws, func(i, j int) bool { return ws[i].Text < ws[j].Text })
	return ws
}

// ProfilesSupported reports whether LLooM v applies fleet profiles
// (profiles/<name>.json): releases after 0.2.3.
func ProfilesSupported(v Release) bool { return !v.AtMost(legacyUntil) }

// Reading is how a LLooM line routes a request for an alias.
type Reading string

const (
	// ReadTarget is LLooM 0.2.3's: an alias goes to its target model alone
	// (src/registry.mjs resolve reads alias.target only); a failing target
	// fails the request, fallbacks are never tried; no route profiles and
	// no fleet profiles.
	ReadTarget Reading = "target"
	// ReadMembers is the later line's: members in order (the legacy target
	// + fallbacks read as members), route profiles and fleet profiles.
	ReadMembers Reading = "members"
)

// Routing is the reading a plan is made with, and why that one.
type Routing struct {
	Reading Reading `json:"reading"`
	// Release is the release or line read: "0.2.3", "0.3.0", or "after
	// 0.2.3" when only the line is known.
	Release string `json:"release"`
	// Basis says how the release was known, or that it was not.
	Basis string `json:"basis"`
	// Known is false when the release was guessed: its refusals are then
	// warnings, not errors.
	Known bool `json:"-"`
}

// Fallbacks reports whether the reading takes an alias's later members
// when the first is down.
func (r Routing) Fallbacks() bool { return r.Reading != ReadTarget }

// Summary is the one-line statement a plan makes of its reading.
func (r Routing) Summary() string {
	what := "an alias goes to its first available member, route profiles and fleet profiles apply"
	if r.Reading == ReadTarget {
		what = "an alias goes to its target alone; fallbacks are not taken, and a route whose target is not planned is uncovered"
	}
	return fmt.Sprintf("LLooM %s reading (%s): %s", r.Release, r.Basis, what)
}

// RoutingFor is release v's reading.
func RoutingFor(v Release, basis string) Routing {
	if v.AtMost(legacyUntil) {
		return Routing{Reading: ReadTarget, Release: v.String(), Basis: basis, Known: true}
	}
	return Routing{Reading: ReadMembers, Release: v.String(), Basis: basis, Known: true}
}

// DetectRouting recognises the LLooM release behind a gateway from the
// node statuses it answered (its /gateway/cluster nodes, else its own
// /gateway/node). A reported version settles it. The later line adds
// availabilityState (and required, requiredByRuntime) to every node of its
// /gateway/cluster answer, and newer gateways answer ?inventory=1; 0.2.3
// gives none of those, nor a version. So a
// live gateway that reports no version and none of those fields is read
// as 0.2.3. Saved answers (live false) that say nothing leave it unknown:
// ok is false.
func DetectRouting(nodes []NodeStatus, live bool) (r Routing, ok bool) {
	for _, n := range nodes {
		if n.Version == "" {
			continue
		}
		v, err := ParseRelease(n.Version)
		if err != nil {
			continue
		}
		return RoutingFor(v, "the gateway reports LLooM "+v.String()), true
	}
	for _, n := range nodes {
		var field string
		switch {
		case n.AvailabilityState != "" || n.Required || len(n.RequiredByRuntime) > 0:
			field = "availabilityState in its cluster answer"
		case len(n.Inventory) > 0:
			field = "a node inventory (0.2.3 ignores ?inventory=1)"
		default:
			continue
		}
		return Routing{Reading: ReadMembers, Release: "after " + legacyUntil.String(), Known: true,
			Basis: "the gateway reports no version, and its answers hold " + field + ", which only releases after 0.2.3 give"}, true
	}
	if !live || len(nodes) == 0 {
		return Routing{}, false
	}
	return Routing{Reading: ReadTarget, Release: legacyUntil.String(), Known: true,
		Basis: "recognised from the gateway's answers: no version and no availabilityState, as 0.2.3 answers"}, true
}

// ConfigRouting is the reading for a config whose release is not known: a
// config that uses what only the later line reads (an alias in the members
// form without target, route profiles, fleet.activeProfile, preferredWarm)
// was written for it, since 0.2.3 refuses or ignores those; any other is
// read as 0.2.3 reads it, the most conservative known reading.
func ConfigRouting(cfg *Config) Routing {
	var later []string
	for _, id := range slices.Sorted(maps.Keys(cfg.Aliases)) {
		a := cfg.Aliases[id]
		if a.Target == "" && len(a.Members) > 0 || len(a.RouteProfiles) > 0 {
			later = append(later, "aliases."+id)
			break
		}
	}
	if cfg.Fleet != nil && cfg.Fleet.ActiveProfile != "" {
		later = append(later, "fleet.activeProfile")
	}
	for _, id := range slices.Sorted(maps.Keys(cfg.Runtimes)) {
		if cfg.Runtimes[id].PreferredWarm {
			later = append(later, "runtimes."+id+".preferredWarm")
			break
		}
	}
	if len(later) > 0 {
		return Routing{Reading: ReadMembers, Release: "after " + legacyUntil.String(),
			Basis: "release unknown; the config uses " + strings.Join(later, ", ") + ", which only releases after 0.2.3 read"}
	}
	return Routing{Reading: ReadTarget, Release: legacyUntil.String(),
		Basis: "release unknown; the most conservative known reading (--lloom-version to choose)"}
}
