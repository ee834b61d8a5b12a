// Package eval is the independent evaluator: it checks a plan (a
// model.Assignment) against a model.Pool by re-implementing, straight from
// docs/objective.md, every hard constraint and the four-level objective.
//
// It imports only model, internal/jsonpos (a JSON reader with positions,
// which knows nothing of plans) and the standard library, and shares no
// code with encode or solver, so a bug in the encoding cannot hide itself: when the
// solver and eval disagree, eval is right. It does not call model.Eligible
// either; it re-checks eligibility on its own.
//
// ReadPlan reads a plan written as poolsolve.plan/v1 JSON (by poolsolve or
// by hand) with its own reading of the fields, so `poolsolve check` trusts
// nothing of the planner's code; PlanDoc.Resolve turns it into an Assignment for a pool.
//
// Check never panics: unknown names, duplicates and malformed routes in the
// assignment are reported as violations. The objective is computed for
// every assignment, but it means something only when the report is valid;
// an invalid route then counts as uncovered.
//
// Readings of the contract that the doc leaves open, fixed here so that
// encoder and evaluator agree:
//   - an external model is available to a route pin only when
//     Settings.ExternalAllowed;
//   - a variant serves a model when either lists the other
//     (Variant.Models or Model.Variants);
//   - an uncovered alias pays no re-route hysteresis (it contributes
//     nothing to levels 3 and 4);
//   - a current lane without a valid residency is never charged a
//     residency change, and current lanes of variants the pool does not
//     know are ignored (no plan can keep them);
//   - a local lane's E_ft uses Perf.FirstTokenMs as given (the catalog
//     fills defaults); a non-positive LatencyUnitMs counts in milliseconds;
//   - memory sums are exact on the decimals the figures are written as
//     (fits.go): no tolerance, no float noise; a negative draw counts as
//     zero, a draw that is not a finite number never fits;
//   - a link taken from a lane ("running lane X") holds only when the
//     pool's current lanes show X on both nodes with a status a gateway
//     reported and did not call unhealthy; a link "assumed" from a lane
//     the config declares never holds.
package eval
