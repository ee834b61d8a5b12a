package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/apply"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
)

// applyCanary is the admin key of the fake fleet: it must appear in no
// output and no log line.
const applyCanary = "canary-admin-key-5d1f0b7e9a"

type applyFleet struct {
	dir, cfg, pool, plan, log string
	f                         *fakeLLooM
	original                  []byte
}

// newApplyFleet is a fake fleet where lane-a runs, and a plan saved from
// it: lane-b, then lane-c, started and kept warm (the pins).
func newApplyFleet(t *testing.T) *applyFleet {
	t.Setenv("LLOOM_CLUSTER_KEY", applyCanary)
	dir, f := fakeFleetDir(t, applyCanary)
	a := &applyFleet{dir: dir, cfg: filepath.Join(dir, "config.json"), pool: filepath.Join(dir, "pool.toml"),
		plan: filepath.Join(dir, "plan.json"), log: filepath.Join(dir, "poolsolve-apply.log"), f: f}
	f.set("lane-a", func(r *fakeRuntime) { r.status, r.healthy = "running", true })
	code, out, errOut := run(t, "plan", "--gateway", f.url("spark-node-01"), "--config", a.cfg, "--policy", a.pool, "--format", "json", "-o", a.plan)
	if code != ExitChanges {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	a.original, _ = os.ReadFile(a.cfg)
	return a
}

func (a *applyFleet) apply(t *testing.T, extra ...string) (int, string, string) {
	t.Helper()
	args := append([]string{"apply", "--gateway", a.f.url("spark-node-01"), "--config", a.cfg, "--policy", a.pool, "--poll", "10ms", "--gateway-timeout", "2s"}, extra...)
	code, out, errOut := run(t, append(args, a.plan)...)
	for _, s := range []string{out, errOut} {
		if strings.Contains(s, applyCanary) {
			t.Fatalf("the admin key was printed:\n%s", s)
		}
	}
	return code, out, errOut
}

func (a *applyFleet) steps(t *testing.T) []plan.Step {
	data, err := os.ReadFile(a.plan)
	if err != nil {
		t.Fatal(err)
	}
	var p plan.Plan
	if err := json.Unmarshal(data, &p); err != nil || p.Rollout == nil {
		t.Fatalf("the saved plan has no rollout: %v", err)
	}
	return p.Rollout.Steps
}

func keepWarm(t *testing.T, cfg, runtime string) bool {
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var c struct {
		Runtimes map[string]struct {
			KeepWarm bool `json:"keepWarm"`
		} `json:"runtimes"`
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatalf("the config is no longer JSON: %v", err)
	}
	return c.Runtimes[runtime].KeepWarm
}

func TestApplyCarriesOutThePlanAndTheFleetThenRunsIt(t *testing.T) {
	a := newApplyFleet(t)
	if steps := a.steps(t); len(steps) != 2 || steps[0].Subject != "lane-b" || steps[1].Subject != "lane-c" {
		t.Fatalf("expected 2 residency steps, lane-b then lane-c; got %+v", steps)
	}
	code, out, errOut := a.apply(t, "--yes")
	if code != ExitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "The fleet runs ") || !strings.Contains(errOut, "step 2/2: done") {
		t.Errorf("expected every step done:\n%s\n%s", out, errOut)
	}
	if !slices.Equal(a.f.starts, []string{"lane-b", "lane-c"}) || len(a.f.stops) != 0 {
		t.Errorf("started %v and stopped %v; expected lane-b and lane-c started, nothing stopped", a.f.starts, a.f.stops)
	}
	for _, rt := range []string{"lane-b", "lane-c"} {
		if !keepWarm(t, a.cfg, rt) {
			t.Errorf("runtimes.%s.keepWarm was not written", rt)
		}
	}
	// The previous version of the config is kept beside it.
	backups, _ := filepath.Glob(a.cfg + ".bak-*")
	if len(backups) != 2 {
		t.Fatalf("expected one backup per config change, got %v", backups)
	}
	slices.Sort(backups)
	if first, _ := os.ReadFile(backups[0]); string(first) != string(a.original) {
		t.Errorf("the first backup is not the config as it was")
	}
	// Applied again, the plan is recognised as done.
	code, out, _ = a.apply(t, "--yes")
	if code != ExitOK || !strings.Contains(out, "Nothing to apply: the fleet already runs") {
		t.Errorf("a second apply: exit %d\n%s", code, out)
	}
	// The log: JSON lines, every step and answer, the key in none.
	f, err := os.Open(a.log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	events := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), applyCanary) {
			t.Fatalf("the key is in the log: %s", sc.Text())
		}
		var e struct{ Event string }
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("a log line is not JSON: %s", sc.Text())
		}
		events[e.Event]++
	}
	if events["begin"] != 1 || events["end"] != 1 || events["step"] != 2 || events["done"] != 2 || events["config"] != 2 || events["answer"] < 8 || events["answer"] != events["request"] {
		t.Errorf("the log misses steps or answers: %v", events)
	}
	if _, err := os.Stat(filepath.Join(a.dir, ".poolsolve-apply.lock")); !os.IsNotExist(err) {
		t.Errorf("the lock was left behind: %v", err)
	}
}

func TestApplyRefusesWhatItShouldNotDo(t *testing.T) {
	for _, tc := range []struct {
		name   string
		before func(t *testing.T, a *applyFleet)
		args   []string
		code   int
		want   []string
	}{
		{name: "a run that is not on a terminal and has no --yes does nothing",
			code: ExitChanges, want: []string{"Steps to apply (2 of 2):", "Not applied: not on a terminal, and no --yes."}},
		{name: "a plan the fleet moved away from is stale, with the differences",
			before: func(t *testing.T, a *applyFleet) {
				a.f.set("lane-b", func(r *fakeRuntime) { r.status, r.healthy = "running", true })
				a.f.set("lane-a", func(r *fakeRuntime) { r.status, r.healthy = "stopped", false })
			},
			args: []string{"--yes"}, code: ExitBadInput,
			want: []string{"is stale", "lane lane-a: the plan saw it run on spark-node-01; it does not run now", "lane lane-b: runs now on spark-node-02; the plan saw it stopped", "nothing was done"}},
		{name: "a lock held by a running apply is refused",
			before: func(t *testing.T, a *applyFleet) {
				lock := `{"pid":` + strconv.Itoa(os.Getpid()) + `,"host":"` + hostname() + `","started":"2026-12-04T10:00:00Z"}`
				os.WriteFile(filepath.Join(a.dir, ".poolsolve-apply.lock"), []byte(lock), 0o644)
			},
			args: []string{"--yes"}, code: ExitFailure,
			want: []string{"another apply holds the lock", "pid " + strconv.Itoa(os.Getpid())}},
		{name: "an admission LLooM refuses stops the apply before anything starts",
			before: func(t *testing.T, a *applyFleet) { a.f.mu.Lock(); a.f.budget = 50; a.f.mu.Unlock() },
			args:   []string{"--yes"}, code: ExitInfeasible,
			want: []string{"Stopped at step 1: LLooM's admission refuses lane-b on spark-node-02: 10.0 GB over its budget"}},
		{name: "a start LLooM would make room for by evicting a lane is not made",
			before: func(t *testing.T, a *applyFleet) {
				a.f.mu.Lock()
				a.f.rts["lane-x"] = &fakeRuntime{id: "lane-x", node: "spark-node-02", memGb: 60, status: "running", healthy: true}
				a.f.mu.Unlock()
			},
			args: []string{"--yes"}, code: ExitInfeasible,
			want: []string{"Stopped at step 1: LLooM would stop lane-x to admit lane-b on spark-node-02, which the rollout did not order: not started"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newApplyFleet(t)
			if tc.before != nil {
				tc.before(t, a)
			}
			code, out, errOut := a.apply(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, out, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("missing %q in\n%s\n%s", w, out, errOut)
				}
			}
			if len(a.f.starts) != 0 || len(a.f.stops) != 0 {
				t.Errorf("started %v, stopped %v: expected nothing", a.f.starts, a.f.stops)
			}
			if tc.code != ExitInfeasible {
				if now, _ := os.ReadFile(a.cfg); string(now) != string(a.original) {
					t.Errorf("the config was changed")
				}
			}
		})
	}
}

func hostname() string { h, _ := os.Hostname(); return h }

func TestAFailedStepLeavesTheStateBeforeItAndApplyAgainResumes(t *testing.T) {
	a := newApplyFleet(t)
	a.f.set("lane-c", func(r *fakeRuntime) { r.fail = true })
	code, out, errOut := a.apply(t, "--yes")
	if code != ExitInfeasible {
		t.Fatalf("exit %d, want %d\n%s\n%s", code, ExitInfeasible, out, errOut)
	}
	for _, w := range []string{"Stopped at step 2:", "did not become healthy before timeout", "lane-c stopped again", "Left (1):", "in the state after step 1", "Run apply " + a.plan + " again"} {
		if !strings.Contains(out, w) {
			t.Errorf("missing %q in\n%s", w, out)
		}
	}
	if !slices.Equal(a.f.stops, []string{"lane-c"}) || keepWarm(t, a.cfg, "lane-c") || !keepWarm(t, a.cfg, "lane-b") {
		t.Fatalf("expected step 1 done and lane-c stopped again without keepWarm; stops %v", a.f.stops)
	}
	// The operator mends lane-c; apply again resumes at step 2.
	a.f.set("lane-c", func(r *fakeRuntime) { r.fail = false })
	code, out, errOut = a.apply(t, "--yes")
	if code != ExitOK {
		t.Fatalf("resume: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "Steps 1-1 of "+a.plan+" are done already") || !strings.Contains(out, "Done: 1 step(s) in this run, 1 before.") {
		t.Errorf("the resume did not skip step 1:\n%s", out)
	}
	if !slices.Equal(a.f.starts, []string{"lane-b", "lane-c", "lane-c"}) || !keepWarm(t, a.cfg, "lane-c") {
		t.Errorf("starts %v", a.f.starts)
	}
}

func TestANodeThatHangsFailsItsStepWithinTheTimeout(t *testing.T) {
	a := newApplyFleet(t)
	a.f.nodes["spark-node-03"].hang = true
	code, out, errOut := a.apply(t, "--yes", "--gateway-timeout", "300ms")
	if code != ExitInfeasible {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "Stopped at step 2: LLooM's admission plan: GET /gateway/runtimes/plan on spark-node-03: no answer within 300ms") {
		t.Errorf("expected step 3 to fail on the hung node:\n%s", out)
	}
	if !slices.Equal(a.f.starts, []string{"lane-b"}) {
		t.Errorf("starts %v", a.f.starts)
	}
}

func TestAStaleLockOfAProcessThatEndedIsTakenOver(t *testing.T) {
	a := newApplyFleet(t)
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no true command")
	}
	lock := `{"pid":` + strconv.Itoa(cmd.Process.Pid) + `,"host":"` + hostname() + `","started":"2026-12-04T10:00:00Z"}`
	os.WriteFile(filepath.Join(a.dir, ".poolsolve-apply.lock"), []byte(lock), 0o644)
	code, out, errOut := a.apply(t, "--yes")
	if code != ExitOK || !strings.Contains(errOut, "took over the lock") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}

func FuzzReadPlan(f *testing.F) {
	for _, p := range []string{"../plan/testdata/spark-fleet.plan.json", "testdata/script/apply.txtar"} {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"schema":"poolsolve.plan/v1","rollout":{"steps":[{"step":2}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "plan.json")
		os.WriteFile(path, data, 0o644)
		p, err := readPlan(path)
		if err != nil {
			var ee *exitError
			if !errors.As(err, &ee) || ee.code != ExitBadInput || !strings.Contains(err.Error(), path) {
				t.Fatalf("a bad plan is not a bad input naming the file: %v", err)
			}
			return
		}
		apply.Match(apply.Expected(p), apply.Live(p, model.Current{}))
	})
}

func TestARerouteIsWrittenAsTheTargetAndAKeepWarmLaneLosesKeepWarmBeforeItStops(t *testing.T) {
	t.Setenv("LLOOM_CLUSTER_KEY", applyCanary)
	dir, f := fakeFleetDir(t, applyCanary)
	cfg, plan := filepath.Join(dir, "config.json"), filepath.Join(dir, "plan.json")
	pool := filepath.Join(dir, "route.toml")
	os.WriteFile(pool, []byte("[[pins]]\nalias = \"chat\"\nroute = \"model-b\"\n"), 0o644)
	data, _ := os.ReadFile(cfg)
	data = []byte(strings.Replace(string(data), `"memoryGb": 60,`, `"memoryGb": 60, "keepWarm": true,`, 1)) // lane-a
	os.WriteFile(cfg, data, 0o644)
	f.set("lane-a", func(r *fakeRuntime) { r.status, r.healthy = "running", true })
	// poolsolve's 0.2.3 reading never moves a target; the plan is read
	// as a release with members reads it, the config stays 0.2.3's.
	common := []string{"--gateway", f.url("spark-node-01"), "--config", cfg, "--policy", pool, "--lloom-version", "0.2.4"}
	if code, out, errOut := run(t, append(append([]string{"plan"}, common...), "--cordon", "spark-node-01", "--format", "json", "-o", plan)...); code != ExitChanges {
		t.Fatalf("plan: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut := run(t, append(append([]string{"apply"}, common...), "--yes", "--poll", "10ms", plan)...)
	if code != ExitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errOut)
	}
	var c struct {
		Aliases map[string]struct {
			Target    string   `json:"target"`
			Fallbacks []string `json:"fallbacks"`
		} `json:"aliases"`
	}
	data, _ = os.ReadFile(cfg)
	json.Unmarshal(data, &c)
	if c.Aliases["chat"].Target != "model-b" || len(c.Aliases["chat"].Fallbacks) != 2 {
		t.Errorf("chat is %+v; want target model-b, its fallbacks kept", c.Aliases["chat"])
	}
	if keepWarm(t, cfg, "lane-a") || !slices.Equal(f.stops, []string{"lane-a"}) {
		t.Errorf("lane-a: keepWarm %v, stops %v; want it stopped without keepWarm", keepWarm(t, cfg, "lane-a"), f.stops)
	}
	if !strings.Contains(errOut, `config: aliases.chat.target = "model-b"`) {
		t.Errorf("no progress line for the re-route:\n%s", errOut)
	}
}
