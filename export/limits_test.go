package export

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/go-air/gini/z"
	"github.com/poolsolve/poolsolve/encode"
)

// readOPBRow reads the one constraint of a captured file: "+3 x1 -2 x2 >= 4 ;".
func readOPBRow(t *testing.T, text string) opbRow {
	t.Helper()
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "*") || strings.HasPrefix(l, "min:") {
			continue
		}
		f := strings.Fields(strings.TrimSuffix(l, ";"))
		r := opbRow{name: "captured", op: f[len(f)-2]}
		rhs, err := strconv.ParseInt(f[len(f)-1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		r.rhs = rhs
		for i := 0; i+1 < len(f)-2; i += 2 {
			c, err := strconv.ParseInt(f[i], 10, 64)
			v, err2 := strconv.Atoi(strings.TrimPrefix(f[i+1], "x"))
			if err != nil || err2 != nil {
				t.Fatalf("term %q %q", f[i], f[i+1])
			}
			r.terms = append(r.terms, encode.Term{Var: z.Var(v), Coef: c})
		}
		return r
	}
	t.Fatal("no constraint")
	return opbRow{}
}

// The rows clasp 3.3.5 stopped on, or answered wrongly, are the rows
// claspRow names; the row it read right passes.
func TestClaspRowNamesTheRowsClasp335ErrsOn(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "clasp-3.3.5", "*.opb"))
	if err != nil || len(files) < 5 {
		t.Fatalf("captures: %v, %v", files, err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			in, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			out, err := os.ReadFile(strings.TrimSuffix(file, ".opb") + ".out")
			if err != nil {
				t.Fatal(err)
			}
			erred := strings.Contains(string(out), "ERROR") || strings.Contains(string(out), "s UNSATISFIABLE")
			why := claspRow(readOPBRow(t, string(in)))
			if (why != "") != erred {
				t.Fatalf("claspRow says %q; clasp printed:\n%s", why, out)
			}
		})
	}
}
