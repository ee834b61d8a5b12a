package export_test

import (
	"testing"

	"github.com/poolsolve/poolsolve/encode"
	"github.com/poolsolve/poolsolve/export"
	"github.com/poolsolve/poolsolve/internal/pooltest"
)

// Derived variables are described from the encoder's structured fields;
// the golden files cover every kind but available, which needs a route
// pin on a model that two variants serve.
func TestAvailableVariableIsDescribed(t *testing.T) {
	p := pooltest.New(
		pooltest.Node("n1", 64), pooltest.Node("n2", 64),
		pooltest.LocalModel("m"),
		pooltest.Variant("a1", 8, pooltest.Serves("m"), pooltest.On("n1")),
		pooltest.Variant("a2", 8, pooltest.Serves("m"), pooltest.On("n2")),
		pooltest.External("cloud", 1500),
		pooltest.Alias("chat", 10, "m", "cloud"),
		pooltest.PinRoute("chat", "m", "cloud"),
	)
	in := mustNew(t, p, export.Options{})
	n := 0
	for _, v := range in.Vars() {
		if v.Meaning != encode.MeanAvailable {
			continue
		}
		n++
		if want := "model m has a placed lane (for route pins)"; v.About != want {
			t.Errorf("%s: About = %q, want %q", v.Name, v.About, want)
		}
	}
	if n != 1 {
		t.Errorf("%d available variables, want 1", n)
	}
}
