// Package clock tells a search what time it is: the wall clock, or a
// counted clock whose time is only the work charged to it.
//
// A search that reads a counted clock, and charges it for the steps it
// takes (SAT ticks, LP iterations, local-search moves), stops at the same
// step on every machine and under any load, so its answer depends on its
// input and its work limit alone. That holds only while one goroutine
// reads and charges the clock, in an order that does not depend on time:
// the clock is not safe for concurrent use, by design.
//
// It does not measure anything: a nil *Clock is the wall clock, and the
// costs charged to a counted one are the callers' estimates of what a step
// takes on one core of a 2-vCPU machine.
package clock
