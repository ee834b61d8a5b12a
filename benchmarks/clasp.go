package benchmarks

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/poolsolve/poolsolve/export"
)

// PBAnswer is what a pseudo-boolean or MaxSAT solver printed in the
// competition output format (clasp, minisat+).
type PBAnswer struct {
	// Status: "optimal" (s OPTIMUM FOUND), "satisfiable" (a model, no
	// proof of optimality, or no objective), "infeasible" (s
	// UNSATISFIABLE), or "unknown" (s UNKNOWN, or no status line).
	Status string
	// Cost is the last cost printed ("o N", "c Optimal solution: N" or
	// "c Optimization : N"), without the export's offset; HasCost is false
	// when none was.
	Cost    int64
	HasCost bool
	// Ones are the variables set true in the last model, by number.
	Ones map[int]bool
	// Interrupted is set when the solver says a limit or a signal stopped
	// it (clasp: "c TIME LIMIT : 1", "c INTERRUPTED : 1").
	Interrupted bool
	// FirstModel is when the first model or cost line arrived, from the
	// process's start; zero when there was none or nobody timed it.
	FirstModel time.Duration
	// Took is the process's wall time; zero when nobody timed it.
	Took time.Duration
}

// Val reports whether variable v is true in the answer.
func (a PBAnswer) Val(v int) bool { return a.Ones[v] }

// ParseCompetition reads the PB/MaxSAT competition output of minisat+ and
// clasp: "s OPTIMUM FOUND" (or SATISFIABLE, UNSATISFIABLE, UNKNOWN), the
// last "o <cost>", "c Optimal solution: <cost>" (minisat+) or
// "c Optimization : <cost>" (clasp), and "v" lines of literals: x12 /
// -x12 for OPB, 12 / -12 for WCNF and CNF. clasp can print several models,
// each after "c Answer: n"; only the last is read.
func ParseCompetition(text string) (PBAnswer, error) {
	a := PBAnswer{Status: "unknown", Ones: map[int]bool{}}
	var vlines []string
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "s OPTIMUM FOUND":
			a.Status = "optimal"
		case l == "s SATISFIABLE":
			if a.Status != "optimal" {
				a.Status = "satisfiable"
			}
		case l == "s UNSATISFIABLE":
			a.Status = "infeasible"
		case strings.HasPrefix(l, "o "), strings.HasPrefix(l, "c Optimal solution:"), strings.HasPrefix(l, "c Optimization"):
			fs := strings.Fields(l)
			c, err := strconv.ParseInt(fs[len(fs)-1], 10, 64)
			if err != nil {
				return a, fmt.Errorf("cost in %q: %w", l, err)
			}
			a.Cost, a.HasCost = c, true
		case strings.HasPrefix(l, "c TIME LIMIT"), strings.HasPrefix(l, "c INTERRUPTED"):
			a.Interrupted = true
		case strings.HasPrefix(l, "c Answer:"):
			vlines = vlines[:0]
		case strings.HasPrefix(l, "v "):
			vlines = append(vlines, l[2:])
		}
	}
	for _, l := range vlines {
		for _, f := range strings.Fields(l) {
			if f == "0" {
				continue
			}
			neg := strings.HasPrefix(f, "-")
			n, err := strconv.Atoi(strings.TrimPrefix(strings.TrimPrefix(f, "-"), "x"))
			if err != nil || n <= 0 {
				return a, fmt.Errorf("literal %q", f)
			}
			if !neg {
				a.Ones[n] = true
			}
		}
	}
	return a, nil
}

// claspExit says whether clasp's exit code is an answer: 0 unknown, 1
// interrupted, 10 satisfiable, 20 unsatisfiable, 30 optimum, plus 1 when
// interrupted after a model (11, 21, 31). Anything else (65 error, 128
// syntax) is a failure.
func claspExit(code int) bool {
	switch code {
	case 0, 1, 10, 11, 20, 21, 30, 31:
		return true
	}
	return false
}

// RunClasp runs `clasp --time-limit=N FILE` on an OPB, WCNF or CNF file,
// streams its output to time the first model, and parses the answer.
// clasp's limit is in whole seconds, so N is rounded up and an interrupt
// (on which clasp prints its best model, as at its own limit) arrives at
// limit exactly. bin is the program,
// "clasp" when empty; ctx kills a hung process. Took is the process's wall
// time. The error names what went wrong, with clasp's last lines.
func RunClasp(ctx context.Context, bin, file string, limit time.Duration) (PBAnswer, error) {
	if bin == "" {
		bin = "clasp"
	}
	secs := max(int((limit+time.Second-1)/time.Second), 1)
	cmd := exec.CommandContext(ctx, bin, "--time-limit="+strconv.Itoa(secs), file)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return PBAnswer{}, fmt.Errorf("clasp: %w", err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return PBAnswer{}, fmt.Errorf("clasp: %w", err)
	}
	stop := time.AfterFunc(limit, func() { _ = cmd.Process.Signal(os.Interrupt) })
	out, first := readTimed(pipe, start)
	err = cmd.Wait()
	stop.Stop()
	took := time.Since(start)
	if ctx.Err() != nil {
		return PBAnswer{Took: took}, fmt.Errorf("clasp %s: killed after %s (%w)", file, took.Round(time.Millisecond), ctx.Err())
	}
	var ee *exec.ExitError
	if err != nil && (!errors.As(err, &ee) || !claspExit(ee.ExitCode())) {
		return PBAnswer{Took: took}, fmt.Errorf("clasp %s: %w: %s", file, err, lastLines(append(out, stderr.Bytes()...), 3))
	}
	a, perr := ParseCompetition(string(out))
	a.Took, a.FirstModel = took, first
	if perr != nil {
		return a, fmt.Errorf("clasp %s: %w", file, perr)
	}
	return a, nil
}

// readTimed reads r to its end and returns it, with when (since start)
// the first model or cost line arrived.
func readTimed(r io.Reader, start time.Time) ([]byte, time.Duration) {
	var out bytes.Buffer
	var first time.Duration
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		line, err := br.ReadBytes('\n')
		if first == 0 && (bytes.HasPrefix(line, []byte("o ")) || bytes.HasPrefix(line, []byte("c Answer:")) || bytes.HasPrefix(line, []byte("v "))) {
			first = time.Since(start)
		}
		out.Write(line)
		if err != nil {
			return out.Bytes(), first
		}
	}
}

// Clasp runs clasp (Debian `clasp`) on the exported OPB file: its native
// weight constraints read the memory rows as they are, without a
// translation to clauses. Its time is the process's wall time.
type Clasp struct {
	Path string // empty: "clasp" on PATH
}

func (c Clasp) Name() string { return "clasp" }

func (c Clasp) Format() export.Format { return export.OPB }

func (c Clasp) bin() string {
	if c.Path != "" {
		return c.Path
	}
	return "clasp"
}

func (c Clasp) Ready() error {
	if _, err := exec.LookPath(c.bin()); err != nil {
		return errors.New("clasp is not installed (apt-get install clasp)")
	}
	return nil
}

var claspVersion = sync.OnceValue(func() string {
	out, _ := exec.Command("clasp", "--version").Output()
	if l, _, _ := strings.Cut(string(out), "\n"); strings.HasPrefix(l, "clasp version ") {
		return "clasp " + strings.TrimPrefix(l, "clasp version ")
	}
	return "clasp"
})

func (c Clasp) Version() string {
	if c.Path != "" {
		return "clasp (" + c.Path + ")"
	}
	return claspVersion()
}

func (c Clasp) Solve(ctx context.Context, file string, limit time.Duration) (Answer, error) {
	a, err := RunClasp(ctx, c.bin(), file, limit)
	ans := Answer{Elapsed: a.Took, FirstSolution: a.FirstModel}
	if err != nil {
		return ans, err
	}
	return claspAnswer(a), nil
}

// claspAnswer turns clasp's answer to an OPB file into the harness's: the
// variables set true as x<n>, and the status. A model without a cost line
// and without an interruption is the answer to a file with no objective,
// where every solution is optimal at cost 0.
func claspAnswer(a PBAnswer) Answer {
	ans := Answer{Elapsed: a.Took, FirstSolution: a.FirstModel, Status: AnswerStopped}
	switch {
	case a.Status == "infeasible":
		ans.Status = AnswerInfeasible
		return ans
	case a.Status == "optimal":
		ans.Status = AnswerOptimal
	case a.Status == "satisfiable" && !a.HasCost && !a.Interrupted:
		ans.Status = AnswerOptimal
	}
	if a.Status == "optimal" || a.Status == "satisfiable" {
		ans.HasSol = true
		ans.Objective = float64(a.Cost)
		vs := slices.Sorted(maps.Keys(a.Ones))
		ans.Ones = make([]string, len(vs))
		for i, v := range vs {
			ans.Ones[i] = "x" + strconv.Itoa(v)
		}
	}
	return ans
}
