package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/benchmarks"
	"github.com/poolsolve/poolsolve/solver/pb"
)

// helperArgs, when set, makes the test binary run as poolsolve with these
// arguments (one a line), signals and exit code included, so that tests
// can send it real signals.
const helperArgs = "POOLSOLVE_CLI_TEST_ARGS"

func TestMain(m *testing.M) {
	pb.ServeIfWorker()
	if args := os.Getenv(helperArgs); args != "" {
		os.Exit(RunSince(time.Now(), append([]string{"poolsolve"}, strings.Split(args, "\n")...), os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// TestInterruptionFollowsThePhasesOfPlan: a signal while the inputs are
// read exits at once; during the search the first one stops it and the
// second exits at once; after the search the first one only sets the
// exit code.
func TestInterruptionFollowsThePhasesOfPlan(t *testing.T) {
	sigs := make(chan os.Signal)
	exited := make(chan int, 1)
	defer swap(&interrupts, func() (<-chan os.Signal, func()) { return sigs, func() {} })()
	defer swap(&exitAtOnce, func(code int) { exited <- code })()
	noExit := func(what string) {
		t.Helper()
		select {
		case code := <-exited:
			t.Fatalf("%s: exited with %d", what, code)
		case <-time.After(50 * time.Millisecond):
		}
	}
	mustExit := func(what string) {
		t.Helper()
		select {
		case code := <-exited:
			if code != ExitInterrupted {
				t.Fatalf("%s: exit %d, want %d", what, code, ExitInterrupted)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: did not exit", what)
		}
	}

	in := watchInterrupts(io.Discard)
	sigs <- os.Interrupt
	mustExit("a signal while reading the inputs")
	in.close()

	in = watchInterrupts(io.Discard)
	ctx := in.searchStarts()
	sigs <- syscall.SIGTERM
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the first signal during the search did not stop it")
	}
	noExit("the first signal during the search")
	if !in.searchEnds() || !in.signalled() {
		t.Error("the search does not say a signal stopped it")
	}
	sigs <- os.Interrupt
	mustExit("a second signal")
	in.close()

	in = watchInterrupts(io.Discard)
	in.searchStarts()
	if in.searchEnds() {
		t.Error("a search no signal stopped says it was stopped")
	}
	wrote := make(chan struct{})
	err := in.write(func() error {
		sigs <- os.Interrupt
		noExit("a signal while the file is written")
		close(wrote)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	<-wrote
	if !in.signalled() {
		t.Error("a signal after the search does not make the exit code 130")
	}
	in.close()
}

func swap[T any](p *T, v T) func() {
	old := *p
	*p = v
	return func() { *p = old }
}

// planProcess runs the test binary as `poolsolve plan` on a 64x250 fleet
// with a 60 s limit, and returns once the search has started (its trace
// says the warm start is done).
type planProcess struct {
	cmd     *exec.Cmd
	stderr  *bufio.Scanner
	lines   []string
	fleet   string
	out     string
	started time.Time
}

func startPlan(t *testing.T) *planProcess {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send on Windows")
	}
	if testing.Short() {
		t.Skip("plans a 64x250 fleet")
	}
	dir := t.TempDir()
	sz, err := benchmarks.ParseSize("64x250")
	if err != nil {
		t.Fatal(err)
	}
	data, err := benchmarks.Generate(sz.Spec(1))
	if err != nil {
		t.Fatal(err)
	}
	p := &planProcess{fleet: filepath.Join(dir, "fleet.json"), out: filepath.Join(dir, "plan.json")}
	if err := os.WriteFile(p.fleet, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"plan", "--fleet", p.fleet, "--time-limit", "60s", "--format", "json", "-o", p.out}
	p.cmd = exec.Command(os.Args[0], "-test.run=^$")
	p.cmd.Env = append(os.Environ(), helperArgs+"="+strings.Join(args, "\n"), "POOLSOLVE_TRACE=1")
	errPipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill() })
	p.stderr = bufio.NewScanner(errPipe)
	if !p.waitFor("warm start:") {
		t.Fatalf("the search never started:\n%s", strings.Join(p.lines, "\n"))
	}
	return p
}

// waitFor reads stderr up to a line containing s.
func (p *planProcess) waitFor(s string) bool {
	for p.stderr.Scan() {
		p.lines = append(p.lines, p.stderr.Text())
		if strings.Contains(p.stderr.Text(), s) {
			return true
		}
	}
	return false
}

// signal sends sig and notes when.
func (p *planProcess) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	p.started = time.Now()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// wait reads stderr to its end and returns the exit code and how long
// after the last signal the process ended.
func (p *planProcess) wait(t *testing.T) (int, time.Duration) {
	t.Helper()
	p.waitFor("\x00")
	err := p.cmd.Wait()
	el := time.Since(p.started)
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return p.cmd.ProcessState.ExitCode(), el
}

func (p *planProcess) noTemporaryFile(t *testing.T) {
	t.Helper()
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(p.out), ".plan.json.tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestPlanStopsAtTheFirstSignalAndWritesTheBestPlanSoFar: Ctrl-C during
// the search used to kill plan with no output. Now the first signal stops
// the search, the best plan so far is written, marked interrupted, with
// each level's status true to its bound, `check` finds it valid, and the
// exit code is 130, long before the 60 s limit.
func TestPlanStopsAtTheFirstSignalAndWritesTheBestPlanSoFar(t *testing.T) {
	p := startPlan(t)
	p.signal(t, os.Interrupt)
	code, el := p.wait(t)
	stderr := strings.Join(p.lines, "\n")
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitInterrupted, stderr)
	}
	if el > 20*time.Second {
		t.Errorf("plan ended %v after the signal; the limit was 60 s", el)
	}
	if !strings.Contains(stderr, "stopping the search") {
		t.Errorf("stderr does not say the search stops:\n%s", stderr)
	}
	p.noTemporaryFile(t)
	data, err := os.ReadFile(p.out)
	if err != nil {
		t.Fatalf("no plan written: %v\n%s", err, stderr)
	}
	var doc struct {
		Interrupted bool `json:"interrupted"`
		Levels      []struct {
			Value, LowerBound int64
			Status            string
		} `json:"levels"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if !doc.Interrupted || len(doc.Levels) != 4 {
		t.Errorf("the plan says interrupted %v, %d levels", doc.Interrupted, len(doc.Levels))
	}
	for i, l := range doc.Levels {
		if (l.Status == "optimal") != (l.LowerBound >= l.Value) {
			t.Errorf("level %d is %s with value %d and lower bound %d", i+1, l.Status, l.Value, l.LowerBound)
		}
	}
	code, out, errOut := run(t, "check", "--fleet", p.fleet, "--plan", p.out, "--format", "json")
	var res checkResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != ExitOK || !res.Valid || res.Stated == nil || *res.Stated != res.Objective {
		t.Errorf("check exit %d, %+v: %v\n%s", code, res, err, errOut)
	}
}

// TestPlanExitsAtOnceAtASecondSignal: the second signal ends plan at
// once; -o then holds either nothing or a whole plan, and no temporary
// file is left.
func TestPlanExitsAtOnceAtASecondSignal(t *testing.T) {
	p := startPlan(t)
	p.signal(t, os.Interrupt)
	if !p.waitFor("stopping the search") {
		t.Fatalf("no word of the first signal:\n%s", strings.Join(p.lines, "\n"))
	}
	p.signal(t, syscall.SIGTERM)
	code, el := p.wait(t)
	stderr := strings.Join(p.lines, "\n")
	if code != ExitInterrupted {
		t.Fatalf("exit %d, want %d:\n%s", code, ExitInterrupted, stderr)
	}
	if el > 10*time.Second {
		t.Errorf("plan ended %v after the second signal", el)
	}
	p.noTemporaryFile(t)
	if data, err := os.ReadFile(p.out); err == nil && !json.Valid(data) {
		t.Errorf("a partial plan was written (%d bytes)", len(data))
	}
}
