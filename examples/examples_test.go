package examples_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/examples"
	"github.com/poolsolve/poolsolve/fleet"
)

func TestEveryBundleHereIsEmbedded(t *testing.T) {
	files, err := filepath.Glob("*.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := examples.Names(); !reflect.DeepEqual(got, files) {
		t.Errorf("Names() = %v, want the bundles in the folder %v", got, files)
	}
}

func TestEveryExampleSaysWhatThePlannerMustConclude(t *testing.T) {
	for _, name := range examples.Names() {
		data, err := examples.Bundles.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		disk, err := os.ReadFile(name)
		if err != nil || string(disk) != string(data) {
			t.Errorf("%s: embedded copy differs from the file (%v)", name, err)
		}
		in, err := fleet.ParseBundle(data, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !strings.Contains(in.Description, "must") {
			t.Errorf("%s: the description does not say what the planner must conclude: %q", name, in.Description)
		}
		if p := in.Validate(); p != nil {
			t.Errorf("%s: Validate() =\n%v", name, p)
		}
	}
}
