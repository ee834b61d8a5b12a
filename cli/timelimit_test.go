package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/benchmarks"
)

// TestEverySuiteSizeGetsAVerifiedPlanAtEveryTimeLimit generates a fleet
// of every size in the bench suite for several seeds and plans each at
// 1 s and 3 s: a plan must come back (exit 0 or 1) and `check` must find
// it valid with the objective it states. The largest sizes are where the
// greedy start once broke keepWarm pins and no plan came back.
func TestEverySuiteSizeGetsAVerifiedPlanAtEveryTimeLimit(t *testing.T) {
	sizes := []string{"3x10", "8x20", "8x30", "16x60", "24x60", "24x60-tight", "64x250", "256x1000", "256x1000-tight"}
	seeds := []uint64{1, 2, 3}
	if testing.Short() {
		sizes, seeds = []string{"8x20", "24x60-tight"}, seeds[:1]
	}
	dir := t.TempDir()
	for _, size := range sizes {
		sz, err := benchmarks.ParseSize(size)
		if err != nil {
			t.Fatal(err)
		}
		for _, seed := range seeds {
			data, err := benchmarks.Generate(sz.Spec(seed))
			if err != nil {
				t.Fatal(err)
			}
			fleetFile := filepath.Join(dir, fmt.Sprintf("%s-%d.json", size, seed))
			if err := os.WriteFile(fleetFile, data, 0o644); err != nil {
				t.Fatal(err)
			}
			for _, limit := range []time.Duration{time.Second, 3 * time.Second} {
				t.Run(fmt.Sprintf("%s/seed%d/%s", size, seed, limit), func(t *testing.T) {
					planFile := filepath.Join(dir, "plan.json")
					code, _, errOut := run(t, "plan", "--fleet", fleetFile, "--consider-installs", "--time-limit", limit.String(),
						"--format", "json", "--quiet", "-o", planFile)
					if code != ExitOK && code != ExitChanges {
						t.Fatalf("plan exit %d; want 0 or 1\n%s", code, errOut)
					}
					code, out, errOut := run(t, "check", "--fleet", fleetFile, "--consider-installs", "--plan", planFile, "--format", "json")
					var res checkResult
					if err := json.Unmarshal([]byte(out), &res); err != nil {
						t.Fatalf("check exit %d: %v\n%s%s", code, err, out, errOut)
					}
					if code != ExitOK || !res.Valid || res.Stated == nil || res.Objective != *res.Stated {
						t.Fatalf("check exit %d: valid %v, objective %v, the plan states %v: %v", code, res.Valid, res.Objective, res.Stated, res.Violations)
					}
				})
			}
		}
	}
}

// TestALimitSpentBeforeTheSearchSaysSo: --time-limit 100ms on 256x1000
// gave no plan, or a plan with no word that the limit had run out while
// the inputs were read. Now the plan is the greedy start, says so among
// its fallbacks, and stderr gives the time reading took. (The process
// start is set an hour back, so that the limit is spent whatever the
// machine's load.)
func TestALimitSpentBeforeTheSearchSaysSo(t *testing.T) {
	var out, errOut strings.Builder
	code := RunSince(time.Now().Add(-time.Hour), []string{"poolsolve", "plan", "--fleet", spark, "--time-limit", "100ms", "--format", "json"},
		strings.NewReader(""), &out, &errOut)
	if code != ExitOK && code != ExitChanges {
		t.Fatalf("exit %d\n%s", code, errOut.String())
	}
	if !strings.Contains(errOut.String(), "the time limit 100ms from process start is too short for this pool: reading the inputs and building the pool took 1h0m") {
		t.Errorf("stderr does not say the limit is too short:\n%s", errOut.String())
	}
	var doc struct {
		Fallbacks []string
		Levels    []struct{ Status string }
		Search    struct{ Stop string }
	}
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Fallbacks) != 1 || !strings.Contains(doc.Fallbacks[0], "greedy start, not searched") {
		t.Errorf("fallbacks %q", doc.Fallbacks)
	}
	if doc.Search.Stop != "not-searched" && doc.Search.Stop != "proved" {
		t.Errorf("search.stop = %q, want not-searched: the search never ran", doc.Search.Stop)
	}
	// The header's first lines say it, not only the fallbacks far below
	// (a fleet whose greedy start proves nothing, so the line is there).
	out.Reset()
	errOut.Reset()
	RunSince(time.Now().Add(-time.Hour), []string{"poolsolve", "plan", "--fleet", filepath.Join("..", "benchmarks", "fixtures", "24x60-tight.json"), "--time-limit", "100ms", "--color", "never"},
		strings.NewReader(""), &out, &errOut)
	head := strings.Join(strings.SplitN(out.String(), "\n", 5)[:4], "\n")
	if !strings.Contains(head, "NOT PROVED: the 100ms time limit ran out while the inputs were read: this is the greedy start, not searched") {
		t.Errorf("the header does not say the search never ran:\n%s", head)
	}
	for i, l := range doc.Levels {
		if l.Status == "bounded" {
			t.Errorf("level %d of an unsearched plan is bounded", i+1)
		}
	}
}

// A work limit does not read the clock: a process that started an hour
// ago still searches, and its plan says nothing of the time reading took
// (which would make two runs' bytes differ).
func TestAWorkLimitIsNotSpentByReadingTheInputs(t *testing.T) {
	var out, errOut strings.Builder
	code := RunSince(time.Now().Add(-time.Hour), []string{"poolsolve", "plan", "--fleet", spark, "--work-limit", "500", "--format", "json"},
		strings.NewReader(""), &out, &errOut)
	if code != ExitOK && code != ExitChanges {
		t.Fatalf("exit %d\n%s", code, errOut.String())
	}
	var doc struct {
		Fallbacks []string
		Search    struct{ Stop string }
	}
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
		t.Fatal(err)
	}
	for _, f := range doc.Fallbacks {
		if strings.Contains(f, "time limit") {
			t.Errorf("a fallback speaks of the time limit: %q", f)
		}
	}
	if doc.Search.Stop != "proved" {
		t.Errorf("search.stop = %q, want proved: the three-Spark fleet is proved within 500 units", doc.Search.Stop)
	}
	if strings.Contains(errOut.String(), "too short") {
		t.Errorf("stderr says the limit is too short:\n%s", errOut.String())
	}
}
