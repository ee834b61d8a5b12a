package clock

import "time"

// Clock is the time a search reads. The nil *Clock is the wall clock.
type Clock struct {
	origin time.Time
	spent  time.Duration
}

// readCost is charged for each read of a counted clock, so that a loop
// that polls the clock and does nothing it charges still ends.
const readCost = time.Microsecond

// Counted is a clock that reads origin plus the work charged to it.
func Counted(origin time.Time) *Clock { return &Clock{origin: origin} }

// Counted reports whether c counts work (false: the wall clock).
func (c *Clock) Counted() bool { return c != nil }

// Now is the wall time, or origin plus the work charged so far.
func (c *Clock) Now() time.Time {
	if c == nil {
		return time.Now()
	}
	c.spent += readCost
	return c.origin.Add(c.spent)
}

// Until is the time left before t.
func (c *Clock) Until(t time.Time) time.Duration { return t.Sub(c.Now()) }

// Since is the time since t.
func (c *Clock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// Before reports whether the clock has not yet reached t.
func (c *Clock) Before(t time.Time) bool { return c.Now().Before(t) }

// Charge adds work that stands for d to a counted clock; on the wall
// clock it does nothing (the time has passed already).
func (c *Clock) Charge(d time.Duration) {
	if c != nil && d > 0 {
		c.spent += d
	}
}

// Spent is the work charged to a counted clock so far (0 on the wall
// clock).
func (c *Clock) Spent() time.Duration {
	if c == nil {
		return 0
	}
	return c.spent
}
