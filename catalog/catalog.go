package catalog

import (
	"fmt"
	"sort"
	"strings"

	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
)

// Options are the planning choices that do not live in the input files.
type Options struct {
	// ConsiderInstalls adds bundled recipes as variants free to go to any
	// node or linked clique that meets their requirements.
	ConsiderInstalls bool
	// Cordons are nodes that take no lanes (--cordon).
	Cordons []string
	// Pins are --pin flags: RUNTIME=NODE[,NODE].
	Pins []string
	// Profile, if set, turns a fleet profile's routes and residency into
	// pins (--profile).
	Profile string
	// Unreachable are nodes a gateway could not reach, with the reason.
	Unreachable map[string]string
	// Routing is how the LLooM release that runs the fleet routes an
	// alias; the zero value is the config's own (lloom.ConfigRouting).
	Routing lloom.Routing
}

// Catalog is the pool plus what the operator should know about how it was
// built.
type Catalog struct {
	Pool *model.Pool
	// Notes are facts worth a line in the output: fallbacks taken, figures
	// assumed, pins dropped because their node is gone.
	Notes []string
}

// Build turns fleet inputs into a pool. Problems with the inputs (names
// that do not resolve, bad pins) come back as lloom.Problems, all at once.
func Build(in *fleet.Inputs, opts Options) (*Catalog, error) {
	if in == nil || in.Config == nil {
		return nil, &lloom.InputError{Path: "$", Msg: "no LLooM config given (--config or --fleet)"}
	}
	b := &builder{in: in, opts: opts, cfg: cloneConfig(in.Config)}
	lloom.MaterializeFederated(b.cfg)
	b.expandAlias = b.cfg.AliasExpander()
	b.policy = in.Policy
	if b.policy == nil {
		b.policy = fleet.DefaultPolicy()
	}
	b.pool = &model.Pool{Settings: b.policy.Settings()}
	if b.opts.Routing.Reading == "" {
		b.opts.Routing = lloom.ConfigRouting(in.Config)
	}
	b.pool.Routing = &model.Routing{Reading: string(b.opts.Routing.Reading), Release: b.opts.Routing.Release, Basis: b.opts.Routing.Basis}
	b.current = b.cfg.CurrentNodeID("")

	b.buildNodes()
	b.buildLinks()
	b.buildVariants()
	b.deviceMisfits()
	b.linkRunningLanes()
	b.finishLinks()
	if opts.ConsiderInstalls {
		// Recipes go on linked sets, so after every link is known.
		b.addRecipeVariants()
	}
	b.buildModels()
	b.buildAliases()
	b.buildDemand()
	b.buildPins()
	b.buildCurrent()
	b.pool.Sort()
	b.noteUnlinked()
	if len(b.problems) > 0 {
		return nil, b.problems
	}
	return &Catalog{Pool: b.pool, Notes: b.notes}, nil
}

type builder struct {
	in   *fleet.Inputs
	opts Options
	cfg  *lloom.Config
	// expandAlias is cfg.ExpandAlias, the config's model ids looked up
	// once (256x1000's config has 1,000 models and as many aliases).
	expandAlias func(id string) ([]string, error)
	policy      *fleet.Policy
	current     string
	docs        *[]metricsDoc // metricsDocs, once built
	// links are the node pairs shown linked, with the first evidence.
	links map[[2]string]string
	// graph is the pool's link graph for recipes' placements (linkGraph).
	graph *linkGraph
	// hw lists each node's memory domains as LLooM describes them (kind,
	// backend, device ids), in the order the machine lists them: the
	// order LLooM matches requirements in.
	hw map[string][]lloom.MemoryDomain

	pool *model.Pool
	// primary is each node's primary domain, for primaryOf nodes.
	primary   map[string]string
	primaryOf int
	notes     []string
	problems  lloom.Problems

	// variantOf maps a runtime id to its variant id (members of a
	// distributed group map to the group).
	variantOf map[string]string
	// runtimesOf inverts variantOf, each list sorted; nil until asked,
	// and again after variantOf changes.
	runtimesOf map[string][]string
	// served maps a model id to the variants that serve it.
	served map[string][]string
	// forwarded maps a runtime id to the federated models that reach it
	// through a peer's gateway, with that peer.
	forwarded map[string]map[string]string
}

func (b *builder) note(format string, args ...any) {
	b.notes = append(b.notes, fmt.Sprintf(format, args...))
}

func (b *builder) problem(file, path, format string, args ...any) {
	b.problems = append(b.problems, &lloom.InputError{File: file, Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (b *builder) configFile() string {
	if b.cfg.File != "" {
		return b.cfg.File
	}
	return "config.json"
}

// configProblem is a problem at path, written from the config's root.
func (b *builder) configProblem(path, format string, args ...any) {
	file, at := b.docAt("config", b.configFile(), path)
	b.problem(file, at, format, args...)
}

// docAt is where path, written from the root of the input document key
// ("config", "profiles/NAME"), is: in its own file, or in a bundle under
// the document's place ($.config, $.profiles["NAME"]).
func (b *builder) docAt(key, file, path string) (string, string) {
	if src, ok := b.in.Sources[key]; ok {
		if src.File != "" {
			file = src.File
		}
		if src.Path != "" {
			path = src.Path + strings.TrimPrefix(path, "$")
		}
	}
	return file, path
}

// cloneConfig copies what MaterializeFederated rewrites, so the caller's
// inputs stay as read.
func cloneConfig(c *lloom.Config) *lloom.Config {
	cp := *c
	cp.Models = append([]lloom.Model(nil), c.Models...)
	cp.Backends = make(map[string]lloom.Backend, len(c.Backends))
	for k, v := range c.Backends {
		cp.Backends[k] = v
	}
	return &cp
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func uniq(ss []string) []string {
	out := make([]string, 0, len(ss))
	seen := map[string]bool{}
	for _, s := range ss {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func sortedUniq(ss []string) []string {
	out := uniq(ss)
	sort.Strings(out)
	return out
}

func joinNodes(ns []string) string { return strings.Join(ns, "+") }

// noteUnlinked warns about fixed multi-node lanes whose nodes no observed
// link joins: tensor parallelism needs a linked clique, so the planner
// cannot keep them.
func (b *builder) noteUnlinked() {
	ix := b.pool.Index()
	for _, v := range b.pool.Variants {
		if v.Kind == model.Recipe || len(v.Placements) != 1 {
			continue
		}
		if nodes := v.Placements[0].Nodes; len(nodes) > 1 && !ix.Clique(nodes) {
			b.note("%s spans %s, but nothing shows them all linked (missing: %s): a tensor-parallel lane needs a linked clique, so it cannot be planned there", v.ID, joinNodes(nodes), b.missingEvidence(nodes))
		}
	}
}
