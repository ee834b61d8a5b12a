package lloom

import (
	"errors"
	"strings"
	"testing"
)

func TestParseProfileReadsFleetProfiles(t *testing.T) {
	cfg := loadConfig(t, "testdata/fleet/config.json")

	p, err := LoadProfile("testdata/profiles/sparkqwen-pair-rc16.json")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "name", p.Name, "sparkqwen-pair-rc16")
	check(t, "routes", p.Routes, map[string]string{"q38fn": "local-first", "enntity-presence": "local"})
	check(t, "residency", p.Residency, map[string]Residency{
		"qwen3-embedding-4b": ResidencyAlways, "qwen-image-diffusers": ResidencyPreferred, "qwen38-27b-nvfp4": ResidencyAuto,
	})
	check(t, "defaults", p.Defaults, map[string]string{"chatModel": "q38fn"})
	if err := p.Validate(cfg); err != nil {
		t.Errorf("profile should validate against the fleet config:\n%v", err)
	}

	p, err = LoadProfile("testdata/profiles/standalone.json")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "a missing name comes from the file name", p.Name, "standalone")
	check(t, "route targets are trimmed", p.Routes["q38fn"], "standalone")
	check(t, "a route may name a model id", p.Routes["enntity-presence"], "qwen38-27b-nvfp4")
	check(t, "defaultsMode", p.DefaultsMode, "merge")
	if err := p.Validate(cfg); err != nil {
		t.Errorf("profile should validate against the fleet config:\n%v", err)
	}
}

func TestProfileValidateReportsEachProblem(t *testing.T) {
	cfg := loadConfig(t, "testdata/fleet/config.json")
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{
			name: "a name LLooM would refuse",
			doc:  `{"name": "-bad name"}`,
			want: []string{`p.json: $.name: invalid profile name "-bad name": use 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit`},
		},
		{
			name: "a name longer than 64 characters",
			doc:  `{"name": "` + strings.Repeat("a", 65) + `"}`,
			want: []string{`p.json: $.name: invalid profile name "` + strings.Repeat("a", 65) + `": use 1-64 letters, digits, dots, dashes or underscores, starting with a letter or digit`},
		},
		{
			name: "an unknown residency value",
			doc:  `{"name": "ok", "residency": {"qwen3-embedding-4b": "sometimes"}}`,
			want: []string{`p.json: $.residency["qwen3-embedding-4b"]: expected always, preferred or auto, got "sometimes"`},
		},
		{
			name: "residency for an unknown runtime",
			doc:  `{"name": "ok", "residency": {"ghost": "always"}}`,
			want: []string{`p.json: $.residency["ghost"]: unknown runtime "ghost"`},
		},
		{
			name: "a route naming an unknown route",
			doc:  `{"name": "ok", "routes": {"q38fn": "turbo"}}`,
			want: []string{`p.json: $.routes["q38fn"]: unknown route "turbo": not a route profile of alias "q38fn" (cloud, local-first, standalone) nor a model or alias id`},
		},
		{
			name: "a route for an unknown alias",
			doc:  `{"name": "ok", "routes": {"nobody": "local"}}`,
			want: []string{`p.json: $.routes["nobody"]: unknown alias "nobody"`},
		},
		{
			name: "a route for a plain-id alias that changes it",
			doc:  `{"name": "ok", "routes": {"image": "other"}}`,
			want: []string{`p.json: $.routes["image"]: alias "image" is the plain id "Qwen/Qwen-Image-2.1-Diffusers" and cannot be routed to "other"`},
		},
		{
			name: "an empty route",
			doc:  `{"name": "ok", "routes": {"q38fn": "  "}}`,
			want: []string{`p.json: $.routes["q38fn"]: expected a route profile name or a model or alias id`},
		},
		{
			name: "a section LLooM does not allow",
			doc:  `{"name": "ok", "pins": {}}`,
			want: []string{`p.json: $.pins: unsupported section (allowed: name, description, routes, residency, defaults, defaultsMode)`},
		},
		{
			name: "an unknown defaultsMode",
			doc:  `{"name": "ok", "defaultsMode": "append"}`,
			want: []string{`p.json: $.defaultsMode: expected merge or replace, got "append"`},
		},
		{
			name: "routes to another alias and a direct route to the same id are fine",
			doc:  `{"name": "ok", "routes": {"q38fn": "embeddings", "image": "Qwen/Qwen-Image-2.1-Diffusers"}}`,
			want: nil,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseProfile([]byte(tc.doc), "p.json")
			if err != nil {
				t.Fatal(err)
			}
			wantProblems(t, p.Validate(cfg), tc.want, true)
		})
	}
}

func TestProfileValidateWithoutAConfigChecksOnlyTheProfile(t *testing.T) {
	p, err := ParseProfile([]byte(`{"name": "x", "routes": {"a": "b"}, "residency": {"r": "always"}}`), "x.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Validate(nil); err != nil {
		t.Errorf("Validate(nil) = %v", err)
	}
}

func TestParseProfileRefusesFilesOver256KiB(t *testing.T) {
	pad := func(n int) []byte {
		const head, tail = `{"description": "`, `"}`
		return []byte(head + strings.Repeat("x", n-len(head)-len(tail)) + tail)
	}
	if _, err := ParseProfile(pad(MaxProfileBytes), "big.json"); err != nil {
		t.Errorf("a profile of exactly 256 KiB should parse: %v", err)
	}
	_, err := ParseProfile(pad(MaxProfileBytes+1), "big.json")
	var ie *InputError
	if !errors.As(err, &ie) || ie.Error() != "big.json: file is 262145 bytes; a fleet profile may be at most 262144 (256 KiB)" {
		t.Errorf("error = %v", err)
	}
}

func TestRuntimeResidencyMapsKeepWarmAndPreferredWarm(t *testing.T) {
	check(t, "keepWarm", RuntimeResidency(Runtime{KeepWarm: true}), ResidencyAlways)
	check(t, "preferredWarm", RuntimeResidency(Runtime{PreferredWarm: true}), ResidencyPreferred)
	check(t, "neither", RuntimeResidency(Runtime{}), ResidencyAuto)
}
