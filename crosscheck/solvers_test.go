package crosscheck

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/benchmarks"
	"github.com/poolsolve/poolsolve/export"
)

// answer is what an external solver said about one file.
type answer struct {
	// status: "optimal", "satisfiable" (no objective), "infeasible", or
	// "unknown" (time limit, or output we could not read).
	status string
	// cost is the solver's objective value as it printed it, without the
	// export's offset; hasCost is false when it printed none.
	cost    int64
	hasCost bool
	// vals are the variables the solver set true, by number.
	vals map[int]bool
	took time.Duration
}

func (a answer) val(v int) bool { return a.vals[v] }

// solverLimit bounds one external solve; the suite's instances take
// milliseconds, so hitting it is a finding, not noise.
const solverLimit = 60 * time.Second

// tool is one external solver run on one kind of file.
type tool struct {
	name   string // as shown in test names
	binary string
	format export.Format
	run    func(t *testing.T, file string, in *export.Instance) answer
}

var tools = []tool{
	{"cbc", "cbc", export.LP, runCBC},
	{"z3", "z3", export.OPB, runZ3},
	{"minisat+", "minisat+", export.OPB, runMinisatPlus},
	{"clasp", "clasp", export.OPB, runClasp},
	{"clasp-wcnf", "clasp", export.WCNF, runClasp},
}

// need reports whether binary is on PATH; without it the calling test is
// skipped, or fails under CI=true, where .ci/run must have installed it.
func need(t *testing.T, binary string) {
	t.Helper()
	if _, err := exec.LookPath(binary); err == nil {
		return
	}
	msg := fmt.Sprintf("%s not installed (apt-get install coinor-cbc z3 minisat+ clasp)", binary)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; .ci/run installs it, so CI must have it", msg)
	}
	t.Skip(msg)
}

// execute runs a solver with a deadline; a non-zero exit is normal for
// clasp (10, 20, 30) and is not an error here.
func execute(t *testing.T, dir string, name string, args ...string) (string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), solverLimit+10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	took := time.Since(start)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("%s %s: %v", name, strings.Join(args, " "), err)
	}
	if ctx.Err() != nil {
		t.Fatalf("%s %s: killed after %s", name, strings.Join(args, " "), took)
	}
	return string(out), took
}

func runCBC(t *testing.T, file string, in *export.Instance) answer {
	dir := filepath.Dir(file)
	sol := file + ".sol"
	// ratio 0: no relative gap; a flattened objective needs every unit.
	log, took := execute(t, dir, "cbc", filepath.Base(file), "sec", strconv.Itoa(int(solverLimit.Seconds())), "ratio", "0", "solve", "solu", filepath.Base(sol))
	data, err := os.ReadFile(sol)
	if err != nil {
		t.Fatalf("cbc wrote no solution: %v\n%s", err, log)
	}
	a, err := parseCBC(string(data), in.VarByLP)
	if err != nil {
		t.Fatalf("cbc: %v\n%s", err, log)
	}
	a.took = took
	return a
}

// parseCBC reads cbc's solution file: "Optimal - objective value X",
// then "index name value cost" for every non-zero variable.
func parseCBC(text string, byName func(string) (int, bool)) (answer, error) {
	a := answer{status: "unknown", vals: map[int]bool{}}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() {
		return a, errors.New("empty solution file")
	}
	head := sc.Text()
	switch {
	case strings.HasPrefix(head, "Optimal - objective value "):
		a.status = "optimal"
	case strings.HasPrefix(head, "Infeasible"):
		a.status = "infeasible"
		return a, nil
	default:
		return a, nil
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(head, "Optimal - objective value ")), 64)
	if err != nil {
		return a, fmt.Errorf("objective in %q: %v", head, err)
	}
	a.cost, a.hasCost = int64(math.Round(f)), true
	for sc.Scan() {
		fs := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "**"))
		if len(fs) < 3 {
			continue
		}
		v, err := strconv.ParseFloat(fs[2], 64)
		if err != nil {
			return a, fmt.Errorf("value in %q: %v", sc.Text(), err)
		}
		n, ok := byName(fs[1])
		if !ok {
			return a, fmt.Errorf("unknown variable %q", fs[1])
		}
		if math.Round(v) == 1 {
			a.vals[n] = true
		}
	}
	return a, nil
}

func runZ3(t *testing.T, file string, _ *export.Instance) answer {
	out, took := execute(t, filepath.Dir(file), "z3", "-model", "-T:"+strconv.Itoa(int(solverLimit.Seconds())), filepath.Base(file))
	a, err := parseZ3(out)
	if err != nil {
		t.Fatalf("z3: %v\n%s", err, out)
	}
	a.took = took
	return a
}

// parseZ3 reads `z3 -model f.opb`: "sat", the model as (define-fun k!N ()
// Bool true|false) with N the OPB variable, then the objective value
// (negative as "(- 3)") on the last line when there is an objective.
func parseZ3(text string) (answer, error) {
	a := answer{status: "unknown", vals: map[int]bool{}}
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if len(lines) == 0 {
		return a, errors.New("no output")
	}
	switch strings.TrimSpace(lines[0]) {
	case "sat":
	case "unsat":
		a.status = "infeasible"
		return a, nil
	default:
		return a, nil
	}
	a.status = "satisfiable"
	for i := 1; i < len(lines); i++ {
		l := strings.TrimSpace(lines[i])
		if strings.HasPrefix(l, "(define-fun k!") {
			name := strings.Fields(strings.TrimPrefix(l, "(define-fun k!"))[0]
			n, err := strconv.Atoi(name)
			if err != nil {
				return a, fmt.Errorf("variable in %q", l)
			}
			if i+1 < len(lines) && strings.HasPrefix(strings.TrimSpace(lines[i+1]), "true") {
				a.vals[n] = true
			}
			continue
		}
		if strings.HasPrefix(l, "(model") || strings.HasPrefix(l, "Bool") || strings.HasPrefix(l, "true") || strings.HasPrefix(l, "false") || l == ")" {
			continue
		}
		if i == len(lines)-1 {
			num := strings.TrimSuffix(strings.TrimPrefix(l, "(- "), ")")
			c, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil {
				return a, fmt.Errorf("objective in %q: %v", l, err)
			}
			if strings.HasPrefix(l, "(- ") {
				c = -c
			}
			a.cost, a.hasCost, a.status = c, true, "optimal"
		}
	}
	return a, nil
}

func runMinisatPlus(t *testing.T, file string, _ *export.Instance) answer {
	out, took := execute(t, filepath.Dir(file), "minisat+", filepath.Base(file), "-a", "-v0")
	a, err := parseCompetition(out)
	if err != nil {
		t.Fatalf("minisat+: %v\n%s", err, out)
	}
	a.took = took
	return a
}

// runClasp runs clasp through the runner the bench uses too.
func runClasp(t *testing.T, file string, _ *export.Instance) answer {
	ctx, cancel := context.WithTimeout(context.Background(), solverLimit+10*time.Second)
	defer cancel()
	a, err := benchmarks.RunClasp(ctx, "", file, solverLimit)
	if err != nil {
		t.Fatal(err)
	}
	return fromPB(a)
}

// parseCompetition reads minisat+'s and clasp's competition output with
// the parser the bench uses (benchmarks.ParseCompetition).
func parseCompetition(text string) (answer, error) {
	a, err := benchmarks.ParseCompetition(text)
	return fromPB(a), err
}

func fromPB(a benchmarks.PBAnswer) answer {
	return answer{status: a.Status, cost: a.Cost, hasCost: a.HasCost, vals: a.Ones, took: a.Took}
}

// highsModules is where .ci/run installs the npm package "highs".
var highsModules = filepath.Join("..", "bin", "npm", "node_modules")

// needHiGHS skips the calling test unless node and the npm package are
// there; HiGHS is optional, so CI skips it too when npm could not fetch it.
func needHiGHS(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node not installed: HiGHS (npm) skipped")
	}
	if _, err := os.Stat(filepath.Join(highsModules, "highs")); err != nil {
		t.Skip("HiGHS not installed (npm install --prefix bin/npm highs@1.15.3): skipped")
	}
}

// runHiGHS solves files with highs.js in one node process and returns
// its output lines, one per file, in order.
func runHiGHS(t *testing.T, dir string, files []string) ([]string, time.Duration) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "highs.js"))
	if err != nil {
		t.Fatal(err)
	}
	mods, err := filepath.Abs(highsModules)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("NODE_PATH", mods)
	args := append([]string{script, strconv.Itoa(int(solverLimit.Seconds()))}, files...)
	out, took := execute(t, dir, "node", args...)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "{") {
			lines = append(lines, l)
		}
	}
	return lines, took
}

// parseHiGHS reads one line of highs.js: {"file", "status": "Optimal",
// "objective": 210, "ones": [names set to 1]}.
func parseHiGHS(text string, byName func(string) (int, bool)) (answer, error) {
	a := answer{status: "unknown", vals: map[int]bool{}}
	var r struct {
		Status    string   `json:"status"`
		Objective *float64 `json:"objective"`
		Ones      []string `json:"ones"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(text)), &r); err != nil {
		return a, err
	}
	switch r.Status {
	case "Optimal":
		a.status = "optimal"
	case "Infeasible":
		a.status = "infeasible"
		return a, nil
	default:
		return a, nil
	}
	if r.Objective != nil {
		a.cost, a.hasCost = int64(math.Round(*r.Objective)), true
	}
	for _, name := range r.Ones {
		n, ok := byName(name)
		if !ok {
			return a, fmt.Errorf("unknown variable %q", name)
		}
		a.vals[n] = true
	}
	return a, nil
}
