// Command poolsolve plans where model-serving lanes should run across a
// pool of machines, and proves how good that plan is. See README.md.
package main

import (
	"os"

	"github.com/poolsolve/poolsolve/cli"
)

func main() {
	os.Exit(cli.Run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
