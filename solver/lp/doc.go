// Package lp is a sparse bounded dual simplex for the LP relaxations of
// package solver.
//
// # What it solves
//
// Minimise c·x subject to lo_r <= a_r·x <= hi_r for every row, with
// every column boxed: lo_j <= x_j <= hi_j, both finite (0/1 columns
// are). A row side may be ±Inf; a column bound may not, and New refuses
// one that is (or NaN, or lo > hi), as AddRows refuses a malformed row.
// Rows can be added (AddRows) and removed (RemoveRows) and column
// bounds moved (SetBounds) between solves: State keeps the basis, which
// is what a cut loop and a branch and bound need.
//
// # How
//
// Boxed columns make the all-logical basis dual feasible at once (each
// nonbasic column sits at the bound its cost prefers), so the solver
// needs no phase 1: it runs the dual simplex from there, with dual
// steepest-edge pricing, the bound-flipping ratio test with Harris'
// tolerance, and a sparse LU of the basis (Markowitz with a threshold,
// singletons first) updated by product-form etas and rebuilt every 80 to
// 1,000 changes (more on more rows), or sooner once the etas hold more
// nonzeros than the factors, in the arrays of the last one. The etas are
// indexed by place too, so that a BTRAN of a sparse vector applies only
// the etas its nonzeros reach. On models of 10,000 rows and more,
// pricing turns to Devex for good once steepest edge's extra FTRAN
// fills in (cut rows in the basis do that). Weights are capped at 1e30,
// and when no infeasible row scores (a weight overflowed, its score
// underflowed) the most infeasible is taken: an Optimal answer never
// leaves a basic variable outside its bounds. Its triangular solves are
// hypersparse: a right-hand side with few nonzeros visits only the
// pivots it reaches. Rows are scaled by their largest coefficient;
// everything the State returns is unscaled.
//
// Costs are perturbed (by about 1e-7 relative, seeded, so runs are
// repeatable; a zero cost by up to 1e-9, or on models of 10,000 rows and
// more by 0.5e-5 to 1.5e-5, past the dual tolerance) to break dual
// degeneracy. Once the perturbed problem is
// optimal, Solve restores the true costs and goes on with the dual
// simplex from that basis, so an Optimal answer's point, duals and
// objective are those of the problem asked: on seeded LPs of 300 to
// 2,500 rows the Lagrangian bound of the duals then meets the point's
// objective to 1e-10 relative or better, where the perturbed duals left
// 1e-7 to 6e-7. The next Solve perturbs again.
//
// # Tolerances
//
// On the scaled problem: a basic value within 1e-7 of its bounds is
// feasible (primal), a reduced cost within 1e-7 of the sign its bound
// wants is optimal (dual), and no pivot below 1e-7 in magnitude is
// taken. Compared with an independent simplex (gonum's, in the tests
// and the fuzz target) an Optimal objective agrees within 1e-6·(1+|z*|)
// and the point meets every row and bound within 1e-6.
//
// # What a bound guarantees
//
// Nothing here is certified: the duals are floating-point multipliers.
// A valid lower bound for the MIP comes only from the caller: weak
// duality evaluated on the integer data with multipliers clipped to the
// signs their rows allow, less a rounding margin (package solver's
// lagrangeBound). Such a bound is valid whatever the simplex did,
// whatever the Status, and for duals of any basis, optimal or not (an
// Optimal basis only makes it the LP optimum); it is a bound for the
// MIP because every integer point is in the LP's box and rows. Infeasible
// is likewise a claim, with Ray the multipliers of the row that showed
// it; a caller that prunes on it relies on the simplex's arithmetic.
//
// # When it gives up
//
// Solve returns Limit when the deadline passes or Stop says true (both
// asked every 8 iterations, and before the first) or after maxIter
// iterations; the State is consistent then and a later Solve goes on
// from where it stopped. A basis found singular at refactorisation is
// repaired: each column the LU could not pivot leaves for the logical of
// a row it could not pivot, and the solve goes on. Failed means a pivot
// disagreed with its recomputation on freshly rebuilt factors: the
// numerics cannot be trusted and the caller should not use the answer
// beyond its weak-duality bound.
//
// # Figures
//
// Measured on level 4 of the 64x250 benchmark fleet (4,955 rows, 5,104
// columns, 28,540 nonzeros): 2,174 iterations, 0.3 s of CPU, the same
// optimum as CBC to seven digits; on 256x1000's (52,881 rows, 765,538
// nonzeros) 21,420 iterations in 1.4-1.7 s, the value CBC reports (CLP's
// dual simplex: 20,386 iterations in 1.4 s). These figures were taken
// with the perturbation left in. On level 4 of a 256-node fleet with GPU
// device domains (256x1000 seed 42: 112,200 rows, 384,706 nonzeros) the
// bound is within 0.4% of the optimum after 20,000 iterations (12.5 s)
// and optimal after 67,666, where CLP's dual simplex takes 49,391
// iterations and 11.2 s: each of this solver's iterations costs several
// times CLP's there. Package mip's cut loop therefore starts that model
// without its 106,264 short implications (mip.LazyRows) and adds those
// its vertex violates: 12 solves, 16,135 iterations in all, 1.0 s, to
// 323,252.
package lp
