// Package golden compares what a test produced with a file under the
// test's testdata directory, and rewrites the file instead when the
// environment says UPDATE_GOLDEN=1. Only tests import it.
//
// It does not decide what is golden: callers render their output
// deterministically first. A mismatch shows the first lines that differ,
// so a reviewer sees the change without opening the files.
package golden
