package main

import (
	"os"
	"time"

	"github.com/poolsolve/poolsolve/cli"
	"github.com/poolsolve/poolsolve/internal/gctune"
	"github.com/poolsolve/poolsolve/solver/pb"
)

// start is taken as the package initialises, before main runs: a
// --time-limit counts from here.
var start = time.Now()

func main() {
	// Small heaps are collected rarely, here and in the PB workers.
	gctune.Start()
	// A PB worker is this executable re-run by the solver: it serves its
	// job and exits here, before the CLI reads anything.
	pb.ServeIfWorker()
	os.Exit(cli.RunSince(start, os.Args, os.Stdin, os.Stdout, os.Stderr))
}
