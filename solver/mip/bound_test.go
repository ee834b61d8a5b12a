package mip

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/encode"
)

// Any multipliers give a valid bound; wrong signs are ignored.
func TestLagrangeBoundIsValidForArbitraryMultipliers(t *testing.T) {
	pr := Problem{C: []float64{3, 2, 4},
		Rows: []FloatRow{row(encode.GE, 2, 0, 1, 1, 1, 2, 1), row(encode.LE, 1, 0, 1, 2, 1)}}
	rng := rand.New(rand.NewPCG(3, 5))
	for k := 0; k < 1000; k++ {
		y := []float64{rng.Float64()*20 - 10, rng.Float64()*20 - 10}
		if b, ok := WeakBound(&pr, y); !ok || b > 5 {
			t.Fatalf("y %v: bound %v (ok %v) above the optimum 5", y, b, ok)
		}
	}
}

func row(op encode.Op, rhs float64, idxVal ...float64) FloatRow {
	r := FloatRow{Op: op, Rhs: rhs}
	for k := 0; k < len(idxVal); k += 2 {
		r.Idx = append(r.Idx, int(idxVal[k]))
		r.Val = append(r.Val, idxVal[k+1])
	}
	return r
}

func lpFar() time.Time { return time.Now().Add(time.Minute) }
