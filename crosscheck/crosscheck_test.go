package crosscheck

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/catalog"
	"github.com/poolsolve/poolsolve/cli"
	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/examples"
	"github.com/poolsolve/poolsolve/export"
	"github.com/poolsolve/poolsolve/fleet"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
	"github.com/poolsolve/poolsolve/solver"
	"github.com/poolsolve/poolsolve/solver/pb"
)

// instance is one pool of the suite; fleet is its bundle file, when it
// has one, for `poolsolve check`.
type instance struct {
	name  string
	pool  *model.Pool
	fleet string
	scale int64 // the memory units per GiB the export must count in, when set
}

// randomSizes are the seeded random pools: nodes and variants, small
// enough that poolsolve proves every level in well under a second.
var randomSizes = []struct {
	seed            uint64
	nodes, variants int
}{{1, 3, 5}, {2, 4, 8}, {3, 4, 9}, {5, 5, 10}, {8, 6, 12}}

func instances(t *testing.T) []instance {
	t.Helper()
	var out []instance
	for _, name := range examples.Names() {
		path := filepath.Join("..", "examples", name)
		in, err := fleet.LoadBundle(path)
		if err != nil {
			t.Fatalf("LoadBundle(%s): %v", name, err)
		}
		cat, err := catalog.Build(in, catalog.Options{})
		if err != nil {
			t.Fatalf("catalog.Build(%s): %v", name, err)
		}
		out = append(out, instance{name: strings.TrimSuffix(name, ".json"), pool: cat.Pool, fleet: path})
	}
	for _, s := range randomSizes {
		out = append(out, instance{name: fmt.Sprintf("random-%d-%dx%d", s.seed, s.nodes, s.variants), pool: pooltest.Random(s.seed, s.nodes, s.variants)})
	}
	return out
}

// timings collects what the solvers took, for the summary.
var timings struct {
	sync.Mutex
	lines []string
}

func record(format string, args ...any) {
	timings.Lock()
	defer timings.Unlock()
	timings.lines = append(timings.lines, fmt.Sprintf(format, args...))
}

func TestMain(m *testing.M) {
	pb.ServeIfWorker()
	code := m.Run()
	if len(timings.lines) > 0 && os.Getenv("CROSSCHECK_SUMMARY") != "" {
		sort.Strings(timings.lines)
		fmt.Println(strings.Join(timings.lines, "\n"))
	}
	os.Exit(code)
}

// solved caches poolsolve's answer per instance: three tests read it.
var solved = struct {
	sync.Mutex
	m map[string]*solver.Result
}{m: map[string]*solver.Result{}}

func solve(t *testing.T, inst instance) *solver.Result {
	t.Helper()
	solved.Lock()
	defer solved.Unlock()
	res, ok := solved.m[inst.name]
	if !ok {
		var err error
		res, err = solver.Solve(context.Background(), inst.pool, solver.Options{TimeLimit: 20 * time.Second, Seed: 1})
		if err != nil {
			t.Fatalf("poolsolve: %v", err)
		}
		solved.m[inst.name] = res
	}
	if res.Infeasible {
		t.Fatalf("poolsolve says infeasible: %+v", res.Explanations)
	}
	return res
}

func writeFile(t *testing.T, dir, name string, in *export.Instance, f export.Format) string {
	t.Helper()
	var buf bytes.Buffer
	if err := in.Write(&buf, f); err != nil {
		t.Fatalf("write %s: %v", f, err)
	}
	path := filepath.Join(dir, name+"."+string(f))
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExternalSolversAgreeLevelByLevel is the cross-check: for each
// instance and each level poolsolve proved, every installed solver finds
// the same optimum on the exported level (earlier levels fixed at
// poolsolve's values), and its answer is a valid plan with poolsolve's
// vector on the levels fixed and minimised.
func TestExternalSolversAgreeLevelByLevel(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the external solvers take about 40 s; CI runs them")
	}
	for _, inst := range instances(t) {
		t.Run(inst.name, func(t *testing.T) {
			res := solve(t, inst)
			dir := t.TempDir()
			for lvl := 1; lvl <= 4; lvl++ {
				if res.Levels[lvl-1].Status != solver.Optimal {
					t.Logf("level %d is %s in poolsolve; levels from here on are not compared", lvl, res.Levels[lvl-1].Status)
					break
				}
				var fixes []export.Fix
				for j := 1; j < lvl; j++ {
					fixes = append(fixes, export.Fix{Level: j, AtMost: res.Levels[j-1].Value})
				}
				ex, err := export.New(inst.pool, export.Options{Level: lvl, Fixes: fixes, Source: inst.name})
				if err != nil {
					t.Fatalf("export level %d: %v", lvl, err)
				}
				want := res.Levels[lvl-1].Value
				for _, tl := range tools {
					t.Run(fmt.Sprintf("level %d %s", lvl, tl.name), func(t *testing.T) {
						need(t, tl.binary)
						file := writeFile(t, dir, fmt.Sprintf("level%d-%s", lvl, tl.name), ex, tl.format)
						a := tl.run(t, file, ex)
						record("%-28s level %d  %-10s %8.3fs", inst.name, lvl, tl.name, a.took.Seconds())
						agree(t, inst, res, ex, a, lvl, want)
					})
				}
			}
		})
	}
}

// agree checks one external answer against poolsolve's proved values.
func agree(t *testing.T, inst instance, res *solver.Result, ex *export.Instance, a answer, lvl int, want int64) {
	t.Helper()
	obj := ex.Objective()
	switch {
	case a.status == "infeasible":
		t.Fatalf("the solver says the exported level is infeasible; poolsolve found %v", res.Objective)
	case len(obj.Terms) == 0 && a.status == "unknown":
		t.Fatalf("the solver found no solution")
	case len(obj.Terms) > 0 && a.status != "optimal":
		t.Fatalf("the solver did not prove an optimum (status %s)", a.status)
	}
	if got := ex.Value(a.val); got != want {
		t.Errorf("level %d: the solver's answer scores %d, poolsolve proved %d", lvl, got, want)
	}
	if a.hasCost {
		// WCNF costs carry the negative terms' constant; the answer's own
		// value, checked above, is what counts there.
		if ex.Objective().Offset+a.cost != want && !hasNegative(obj) {
			t.Errorf("level %d: the solver reports optimum %d (+ offset %d), poolsolve proved %d", lvl, a.cost, obj.Offset, want)
		}
	}
	plan := ex.Assignment(a.val)
	rep := eval.Check(inst.pool, plan)
	if !rep.Valid {
		t.Fatalf("the solver's answer decodes to an invalid plan: %v", rep.Err())
	}
	for i := 0; i < lvl; i++ {
		if rep.Objective[i] != res.Objective[i] {
			t.Errorf("the solver's plan scores %v in the evaluator; poolsolve's %v differs on level %d", rep.Objective, res.Objective, i+1)
			break
		}
	}
}

func hasNegative(o export.Objective) bool {
	for _, t := range o.Terms {
		if t.Coef < 0 {
			return true
		}
	}
	return false
}

// TestTheFlattenedObjectiveAndTheHardClausesAgree solves the whole
// lexicographic problem in one file (CBC and clasp, flattened weights)
// and the hard-constraint CNF (clasp): the flattened optimum must give
// poolsolve's vector, and the CNF's model must be a valid plan.
func TestTheFlattenedObjectiveAndTheHardClausesAgree(t *testing.T) {
	for _, inst := range instances(t) {
		t.Run(inst.name, func(t *testing.T) {
			res := solve(t, inst)
			proved := true
			for _, l := range res.Levels {
				proved = proved && l.Status == solver.Optimal
			}
			dir := t.TempDir()
			ex, err := export.New(inst.pool, export.Options{Flatten: true, Source: inst.name})
			if err != nil {
				t.Fatalf("export: %v", err)
			}
			w := ex.Weights()
			var want int64
			for i := range w {
				want += w[i] * res.Objective[i]
			}
			for _, tl := range []tool{tools[0], tools[3]} {
				t.Run("flattened "+tl.name, func(t *testing.T) {
					if !proved {
						t.Skipf("poolsolve proved only %+v", res.Levels)
					}
					need(t, tl.binary)
					a := tl.run(t, writeFile(t, dir, "flat-"+tl.name, ex, tl.format), ex)
					record("%-28s flat     %-10s %8.3fs", inst.name, tl.name, a.took.Seconds())
					agree(t, inst, res, ex, a, 4, want)
					if got := ex.Levels(a.val); got != res.Objective {
						t.Errorf("flattened optimum has levels %v, poolsolve %v", got, res.Objective)
					}
				})
			}
			t.Run("hard clauses clasp", func(t *testing.T) {
				need(t, "clasp")
				hard, err := export.New(inst.pool, export.Options{})
				if err != nil {
					t.Fatal(err)
				}
				a := runClasp(t, writeFile(t, dir, "hard", hard, export.CNF), hard)
				record("%-28s cnf      %-10s %8.3fs", inst.name, "clasp", a.took.Seconds())
				if a.status != "satisfiable" {
					t.Fatalf("clasp on the hard clauses: %s", a.status)
				}
				if rep := eval.Check(inst.pool, hard.Assignment(a.val)); !rep.Valid {
					t.Fatalf("a model of the hard clauses decodes to an invalid plan: %v", rep.Err())
				}
			})
		})
	}
}

// TestPoolsolvesOwnPlanPassesTheIndependentCheck writes poolsolve's plan
// as JSON and reads it back with eval's own reader: it must resolve
// against the pool, pass every hard constraint, and score the vector
// poolsolve reported. For the example fleets it goes through `poolsolve
// check` itself.
func TestPoolsolvesOwnPlanPassesTheIndependentCheck(t *testing.T) {
	for _, inst := range instances(t) {
		t.Run(inst.name, func(t *testing.T) {
			res := solve(t, inst)
			p := plan.Build(inst.pool, res, plan.Meta{Fleet: inst.name, Solver: "exact"})
			var buf bytes.Buffer
			if err := plan.WriteJSON(&buf, p); err != nil {
				t.Fatal(err)
			}
			doc, err := eval.ReadPlan(inst.name+".plan.json", buf.Bytes())
			if err != nil {
				t.Fatalf("ReadPlan: %v", err)
			}
			if err := doc.Resolve(inst.pool); err != nil {
				t.Fatalf("Resolve: %v", err)
			}
			rep := eval.Check(inst.pool, doc.Assignment)
			if !rep.Valid || rep.Objective != res.Objective {
				t.Fatalf("eval on the plan as read back: valid %v, %v; poolsolve %v; %v", rep.Valid, rep.Objective, res.Objective, rep.Err())
			}
			if inst.fleet == "" {
				return
			}
			file := filepath.Join(t.TempDir(), "plan.json")
			if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			var out, errOut bytes.Buffer
			code := cli.Run([]string{"poolsolve", "check", "--fleet", inst.fleet, "--plan", file, "--format", "json"}, strings.NewReader(""), &out, &errOut)
			if code != 0 {
				t.Fatalf("poolsolve check exit %d\n%s%s", code, out.String(), errOut.String())
			}
			var got struct {
				Valid     bool            `json:"valid"`
				Objective model.Objective `json:"objective"`
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil {
				t.Fatalf("check --format json: %v\n%s", err, out.String())
			}
			if !got.Valid || got.Objective != res.Objective {
				t.Fatalf("poolsolve check: valid %v, %v; poolsolve plan %v", got.Valid, got.Objective, res.Objective)
			}
		})
	}
}

// TestHiGHSAgreesOnTheFlattenedObjective solves every instance's
// flattened LP with HiGHS, in one node process (loading the WebAssembly
// takes longer than solving): HiGHS is optional, and skipped when npm
// could not install it.
func TestHiGHSAgreesOnTheFlattenedObjective(t *testing.T) {
	needHiGHS(t)
	type job struct {
		inst instance
		res  *solver.Result
		ex   *export.Instance
		file string
		want int64
	}
	var jobs []job
	dir := t.TempDir()
	for _, inst := range instances(t) {
		res := solve(t, inst)
		proved := true
		for _, l := range res.Levels {
			proved = proved && l.Status == solver.Optimal
		}
		if !proved {
			t.Logf("%s: poolsolve proved only %+v; not compared", inst.name, res.Levels)
			continue
		}
		ex, err := export.New(inst.pool, export.Options{Flatten: true, Source: inst.name})
		if err != nil {
			t.Fatalf("%s: export: %v", inst.name, err)
		}
		w := ex.Weights()
		var want int64
		for i := range w {
			want += w[i] * res.Objective[i]
		}
		jobs = append(jobs, job{inst, res, ex, writeFile(t, dir, inst.name, ex, export.LP), want})
	}
	files := make([]string, len(jobs))
	for i, j := range jobs {
		files[i] = j.file
	}
	out, took := runHiGHS(t, dir, files)
	record("%-28s flat     %-10s %8.3fs (all %d files, one process)", "(every instance)", "highs", took.Seconds(), len(files))
	if len(out) != len(jobs) {
		t.Fatalf("highs.js answered %d of %d files", len(out), len(jobs))
	}
	for i, j := range jobs {
		t.Run(j.inst.name, func(t *testing.T) {
			a, err := parseHiGHS(out[i], j.ex.VarByLP)
			if err != nil {
				t.Fatalf("highs: %v\n%s", err, out[i])
			}
			agree(t, j.inst, j.res, j.ex, a, 4, j.want)
			if got := j.ex.Levels(a.val); got != j.res.Objective {
				t.Errorf("flattened optimum has levels %v, poolsolve %v", got, j.res.Objective)
			}
		})
	}
}
