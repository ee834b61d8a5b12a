package apply

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
)

func TestAConfigChangeIsWrittenInTheFormLLooM023Reads(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		change   ConfigChange
		want     string // the changed member, as written
		err      string
	}{
		{name: "a re-route rewrites the target and keeps the fallbacks",
			in:     `{"aliases": {"chat": {"target": "model-a", "fallbacks": ["model-b"]}}}`,
			change: ConfigChange{Alias: "chat", Target: "model-b"},
			want:   "{\n  \"aliases\": {\n    \"chat\": {\n      \"target\": \"model-b\",\n      \"fallbacks\": [\n        \"model-b\"\n      ]\n    }\n  }\n}\n"},
		{name: "an alias written as a bare id stays one",
			in:     `{"aliases": {"chat": "model-a"}}`,
			change: ConfigChange{Alias: "chat", Target: "model-b"},
			want:   "{\n  \"aliases\": {\n    \"chat\": \"model-b\"\n  }\n}\n"},
		{name: "an alias in the members form is refused, not rewritten",
			in:     `{"aliases": {"chat": {"members": ["model-a"]}}}`,
			change: ConfigChange{Alias: "chat", Target: "model-b"},
			err:    "aliases.chat: written in the members form"},
		{name: "keepWarm is set on the runtime, every other field kept in order",
			in:     `{"runtimes": {"lane-b": {"enabled": true, "memoryGb": 60.50, "command": "sh"}}, "x": null}`,
			change: ConfigChange{Runtime: "lane-b", KeepWarm: true},
			want:   "{\n  \"runtimes\": {\n    \"lane-b\": {\n      \"enabled\": true,\n      \"memoryGb\": 60.50,\n      \"command\": \"sh\",\n      \"keepWarm\": true\n    }\n  },\n  \"x\": null\n}\n"},
		{name: "not keepWarm removes the field and its legacy spelling",
			in:     `{"runtimes": {"lane-b": {"keepWarm": true, "evictable": false}}}`,
			change: ConfigChange{Runtime: "lane-b"},
			want:   "{\n  \"runtimes\": {\n    \"lane-b\": {}\n  }\n}\n"},
		{name: "a runtime the config does not have is refused",
			in:     `{"runtimes": {}}`,
			change: ConfigChange{Runtime: "lane-z", KeepWarm: true},
			err:    "runtimes.lane-z: no such runtime object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := editConfig([]byte(tc.in), tc.change)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func TestTheCapturedConfigIsKeptWhole(t *testing.T) {
	data, err := os.ReadFile("testdata/lloom-0.2.3/config.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := editConfig(data, ConfigChange{Runtime: "lane-b", KeepWarm: true})
	if err != nil {
		t.Fatal(err)
	}
	var before, after map[string]any
	json.Unmarshal(data, &before)
	if err := json.Unmarshal(out, &after); err != nil {
		t.Fatal(err)
	}
	before["runtimes"].(map[string]any)["lane-b"].(map[string]any)["keepWarm"] = true
	b, _ := json.Marshal(before)
	a, _ := json.Marshal(after)
	if string(a) != string(b) {
		t.Errorf("the edit changed more than keepWarm:\n%s\n%s", b, a)
	}
}

func TestAConfigWriteKeepsThePreviousVersionBesideIt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.json")
	orig := `{"aliases": {"chat": {"target": "model-a"}}}`
	os.WriteFile(path, []byte(orig), 0o640)
	at := time.Date(2026, 12, 4, 17, 0, 0, 123e6, time.UTC)
	backup, changed, err := writeConfig(path, ConfigChange{Alias: "chat", Target: "model-b"}, at)
	if err != nil || !changed {
		t.Fatalf("changed %v, err %v", changed, err)
	}
	if backup != path+".bak-20261204T170000.123Z" {
		t.Errorf("backup %s", backup)
	}
	if b, _ := os.ReadFile(backup); string(b) != orig {
		t.Errorf("the backup is not the previous version: %s", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("the config's mode changed to %v", fi.Mode().Perm())
	}
	// The same change again writes nothing.
	if _, changed, err := writeConfig(path, ConfigChange{Alias: "chat", Target: "model-b"}, at.Add(time.Second)); changed || err != nil {
		t.Errorf("a change already made was written again (err %v)", err)
	}
}

func TestTheFleetIsMatchedToTheLastStepItShowsDone(t *testing.T) {
	p := &plan.Plan{
		Now: []plan.NowLane{
			{Variant: "old", Nodes: []string{"n1"}, Status: "running, healthy", Running: true},
			{Variant: "idle", Nodes: []string{"n2"}, Status: "idle, loaded on demand", Running: true},
			{Variant: "far", Nodes: []string{"n3"}, Status: model.UnknownLane("n3", "no answer"), Running: true},
		},
		Rollout: &plan.Rollout{Steps: []plan.Step{
			{Step: 1, Action: "start", Subject: "new", Nodes: []string{"n2"}, Residency: model.Always},
			{Step: 2, Action: "reroute", Subject: "chat", From: "m-old", To: "m-new"},
			{Step: 3, Action: "stop", Subject: "old", Nodes: []string{"n1"}},
		}},
	}
	live := func(lanes []model.CurrentLane, route string) State {
		return Live(p, model.Current{Lanes: lanes, Routes: []model.CurrentRoute{{Alias: "chat", Primary: route}}})
	}
	old := model.CurrentLane{Variant: "old", Nodes: []string{"n1"}, Status: "running, healthy"}
	idle := model.CurrentLane{Variant: "idle", Nodes: []string{"n2"}, Status: "stopped, loaded on demand"}
	nw := model.CurrentLane{Variant: "new", Nodes: []string{"n2"}, Status: "running, healthy", Residency: model.Always}
	far := model.CurrentLane{Variant: "far", Nodes: []string{"n3"}, Status: model.UnknownLane("n3", "refused")}
	for _, tc := range []struct {
		name  string
		live  State
		done  int
		diffs []string
	}{
		{name: "the fleet as the plan saw it has no step done", live: live([]model.CurrentLane{old, idle, far}, "m-old"), done: 0},
		{name: "a started lane is the first step done", live: live([]model.CurrentLane{old, idle, nw}, "m-old"), done: 1},
		{name: "the re-route done too is the second", live: live([]model.CurrentLane{old, nw}, "m-new"), done: 2},
		{name: "every step done", live: live([]model.CurrentLane{nw}, "m-new"), done: 3},
		{name: "a fleet in no state of the rollout is stale, with its differences", live: live([]model.CurrentLane{nw}, "m-old"), done: -1,
			diffs: []string{"lane new: runs now on n2; the plan saw it stopped", "lane old: the plan saw it run on n1; it does not run now"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			done, diffs := Match(Expected(p), tc.live)
			if done != tc.done || strings.Join(diffs, "\n") != strings.Join(tc.diffs, "\n") {
				t.Errorf("done %d, diffs %q; want %d, %q", done, diffs, tc.done, tc.diffs)
			}
		})
	}
}

func TestAStartIsGivenTwiceItsLoadTimeAndHalfAMinute(t *testing.T) {
	for _, tc := range []struct {
		loadMs float64
		want   time.Duration
	}{{0, time.Minute}, {10000, time.Minute}, {120000, 270 * time.Second}} {
		if got := StartTimeout(tc.loadMs); got != tc.want {
			t.Errorf("StartTimeout(%v) = %s, want %s", tc.loadMs, got, tc.want)
		}
	}
}

func TestALockIsHeldByOneApplyAtATime(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".poolsolve-apply.lock")
	l, stale, err := Acquire(path, time.Now())
	if err != nil || stale != "" {
		t.Fatalf("first: %v %q", err, stale)
	}
	if _, _, err := Acquire(path, time.Now()); err == nil || !strings.Contains(err.Error(), "another apply holds the lock") {
		t.Errorf("second: %v", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, []byte("garbage"), 0o644)
	if _, _, err := Acquire(path, time.Now()); err == nil || !strings.Contains(err.Error(), "does not say who holds it") {
		t.Errorf("unreadable lock: %v", err)
	}
}

func FuzzEditConfig(f *testing.F) {
	data, _ := os.ReadFile("testdata/lloom-0.2.3/config.json")
	f.Add(data, "chat", "model-b", "")
	f.Add(data, "", "", "lane-b")
	f.Add([]byte(`{"aliases":{"a":"m"}}`), "a", "x", "")
	f.Add([]byte(`[1,2]`), "", "", "r")
	f.Fuzz(func(t *testing.T, in []byte, alias, target, runtime string) {
		ch := ConfigChange{Alias: alias, Target: target, Runtime: runtime, KeepWarm: len(target)%2 == 0}
		out, err := editConfig(in, ch)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("the edit wrote invalid JSON:\n%s", out)
		}
		again, err := editConfig(out, ch)
		if err != nil || string(again) != string(out) {
			t.Fatalf("the same change twice differs: %v", err)
		}
	})
}
