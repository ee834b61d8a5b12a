package solver

import (
	"encoding/gob"
	"fmt"
	"io"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/fleet"
)

// Options.DumpRelax = PREFIX (the CLI's POOLSOLVE_DUMP_RELAX) writes each
// presolved level model the LP solves to PREFIX-l<level>-<rows>.lp, as CPLEX LP with columns named
// v<variable> (the numbers of export's files): the model the cut loop
// starts from, for CBC or HiGHS to be measured against it, with a
// comment line listing the columns in the LP's order. A debugging aid,
// like Options.Trace.

// dumpLP writes the relaxation as a CPLEX LP file, whole or not at all.
func (r *relaxation) dumpLP(path string) {
	fleet.WriteFileAtomicWith(path, func(w io.Writer) error {
		r.writeLP(w)
		return nil
	})
}

// writeLP writes the relaxation as CPLEX LP to w (buffered: dumpLP).
func (r *relaxation) writeLP(w io.Writer) {
	fmt.Fprintf(w, "\\ constant %d\n", r.constant)
	// The LP's column order: ties in its pivoting follow it, so a harness
	// reading the file back takes the same path only in this order.
	fmt.Fprint(w, "\\ columns")
	for _, v := range r.vars {
		fmt.Fprintf(w, " v%d", v)
	}
	fmt.Fprint(w, "\nMinimize\n obj:")
	for j, c := range r.c {
		if c != 0 {
			fmt.Fprintf(w, " %+d v%d", c, r.vars[j])
		}
	}
	fmt.Fprintln(w, "\nSubject To")
	for k, row := range r.rows {
		fmt.Fprintf(w, " r%d:", k)
		for t, j := range row.idx {
			fmt.Fprintf(w, " %+d v%d", row.val[t], r.vars[j])
		}
		op := "<="
		switch row.op {
		case encode.GE:
			op = ">="
		case encode.EQ:
			op = "="
		}
		fmt.Fprintf(w, " %s %d\n", op, row.rhs)
	}
	fmt.Fprintln(w, "Bounds")
	for j := range r.vars {
		fmt.Fprintf(w, " %d <= v%d <= %d\n", r.lo[j], r.vars[j], r.hi[j])
	}
	fmt.Fprintln(w, "Binaries")
	for j := range r.vars {
		fmt.Fprintf(w, " v%d\n", r.vars[j])
	}
	fmt.Fprintln(w, "End")
}

// Options.DumpPB = PREFIX (the CLI's POOLSOLVE_DUMP_PB) writes each PB
// worker's job to PREFIX-l<level>-<id>.gob as the worker reads it (its
// stdin), so that the worker's search can be run and timed alone:
// BenchmarkDumpedPBJob, or `POOLSOLVE_PB_WORKER=1 poolsolve < FILE`. A
// debugging aid, like Options.DumpRelax.

// dumpJob writes job to path as a worker reads it, whole or not at all.
func dumpJob(job *pbJob, path string) {
	fleet.WriteFileAtomicWith(path, func(w io.Writer) error {
		return gob.NewEncoder(w).Encode(job.wire())
	})
}
