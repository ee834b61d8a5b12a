package pb

import (
	"bufio"
	"encoding/gob"
	"os"
	"strconv"
	"testing"
)

func TestZZRecut(t *testing.T) {
	in, out := os.Getenv("ZZIN"), os.Getenv("ZZOUT")
	if in == "" {
		t.Skip()
	}
	f, _ := os.Open(in)
	job, err := ReadJob(f)
	if err != nil {
		t.Fatal(err)
	}
	rhs, _ := strconv.Atoi(os.Getenv("ZZRHS"))
	t.Logf("last row rhs %d, ops %d", job.Rows[len(job.Rows)-1].RHS, job.Rows[len(job.Rows)-1].Op)
	job.Rows[len(job.Rows)-1].RHS = int64(rhs)
	o, _ := os.Create(out)
	bw := bufio.NewWriter(o)
	gob.NewEncoder(bw).Encode(job.Wire())
	bw.Flush()
	o.Close()
}

func TestZZAnswers(t *testing.T) {
	in := os.Getenv("ZZANS")
	if in == "" {
		t.Skip()
	}
	f, _ := os.Open(in)
	dec := gob.NewDecoder(bufio.NewReader(f))
	for {
		var a Answer
		if err := dec.Decode(&a); err != nil {
			break
		}
		t.Logf("value %d done %v", a.Value, a.Done)
	}
}
