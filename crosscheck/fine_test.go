package crosscheck

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/export"
	"github.com/poolsolve/poolsolve/internal/pooltest"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/solver"
)

// decimals is u·10^-d GiB, written as the decimal it is (so that a sum
// of two is exact).
func decimals(u int64, d int) float64 {
	p := int64(math.Pow10(d))
	f, err := strconv.ParseFloat(fmt.Sprintf("%d.%0*d", u/p, d, u%p), 64)
	if err != nil {
		panic(err)
	}
	return f
}

func tenMillionths(u int64) float64 { return decimals(u, 7) }

// fineMemory rewrites every draw of p as a figure of d decimals near it,
// and budgets likewise; on every other domain that holds two lanes the
// budget is their exact sum (keep true) or one unit of the last decimal
// below it, so that rounding either way flips whether the pair fits.
func fineMemory(p *model.Pool, seed uint64, keep bool, d int) *model.Pool {
	r := rand.New(rand.NewPCG(seed, 7))
	scale := int64(math.Pow10(d))
	type dom struct{ node, id string }
	first := map[dom][]int64{}
	for vi := range p.Variants {
		for k := range p.Variants[vi].Placements {
			pl := &p.Variants[vi].Placements[k]
			for di := range pl.Draws {
				dr := &pl.Draws[di]
				if dr.Gb <= 0 {
					continue
				}
				u := int64(dr.Gb*float64(scale)) + r.Int64N(scale) + 1234567%scale
				dr.Gb = decimals(u, d)
				key := dom{dr.Node, dr.Domain}
				if len(first[key]) < 2 {
					first[key] = append(first[key], u)
				}
			}
		}
	}
	i := 0
	for ni := range p.Nodes {
		for di := range p.Nodes[ni].Domains {
			dm := &p.Nodes[ni].Domains[di]
			b := &dm.Budget
			us := first[dom{p.Nodes[ni].ID, dm.ID}]
			i++
			if len(us) == 2 && i%2 == 1 {
				sum := us[0] + us[1]
				if !keep {
					sum--
				}
				b.PlanGb = decimals(sum, d)
				continue
			}
			b.PlanGb = decimals(int64(b.PlanGb*float64(scale))-r.Int64N(scale), d)
		}
	}
	return p
}

// manyOnOne is one ~100 GiB node with seven auto lanes of about 37 GiB
// each, to seven decimals: at 10^7 units per GiB the auto rule's rows sum
// past 2^31, the most clasp 3.3.5 reads.
func manyOnOne() *model.Pool {
	parts := []pooltest.Part{pooltest.Node("gb-a", 128, pooltest.BudgetGb(100.1234567))}
	for i := range 7 {
		id := fmt.Sprintf("m%d", i)
		parts = append(parts,
			pooltest.Variant(id, tenMillionths(371234567+int64(i)*10001), pooltest.On("gb-a"), pooltest.Perf(float64(300+50*i), 0)),
			pooltest.Alias("a"+id, float64(10+i), id))
	}
	return pooltest.New(parts...)
}

// fineInstances are pools whose memory figures have three or seven
// decimals on domains of up to ~250 GiB, with exact-fit boundaries.
func fineInstances() []instance {
	out := []instance{
		{name: "fine-exact-fit", pool: pooltest.FineMemory(100.3333333, 56.1111111, 40.2222222), scale: 1e7},
		{name: "fine-one-unit-short", pool: pooltest.FineMemory(100.3333332, 56.1111111, 40.2222222), scale: 1e7},
		{name: "fine-seven-on-one", pool: manyOnOne(), scale: 1e7},
	}
	for _, s := range []struct {
		seed            uint64
		nodes, variants int
	}{{1, 3, 5}, {2, 4, 8}, {5, 5, 10}} {
		for _, d := range []int{3, 7} {
			for _, keep := range []bool{true, false} {
				name := fmt.Sprintf("fine-%d-%dx%d-%d-decimals-fit-%v", s.seed, s.nodes, s.variants, d, keep)
				out = append(out, instance{name: name, pool: fineMemory(pooltest.Random(s.seed, s.nodes, s.variants), s.seed, keep, d), scale: int64(math.Pow10(d))})
			}
		}
	}
	return out
}

// On figures of three and seven decimals, where counting memory in coarser units
// would move the optimum, every external solver on the exported level
// (earlier levels fixed at poolsolve's values) finds poolsolve's optimum,
// and its answer is a valid plan: z3 and minisat+ always (they count
// exactly), CBC and clasp where the export does not name their limit.
// Where it names one, the header says so; on some of those files clasp
// indeed errs: it stops with an error, or calls a feasible file
// unsatisfiable.
func TestExternalSolversAgreeOnFineDecimalMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: external solvers")
	}
	limited := map[string]int{} // tool -> files past its limit
	answered := map[string]int{}
	refused := 0 // files past clasp's limit on which it errs
	for _, inst := range fineInstances() {
		t.Run(inst.name, func(t *testing.T) {
			res := solve(t, inst)
			dir := t.TempDir()
			for lvl := 1; lvl <= 4; lvl++ {
				if res.Levels[lvl-1].Status != solver.Optimal {
					t.Fatalf("level %d is %s in poolsolve: the test needs proved levels", lvl, res.Levels[lvl-1].Status)
				}
				var fixes []export.Fix
				for j := 1; j < lvl; j++ {
					fixes = append(fixes, export.Fix{Level: j, AtMost: res.Levels[j-1].Value})
				}
				ex, err := export.New(inst.pool, export.Options{Level: lvl, Fixes: fixes, Source: inst.name})
				if err != nil {
					t.Fatalf("export level %d: %v", lvl, err)
				}
				if !ex.Enc.Exact || ex.Enc.Scale != inst.scale {
					t.Fatalf("memory in 1/%d GiB, exact %v; want 1/%d, exact", ex.Enc.Scale, ex.Enc.Exact, inst.scale)
				}
				want := res.Levels[lvl-1].Value
				for _, tl := range tools {
					if !installed(tl.binary) {
						continue
					}
					file := writeFile(t, dir, fmt.Sprintf("level%d-%s", lvl, tl.name), ex, tl.format)
					if lim, ok := limitOf(ex, tl); ok {
						limited[tl.name]++
						headerSays(t, file, lim)
						if tl.binary == "clasp" && claspFails(t, file) {
							refused++
						}
						continue
					}
					answered[tl.name]++
					agree(t, inst, res, ex, tl.run(t, file, ex), lvl, want)
				}
			}
		})
	}
	t.Logf("files answered by tool: %v; past a tool's limit: %v", answered, limited)
	for _, tl := range tools {
		if installed(tl.binary) && answered[tl.name] == 0 {
			t.Errorf("%s answered no file: the suite must hold files within its limit", tl.name)
		}
	}
	if installed("clasp") && refused == 0 {
		t.Errorf("clasp answered every file past the limit export names (%d): the limit is not shown to be real", limited["clasp"])
	}
}

// limitOf is the limit the export names for the tool's reader, if any.
func limitOf(ex *export.Instance, tl tool) (export.Limit, bool) {
	for _, l := range ex.Limits(tl.format) {
		if strings.Contains(strings.ToLower(l.Reader), tl.binary) {
			return l, true
		}
	}
	return export.Limit{}, false
}

// headerSays checks that the file's header carries the limit.
func headerSays(t *testing.T, file string, lim export.Limit) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "WARNING: "+lim.String()+"\n") {
		t.Fatalf("the header of %s does not carry the limit %q", file, lim)
	}
}

// claspFails reports whether clasp answers the file wrongly: an error,
// or UNSATISFIABLE, where poolsolve has a plan. The limit export names
// is cautious, so clasp may still answer some files past it.
func claspFails(t *testing.T, file string) bool {
	t.Helper()
	out, _ := execute(t, ".", "clasp", file)
	return strings.Contains(out, "ERROR") || strings.Contains(out, "s UNSATISFIABLE")
}

// installed reports whether binary is on PATH, without skipping.
func installed(binary string) bool {
	_, err := osexec.LookPath(binary)
	return err == nil
}
