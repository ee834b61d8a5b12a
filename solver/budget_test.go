package solver

import (
	"testing"
	"time"
)

func TestEveryShareHasAPartBelowTheWholeAndItsReason(t *testing.T) {
	for s, r := range shares {
		if !(r.part > 0 && r.part < 1) || r.why == "" || r.max < 0 {
			t.Errorf("share %d: part %v, max %v, reason %q", s, r.part, r.max, r.why)
		}
	}
}

func TestAShareNeverRunsPastTheDeadlineNorBeforeNow(t *testing.T) {
	tests := []struct {
		name string
		left time.Duration
	}{
		{"a long level", time.Hour},
		{"a short level", 30 * time.Millisecond},
		{"a level already over", -time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for s := range shares {
				before := time.Now()
				end := before.Add(tc.left)
				got := until(nil, end, share(s))
				if got.After(end) {
					t.Errorf("share %d runs %v past its deadline", s, got.Sub(end))
				}
				if tc.left > 0 && got.Before(before) {
					t.Errorf("share %d ends %v before it starts", s, before.Sub(got))
				}
			}
		})
	}
}

func TestACappedShareStopsAtItsCapAndALeavingShareLeavesItsPart(t *testing.T) {
	end := time.Now().Add(time.Hour)
	if got := time.Until(until(nil, end, shareBackbone)); got > backboneMaxTime {
		t.Errorf("backbone share of an hour: %v, past its cap %v", got, backboneMaxTime)
	}
	if left := time.Until(end) - time.Until(until(nil, end, sharePolishLast)); left < 7*time.Minute || left > 8*time.Minute {
		t.Errorf("the polish leaves %v of an hour, want an eighth", left)
	}
}
