package pb

import (
	"compress/gzip"
	"os"
	"testing"
)

// testdata/backbone-256x1000.pbjob.gz is a backbone job of a generated
// 256x1000 fleet (bench --sizes 256x1000 --seed 1), rows dropped while
// the defect below held: every row of the model, a row asking for some
// term to differ from the incumbent, and the incumbent as the phase.
func readGzipJob(t *testing.T, name string) *Job {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	job, err := ReadJob(zr)
	if err != nil {
		t.Fatal(err)
	}
	return job
}

// brokenRows counts the rows of job that model m breaks.
func brokenRows(job *Job, m []bool) int {
	broken := 0
	for _, r := range job.Rows {
		var s int64
		for k, c := range r.Cols {
			if m[c] {
				s += r.W[k]
			}
		}
		if r.Op == LE && s > r.RHS || r.Op == GE && s < r.RHS || r.Op == EQ && s != r.RHS {
			broken++
		}
	}
	return broken
}

// Why the solver takes no proof from a cutting-planes worker: on this
// job gophersat's cutting planes end without a model, where clause
// learning finds one that meets every row. Should gophersat's search
// find it one day, this test fails, and a cutting-planes worker's end
// may prove again (solver's poll).
func TestCuttingPlanesEndWithoutAModelWhereClauseLearningFindsOne(t *testing.T) {
	if testing.Short() {
		t.Skip("two searches of a 17,000-row job")
	}
	for _, cp := range []bool{false, true} {
		job := readGzipJob(t, "testdata/backbone-256x1000.pbjob.gz")
		job.CuttingPlanes = cp
		var model []bool
		_, got, err := Search(job, func(a Answer) error { model = a.Model; return nil })
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case !cp && !got:
			t.Fatal("clause learning found no model")
		case !cp:
			if n := brokenRows(job, model); n > 0 {
				t.Fatalf("clause learning's model breaks %d rows", n)
			}
		case got:
			t.Fatal("cutting planes found a model: the defect is gone, and a cutting-planes worker's end may prove the level again")
		}
	}
}
