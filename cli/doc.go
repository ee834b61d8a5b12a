// Package cli is poolsolve's command line: it turns flags into inputs for
// the library packages (fleet or gateway, then catalog, solver and plan;
// answer, export, eval, benchmarks, inventory and agent for the other
// commands), renders their answers, and maps outcomes to exit codes (see
// ExitOK and the constants next to it). It is the only package that
// imports them all, and only main and tests import it.
//
// It holds no planning logic of its own; every command is a thin Action
// that reads inputs, calls library code, and writes the result.
package cli
