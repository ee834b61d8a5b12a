package plan

import (
	"fmt"
	"math"
	"strconv"
)

// ChangeKind says what a change asks for. The zero value is no kind, so a
// Change nobody filled in is never read as a start.
type ChangeKind int

// The kinds, in the order a plan lists them: stops first, since they free
// the memory that starts need.
const (
	_ ChangeKind = iota
	// Stop: a running lane the plan drops.
	Stop
	// Start: a lane placed that does not run now.
	Start
	// Move: the same variant on other nodes.
	Move
	// SetResidency: the same variant on the same nodes, other residency.
	SetResidency
	// Reroute: an alias served first by another model than now.
	Reroute
	// ManualStop: a running lane the pool cannot stop itself.
	ManualStop
	// ManualStart: a lane the pool cannot start itself.
	ManualStart
)

var kindNames = [...]string{
	Stop:         "stop",
	Start:        "start",
	Move:         "move",
	SetResidency: "residency",
	Reroute:      "reroute",
	ManualStop:   "manual-stop",
	ManualStart:  "manual-start",
}

// Valid reports whether k is one of the kinds.
func (k ChangeKind) Valid() bool { return k > 0 && int(k) < len(kindNames) }

func (k ChangeKind) String() string {
	if !k.Valid() {
		return "ChangeKind(" + strconv.Itoa(int(k)) + ")"
	}
	return kindNames[k]
}

// MarshalText writes the kind's name; an invalid kind is an error.
func (k ChangeKind) MarshalText() ([]byte, error) {
	if !k.Valid() {
		return nil, fmt.Errorf("plan: invalid change kind %d", int(k))
	}
	return []byte(kindNames[k]), nil
}

// UnmarshalText reads a kind's name.
func (k *ChangeKind) UnmarshalText(b []byte) error {
	for i, n := range kindNames {
		if i > 0 && n == string(b) {
			*k = ChangeKind(i)
			return nil
		}
	}
	return fmt.Errorf("plan: unknown change kind %q", b)
}

// GiB is a memory figure. JSON rounds it to 0.1 GiB, as the text does.
type GiB float64

// MarshalJSON writes the figure rounded to one decimal; a figure that is
// not finite becomes null rather than failing the whole document.
func (g GiB) MarshalJSON() ([]byte, error) {
	x := float64(g)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, roundTo(x, 10), 'f', -1, 64), nil
}

// Ms is a latency. JSON rounds it to whole milliseconds.
type Ms float64

// MarshalJSON writes the latency rounded to a whole millisecond, null when
// not finite.
func (m Ms) MarshalJSON() ([]byte, error) {
	x := float64(m)
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, roundTo(x, 1), 'f', -1, 64), nil
}

// roundTo rounds half away from zero to 1/per, turning -0 into 0 so that
// output does not depend on the sign of a zero.
func roundTo(x, per float64) float64 {
	r := math.Round(x*per) / per
	if r == 0 {
		return 0
	}
	return r
}
