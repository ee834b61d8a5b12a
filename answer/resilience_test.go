package answer_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/answer"
	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

// sparkFleet is examples/spark-fleet.json as the planner sees it, with
// the catalog options given, and its plan.
func sparkFleet(t testing.TB, opts catalog.Options) (*model.Pool, *solver.Result, []string) {
	t.Helper()
	in, err := fleet.LoadBundle("../examples/spark-fleet.json")
	if err != nil {
		t.Fatal(err)
	}
	cat, err := catalog.Build(in, opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := solver.Solve(context.Background(), cat.Pool, solver.Options{TimeLimit: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return cat.Pool, res, cat.Notes
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (UPDATE_GOLDEN=1 rewrites it after review)\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

func TestTheSparkFleetsSingleLossesMatchTheGoldenReport(t *testing.T) {
	p, base, notes := sparkFleet(t, catalog.Options{})
	r, err := answer.Resilience(context.Background(), p, base, answer.ResilienceOptions{Fleet: "examples/spark-fleet.json", Notes: notes})
	if err != nil {
		t.Fatal(err)
	}
	var txt, js bytes.Buffer
	if err := answer.WriteResilienceText(&txt, r); err != nil {
		t.Fatal(err)
	}
	if err := answer.WriteResilienceJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	golden(t, "resilience-spark.txt", txt.Bytes())
	golden(t, "resilience-spark.json", js.Bytes())
}
