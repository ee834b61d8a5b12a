package lloom

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// Recipe is a recipe v1 document: how to run one or more models with one
// backend on a class of machines.
type Recipe struct {
	File          string             `json:"-"`
	Schema        string             `json:"$schema,omitempty"`
	SchemaVersion int                `json:"schemaVersion,omitempty"`
	ID            string             `json:"id,omitempty"`
	Name          string             `json:"name,omitempty"`
	Version       Version            `json:"version,omitempty"`
	Summary       string             `json:"summary,omitempty"`
	Backend       RecipeBackend      `json:"backend"`
	Requirements  RecipeRequirements `json:"requirements"`
	Models        []RecipeModel      `json:"models,omitempty"`
}

// RecipeBackend names the backend a recipe uses (docker-vllm, sglang, ...).
type RecipeBackend struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name,omitempty"`
	Type string `json:"type,omitempty"`
}

// RecipeRequirements are what a machine (or cluster) must offer.
type RecipeRequirements struct {
	Platforms        []string          `json:"platforms,omitempty"`
	MemoryGb         *float64          `json:"memoryGb,omitempty"`
	DiskGb           *float64          `json:"diskGb,omitempty"`
	Commands         []string          `json:"commands,omitempty"`
	Accelerators     []string          `json:"accelerators,omitempty"`
	Cluster          *RecipeCluster    `json:"cluster,omitempty"`
	ResourceEstimate *ResourceEstimate `json:"resourceEstimate,omitempty"`
	// ComputeArchs and TensorParallel are poolsolve additions.
	ComputeArchs   []string `json:"computeArchs,omitempty"`
	TensorParallel *int     `json:"tensorParallel,omitempty"`
}

// RecipeCluster is a multi-node requirement.
type RecipeCluster struct {
	Nodes    *int   `json:"nodes,omitempty"`
	MinNodes *int   `json:"minNodes,omitempty"`
	MaxNodes *int   `json:"maxNodes,omitempty"`
	Provider string `json:"provider,omitempty"`
	Topology string `json:"topology,omitempty"`
}

// RecipeModel is one model a recipe serves.
type RecipeModel struct {
	Role          string          `json:"role,omitempty"`
	Model         string          `json:"model,omitempty"`
	GatewayModel  string          `json:"gatewayModel,omitempty"`
	UpstreamModel string          `json:"upstreamModel,omitempty"`
	Runtime       string          `json:"runtime,omitempty"`
	BackendConfig string          `json:"backendConfig,omitempty"`
	Settings      *RecipeSettings `json:"settings,omitempty"`
}

// RecipeSettings are the runtime settings a recipe model materialises to.
type RecipeSettings struct {
	Port              *int     `json:"port,omitempty"`
	ContextWindow     *int     `json:"contextWindow,omitempty"`
	MaxOutputTokens   *int     `json:"maxOutputTokens,omitempty"`
	MaxActiveRequests *int     `json:"maxActiveRequests,omitempty"`
	MaxQueuedRequests *int     `json:"maxQueuedRequests,omitempty"`
	MemoryGb          *float64 `json:"memoryGb,omitempty"`
	Priority          *float64 `json:"priority,omitempty"`
	Evictable         *bool    `json:"evictable,omitempty"`
	KeepWarm          *bool    `json:"keepWarm,omitempty"`
	StartupTimeoutMs  *float64 `json:"startupTimeoutMs,omitempty"`
	// MaxSequences is a poolsolve addition.
	MaxSequences *int             `json:"maxSequences,omitempty"`
	Placement    *RecipePlacement `json:"placement,omitempty"`
	Runtime      *RecipeRuntime   `json:"runtime,omitempty"`
}

// RecipePlacement is a recipe's replicated or distributed placement.
type RecipePlacement struct {
	Mode    string         `json:"mode,omitempty"`
	Nodes   []string       `json:"nodes,omitempty"`
	Members []RecipeMember `json:"members,omitempty"`
}

// RecipeMember is one member of a distributed recipe; NodeRole is leader,
// worker, workers or a node id.
type RecipeMember struct {
	Node            string           `json:"node,omitempty"`
	NodeRole        string           `json:"nodeRole,omitempty"`
	Runtime         string           `json:"runtime,omitempty"`
	Role            string           `json:"role,omitempty"`
	Order           *int             `json:"order,omitempty"`
	Resources       *MemoryResources `json:"resources,omitempty"`
	RuntimeSettings *RecipeRuntime   `json:"runtimeSettings,omitempty"`
}

// RecipeRuntime is how a recipe launches its runtime.
type RecipeRuntime struct {
	Command       string     `json:"command,omitempty"`
	Args          []string   `json:"args,omitempty"`
	Env           Env        `json:"env,omitempty"`
	Adapter       string     `json:"adapter,omitempty"`
	Management    string     `json:"management,omitempty"`
	ContainerName string     `json:"containerName,omitempty"`
	HealthURL     string     `json:"healthUrl,omitempty"`
	Bootstrap     *Bootstrap `json:"bootstrap,omitempty"`
}

// ParseRecipe reads a recipe v1 document.
func ParseRecipe(data []byte, file string) (*Recipe, error) {
	r := &Recipe{}
	if _, err := decodeDocument(data, file, r); err != nil {
		return nil, err
	}
	if r.SchemaVersion != 0 && r.SchemaVersion != 1 {
		return nil, &InputError{File: file, Path: jsonpos.Field(jsonpos.Root, "schemaVersion"), Msg: fmt.Sprintf("expected recipe schemaVersion 1, got %d", r.SchemaVersion)}
	}
	r.File = file
	return r, nil
}

// LoadRecipe reads and parses the recipe at path.
func LoadRecipe(path string) (*Recipe, error) {
	data, err := readInput(path)
	if err != nil {
		return nil, err
	}
	return ParseRecipe(data, path)
}

// Validate checks what the planner relies on: an id and models with a
// role and a model; requirements.computeArchs that NormalizeArch accepts;
// tensorParallel and settings.maxSequences of at least 1; memory sizes
// that are not negative; placement modes replicated or distributed.
func (r *Recipe) Validate() error {
	p := &problems{file: r.File}
	if r.ID == "" {
		p.add(jsonpos.Field(jsonpos.Root, "id"), "missing")
	}
	rq := jsonpos.Field(jsonpos.Root, "requirements")
	computeArchs(p, jsonpos.Field(rq, "computeArchs"), r.Requirements.ComputeArchs)
	atLeastOne(p, jsonpos.Field(rq, "tensorParallel"), r.Requirements.TensorParallel)
	nonNegativeGb(p, jsonpos.Field(rq, "memoryGb"), r.Requirements.MemoryGb)
	nonNegativeGb(p, jsonpos.Field(rq, "diskGb"), r.Requirements.DiskGb)
	if c := r.Requirements.Cluster; c != nil {
		cp := jsonpos.Field(rq, "cluster")
		atLeastOne(p, jsonpos.Field(cp, "nodes"), c.Nodes)
		atLeastOne(p, jsonpos.Field(cp, "minNodes"), c.MinNodes)
		atLeastOne(p, jsonpos.Field(cp, "maxNodes"), c.MaxNodes)
		if c.MinNodes != nil && c.MaxNodes != nil && *c.MinNodes > *c.MaxNodes {
			p.add(cp, "minNodes %d is more than maxNodes %d", *c.MinNodes, *c.MaxNodes)
		}
	}
	if len(r.Models) == 0 {
		p.add(jsonpos.Field(jsonpos.Root, "models"), "a recipe needs at least one model")
	}
	for i, m := range r.Models {
		mp := jsonpos.Index(jsonpos.Field(jsonpos.Root, "models"), i)
		if m.Role == "" {
			p.add(jsonpos.Field(mp, "role"), "missing")
		}
		if m.Model == "" {
			p.add(jsonpos.Field(mp, "model"), "missing")
		}
		s := m.Settings
		if s == nil {
			continue
		}
		sp := jsonpos.Field(mp, "settings")
		atLeastOne(p, jsonpos.Field(sp, "maxSequences"), s.MaxSequences)
		atLeastOne(p, jsonpos.Field(sp, "maxActiveRequests"), s.MaxActiveRequests)
		nonNegativeGb(p, jsonpos.Field(sp, "memoryGb"), s.MemoryGb)
		if pl := s.Placement; pl != nil {
			pp := jsonpos.Field(sp, "placement")
			if !oneOf(pl.Mode, "", ModeReplicated, ModeDistributed) {
				p.add(jsonpos.Field(pp, "mode"), "expected replicated or distributed, got %q", pl.Mode)
			}
			for j, mem := range pl.Members {
				nonNegativeMember(p, jsonpos.Index(jsonpos.Field(pp, "members"), j), mem.Resources)
			}
		}
	}
	return p.err()
}

// Launch is what a runtime's launch command says about its shape. Zero
// means "not stated".
type Launch struct {
	ComputeArchs   []string
	TensorParallel int
	MaxSequences   int
	ContextWindow  int
}

// InferFromLaunch reads a launch command: args (the program's arguments,
// e.g. a Docker bootstrap command), env, and Docker createArgs, whose
// `-e K=V` / `--env K=V` entries are read as environment (env wins).
//
//   - ComputeArchs from CUTE_DSL_ARCH and TORCH_CUDA_ARCH_LIST (lists
//     separated by semicolons, spaces or commas), normalised by
//     NormalizeArch; entries it cannot read are dropped.
//   - TensorParallel from --tensor-parallel-size, -tp, --tp or --tp-size.
//   - MaxSequences from --max-num-seqs, else MAX_NUM_SEQS.
//   - ContextWindow from --max-model-len, else MAX_MODEL_LEN.
//
// Flags may be written "--flag N" or "--flag=N"; the last one wins.
func InferFromLaunch(args []string, env map[string]string, createArgs []string) Launch {
	vars := map[string]string{}
	for i := 0; i < len(createArgs); i++ {
		a := createArgs[i]
		var kv string
		switch {
		case a == "-e" || a == "--env":
			if i+1 < len(createArgs) {
				i++
				kv = createArgs[i]
			}
		case strings.HasPrefix(a, "--env="):
			kv = strings.TrimPrefix(a, "--env=")
		case strings.HasPrefix(a, "-e") && len(a) > 2 && !strings.HasPrefix(a, "--"):
			kv = strings.TrimPrefix(strings.TrimPrefix(a, "-e"), "=")
		default:
			continue
		}
		if k, v, ok := strings.Cut(kv, "="); ok {
			vars[k] = v
		}
	}
	for k, v := range env {
		vars[k] = v
	}

	var l Launch
	for _, name := range []string{"CUTE_DSL_ARCH", "TORCH_CUDA_ARCH_LIST"} {
		for _, a := range strings.FieldsFunc(vars[name], func(r rune) bool { return r == ';' || r == ',' || r == ' ' || r == '\t' }) {
			if n := NormalizeArch(a); n != "" && !slices.Contains(l.ComputeArchs, n) {
				l.ComputeArchs = append(l.ComputeArchs, n)
			}
		}
	}
	l.MaxSequences = positiveInt(vars["MAX_NUM_SEQS"])
	l.ContextWindow = positiveInt(vars["MAX_MODEL_LEN"])
	for i := 0; i < len(args); i++ {
		name, val, inline := strings.Cut(args[i], "=")
		if !inline && i+1 < len(args) {
			val = args[i+1]
		}
		var dst *int
		switch name {
		case "--tensor-parallel-size", "-tp", "--tp", "--tp-size":
			dst = &l.TensorParallel
		case "--max-num-seqs":
			dst = &l.MaxSequences
		case "--max-model-len":
			dst = &l.ContextWindow
		default:
			continue
		}
		if n := positiveInt(val); n > 0 {
			*dst = n
			if !inline {
				i++
			}
		}
	}
	return l
}

func positiveInt(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 1 {
		return 0
	}
	return n
}

// Launch gathers what a recipe model's launch says (InferFromLaunch over
// settings.runtime and every distributed member's runtimeSettings).
// Explicit settings win: maxSequences and contextWindow. A distributed
// placement whose launch states no tensor-parallel size gets one rank per
// member, as the TP2 Spark recipes do. requirements.computeArchs and
// requirements.tensorParallel are the recipe's and are not merged here.
func (m RecipeModel) Launch() Launch {
	var l Launch
	merge := func(rt *RecipeRuntime) {
		if rt == nil {
			return
		}
		var args, create []string
		args = append(args, rt.Args...)
		if rt.Bootstrap != nil {
			args = append(args, rt.Bootstrap.Command...)
			create = rt.Bootstrap.CreateArgs
		}
		got := InferFromLaunch(args, rt.Env, create)
		for _, a := range got.ComputeArchs {
			if !slices.Contains(l.ComputeArchs, a) {
				l.ComputeArchs = append(l.ComputeArchs, a)
			}
		}
		l.TensorParallel = max(l.TensorParallel, got.TensorParallel)
		l.MaxSequences = max(l.MaxSequences, got.MaxSequences)
		l.ContextWindow = max(l.ContextWindow, got.ContextWindow)
	}
	s := m.Settings
	if s == nil {
		return l
	}
	merge(s.Runtime)
	if s.Placement != nil {
		for _, mem := range s.Placement.Members {
			merge(mem.RuntimeSettings)
		}
		if s.Placement.Mode == ModeDistributed && l.TensorParallel == 0 && len(s.Placement.Members) > 0 {
			l.TensorParallel = len(s.Placement.Members)
		}
	}
	if s.MaxSequences != nil && *s.MaxSequences > 0 {
		l.MaxSequences = *s.MaxSequences
	}
	if s.ContextWindow != nil && *s.ContextWindow > 0 {
		l.ContextWindow = *s.ContextWindow
	}
	return l
}

var (
	// sm_121a, sm121, compute_90, sm_100f: an explicit SM number.
	smArchRE = regexp.MustCompile(`^(?:sm|compute)_?([1-9][0-9]{1,2})[af]?$`)
	// 12.1, 12.1a, 9.0, 8.6+ptx: a compute capability major.minor.
	ccArchRE = regexp.MustCompile(`^([1-9][0-9]?)\.([0-9])[af]?(?:\+ptx)?$`)
	// AMD targets such as gfx942 and gfx90a are kept as they are.
	gfxArchRE = regexp.MustCompile(`^gfx[0-9]{2,3}[0-9a-f]?$`)
)

// NormalizeArch turns a compute-architecture spelling into poolsolve's
// canonical form, or returns "" when it cannot read it.
//
// NVIDIA spellings become "sm_<major><minor>": sm_121a, sm121, 12.1a and
// 12.1 all give sm_121, and 9.0 gives sm_90 (the a/f feature suffixes and
// +PTX are dropped). apple-metal and AMD gfx targets are kept, lower-cased.
func NormalizeArch(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	if m := smArchRE.FindStringSubmatch(s); m != nil {
		return "sm_" + m[1]
	}
	if m := ccArchRE.FindStringSubmatch(s); m != nil {
		return "sm_" + m[1] + m[2]
	}
	if s == "apple-metal" || gfxArchRE.MatchString(s) {
		return s
	}
	return ""
}
