package lloom

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// Residency is a fleet profile's residency value for a runtime.
type Residency string

const (
	ResidencyAlways    Residency = "always"    // keepWarm: true
	ResidencyPreferred Residency = "preferred" // preferredWarm: true
	ResidencyAuto      Residency = "auto"      // neither
)

// RuntimeResidency is the residency a runtime's config declares.
func RuntimeResidency(rt Runtime) Residency {
	switch {
	case rt.KeepWarm:
		return ResidencyAlways
	case rt.PreferredWarm:
		return ResidencyPreferred
	}
	return ResidencyAuto
}

// MaxProfileBytes is LLooM's size limit for a fleet profile file.
const MaxProfileBytes = 256 << 10

var profileNameRE = regexp.MustCompile(`(?i)^[a-z0-9][a-z0-9._-]{0,63}$`)

// ValidProfileName reports whether name is a name LLooM accepts for
// profiles/<name>.json.
func ValidProfileName(name string) bool { return profileNameRE.MatchString(name) }

// Profile is a fleet profile, `<configDir>/profiles/<name>.json`: routes and
// residency for the whole fleet, applied by LLooM in one config swap.
type Profile struct {
	File string `json:"-"`
	// Name defaults to the file's base name without ".json".
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	// Routes maps an alias id to one of its route profile names, or to a
	// model or alias id that becomes the alias's only member.
	Routes    map[string]string    `json:"routes,omitempty"`
	Residency map[string]Residency `json:"residency,omitempty"`
	Defaults  map[string]string    `json:"defaults,omitempty"`
	// DefaultsMode is "merge" (the default) or "replace".
	DefaultsMode string `json:"defaultsMode,omitempty"`

	// Unknown holds top-level sections LLooM does not allow; Validate
	// reports them.
	Unknown map[string]any `json:"-" lloom:"rest"`
}

// ParseProfile reads a fleet profile. Values are trimmed as LLooM trims
// them. Files over 256 KiB are refused.
func ParseProfile(data []byte, file string) (*Profile, error) {
	if len(data) > MaxProfileBytes {
		return nil, &InputError{File: file, Msg: fmt.Sprintf("file is %d bytes; a fleet profile may be at most %d (256 KiB)", len(data), MaxProfileBytes)}
	}
	p := &Profile{}
	if _, err := decodeDocument(data, file, p); err != nil {
		return nil, err
	}
	p.File = file
	if p.Name == "" && file != "" {
		p.Name = strings.TrimSuffix(filepath.Base(file), ".json")
	}
	routes := make(map[string]string, len(p.Routes))
	for k, v := range p.Routes {
		routes[k] = strings.TrimSpace(v)
	}
	if p.Routes != nil {
		p.Routes = routes
	}
	if p.Residency != nil {
		res := make(map[string]Residency, len(p.Residency))
		for k, v := range p.Residency {
			res[strings.TrimSpace(k)] = v
		}
		p.Residency = res
	}
	return p, nil
}

// LoadProfile reads and parses the fleet profile at path, reading no more
// than the size limit allows.
func LoadProfile(path string) (*Profile, error) {
	data, err := ReadProfileInput(path)
	if err != nil {
		return nil, err
	}
	return ParseProfile(data, path)
}

// Validate checks the profile on its own and, when cfg is not nil, against
// the config it would be applied to: every routed alias exists and every
// route names one of the alias's route profiles or a model or alias id;
// every residency runtime exists.
func (p *Profile) Validate(cfg *Config) error {
	pr := &problems{file: p.File}
	if !ValidProfileName(p.Name) {
		pr.add(jsonpos.Field(jsonpos.Root, "name"), "invalid profile name %q: use 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit", p.Name)
	}
	for _, k := range slices.Sorted(maps.Keys(p.Unknown)) {
		pr.add(jsonpos.Field(jsonpos.Root, k), "unsupported section (allowed: name, description, routes, residency, defaults, defaultsMode)")
	}
	if !oneOf(p.DefaultsMode, "", "merge", "replace") {
		pr.add(jsonpos.Field(jsonpos.Root, "defaultsMode"), "expected merge or replace, got %q", p.DefaultsMode)
	}
	for _, k := range slices.Sorted(maps.Keys(p.Defaults)) {
		if len(p.Defaults[k]) > 500 {
			pr.add(jsonpos.Key(jsonpos.Field(jsonpos.Root, "defaults"), k), "longer than 500 characters")
		}
	}
	var models map[string]bool
	if cfg != nil {
		view := &Config{Cluster: cfg.Cluster, Models: slices.Clone(cfg.Models)}
		MaterializeFederated(view)
		models = map[string]bool{}
		for _, m := range view.Models {
			models[m.ID] = true
		}
	}
	for _, aliasID := range slices.Sorted(maps.Keys(p.Routes)) {
		target := p.Routes[aliasID]
		path := jsonpos.Key(jsonpos.Field(jsonpos.Root, "routes"), aliasID)
		switch {
		case strings.TrimSpace(aliasID) == "" || len(aliasID) > 200:
			pr.add(path, "invalid alias id")
			continue
		case target == "" || len(target) > 500:
			pr.add(path, "expected a route profile name or a model or alias id")
			continue
		case cfg == nil:
			continue
		}
		alias, ok := cfg.Aliases[aliasID]
		switch {
		case !ok:
			pr.add(path, "unknown alias %q", aliasID)
		case alias.Direct:
			if target != alias.Members[0] {
				pr.add(path, "alias %q is the plain id %q and cannot be routed to %q", aliasID, alias.Members[0], target)
			}
		default:
			if _, isProfile := alias.RouteProfiles[target]; isProfile {
				continue
			}
			if _, isAlias := cfg.Aliases[target]; !models[target] && !isAlias {
				pr.add(path, "unknown route %q: not a route profile of alias %q (%s) nor a model or alias id", target, aliasID, strings.Join(slices.Sorted(maps.Keys(alias.RouteProfiles)), ", "))
			}
		}
	}
	for _, runtimeID := range slices.Sorted(maps.Keys(p.Residency)) {
		path := jsonpos.Key(jsonpos.Field(jsonpos.Root, "residency"), runtimeID)
		res := p.Residency[runtimeID]
		if !oneOf(string(res), string(ResidencyAlways), string(ResidencyPreferred), string(ResidencyAuto)) {
			pr.add(path, "expected always, preferred or auto, got %q", string(res))
		}
		if strings.TrimSpace(runtimeID) == "" || len(runtimeID) > 200 {
			pr.add(path, "invalid runtime id")
			continue
		}
		if cfg != nil {
			if _, ok := cfg.Runtimes[runtimeID]; !ok {
				pr.add(path, "unknown runtime %q", runtimeID)
			}
		}
	}
	return pr.err()
}
