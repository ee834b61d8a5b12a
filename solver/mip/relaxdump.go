package mip

import (
	"fmt"
	"io"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/fleet"
)

// DumpLP writes the relaxation as a CPLEX LP file, whole or not at all.
func (r *Relaxation) DumpLP(path string) {
	fleet.WriteFileAtomicWith(path, func(w io.Writer) error {
		r.WriteLP(w)
		return nil
	})
}

// WriteLP writes the relaxation as CPLEX LP to w (buffered: dumpLP).
func (r *Relaxation) WriteLP(w io.Writer) {
	fmt.Fprintf(w, "\\ constant %d\n", r.Constant)
	// The LP's column order: ties in its pivoting follow it, so a harness
	// reading the file back takes the same path only in this order.
	fmt.Fprint(w, "\\ columns")
	for _, v := range r.Vars {
		fmt.Fprintf(w, " v%d", v)
	}
	fmt.Fprint(w, "\nMinimize\n obj:")
	for j, c := range r.C {
		if c != 0 {
			fmt.Fprintf(w, " %+d v%d", c, r.Vars[j])
		}
	}
	fmt.Fprintln(w, "\nSubject To")
	for k, row := range r.Rows {
		fmt.Fprintf(w, " r%d:", k)
		for t, j := range row.Idx {
			fmt.Fprintf(w, " %+d v%d", row.Val[t], r.Vars[j])
		}
		op := "<="
		switch row.Op {
		case encode.GE:
			op = ">="
		case encode.EQ:
			op = "="
		}
		fmt.Fprintf(w, " %s %d\n", op, row.Rhs)
	}
	fmt.Fprintln(w, "Bounds")
	for j := range r.Vars {
		fmt.Fprintf(w, " %d <= v%d <= %d\n", r.Lo[j], r.Vars[j], r.Hi[j])
	}
	fmt.Fprintln(w, "Binaries")
	for j := range r.Vars {
		fmt.Fprintf(w, " v%d\n", r.Vars[j])
	}
	fmt.Fprintln(w, "End")
}

// Options.DumpPB = PREFIX (the CLI's POOLSOLVE_DUMP_PB) writes each PB
// worker's job to PREFIX-l<level>-<id>.pbjob as the worker reads it (its
// stdin), so that the worker's search can be run and timed alone:
// BenchmarkDumpedPBJob, or `POOLSOLVE_PB_WORKER=1 poolsolve < FILE`. A
// debugging aid, like Options.DumpRelax.
