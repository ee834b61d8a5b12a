package pb

import (
	"math/rand/v2"
	"testing"
)

// randomJob draws a small job: n columns, rows of random sense and
// weights (some large, as memory rows are), an objective, and a phase.
func randomJob(rng *rand.Rand, n int) *Job {
	job := &Job{NCols: n, Obj: make([]int64, n), Phase: make([]bool, n)}
	for c := range n {
		job.Obj[c] = rng.Int64N(21) - 5
		job.Phase[c] = rng.IntN(2) == 1
	}
	for range 2 + rng.IntN(n) {
		var r Row
		scale := int64(1)
		if rng.IntN(3) == 0 {
			scale = 100_000
		}
		var sum int64
		for c := range n {
			if rng.IntN(3) > 0 {
				continue
			}
			w := (rng.Int64N(9) - 3) * scale
			if w == 0 {
				w = scale
			}
			r.Cols, r.W = append(r.Cols, int32(c)), append(r.W, w)
			if w > 0 {
				sum += w
			}
		}
		if len(r.Cols) == 0 {
			continue
		}
		r.Op = int8(rng.IntN(3))
		r.RHS = rng.Int64N(sum+1) - scale
		job.Rows = append(job.Rows, r)
	}
	// Every column in some row, as a level's job has them in its cutoff
	// row: gophersat counts its variables from the rows.
	all := Row{Op: GE}
	for c := range n {
		all.Cols, all.W = append(all.Cols, int32(c)), append(all.W, 1)
	}
	job.Rows = append(job.Rows, all)
	return job
}

// bruteOptimum is the least objective over every model that meets the
// rows, and whether there is one.
func bruteOptimum(job *Job) (int64, bool) {
	best, found := int64(0), false
	m := make([]bool, job.NCols)
	for bits := 0; bits < 1<<job.NCols; bits++ {
		for c := range m {
			m[c] = bits>>c&1 == 1
		}
		if brokenRows(job, m) > 0 {
			continue
		}
		if v := job.value(m); !found || v < best {
			best, found = v, true
		}
	}
	return best, found
}

// The clause-learning search agrees with enumeration on random jobs,
// phases included: the same optimum, or no model when there is none.
// Its end is what proves a level (solver's poll).
func TestClauseLearningAgreesWithEnumerationOnRandomJobs(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for k := range 3000 {
		job := randomJob(rng, 4+rng.IntN(9))
		want, feasible := bruteOptimum(job)
		var last int64
		_, got, err := Search(job, func(a Answer) error {
			if n := brokenRows(job, a.Model); n > 0 {
				t.Fatalf("job %d: a model breaks %d rows", k, n)
			}
			last = a.Value
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if got != feasible || got && last != want {
			t.Fatalf("job %d (%d columns, %d rows): search says model %v value %d, enumeration %v %d", k, job.NCols, len(job.Rows), got, last, feasible, want)
		}
	}
}
