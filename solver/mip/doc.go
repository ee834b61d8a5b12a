// Package mip is the linear side of the exact solver: one level's 0/1
// model as integer rows (Relaxation, built from the encoding's linear
// mirror by NewRelaxation), its presolve (Presolve: bounds propagation,
// coefficient tightening, substitution of fixed columns), the root cut
// loop over package lp's dual simplex (CutLoop: lifted covers, probing
// cuts and Gomory mixed-integer cuts in exact 128-bit arithmetic; on a
// large model its LP starts without the short implications and takes
// in those its vertex violates, LazyRows), bounds
// by weak duality that hold whatever the simplex did (WeakBound,
// ReducedCosts), the Lagrangian subgradient bound for models too large
// for the simplex (Lagrangian), and branch and cut over the cut loop's LP
// (BranchCut: depth first on pseudo-costs, with reduced-cost fixing at
// its nodes).
//
// Every row, cut and fixing keeps every 0/1 point of the model's rows,
// and every bound is valid for every such point: the driver in package
// solver may claim a proof from them. Integer data stays integer; floats
// are the simplex's, and a bound computed from them carries a rounding
// margin.
//
// It does not decide anything: it knows no plan, no objective level, no
// time budget beyond the deadlines and stop functions it is handed, and
// no incumbent beyond the cutoffs and Offer callbacks it is given.
// Package solver chooses what to run when and what a result proves. A new
// bounding technique's math goes here; its slot in the solver's level
// search and its name in solver.BoundSource go there.
package mip
