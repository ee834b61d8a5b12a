// Package pb is the pseudo-boolean worker of the exact solver: a level's
// 0/1 model as weight rows (Job, built from a mip.Relaxation by JobFor
// and RowsJob), its search by gophersat (Search: clause learning or
// cutting planes, below a cutoff, streaming each better model and a
// last Done; clause learning's Done proves its last model optimal,
// cutting planes' does not: on the job in testdata it ends with no
// model where one exists; a panic inside gophersat ends the search with
// an error, which proves nothing), the flat wire form jobs travel in, checked
// on arrival (ReadJob), and the worker processes that run jobs apart
// from the solver, so that a search that cannot be interrupted can be
// killed (Start, Spares: one process started ahead of its job).
//
// A worker is this executable re-run: main calls ServeIfWorker before
// anything else, which serves the one job on stdin in a worker process
// and returns at once in any other. A program that never calls it plans
// without workers (Served reports which). The package reads one
// environment variable, WorkerEnv, and only in ServeIfWorker: it is how
// a parent tells the child it is a worker.
//
// It does not choose what to search or when: package solver's portfolio
// decides which jobs run at which cutoff, reads the answers, and checks
// every model against the evaluator before it counts.
package pb
