package main

import (
	"os"
	"time"

	"github.com/poolsolve/poolsolve/cli"
)

// start is taken as the package initialises, before main runs: a
// --time-limit counts from here.
var start = time.Now()

func main() {
	os.Exit(cli.RunSince(start, os.Args, os.Stdin, os.Stdout, os.Stderr))
}
