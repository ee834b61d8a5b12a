package answer_test

import (
	"os"
	"testing"

	"github.com/poolsolve/poolsolve/solver/pb"
)

// TestMain lets this test binary serve as the solver's PB worker, as
// poolsolve's main does.
func TestMain(m *testing.M) {
	pb.ServeIfWorker()
	os.Exit(m.Run())
}
