// Package scripttest runs the script tests of cli/testdata/script: every
// example of every --help and of the README, run as written against the
// real binary (the test binary, run as poolsolve), with its exit code and
// what it must print. It holds tests only; it is its own package so that
// the scripts run next to package cli's tests, not after them.
package scripttest
