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

func TestTheRunsSharesOfItsLimitKeepTheirCaps(t *testing.T) {
	tests := []struct {
		name  string
		limit time.Duration
		s     share
		want  time.Duration
	}{
		{"explanations get a tenth of a short limit", 2 * time.Second, shareExplain, 200 * time.Millisecond},
		{"explanations get at most half a second", time.Minute, shareExplain, 500 * time.Millisecond},
		{"merging gets a fiftieth of a short limit", time.Second, shareMerge, 20 * time.Millisecond},
		{"merging gets at most 100 ms", time.Minute, shareMerge, 100 * time.Millisecond},
		{"the warm start gets a twentieth of a long limit", 20 * time.Second, shareWarm, time.Second},
		{"the warm start gets half a second of a short limit", 2500 * time.Millisecond, shareWarm, 500 * time.Millisecond},
		{"the warm start gets a quarter of a very short limit", time.Second, shareWarm, 250 * time.Millisecond},
	}
	for _, tc := range tests {
		if got := ofLimit(tc.limit, tc.s); got != tc.want {
			t.Errorf("%s: %v of %v, want %v", tc.name, got, tc.limit, tc.want)
		}
	}
}

func TestALevelsDeadlineIsItsShareOfTheTimeLeft(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := budget{end: now.Add(10 * time.Second)}
	if got := b.level(now, 0, levelShare).Sub(now); got != 5*time.Second {
		t.Errorf("level 1 of 10 s: %v, want 5 s", got)
	}
	if got := b.level(now, 3, levelShare); !got.Equal(b.end) {
		t.Errorf("level 4 ends at %v, want the deadline %v", got, b.end)
	}
}
