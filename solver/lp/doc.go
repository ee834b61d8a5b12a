// Package lp is a sparse bounded dual simplex for the LP relaxations of
// package solver: minimise c·x subject to lo_r <= a_r·x <= hi_r, with
// every column boxed (lo_j <= x_j <= hi_j, both finite, as 0/1 columns
// are).
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
// the etas its nonzeros reach. On
// models of 10,000 rows and more, pricing turns to Devex for good once
// steepest edge's extra FTRAN fills in (cut rows in the basis do that).
// Its triangular solves are
// hypersparse: a right-hand side with few nonzeros visits only the
// pivots it reaches. The basis stays dual feasible as rows are added (their
// logicals enter the basis) and bounds move, which is what a cut loop
// and a branch and bound need: State keeps the basis between solves.
//
// It does not certify anything. Its duals are multipliers; package
// solver turns them into lower bounds by weak duality on the integer
// data, with a rounding margin, so a bound is valid whatever the simplex
// did. Costs are perturbed slightly (seeded, so runs are repeatable) to
// break dual degeneracy; the perturbation moves the duals, never the
// validity of such a bound.
//
// Measured on level 4 of the 64x250 benchmark fleet (4,955 rows, 5,104
// columns, 28,540 nonzeros): 2,174 iterations, 0.3 s of CPU, the same
// optimum as CBC to seven digits; on 256x1000's (52,881 rows, 765,538
// nonzeros) 21,420 iterations in 1.4-1.7 s, the value CBC reports (CLP's
// dual simplex: 20,386 iterations in 1.4 s).
package lp
