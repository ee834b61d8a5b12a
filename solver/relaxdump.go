package solver

import (
	"io"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/solver/pb"
)

// Options.DumpRelax = PREFIX (the CLI's POOLSOLVE_DUMP_RELAX) writes each
// presolved level model the LP solves to PREFIX-l<level>-<rows>.lp, as CPLEX LP with columns named
// v<variable> (the numbers of export's files): the model the cut loop
// starts from, for CBC or HiGHS to be measured against it, with a
// comment line listing the columns in the LP's order. A debugging aid,
// like Options.Trace.

// dumpJob writes job to path as a worker reads it, whole or not at all.
func dumpJob(job *pb.Job, path string) {
	fleet.WriteFileAtomicWith(path, func(w io.Writer) error {
		return pb.WriteJob(w, job)
	})
}
