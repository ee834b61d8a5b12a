package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
	"github.com/poolsolve/poolsolve/lloom"
)

// Sources names the separate files of one fleet, the alternative to a
// bundle. Only Config is required. Errors name each file as given here.
type Sources struct {
	// Config is LLooM's config.json.
	Config string
	// ProfilesDir holds fleet profiles as <name>.json (LLooM's
	// <configDir>/profiles); every .json file in it is read.
	ProfilesDir string
	// Policy is pool.toml.
	Policy string
	// DemandHistory is poolsolve's demand history file; one that does not
	// exist yet reads as empty.
	DemandHistory string
	// Metrics is a saved GET /gateway/metrics answer or LLooM's metrics
	// history file.
	Metrics string

	// Per-node reports by node id: saved GET /gateway/node answers (or
	// bare node objects), machine profiles, and inventories.
	Status         map[string]string
	MachineProfile map[string]string
	Inventory      map[string]string
	// StatusFiles and InventoryFiles are the same reports as lists; the
	// node comes from the document (node.id, nodeId).
	StatusFiles    []string
	InventoryFiles []string
	// Cluster is a saved GET /gateway/cluster answer: a status for every
	// node in it.
	Cluster string

	Benchmarks []string
	Recipes    []string
}

// Load reads a fleet from separate files. It gives the same Inputs as
// LoadBundle on a bundle holding the same documents, apart from Sources and
// the File fields lloom records.
func Load(src Sources) (*Inputs, error) {
	if src.Config == "" {
		return nil, errors.New("fleet: no LLooM config.json given")
	}
	in := &Inputs{}
	data, err := readFile(src.Config)
	if err != nil {
		return nil, err
	}
	if err := readConfig(in, data, src.Config); err != nil {
		return nil, err
	}
	in.setSource("config", Source{File: src.Config})

	if src.ProfilesDir != "" {
		if err := in.loadProfiles(src.ProfilesDir); err != nil {
			return nil, err
		}
	}

	in.Policy = DefaultPolicy()
	if src.Policy != "" {
		if in.Policy, err = LoadPolicy(src.Policy); err != nil {
			return nil, err
		}
		in.setSource("policy", Source{File: src.Policy})
	}

	if err := in.loadNodes(src); err != nil {
		return nil, err
	}

	if src.DemandHistory != "" {
		if in.DemandHistory, err = LoadDemandHistory(src.DemandHistory); err != nil {
			return nil, err
		}
		in.setSource("demandHistory", Source{File: src.DemandHistory})
	}
	if src.Metrics != "" {
		data, err := readFile(src.Metrics)
		if err != nil {
			return nil, err
		}
		if in.Metrics, in.raw.metrics, err = readMetrics(data, src.Metrics); err != nil {
			return nil, err
		}
		in.setSource("metrics", Source{File: src.Metrics})
	}
	for i, f := range src.Benchmarks {
		data, err := readFile(f)
		if err != nil {
			return nil, err
		}
		s, raw, err := readBenchmarks(data, f)
		if err != nil {
			return nil, err
		}
		in.Benchmarks, in.raw.benchmarks = append(in.Benchmarks, s), append(in.raw.benchmarks, raw)
		in.setSource(fmt.Sprintf("benchmarks[%d]", i), Source{File: f})
	}
	for i, f := range src.Recipes {
		data, err := readFile(f)
		if err != nil {
			return nil, err
		}
		r, raw, err := readRecipe(data, f)
		if err != nil {
			return nil, err
		}
		in.Recipes, in.raw.recipes = append(in.Recipes, r), append(in.raw.recipes, raw)
		in.setSource(fmt.Sprintf("recipes[%d]", i), Source{File: f})
	}
	return in, nil
}

// readFile reads an input file, less a byte order mark before the value.
func readFile(path string) ([]byte, error) { return lloom.ReadInput(path) }

func (in *Inputs) loadProfiles(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries { // ReadDir sorts by name
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		data, err := lloom.ReadProfileInput(path)
		if err != nil {
			return err
		}
		p, raw, err := readProfile(data, path, name)
		if err != nil {
			return err
		}
		if in.Profiles == nil {
			in.Profiles = map[string]*lloom.Profile{}
			in.raw.profiles = map[string]json.RawMessage{}
		}
		in.Profiles[name], in.raw.profiles[name] = p, raw
		in.setSource("profiles/"+name, Source{File: path})
	}
	return nil
}

// loadNodes reads the per-node reports: maps first (in node order), then
// lists, then the cluster answer. A node report given twice is an error.
func (in *Inputs) loadNodes(src Sources) error {
	type job struct {
		part, node, file string
	}
	var jobs []job
	for _, part := range []struct {
		name  string
		files map[string]string
	}{{"profile", src.MachineProfile}, {"inventory", src.Inventory}, {"status", src.Status}} {
		nodes := slices.Sorted(maps.Keys(part.files))
		for _, n := range nodes {
			if n == "" {
				return fmt.Errorf("fleet: a %s file (%s) is given for an empty node id", part.name, part.files[n])
			}
			jobs = append(jobs, job{part.name, n, part.files[n]})
		}
	}
	for _, f := range src.InventoryFiles {
		jobs = append(jobs, job{"inventory", "", f})
	}
	for _, f := range src.StatusFiles {
		jobs = append(jobs, job{"status", "", f})
	}
	for _, j := range jobs {
		data, err := readFile(j.file)
		if err != nil {
			return err
		}
		var doc any
		var raw json.RawMessage
		node := j.node
		switch j.part {
		case "profile":
			doc, raw, err = readMachineProfile(data, j.file)
		case "inventory":
			inv, r, e := readInventory(data, j.file, node)
			if e == nil && node == "" {
				node = inv.NodeID
			}
			doc, raw, err = inv, r, e
		default:
			st, r, e := readStatus(data, j.file, node)
			if e == nil && node == "" {
				node = st.ID
			}
			doc, raw, err = st, r, e
		}
		if err != nil {
			return err
		}
		if err := in.addNodePart(node, j.part, doc, raw, Source{File: j.file}); err != nil {
			return err
		}
	}
	if src.Cluster != "" {
		return in.loadCluster(src.Cluster)
	}
	return nil
}

// loadCluster splits a /gateway/cluster answer into node statuses.
func (in *Inputs) loadCluster(file string) error {
	data, err := readFile(file)
	if err != nil {
		return err
	}
	if _, err := lloom.ParseClusterStatus(data, file); err != nil {
		return err
	}
	doc, err := parseShallow(data, file)
	if err != nil {
		return err
	}
	at, cluster := "$", doc
	if c := doc.Get("cluster"); c != nil && c.Kind == jsonpos.Object {
		at, cluster = "$.cluster", c
	}
	nodes := cluster.Get("nodes")
	if nodes == nil || nodes.Kind != jsonpos.Object {
		return &lloom.InputError{File: file, Path: at, Msg: "expected nodes"}
	}
	t := &tree{style: jsonPaths}
	members := nodes.Distinct()
	sort.SliceStable(members, func(i, j int) bool { return members[i].Key < members[j].Key })
	for _, m := range members {
		nat := t.key(at+".nodes", m.Key)
		sub := m.Value.Bytes(data)
		st, raw, err := readStatus(sub, file, m.Key)
		if err != nil {
			return rebase(err, file, nat, data, m.Value.Start, sub)
		}
		if err := in.addNodePart(m.Key, "status", st, raw, Source{File: file, Path: nat}); err != nil {
			return err
		}
	}
	return nil
}
