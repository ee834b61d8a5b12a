// Package cli is poolsolve's command line: it turns flags into inputs for
// packages fleet, catalog, solver and plan, renders their answers, and maps
// outcomes to exit codes (see ExitOK and the constants next to it).
//
// It holds no planning logic of its own; every command is a thin Action
// that reads inputs, calls library code, and writes the result.
package cli
