package deepcopy

import (
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	Name string
	Tags []string
}

type outer struct {
	ID     string
	Ptr    *inner
	Items  []inner
	ByName map[string]*inner
	Any    any
	Fixed  [2]string
	hidden string
}

func sample() outer {
	return outer{
		ID: "a", Ptr: &inner{Name: "p", Tags: []string{"t"}},
		Items:  []inner{{Name: "i"}},
		ByName: map[string]*inner{"k": {Name: "m"}},
		Any:    "s", Fixed: [2]string{"x", "y"}, hidden: "h",
	}
}

func TestACopySharesNothingWithItsSource(t *testing.T) {
	src := sample()
	cp := Copy(src)
	if !reflect.DeepEqual(cp, src) {
		t.Fatalf("copy %+v differs from %+v", cp, src)
	}
	cp.Ptr.Tags[0] = "changed"
	cp.Items[0].Name = "changed"
	cp.ByName["k"].Name = "changed"
	if !reflect.DeepEqual(src, sample()) {
		t.Errorf("changing the copy changed the source: %+v", src)
	}
}

func TestMapRewritesEveryStringButKeysAndHiddenFields(t *testing.T) {
	got := Map(sample(), strings.ToUpper)
	want := outer{
		ID: "A", Ptr: &inner{Name: "P", Tags: []string{"T"}},
		Items:  []inner{{Name: "I"}},
		ByName: map[string]*inner{"k": {Name: "M"}},
		Any:    "S", Fixed: [2]string{"X", "Y"}, hidden: "h",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Map = %+v\nwant %+v", got, want)
	}
}

func TestNilsStayNil(t *testing.T) {
	var o outer
	if got := Map(o, strings.ToUpper); !reflect.DeepEqual(got, o) {
		t.Errorf("Map of the zero value = %+v", got)
	}
}
