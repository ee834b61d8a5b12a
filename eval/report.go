package eval

import (
	"errors"
	"fmt"
	"strings"

	"github.com/poolsolve/poolsolve/model"
)

// Rules name the hard constraints a Violation breaks.
const (
	RuleUnknownVariant = "unknown-variant" // a lane names a variant the pool lacks
	RuleDuplicateLane  = "duplicate-lane"  // a variant placed more than once
	RuleUnknownNode    = "unknown-node"    // a lane names a node the pool lacks
	RulePlacement      = "placement"       // the node set is not a candidate placement
	RuleEligibility    = "eligibility"     // the candidate placement is not eligible
	RuleResidency      = "residency"       // unknown residency, or a fixed one changed
	RuleMemory         = "memory"          // a domain's resident lanes exceed its plan budget
	RuleMemoryAuto     = "memory-auto"     // an auto lane does not fit next to the always lanes
	RulePinLane        = "pin-lane"        // a lane pin does not hold
	RulePinRoute       = "pin-route"       // a route pin does not hold
	RuleUnknownSource  = "unknown-source"  // a route for something that is no demand source
	RuleDuplicateRoute = "duplicate-route" // two routes for one source
	RuleRoute          = "route"           // a route to a non-candidate, unplaced or wrong lane
)

// LaneRules are the rules decided by the lanes alone, whatever the routes.
var LaneRules = []string{RuleUnknownVariant, RuleDuplicateLane, RuleUnknownNode, RulePlacement,
	RuleEligibility, RuleResidency, RuleMemory, RuleMemoryAuto, RulePinLane}

// Violation is one broken hard constraint, in operator terms.
type Violation struct {
	Rule    string `json:"rule"`
	Subject string `json:"subject"` // variant, node and domain, pin label, or source
	Message string `json:"message"`
}

func (v Violation) String() string { return v.Subject + ": " + v.Message }

// Term kinds, the parts of level 4.
const (
	TermLatency   = "latency"   // demand x expected first-token latency of a source
	TermStart     = "start"     // a lane not running now: load time plus h
	TermMove      = "move"      // a lane running now on other nodes: load time plus h
	TermStop      = "stop"      // a lane running now that the plan stops or moves: h
	TermResidency = "residency" // a lane kept with another residency: h
	TermReroute   = "reroute"   // an alias served by another model than now: h
)

// Term is one rounded summand of level 4.
type Term struct {
	Kind    string `json:"kind"`
	Subject string `json:"subject"` // source for latency and reroute, else variant
	Units   int64  `json:"units"`
	Detail  string `json:"detail"`
}

// Report is the evaluator's verdict on one assignment.
type Report struct {
	Valid      bool            `json:"valid"`
	Violations []Violation     `json:"violations,omitempty"`
	Objective  model.Objective `json:"objective"`
	// Terms are the non-zero level-4 summands; their Units add up to
	// Objective[3].
	Terms []Term `json:"terms,omitempty"`
	// Uncovered, ExternalFirst and SLOBroken name what levels 1-3 count.
	Uncovered     []string `json:"uncovered,omitempty"`
	ExternalFirst []string `json:"externalFirst,omitempty"`
	SLOBroken     []string `json:"sloBroken,omitempty"`
}

// Err is nil for a valid report, else an error listing every violation.
func (r Report) Err() error {
	if r.Valid {
		return nil
	}
	msgs := make([]string, len(r.Violations))
	for i, v := range r.Violations {
		msgs[i] = fmt.Sprintf("%s (%s)", v, v.Rule)
	}
	return errors.New("eval: " + strings.Join(msgs, "; "))
}

// Has reports whether some violation breaks rule.
func (r Report) Has(rule string) bool {
	for _, v := range r.Violations {
		if v.Rule == rule {
			return true
		}
	}
	return false
}
