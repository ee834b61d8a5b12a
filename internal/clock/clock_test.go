package clock

import (
	"testing"
	"time"
)

func TestACountedClockReadsOnlyTheWorkChargedToIt(t *testing.T) {
	origin := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := Counted(origin)
	c.Charge(2 * time.Second)
	time.Sleep(5 * time.Millisecond) // the wall clock moves; this one does not
	got := c.Now().Sub(origin)
	if want := 2*time.Second + readCost; got != want {
		t.Errorf("after 2 s of work and a read, the clock reads %v past its origin, want %v", got, want)
	}
	if c.Spent() != got {
		t.Errorf("Spent %v, want %v", c.Spent(), got)
	}
}

func TestAPollingLoopOnACountedClockEnds(t *testing.T) {
	c := Counted(time.Unix(0, 0))
	end := c.Now().Add(time.Millisecond)
	n := 0
	for c.Before(end) {
		n++
	}
	if n != 999 {
		t.Errorf("a loop that only reads the clock ran %d times before 1 ms, want 999", n)
	}
}

func TestTheNilClockIsTheWallClock(t *testing.T) {
	var c *Clock
	if c.Counted() {
		t.Fatal("nil clock says it counts")
	}
	c.Charge(time.Hour)
	if d := time.Since(c.Now()); d < 0 || d > time.Second {
		t.Errorf("nil clock reads %v from the wall clock", d)
	}
	if c.Spent() != 0 {
		t.Errorf("nil clock spent %v", c.Spent())
	}
}
