// Package gctune lets a short-lived poolsolve process collect garbage less
// often while its heap is small, and as Go does by default once it is
// large.
//
// A plan of a small fleet allocates a few megabytes in some milliseconds:
// at Go's default GOGC of 100 the heap target starts at 4 MiB, and the
// collector then runs several times inside one solve. Past a live heap of
// LiveMax the default comes back, so that a 1,024-node plan's peak memory
// is what it would be without this package.
//
// A process that knows its heap better, such as a PB worker holding a
// large job, fixes GOGC with Hold; the collections then leave it alone.
//
// It does not run in library code: the command's main starts it. It does
// nothing when GOGC or GOMEMLIMIT is set in the environment: the operator
// has chosen.
package gctune
