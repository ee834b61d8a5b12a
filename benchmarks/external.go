package benchmarks

import (
	"bufio"
	"bytes"
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
	"time"

	"github.com/go-air/gini/z"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/export"
	"github.com/poolsolve/poolsolve/model"
)

// An External is a solver run as a separate program on an exported file:
// a MIP solver on the CPLEX LP, or a pseudo-boolean solver on the OPB.
// Package export writes the file; the External only runs the program and
// reads its answer.
type External interface {
	// Name is the solver's name in reports: cbc, highs, clasp.
	Name() string
	// Ready says why the solver cannot run here, or nil when it can.
	Ready() error
	// Version is what the solver says it is, for reports.
	Version() string
	// Format is the file it reads: export.LP or export.OPB.
	Format() export.Format
	// Solve minimises the file (a relative gap of 0) within a time limit
	// and returns the variables set to 1 by their names, x<n>.
	Solve(ctx context.Context, file string, limit time.Duration) (Answer, error)
}

// AnswerStatus is how an external solve ended.
type AnswerStatus string

const (
	AnswerOptimal    AnswerStatus = "optimal"    // proved, gap 0
	AnswerStopped    AnswerStatus = "time-limit" // stopped with an incumbent (or none)
	AnswerInfeasible AnswerStatus = "infeasible"
)

// Answer is an external solver's answer to one file.
type Answer struct {
	Status AnswerStatus
	// Ones are the names of the variables at 1; nil when the solver
	// found no solution.
	Ones   []string
	HasSol bool
	// Objective is the file's objective value the solver reports for its
	// solution; Objective and Fractional let the harness check the answer
	// it decodes.
	Objective  float64
	Fractional int // columns neither 0 nor 1 (a relaxation, not a solution)
	// Bound is the solver's lower bound on the file's objective when it
	// stopped short of a proof; nil when it gives none.
	Bound   *float64
	Elapsed time.Duration // the solve alone, as measured around it
	// FirstSolution is when the solver printed its first solution, within
	// Elapsed; zero when it cannot be seen (the solve's end then counts).
	FirstSolution time.Duration
}

// CBC runs COIN-OR CBC (`coinor-cbc`): `cbc FILE timeMode elapsed sec N
// ratio 0 allow 0 solve solu OUT` (the limit in wall-clock seconds, not
// CPU seconds, so a loaded machine does not stretch it). Its time is the
// process's wall time.
type CBC struct {
	Path string // empty: "cbc" on PATH
}

func (c CBC) Name() string { return "cbc" }

func (c CBC) Format() export.Format { return export.LP }

func (c CBC) bin() string {
	if c.Path != "" {
		return c.Path
	}
	return "cbc"
}

func (c CBC) Ready() error {
	if _, err := exec.LookPath(c.bin()); err != nil {
		return fmt.Errorf("cbc is not installed (apt-get install coinor-cbc)")
	}
	return nil
}

func (c CBC) Version() string {
	out, _ := exec.Command(c.bin(), "-quit").CombinedOutput()
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "Version:") {
			return "cbc " + strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "Version:"))
		}
	}
	return "cbc"
}

func (c CBC) Solve(ctx context.Context, lpFile string, limit time.Duration) (Answer, error) {
	sol := lpFile + ".cbc.sol"
	defer os.Remove(sol)
	secs := strconv.FormatFloat(max(limit.Seconds(), 0.01), 'f', 2, 64)
	cmd := exec.CommandContext(ctx, c.bin(), lpFile, "timeMode", "elapsed", "sec", secs, "ratio", "0", "allow", "0", "solve", "solu", sol)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	ans := Answer{Elapsed: time.Since(start)}
	if err != nil && ctx.Err() == nil {
		return ans, fmt.Errorf("cbc: %w: %s", err, lastLines(out, 3))
	}
	ans.Status = AnswerStopped
	log := string(out)
	switch {
	case strings.Contains(log, "Result - Optimal solution found"):
		ans.Status = AnswerOptimal
	case strings.Contains(log, "Result - Problem proven infeasible"), strings.Contains(log, "Problem is infeasible"):
		ans.Status = AnswerInfeasible
	}
	for _, l := range strings.Split(log, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Lower bound:"); ok {
			if b, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
				ans.Bound = &b
			}
		}
	}
	data, err := os.ReadFile(sol)
	if err != nil {
		return ans, nil // no solution file: no incumbent
	}
	parseCBCSolution(data, &ans)
	return ans, nil
}

// parseCBCSolution reads CBC's `solu` file: a status line ending in
// "objective value X", then "index name value cost" for every nonzero
// column. A run stopped before any integer solution writes the
// relaxation ("no integer solution - continuous used"): no solution.
func parseCBCSolution(data []byte, ans *Answer) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	if !sc.Scan() {
		return
	}
	head := sc.Text()
	if strings.HasPrefix(head, "Infeasible") || strings.Contains(head, "no integer solution") || strings.Contains(head, "no solution") {
		return
	}
	if _, v, ok := strings.Cut(head, "objective value"); ok {
		ans.Objective, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
	}
	ans.Ones, ans.HasSol = []string{}, true
	for sc.Scan() {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "**"))
		if len(f) < 3 {
			continue
		}
		v, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			continue
		}
		if v > 1e-6 && v < 1-1e-6 {
			ans.Fractional++
		}
		if v > 0.5 {
			ans.Ones = append(ans.Ones, f[1])
		}
	}
}

// HiGHS runs the npm package `highs` (HiGHS compiled to WebAssembly)
// under node: highs.solve(text, {time_limit, mip_rel_gap: 0}). Its time
// is measured inside node around the solve call, after a warm-up solve of
// a one-variable program, so node's start-up and the WebAssembly load and
// compilation are not counted against it.
type HiGHS struct {
	// Dir holds node_modules/highs; Install puts it there.
	Dir string
}

func (h HiGHS) Name() string { return "highs" }

func (h HiGHS) Format() export.Format { return export.LP }

// module is the package's absolute path: node resolves a relative
// require against the script's folder, not the working directory.
func (h HiGHS) module() string {
	m := filepath.Join(h.Dir, "node_modules", "highs")
	if abs, err := filepath.Abs(m); err == nil {
		return abs
	}
	return m
}

func (h HiGHS) Ready() error {
	if _, err := exec.LookPath("node"); err != nil {
		return errors.New("highs needs node, which is not installed")
	}
	if _, err := os.Stat(filepath.Join(h.module(), "package.json")); err != nil {
		return fmt.Errorf("the npm package highs is not installed in %s (ask for --solvers highs to install it)", h.Dir)
	}
	return nil
}

func (h HiGHS) Version() string {
	data, err := os.ReadFile(filepath.Join(h.module(), "package.json"))
	if err != nil {
		return "highs"
	}
	var pkg struct{ Version string }
	if json.Unmarshal(data, &pkg) != nil {
		return "highs"
	}
	return "highs (npm) " + pkg.Version
}

// Install runs `npm install highs` into Dir; Dir should be a folder git
// ignores (benchmarks/.tools is one).
func (h HiGHS) Install(ctx context.Context) error {
	if _, err := exec.LookPath("npm"); err != nil {
		return errors.New("installing highs needs npm, which is not installed")
	}
	if err := os.MkdirAll(h.Dir, 0o755); err != nil {
		return err
	}
	pkg := filepath.Join(h.Dir, "package.json")
	if _, err := os.Stat(pkg); err != nil {
		if err := os.WriteFile(pkg, []byte(`{"name":"poolsolve-bench-tools","private":true}`+"\n"), 0o644); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--silent", "highs")
	cmd.Dir = h.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install highs in %s: %w: %s", h.Dir, err, lastLines(out, 5))
	}
	return h.Ready()
}

const highsScript = `const fs = require('fs');
const load = require(process.argv[2]);
(async () => {
  const highs = await load();
  // A first tiny solve compiles the WebAssembly, so the timed one below
  // measures HiGHS, not V8's compiler.
  highs.solve('Minimize\n obj: x\nSubject To\n c: x >= 0\nBinary\n x\nEnd\n', {output_flag: false});
  const text = fs.readFileSync(process.argv[3], 'utf8');
  const t0 = performance.now();
  const r = highs.solve(text, {time_limit: Number(process.argv[4]), mip_rel_gap: 0, output_flag: false});
  const ms = performance.now() - t0;
  const ones = [];
  let sol = false, frac = 0;
  for (const [name, c] of Object.entries(r.Columns || {})) {
    if (typeof c.Primal === 'number') sol = true;
    if (c.Primal > 1e-6 && c.Primal < 1 - 1e-6) frac++;
    if (c.Primal > 0.5) ones.push(name);
  }
  process.stdout.write(JSON.stringify({status: r.Status, objective: r.ObjectiveValue, ms, sol, frac, ones}) + '\n');
})().catch(e => { process.stdout.write(JSON.stringify({error: String(e && e.message || e)}) + '\n'); process.exit(1); });
`

func (h HiGHS) Solve(ctx context.Context, lpFile string, limit time.Duration) (Answer, error) {
	script := filepath.Join(h.Dir, "poolsolve-highs.js")
	if err := os.WriteFile(script, []byte(highsScript), 0o644); err != nil {
		return Answer{}, err
	}
	secs := strconv.FormatFloat(max(limit.Seconds(), 0.01), 'f', 2, 64)
	// HiGHS's own time limit stops the search; the context is a backstop
	// for a hung process.
	cmd := exec.CommandContext(ctx, "node", "--max-old-space-size=4096", script, h.module(), lpFile, secs)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	wall := time.Since(start)
	if err != nil && len(bytes.TrimSpace(out)) == 0 {
		return Answer{Elapsed: wall}, fmt.Errorf("highs: %w: %s", err, lastLines(stderr.Bytes(), 3))
	}
	var r struct {
		Status    string   `json:"status"`
		Objective float64  `json:"objective"`
		MS        float64  `json:"ms"`
		Sol       bool     `json:"sol"`
		Frac      int      `json:"frac"`
		Ones      []string `json:"ones"`
		Error     string   `json:"error"`
	}
	if jerr := json.Unmarshal(bytes.TrimSpace(lastLines(out, 1)), &r); jerr != nil {
		if err == nil {
			err = jerr
		}
		return Answer{Elapsed: wall}, fmt.Errorf("highs: %w", err)
	}
	if r.Error != "" {
		return Answer{Elapsed: wall}, fmt.Errorf("highs: %s", r.Error)
	}
	ans := Answer{Ones: r.Ones, HasSol: r.Sol, Objective: r.Objective, Fractional: r.Frac, Elapsed: time.Duration(r.MS * float64(time.Millisecond))}
	switch r.Status {
	case "Optimal":
		ans.Status = AnswerOptimal
	case "Infeasible":
		ans.Status = AnswerInfeasible
	default:
		ans.Status = AnswerStopped
	}
	return ans, nil
}

func lastLines(out []byte, n int) []byte {
	lines := bytes.Split(bytes.TrimRight(out, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return bytes.Join(lines, []byte("\n"))
}

// writeInstance writes the instance in the solver's format to
// dir/base.lp or .opb, with names and comments cut short (compactLP,
// compactOPB).
func writeInstance(inst *export.Instance, f export.Format, dir, base string) (string, error) {
	var buf bytes.Buffer
	var data []byte
	file := filepath.Join(dir, base+"."+string(f))
	switch f {
	case export.LP:
		if err := inst.WriteLP(&buf); err != nil {
			return "", fmt.Errorf("write LP: %w", err)
		}
		data = compactLP(buf.Bytes(), inst)
	case export.OPB:
		if err := inst.WriteOPB(&buf); err != nil {
			return "", fmt.Errorf("write OPB: %w", err)
		}
		data = compactOPB(buf.Bytes())
	default:
		return "", fmt.Errorf("external solvers read LP or OPB, not %s", f)
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return "", err
	}
	return file, nil
}

// compactOPB drops the comment lines but the first, the "#variable="
// header readers want: on large pools the variable list in the comments
// is most of the file.
func compactOPB(data []byte) []byte {
	var out bytes.Buffer
	out.Grow(len(data) / 2)
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		if i > 0 && len(line) > 0 && line[0] == '*' {
			continue
		}
		out.Write(line)
	}
	return out.Bytes()
}

// solveLex solves the pool lexicographically with an external solver,
// level by level: level i minimised with levels 1..i-1 bounded by the
// values found before (export --level i --fix ...), as poolsolve does.
// limit bounds the four solves together. The final plan is decoded from
// the last answer and judged by the evaluator.
func solveLex(ctx context.Context, ext External, p *model.Pool, name, dir string, limit time.Duration) Run {
	run := Run{Solver: ext.Name()}
	var fixes []export.Fix
	var last export.Values
	var lastInst *export.Instance
	left := limit
	proved := true
	for lvl := 1; lvl <= 4; lvl++ {
		if left <= 0 {
			run.Note = fmt.Sprintf("time limit reached before level %d", lvl)
			proved = false
			break
		}
		inst, err := export.New(p, export.Options{Level: lvl, Fixes: fixes, Source: name})
		if err != nil {
			run.Error = fmt.Sprintf("export level %d: %v", lvl, err)
			return run
		}
		if why := refuses(ext, inst); why != "" {
			// Past its reader's limit the solver errs or answers wrongly:
			// it is not handed the file.
			if lastInst == nil {
				run.Skipped = "not run: " + why
				return run
			}
			run.Note = fmt.Sprintf("level %d not run: %s; the plan is level %d's", lvl, why, lvl-1)
			proved = false
			break
		}
		file, err := writeInstance(inst, ext.Format(), dir, fmt.Sprintf("%s.level%d", safeName(name), lvl))
		if err != nil {
			run.Error = err.Error()
			return run
		}
		// The hung-process backstop: the solver's own limit plus slack.
		sctx, cancel := context.WithTimeout(ctx, left+30*time.Second)
		ans, err := ext.Solve(sctx, file, left)
		cancel()
		os.Remove(file)
		if run.TimeToFirst == 0 && ans.FirstSolution > 0 {
			run.TimeToFirst = run.Time + ans.FirstSolution
		}
		run.Time += ans.Elapsed
		left -= ans.Elapsed
		if err != nil {
			run.Error = err.Error()
			return run
		}
		ones := map[int]bool{}
		for _, n := range ans.Ones {
			if v, err := strconv.Atoi(strings.TrimPrefix(n, "x")); err == nil && strings.HasPrefix(n, "x") {
				ones[v] = true
			}
		}
		val := func(v int) bool { return ones[v] }
		if why := checkAnswer(inst, ans, val); why != "" {
			// A level without a usable answer ends the search; the plan
			// is the previous level's, if there is one.
			if lastInst == nil {
				run.Error = fmt.Sprintf("level %d: %s", lvl, why)
				return run
			}
			run.Note = fmt.Sprintf("level %d: %s; the plan is level %d's", lvl, why, lvl-1)
			proved = false
			break
		}
		o := inst.Levels(val)
		rl := RunLevel{Value: o[lvl-1], Status: "optimal", LowerBound: o[lvl-1], Bound: ext.Name()}
		if ans.Status != AnswerOptimal {
			rl.Status, rl.LowerBound, rl.Bound, proved = "bounded", 0, "", false
			if ans.Bound != nil {
				rl.LowerBound = inst.Objective().Offset + int64(math.Ceil(*ans.Bound-1e-6))
				rl.Bound = ext.Name()
			}
		}
		run.Levels[lvl-1] = rl
		if run.TimeToFirst == 0 {
			run.TimeToFirst = run.Time
		}
		fixes = append(fixes, export.Fix{Level: lvl, AtMost: o[lvl-1]})
		last, lastInst = val, inst
	}
	if lastInst == nil {
		return run
	}
	a := lastInst.Assignment(last)
	rep := eval.Check(p, a)
	run.Objective = rep.Objective
	run.Verified = rep.Valid
	if !rep.Valid {
		run.Note = "the decoded plan fails the evaluator: " + rep.Err().Error()
	}
	if proved {
		run.Proved, run.TimeToProof = true, run.Time
	}
	return run
}

// refuses says why ext cannot read inst's file, or "": a limit the
// export names for the reader the solver uses. Only clasp is skipped so:
// the MIP solvers' tolerance limit is a caution, and checkAnswer catches
// an answer that breaks a row.
func refuses(ext External, inst *export.Instance) string {
	if ext.Name() != SolverClasp {
		return ""
	}
	for _, l := range inst.Limits(ext.Format()) {
		if strings.HasPrefix(l.Reader, "clasp") {
			return l.String()
		}
	}
	return ""
}

// checkAnswer says why an external answer is no 0/1 solution of the
// exported program, or "" when it is one: a status without a solution,
// fractional columns (a relaxation), an objective that does not match
// the solution (misread names), or a row the solution breaks (solvers
// stopped by their time limit have returned such answers).
func checkAnswer(inst *export.Instance, ans Answer, val export.Values) string {
	switch {
	case ans.Status == AnswerInfeasible:
		return "the solver says the program is infeasible"
	case !ans.HasSol:
		return fmt.Sprintf("%s without a solution", ans.Status)
	case ans.Fractional > 0:
		return fmt.Sprintf("%s, and %d columns of its answer are fractional (a relaxation, not a 0/1 solution)", ans.Status, ans.Fractional)
	}
	// The file leaves the objective's offset out.
	if got := inst.Value(val) - inst.Objective().Offset; math.Abs(float64(got)-ans.Objective) > 0.5 {
		return fmt.Sprintf("%s, objective %g, but its solution is worth %d", ans.Status, ans.Objective, got)
	}
	zval := func(v z.Var) bool { return val(int(v)) }
	for _, r := range inst.Rows() {
		if !r.Holds(zval) {
			return fmt.Sprintf("%s, but its answer breaks row %s", ans.Status, r.Name)
		}
	}
	return ""
}

// compactLP rewrites an exported LP file with short names, variable v as
// x<v> (export's numbering) and row i as r<i>, and without comments. CBC
// 2.10 drops every name of an LP file with a name longer than its limit
// (export writes names up to 128 characters) and then reports columns as
// x<its own index>, which cannot be mapped back; short names avoid that,
// and the file shrinks.
func compactLP(data []byte, in *export.Instance) []byte {
	var out bytes.Buffer
	out.Grow(len(data) / 2)
	row := 0
	for _, line := range bytes.Split(data, []byte("\n")) {
		if len(line) > 0 && line[0] == '\\' {
			continue
		}
		toks := bytes.Split(line, []byte(" "))
		for i, t := range toks {
			if i > 0 {
				out.WriteByte(' ')
			}
			if len(t) > 1 && t[len(t)-1] == ':' && string(t) != "obj:" {
				fmt.Fprintf(&out, "r%d:", row)
				row++
				continue
			}
			if v, ok := in.VarByLP(string(t)); ok && len(t) > 0 {
				fmt.Fprintf(&out, "x%d", v)
				continue
			}
			out.Write(t)
		}
		out.WriteByte('\n')
	}
	return out.Bytes()
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ' ' || r == ':' {
			return '_'
		}
		return r
	}, s)
}
