package pb

import (
	"os"
	"testing"
)

// TestMain serves as a PB worker when the tests re-run this binary as
// one, as a program's main does.
func TestMain(m *testing.M) {
	ServeIfWorker()
	os.Exit(m.Run())
}
