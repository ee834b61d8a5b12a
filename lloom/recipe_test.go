package lloom

import (
	"testing"
)

func TestNormalizeArchCanonicalisesSpellings(t *testing.T) {
	tests := []struct{ in, want string }{
		{"sm_121a", "sm_121"},
		{"sm_121", "sm_121"},
		{"sm121", "sm_121"},
		{"12.1a", "sm_121"},
		{"12.1", "sm_121"},
		{"SM_121A", "sm_121"},
		{" 12.1a ", "sm_121"},
		{"9.0", "sm_90"},
		{"9.0a", "sm_90"},
		{"sm_90a", "sm_90"},
		{"compute_90", "sm_90"},
		{"8.6+PTX", "sm_86"},
		{"10.0", "sm_100"},
		{"sm_100f", "sm_100"},
		{"apple-metal", "apple-metal"},
		{"Apple-Metal", "apple-metal"},
		{"gfx942", "gfx942"},
		{"gfx90a", "gfx90a"},
		{"", ""},
		{"blackwell", ""},
		{"121", ""},
		{"sm_1", ""},
		{"12.10", ""},
		{"metal", ""},
	}
	for _, tc := range tests {
		t.Run("NormalizeArch("+tc.in+")", func(t *testing.T) {
			check(t, "NormalizeArch("+tc.in+")", NormalizeArch(tc.in), tc.want)
		})
	}
}

func TestInferFromLaunchReadsFlagsAndEnvironment(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		create []string
		want   Launch
	}{
		{
			name:   "a vLLM bootstrap with CUTE_DSL_ARCH in createArgs",
			args:   []string{"model", "--tensor-parallel-size", "1", "--max-num-seqs", "4", "--max-model-len", "262144"},
			create: []string{"--gpus", "all", "-e", "CUTE_DSL_ARCH=sm_121a"},
			want:   Launch{ComputeArchs: []string{"sm_121"}, TensorParallel: 1, MaxSequences: 4, ContextWindow: 262144},
		},
		{
			name: "flags written with an equals sign",
			args: []string{"--tensor-parallel-size=2", "--max-num-seqs=6", "--max-model-len=131072"},
			want: Launch{TensorParallel: 2, MaxSequences: 6, ContextWindow: 131072},
		},
		{
			name: "SGLang's --tp",
			args: []string{"--tp", "2"},
			want: Launch{TensorParallel: 2},
		},
		{
			name: "--tp=N and vLLM's -tp",
			args: []string{"--tp=4", "-tp", "8"},
			want: Launch{TensorParallel: 8},
		},
		{
			name: "TORCH_CUDA_ARCH_LIST lists separated by semicolons, spaces or commas",
			env:  map[string]string{"TORCH_CUDA_ARCH_LIST": "9.0;12.1a 8.6+PTX,12.1"},
			want: Launch{ComputeArchs: []string{"sm_90", "sm_121", "sm_86"}},
		},
		{
			name:   "MAX_NUM_SEQS and MAX_MODEL_LEN from the environment",
			create: []string{"-e", "MAX_NUM_SEQS=8", "--env", "MAX_MODEL_LEN=262144", "--env=TORCH_CUDA_ARCH_LIST=12.1a"},
			want:   Launch{ComputeArchs: []string{"sm_121"}, MaxSequences: 8, ContextWindow: 262144},
		},
		{
			name:   "the env map wins over createArgs and a flag wins over the environment",
			args:   []string{"--max-num-seqs", "3"},
			env:    map[string]string{"CUTE_DSL_ARCH": "sm_90a", "MAX_NUM_SEQS": "5"},
			create: []string{"-e", "CUTE_DSL_ARCH=sm_121a", "-e", "MAX_NUM_SEQS=9"},
			want:   Launch{ComputeArchs: []string{"sm_90"}, MaxSequences: 3},
		},
		{
			name:   "values that are not positive integers are ignored",
			args:   []string{"--tensor-parallel-size", "${tp}", "--max-num-seqs", "0", "--max-model-len"},
			create: []string{"-e", "CUTE_DSL_ARCH=hopper", "-e"},
			want:   Launch{},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			check(t, "InferFromLaunch", InferFromLaunch(tc.args, tc.env, tc.create), tc.want)
		})
	}
}

func TestParseRecipeReadsRecipes(t *testing.T) {
	r, err := LoadRecipe("testdata/recipes/gb10-qwen38-27b-nvfp4.json")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "id", r.ID, "linux-nvidia-gb10-qwen38-27b-nvfp4-vllm")
	check(t, "a numeric version", r.Version, Version("1"))
	check(t, "backend", r.Backend.ID, "docker-vllm")
	check(t, "memoryGb", deref(r.Requirements.MemoryGb), 80.0)
	check(t, "computeArchs", r.Requirements.ComputeArchs, []string{"sm_121a"})
	check(t, "tensorParallel", deref(r.Requirements.TensorParallel), 1)
	s := r.Models[0].Settings
	check(t, "settings.memoryGb", deref(s.MemoryGb), 40.0)
	check(t, "settings.maxActiveRequests", deref(s.MaxActiveRequests), 4)
	check(t, "settings.priority", deref(s.Priority), 70.0)
	check(t, "settings.keepWarm", deref(s.KeepWarm), false)
	check(t, "Launch", r.Models[0].Launch(), Launch{ComputeArchs: []string{"sm_121"}, TensorParallel: 1, MaxSequences: 4, ContextWindow: 262144})
	if err := r.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}

	r, err = LoadRecipe("testdata/recipes/spark-2x-qwen38-flash-next.json")
	if err != nil {
		t.Fatal(err)
	}
	check(t, "a string version", r.Version, Version("2"))
	check(t, "cluster nodes", deref(r.Requirements.Cluster.Nodes), 2)
	pl := r.Models[0].Settings.Placement
	check(t, "members", len(pl.Members), 2)
	check(t, "nodeRole", pl.Members[1].NodeRole, "leader")
	check(t, "a TP2 pair with no TP flag gets one rank per member", r.Models[0].Launch(),
		Launch{ComputeArchs: []string{"sm_121"}, TensorParallel: 2, MaxSequences: 8, ContextWindow: 262144})
	if err := r.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestRecipeValidateReportsEachProblem(t *testing.T) {
	r, err := LoadRecipe("testdata/recipes/bad.json")
	if err != nil {
		t.Fatal(err)
	}
	f := "testdata/recipes/bad.json: "
	wantProblems(t, r.Validate(), []string{
		f + `$.requirements.computeArchs[1]: unknown compute arch "hopper" (expected e.g. sm_121, 12.1a or apple-metal)`,
		f + `$.requirements.tensorParallel: expected an integer >= 1, got 0`,
		f + `$.requirements.memoryGb: expected a number >= 0, got -8`,
		f + `$.models[0].settings.maxSequences: expected an integer >= 1, got 0`,
		f + `$.models[0].settings.placement.mode: expected replicated or distributed, got "pinned"`,
	}, true)

	if _, err := ParseRecipe([]byte(`{"schemaVersion": 2}`), "r.json"); err == nil {
		t.Error("schemaVersion 2 should be refused")
	}
	empty, err := ParseRecipe([]byte(`{}`), "r.json")
	if err != nil {
		t.Fatal(err)
	}
	wantProblems(t, empty.Validate(), []string{`r.json: $.id: missing`, `r.json: $.models: a recipe needs at least one model`}, true)
}
