package lloom

import (
	"os"
	"slices"
	"strings"
	"testing"
)

func TestLLooM023RefusesTheMembersFormAndIgnoresNewerFields(t *testing.T) {
	members := []byte(`{"models":[{"id":"qwen3.8-flash-next"},{"id":"cloud/q"}],
		"aliases":{"q38fn":{"members":["qwen3.8-flash-next","cloud/q"],"activeRoute":"local","routeProfiles":{"local":{"members":["qwen3.8-flash-next"]}}},
		           "plain":"cloud/q", "nested":{"target":"q38fn"}},
		"runtimes":{"img":{"preferredWarm":true},"emb":{"keepWarm":true}},
		"fleet":{"activeProfile":"rc16"}, "runtimePolicy":{"preferredWarmIdleMs":30000}}`)
	legacy, err := os.ReadFile("testdata/lloom-gateway-0.2.3/config.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		raw     []byte
		version string
		want    []string
	}{
		{"0.2.3 on a members-form config", members, "0.2.3", []string{
			"LLooM 0.2.3 does not read aliases.q38fn members, routeProfiles, activeRoute: it routes by target alone, so a route profile the plan picks is not one it can switch to",
			"LLooM 0.2.3 does not read fleet.activeProfile: it has no fleet profiles",
			"LLooM 0.2.3 does not read runtimePolicy.preferredWarmIdleMs",
			"LLooM 0.2.3 does not read runtimes.img.preferredWarm: the lane is auto (on demand) there",
			"LLooM 0.2.3 refuses this config: alias nested targets unknown model q38fn (its target must be a model id)",
			"LLooM 0.2.3 refuses this config: alias q38fn is missing target (it reads the legacy form, target + fallbacks, not members)",
		}},
		{"an older release warns alike", members, "v0.1.9", nil}, // want: the 0.2.3 lines, renamed
		{"the config 0.2.3 ran has nothing to say", legacy, "0.2.3", nil},
		{"a newer release reads both forms", members, "0.3.0", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRelease(tc.version)
			if err != nil {
				t.Fatal(err)
			}
			got, err := VersionWarnings(tc.raw, r)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.want
			if tc.version == "v0.1.9" {
				for _, w := range tests[0].want {
					want = append(want, strings.Replace(w, "0.2.3", "0.1.9", 1))
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("warnings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestParseReleaseNamesWhatItExpects(t *testing.T) {
	for _, s := range []string{"", "0.2", "x.y.z", "0.2.3.4", "-1.0.0"} {
		if _, err := ParseRelease(s); err == nil || !strings.Contains(err.Error(), "expected major.minor.patch") {
			t.Errorf("ParseRelease(%q) = %v", s, err)
		}
	}
	if r, err := ParseRelease("0.2.4-rc.1"); err != nil || r.String() != "0.2.4" {
		t.Errorf("0.2.4-rc.1 = %v, %v", r, err)
	}
}

func FuzzParseRelease(f *testing.F) {
	for _, s := range []string{"0.2.3", "v1.2.3", "0.2.4-rc.1+b", "..", "9999999999999999999.0.0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRelease(s)
		if err != nil {
			return
		}
		back, err := ParseRelease(r.String())
		if err != nil || back != r {
			t.Fatalf("%q read as %v, which reads back as %v (%v)", s, r, back, err)
		}
	})
}
