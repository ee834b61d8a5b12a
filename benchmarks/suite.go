package benchmarks

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/poolsolve/poolsolve/examples"
)

// SuiteSchema is the schema of a suite manifest (suite.json).
const SuiteSchema = "poolsolve.bench-suite/v1"

// Suite is a suite manifest: the instances of a benchmark run, each a
// committed bundle, an example fleet, or a spec regenerated at run time.
type Suite struct {
	Schema    string       `json:"schema"`
	Instances []SuiteEntry `json:"instances"`
}

// SuiteEntry is one instance of a suite. File and Spec together mean the
// file is Generate(Spec), which a test keeps true.
type SuiteEntry struct {
	Name    string `json:"name"`
	File    string `json:"file,omitempty"`    // a bundle next to suite.json
	Example string `json:"example,omitempty"` // an example bundle (examples/)
	Spec    *Spec  `json:"spec,omitempty"`
	// Note says why the instance is in the suite.
	Note string `json:"note,omitempty"`
}

// fixtures is the committed suite: small bundles and the manifest.
//
//go:embed fixtures/*.json
var fixtures embed.FS

// DefaultSuite is the committed suite (benchmarks/fixtures/suite.json),
// with its large instances regenerated from their specs.
func DefaultSuite() ([]Instance, error) {
	sub, err := fs.Sub(fixtures, "fixtures")
	if err != nil {
		return nil, err
	}
	return loadSuite(sub, "benchmarks/fixtures")
}

// LoadSuite reads a suite from dir: its suite.json when there is one,
// else every *.json bundle in it, by name.
func LoadSuite(dir string) ([]Instance, error) {
	return loadSuite(os.DirFS(dir), dir)
}

func loadSuite(fsys fs.FS, dir string) ([]Instance, error) {
	data, err := fs.ReadFile(fsys, "suite.json")
	if err != nil {
		if !os.IsNotExist(err) && !strings.Contains(err.Error(), "not exist") {
			return nil, err
		}
		return bundlesIn(fsys, dir)
	}
	var s Suite
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, "suite.json"), err)
	}
	if s.Schema != SuiteSchema {
		return nil, fmt.Errorf("%s: schema %q, want %q", filepath.Join(dir, "suite.json"), s.Schema, SuiteSchema)
	}
	var out []Instance
	for i, e := range s.Instances {
		in, err := e.instance(fsys, dir)
		if err != nil {
			return nil, fmt.Errorf("%s: instances[%d] (%s): %w", filepath.Join(dir, "suite.json"), i, e.Name, err)
		}
		out = append(out, in)
	}
	if len(out) == 0 {
		return nil, ErrNoInstances
	}
	return out, nil
}

func (e SuiteEntry) instance(fsys fs.FS, dir string) (Instance, error) {
	in := Instance{Name: e.Name, Spec: e.Spec}
	var err error
	switch {
	case e.File != "":
		in.Source = path.Join(dir, e.File)
		in.Bundle, err = fs.ReadFile(fsys, e.File)
	case e.Example != "":
		in.Source = "examples/" + e.Example
		in.Bundle, err = fs.ReadFile(examples.Bundles, e.Example)
	case e.Spec != nil:
		in.Source = "generated"
		in.Bundle, err = Generate(*e.Spec)
	default:
		err = fmt.Errorf("names no file, example or spec")
	}
	if in.Name == "" {
		err = fmt.Errorf("has no name")
	}
	return in, err
}

func bundlesIn(fsys fs.FS, dir string) ([]Instance, error) {
	names, err := fs.Glob(fsys, "*.json")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	var out []Instance
	for _, n := range names {
		data, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		out = append(out, Instance{Name: strings.TrimSuffix(n, ".json"), Source: path.Join(dir, n), Bundle: data})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no suite.json and no *.json bundle", dir)
	}
	return out, nil
}

// SizeInstances generates one instance per size, from each size's default
// spec and the seed.
// SeedInstances regenerates every instance that has a spec once per
// seed, named "NAME sSEED" and grouped under NAME, so that a run measures
// each size on fleets nobody tuned on; instances without a spec (the
// examples) stay once.
func SeedInstances(insts []Instance, seeds []uint64) ([]Instance, error) {
	var out []Instance
	for _, in := range insts {
		if in.Spec == nil {
			out = append(out, in)
			continue
		}
		for _, s := range seeds {
			sp := *in.Spec
			sp.Seed = s
			data, err := Generate(sp)
			if err != nil {
				return nil, fmt.Errorf("%s, seed %d: %w", in.Name, s, err)
			}
			out = append(out, Instance{Name: fmt.Sprintf("%s s%d", in.Name, s), Source: "generated", Spec: &sp, Bundle: data, Group: in.Name})
		}
	}
	return out, nil
}

func SizeInstances(sizes []Size, seed uint64) ([]Instance, error) {
	var out []Instance
	for _, s := range sizes {
		sp := s.Spec(seed)
		data, err := Generate(sp)
		if err != nil {
			return nil, err
		}
		out = append(out, Instance{Name: sp.Name(), Source: "generated", Spec: &sp, Bundle: data})
	}
	return out, nil
}
