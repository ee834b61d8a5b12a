package pb

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// sendJob writes job as startPB does and reads it back as a worker does.
func sendJob(t *testing.T, job *Job) *Job {
	t.Helper()
	got, err := ReadJob(bytes.NewReader(wireBytes(t, job.Wire())))
	if err != nil {
		t.Fatalf("readJob: %v", err)
	}
	return got
}

func TestAJobReachesItsWorkerUnchanged(t *testing.T) {
	job := knapsackJob()
	job.CuttingPlanes = true
	job.Rows = append(job.Rows, Row{Cols: []int32{2}, W: []int64{1}, Op: EQ, RHS: 1}, Row{Op: GE, RHS: -3})
	canon := knapsackJob()
	canon.First = true
	job.Canon, job.CanonShift = canon, 7
	job.Phase = []bool{true, false, true, false}
	got := sendJob(t, job)
	// An empty row comes back with empty, not nil, slices.
	for k := range got.Rows {
		if len(got.Rows[k].Cols) == 0 {
			got.Rows[k].Cols, got.Rows[k].W = nil, nil
		}
	}
	if !reflect.DeepEqual(got, job) {
		t.Errorf("sent %+v\ngot  %+v", job, got)
	}
}

func TestAGarbledJobIsAnErrorNotAPanic(t *testing.T) {
	for _, tc := range []struct {
		name   string
		garble func(w *pbWire)
		want   string
	}{
		{"a column past the last", func(w *pbWire) { w.Cols[0] = 9 }, "names column 9 of 4"},
		{"a negative column", func(w *pbWire) { w.Cols[1] = -1 }, "names column -1"},
		{"a row past the terms", func(w *pbWire) { w.Start[1] = 7 }, "row 0 starts at 0 and ends at 7 of 6 terms"},
		{"too few weights", func(w *pbWire) { w.W = w.W[:2] }, "6 columns and 2 weights"},
		{"an unknown operator", func(w *pbWire) { w.Op[1] = 9 }, "row 1 has operator 9"},
		{"an objective of another length", func(w *pbWire) { w.Obj = w.Obj[:3] }, "4 columns, 3 objective terms"},
		{"phases of another length", func(w *pbWire) { w.Phase = []bool{true} }, "4 columns, 1 phases"},
		{"a garbled canonical job", func(w *pbWire) { w.Canon = knapsackJob().Wire(); w.Canon.Start[0] = 1 }, "canonical pb job: row starts from 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := knapsackJob().Wire()
			tc.garble(w)
			if _, err := ReadJob(bytes.NewReader(wireBytes(t, w))); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one saying %q", err, tc.want)
			}
		})
	}
}

// wireBytes is w as NewJobWriter sends it.
func wireBytes(t testing.TB, w *pbWire) []byte {
	t.Helper()
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	if err := writeWire(bw, w); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestAJobCutShortOrWithAHugeLengthIsAnError(t *testing.T) {
	whole := wireBytes(t, knapsackJob().Wire())
	for n := range len(whole) {
		if _, err := ReadJob(bytes.NewReader(whole[:n])); err == nil {
			t.Fatalf("a job cut after %d of %d bytes was read", n, len(whole))
		}
	}
	// Four columns, no flags, no shift, then 2^62 row starts: refused
	// when the input ends, without allocating for the length.
	huge := append([]byte(wireMagic), 4, 0, 0)
	huge = binary.AppendUvarint(huge, 1<<62)
	if _, err := ReadJob(bytes.NewReader(huge)); err == nil {
		t.Fatal("a length of 2^62 was accepted")
	}
	huge = append([]byte(wireMagic), 4, 0, 0)
	huge = binary.AppendUvarint(huge, 1<<30)
	if _, err := ReadJob(bytes.NewReader(huge)); err == nil || !strings.Contains(err.Error(), "unexpected EOF") {
		t.Fatalf("a length of 2^30 with no elements: %v", err)
	}
}

// FuzzReadJob: whatever reaches a worker's stdin, reading it gives a job
// whose every column is in range, or an error; never a panic.
func FuzzReadJob(f *testing.F) {
	f.Add(wireBytes(f, knapsackJob().Wire()))
	canon := knapsackJob()
	canon.Canon, canon.Phase = knapsackJob(), []bool{true, false, true, false}
	f.Add(wireBytes(f, canon.Wire()))
	f.Add([]byte{})
	f.Add([]byte(wireMagic + "\x04\x07\x00\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, b []byte) {
		job, err := ReadJob(bytes.NewReader(b))
		if err != nil {
			return
		}
		// What was read is written back the same, and read back equal.
		var again bytes.Buffer
		if err := WriteJob(&again, job); err != nil {
			t.Fatal(err)
		}
		back, err := ReadJob(&again)
		if err != nil || !reflect.DeepEqual(back.Wire(), job.Wire()) {
			t.Fatalf("a job read, written and read again differs (%v)", err)
		}
		for k, r := range job.Rows {
			if len(r.Cols) != len(r.W) {
				t.Fatalf("row %d: %d columns, %d weights", k, len(r.Cols), len(r.W))
			}
			for _, c := range r.Cols {
				if c < 0 || int(c) >= job.NCols {
					t.Fatalf("row %d names column %d of %d", k, c, job.NCols)
				}
			}
		}
	})
}

// The workers of a level get copies of one job: its rows are flattened
// once for all of them. A copy given rows of its own, as canonicalPB's
// with another bound, is flattened from those, never from the shared ones.
func TestCopiesOfAJobShareItsFlatRowsUnlessGivenTheirOwn(t *testing.T) {
	job := knapsackJob()
	job.flat = &sharedRows{}
	a, b := *job, *job
	a.CuttingPlanes = true
	wa, wb := a.Wire(), b.Wire()
	if &wa.Cols[0] != &wb.Cols[0] || !wa.Cuts || wb.Cuts {
		t.Error("two copies of a job did not share its flattened rows, or shared their own fields")
	}
	c := *job
	c.Rows = slices.Clone(job.Rows)
	c.Rows[len(c.Rows)-1].RHS = 99
	if got := c.Wire().RHS; got[len(got)-1] != 99 {
		t.Errorf("a copy with rows of its own was sent the shared rows: last bound %d, want 99", got[len(got)-1])
	}
	if got := sendJob(t, job); !reflect.DeepEqual(got.Rows, job.Rows) {
		t.Errorf("the shared job arrives as %+v, want %+v", got.Rows, job.Rows)
	}
}
