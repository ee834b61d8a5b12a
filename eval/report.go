package eval

import (
	"fmt"
	"slices"
	"strings"

	"github.com/poolsolve/poolsolve/model"
)

// Rule names a hard constraint a Violation breaks; its value is what
// `poolsolve check` prints and the report's JSON carries.
type Rule string

// The rules.
const (
	RuleUnknownVariant Rule = "unknown-variant" // a lane names a variant the pool lacks
	RuleDuplicateLane  Rule = "duplicate-lane"  // a variant placed more than once
	RuleUnknownNode    Rule = "unknown-node"    // a lane names a node the pool lacks
	RulePlacement      Rule = "placement"       // the node set is not a candidate placement
	RuleEligibility    Rule = "eligibility"     // the candidate placement is not eligible
	RuleResidency      Rule = "residency"       // unknown residency, or a fixed one changed
	RuleMemory         Rule = "memory"          // a domain's resident lanes exceed its plan budget
	RuleMemoryAuto     Rule = "memory-auto"     // an auto lane does not fit next to the always lanes
	RulePinLane        Rule = "pin-lane"        // a lane pin does not hold
	RulePinRoute       Rule = "pin-route"       // a route pin does not hold
	RuleUnknownSource  Rule = "unknown-source"  // a route for something that is no demand source
	RuleDuplicateRoute Rule = "duplicate-route" // two routes for one source
	RuleRoute          Rule = "route"           // a route to a non-candidate, unplaced or wrong lane
)

// LaneRules are the rules decided by the lanes alone, whatever the routes.
var LaneRules = []Rule{RuleUnknownVariant, RuleDuplicateLane, RuleUnknownNode, RulePlacement,
	RuleEligibility, RuleResidency, RuleMemory, RuleMemoryAuto, RulePinLane}

// Violation is one broken hard constraint, in operator terms.
type Violation struct {
	Rule    Rule   `json:"rule"`
	Subject string `json:"subject"` // variant, node and domain, pin label, or source
	Message string `json:"message"`
}

func (v Violation) String() string { return v.Subject + ": " + v.Message }

// TermKind names a part of level 4.
type TermKind string

// The term kinds.
const (
	TermLatency   TermKind = "latency"   // demand x expected first-token latency of a source
	TermStart     TermKind = "start"     // a lane not running now: load time plus h
	TermMove      TermKind = "move"      // a lane running now on other nodes: load time plus h
	TermStop      TermKind = "stop"      // a lane running now that the plan stops or moves: h
	TermResidency TermKind = "residency" // a lane kept with another residency: h
	TermReroute   TermKind = "reroute"   // an alias served by another model than now: h
)

// Term is one rounded summand of level 4.
type Term struct {
	Kind    TermKind `json:"kind"`
	Subject string   `json:"subject"` // source for latency and reroute, else variant
	Units   int64    `json:"units"`
	Detail  string   `json:"detail"`
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

// Violations are the broken rules of an invalid plan, as an error:
// errors.As finds them in an error that wraps Report.Err's.
type Violations []Violation

func (vs Violations) Error() string {
	msgs := make([]string, len(vs))
	for i, v := range vs {
		msgs[i] = fmt.Sprintf("%s (%s)", v, v.Rule)
	}
	return "eval: " + strings.Join(msgs, "; ")
}

// Err is nil for a valid report, else the Violations.
func (r Report) Err() error {
	if r.Valid {
		return nil
	}
	return Violations(slices.Clone(r.Violations))
}

// Has reports whether some violation breaks rule.
func (r Report) Has(rule Rule) bool {
	for _, v := range r.Violations {
		if v.Rule == rule {
			return true
		}
	}
	return false
}
