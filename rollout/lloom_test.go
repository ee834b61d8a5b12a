package rollout_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/rollout"
)

// admissionPlan is the part of LLooM's admission plan a rollout must
// agree with.
type admissionPlan struct {
	RequestedRuntimeID string `json:"requestedRuntimeId"`
	Admission          struct {
		Allowed bool `json:"allowed"`
		Nodes   map[string]struct {
			MemoryBudgetGb float64 `json:"memoryBudgetGb"`
		} `json:"nodes"`
	} `json:"admission"`
	Actions []struct {
		Type      string `json:"type"`
		RuntimeID string `json:"runtimeId"`
	} `json:"actions"`
	Runtimes []struct {
		RuntimeID string  `json:"runtimeId"`
		Loaded    bool    `json:"loaded"`
		KeepWarm  bool    `json:"keepWarm"`
		MemoryGb  float64 `json:"memoryGb"`
	} `json:"runtimes"`
}

// TestTheRolloutStartsALaneAloneExactlyWhenLLooMAdmitsItWithoutEvicting
// replays LLooM 0.2.3's own admission plans: starting the requested lane
// next to what is loaded is a step the rollout takes before any stop
// exactly when LLooM would admit it without stopping anything; otherwise
// LLooM either evicts the lane a make-before-break keeps, or refuses.
func TestTheRolloutStartsALaneAloneExactlyWhenLLooMAdmitsItWithoutEvicting(t *testing.T) {
	files, _ := filepath.Glob("testdata/lloom-0.2.3/admission-*.json")
	if len(files) != 4 {
		t.Fatalf("found %d captures, want 4", len(files))
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var ap admissionPlan
			if err := json.Unmarshal(data, &ap); err != nil {
				t.Fatal(err)
			}
			in := rollout.Input{Budgets: map[[2]string]float64{}}
			for node, n := range ap.Admission.Nodes {
				in.Budgets[[2]string{node, "unified:0"}] = n.MemoryBudgetGb
			}
			var now []rollout.Lane
			for _, r := range ap.Runtimes {
				res := model.Preferred
				if r.KeepWarm {
					res = model.Always
				}
				l := lane(r.RuntimeID, r.MemoryGb, 1000, res, "spark-node-01")
				switch {
				case r.RuntimeID == ap.RequestedRuntimeID:
					in.Planned = append(in.Planned, l)
				case r.Loaded:
					now = append(now, l)
					in.Sources = append(in.Sources, moved("uses-"+r.RuntimeID, 1, r.RuntimeID))
				}
			}
			// The plan keeps nothing that runs: the rollout may stop it, but
			// only after the start when memory allows.
			in.Now = now
			r := rollout.Plan(in)
			startsFirst := r != nil && r.Steps[0].Action == rollout.Start
			evicts := slices.ContainsFunc(ap.Actions, func(a struct {
				Type      string `json:"type"`
				RuntimeID string `json:"runtimeId"`
			}) bool {
				return a.Type == "stop"
			})
			lloomAlone := ap.Admission.Allowed && !evicts
			if startsFirst != lloomAlone {
				t.Errorf("the rollout starts %s first: %v; LLooM admits it alone: %v (allowed %v, evicts %v)",
					ap.RequestedRuntimeID, startsFirst, lloomAlone, ap.Admission.Allowed, evicts)
			}
		})
	}
}
