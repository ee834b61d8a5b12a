package scripttest_test

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/internal/shellwords"
	"github.com/poolsolve/poolsolve/solver/pb"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/poolsolve/poolsolve/cli"
)

// The script tests under testdata/script are cmd/go-style txtar files: a
// script of commands, then any files it needs. They run every example of
// every --help and of the README as written, against the real binary (this
// test binary, run as poolsolve), so an example that breaks fails CI.
//
// Beyond testscript's own commands (exec, stdout, stderr, grep, exists,
// cmp, env, kill, wait, ...; see its docs), a script has:
//
//	poolsolve ARGS       run poolsolve; it must exit 0, or non-zero after !,
//	                     unless a code line after it says otherwise
//	code N[|M...]        the last poolsolve exited N (or M ...)
//	lock NAME            hold NAME until the script ends: scripts that time
//	                     solvers, or listen on a fixed port, take turns
//	waitport ADDR        wait until something listens on ADDR (10 s at most)
//
// and examples/ and benchmarks/fixtures/ of the repository in its folder,
// as a command run from the repository's root sees them.

func TestMain(m *testing.M) {
	pb.ServeIfWorker()
	if filepath.Base(os.Args[0]) == "poolsolve" {
		os.Exit(cli.RunSince(time.Now(), os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(runTests(m))
}

// runTests puts this test binary on PATH as poolsolve, so that scripts
// can run it (in the background too) as a shell would.
func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "poolsolve-script-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	self, err := os.Executable()
	if err == nil {
		err = os.Symlink(self, filepath.Join(dir, "poolsolve"))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv("PATH", dir+string(filepath.ListSeparator)+os.Getenv("PATH"))
	return m.Run()
}

// scriptState is one script's last exit code, and the poolsolve command
// line whose non-zero exit no code line has accepted yet.
type scriptState struct {
	code      int
	ran       bool
	unchecked string
}

// settle fails the script if the last poolsolve exited non-zero and no
// code line accepted it.
func (st *scriptState) settle(fatalf func(string, ...any)) {
	if st.unchecked != "" {
		u := st.unchecked
		st.unchecked = ""
		fatalf("poolsolve %s exited %d, and no `code` line after it expects that", u, st.code)
	}
}

const stateKey = "poolsolve.scriptState"

// locks serialise scripts within this process; port locks also take a
// file lock, so that two test processes on one machine take turns.
var (
	locksMu sync.Mutex
	locks   = map[string]*sync.Mutex{}
)

func namedLock(name string) *sync.Mutex {
	locksMu.Lock()
	defer locksMu.Unlock()
	if locks[name] == nil {
		locks[name] = &sync.Mutex{}
	}
	return locks[name]
}

func TestScripts(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir:                 filepath.Join("..", "testdata", "script"),
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			if err := os.Symlink(filepath.Join(root, "examples"), filepath.Join(env.WorkDir, "examples")); err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Join(env.WorkDir, "benchmarks"), 0o755); err != nil {
				return err
			}
			if err := os.Symlink(filepath.Join(root, "benchmarks", "fixtures"), filepath.Join(env.WorkDir, "benchmarks", "fixtures")); err != nil {
				return err
			}
			// The environment a script starts from has no POOLSOLVE_*
			// or NO_COLOR of the person running the tests.
			env.Setenv("NO_COLOR", "")
			st := &scriptState{}
			env.Values[stateKey] = st
			env.Defer(func() { st.settle(func(f string, a ...any) { env.T().Fatal(fmt.Sprintf(f, a...)) }) })
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"poolsolve": func(ts *testscript.TestScript, neg bool, args []string) {
				st := ts.Value(stateKey).(*scriptState)
				st.settle(ts.Fatalf)
				err := ts.Exec("poolsolve", args...)
				st.code, st.ran = 0, true
				var ee *exec.ExitError
				switch {
				case errors.As(err, &ee):
					st.code = ee.ExitCode()
				case err != nil:
					ts.Fatalf("poolsolve: %v", err)
				}
				if neg && st.code == 0 {
					ts.Fatalf("poolsolve exited 0, want a failure")
				}
				if !neg && st.code != 0 {
					st.unchecked = strings.Join(args, " ")
				}
			},
			"code": func(ts *testscript.TestScript, neg bool, args []string) {
				st := ts.Value(stateKey).(*scriptState)
				if len(args) != 1 || neg {
					ts.Fatalf("usage: code N[|M...]")
				}
				if !st.ran {
					ts.Fatalf("code: no poolsolve ran before it")
				}
				for _, alt := range strings.Split(args[0], "|") {
					want, err := strconv.Atoi(alt)
					if err != nil {
						ts.Fatalf("usage: code N[|M...]: %v", err)
					}
					if st.code == want {
						st.unchecked = ""
						return
					}
				}
				ts.Fatalf("poolsolve exited %d, want %s", st.code, args[0])
			},
			"lock": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 || neg {
					ts.Fatalf("usage: lock NAME")
				}
				mu := namedLock(args[0])
				mu.Lock()
				f, err := os.OpenFile(filepath.Join(os.TempDir(), "poolsolve-script-"+args[0]+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
				ts.Check(err)
				ts.Check(syscall.Flock(int(f.Fd()), syscall.LOCK_EX))
				ts.Defer(func() {
					syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
					f.Close()
					mu.Unlock()
				})
			},
			"waitport": func(ts *testscript.TestScript, neg bool, args []string) {
				if len(args) != 1 || neg {
					ts.Fatalf("usage: waitport ADDR")
				}
				for deadline := time.Now().Add(10 * time.Second); ; {
					c, err := net.DialTimeout("tcp", args[0], time.Second)
					if err == nil {
						c.Close()
						return
					}
					if time.Now().After(deadline) {
						ts.Fatalf("nothing listens on %s: %v", args[0], err)
					}
					time.Sleep(20 * time.Millisecond)
				}
			},
		},
	})
}

// An example is one command line shown in a help's Examples or in a
// README code block, and where it is shown.
type example struct {
	where, line string
}

// poolsolve runs the CLI in-process and returns what it printed.
func poolsolve(t *testing.T, args ...string) string {
	t.Helper()
	var out, errOut strings.Builder
	if code := cli.Run(append([]string{"poolsolve"}, args...), strings.NewReader(""), &out, &errOut); code != cli.ExitOK {
		t.Fatalf("poolsolve %s: exit %d\n%s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

// helpExamples are the command lines under "Examples:" in the top-level
// help and in every command's help, as --help prints them. The commands
// are those completion offers.
func helpExamples(t *testing.T) []example {
	var out []example
	add := func(where, help string) {
		lines := strings.Split(help, "\n")
		for i, l := range lines {
			if strings.TrimSpace(l) != "Examples:" {
				continue
			}
			indent := len(l) - len(strings.TrimLeft(l, " "))
			for _, e := range lines[i+1:] {
				if strings.TrimSpace(e) == "" || len(e)-len(strings.TrimLeft(e, " ")) <= indent {
					break // the block ends at a blank or a shallower line
				}
				out = append(out, example{where, strings.TrimSpace(e)})
			}
		}
	}
	add("poolsolve --help", poolsolve(t, "--help"))
	for _, name := range strings.Fields(poolsolve(t, "--generate-bash-completion")) {
		if name != "help" {
			add("poolsolve "+name+" --help", poolsolve(t, name, "--help"))
		}
	}
	return out
}

// readmeExamples are the poolsolve command lines of the README's sh code
// blocks; `go run . ARGS` is poolsolve ARGS run from a checkout.
func readmeExamples(t *testing.T) []example {
	data, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out []example
	in := false
	for _, l := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(l, "```sh"):
			in = true
		case strings.HasPrefix(l, "```"):
			in = false
		case in:
			l = strings.TrimSpace(l)
			if rest, ok := strings.CutPrefix(l, "go run . "); ok {
				l = "poolsolve " + rest
			}
			if strings.HasPrefix(l, "poolsolve ") {
				out = append(out, example{"README.md", l})
			}
		}
	}
	return out
}

// shellWords splits an example as a shell would for the cases examples
// use: words, 'single-quoted' words, a trailing # comment.
func shellWords(s string) []string { return shellwords.Split(s) }

// scriptCommand is a command a script runs: its words without conditions,
// negation, exec and a trailing &, and its script.
type scriptCommand struct {
	script string
	words  []string
}

var (
	condition  = regexp.MustCompile(`^\[[^\]]*\]$`)
	background = regexp.MustCompile(`^&([A-Za-z0-9]+&)?$`)
)

// scriptCommands reads the command lines of every script, and checks that
// each failing poolsolve states the exit code it expects.
func scriptCommands(t *testing.T) (cmds []scriptCommand, envs map[string][]string, copies map[string][]string) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "script", "*.txtar"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts in testdata/script: %v", err)
	}
	envs, copies = map[string][]string{}, map[string][]string{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(f)
		script, _, _ := strings.Cut(string(data), "\n-- ")
		pendingFailure := ""
		for _, l := range strings.Split(script, "\n") {
			words := shellWords(strings.TrimSpace(l))
			for len(words) > 0 && condition.MatchString(words[0]) {
				words = words[1:]
			}
			neg := len(words) > 0 && words[0] == "!"
			if neg {
				words = words[1:]
			}
			if len(words) == 0 {
				continue
			}
			switch words[0] {
			case "exec":
				words = words[1:]
				if n := len(words); n > 0 && background.MatchString(words[n-1]) {
					words = words[:n-1]
				}
			case "env":
				envs[name] = append(envs[name], words[1:]...)
				continue
			case "cp":
				copies[name] = append(copies[name], strings.Join(words[1:], " "))
				continue
			case "code":
				pendingFailure = ""
				continue
			case "poolsolve":
				if pendingFailure != "" {
					t.Errorf("%s: %q fails without a `code N` line after it", name, pendingFailure)
				}
				pendingFailure = ""
				if neg {
					pendingFailure = strings.Join(words, " ")
				}
			default:
				continue
			}
			cmds = append(cmds, scriptCommand{name, words})
		}
		if pendingFailure != "" {
			t.Errorf("%s: %q fails without a `code N` line after it", name, pendingFailure)
		}
	}
	return cmds, envs, copies
}

// TestEveryExampleIsAScript holds every example in every --help and in
// the README to a script that runs it as written: the same words, after
// the same VAR=value assignments (as `env` lines), with its > FILE
// redirect as `cp stdout FILE`.
func TestEveryExampleIsAScript(t *testing.T) {
	cmds, envs, copies := scriptCommands(t)
	examples := append(helpExamples(t), readmeExamples(t)...)
	if len(examples) < 40 {
		t.Fatalf("found only %d examples; is the Examples: block or the README read right?", len(examples))
	}
	for _, ex := range examples {
		words := shellWords(ex.line)
		var assigns []string
		for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
			assigns = append(assigns, words[0])
			words = words[1:]
		}
		redirect := ""
		if n := len(words); n >= 2 && words[n-2] == ">" {
			redirect, words = words[n-1], words[:n-2]
		}
		i := slices.IndexFunc(cmds, func(c scriptCommand) bool { return slices.Equal(c.words, words) })
		if i < 0 {
			t.Errorf("%s: the example %q has no script in testdata/script that runs it as written", ex.where, ex.line)
			continue
		}
		script := cmds[i].script
		for _, a := range assigns {
			if !slices.Contains(envs[script], a) {
				t.Errorf("%s: %s runs %q without `env %s`", ex.where, script, ex.line, a)
			}
		}
		if redirect != "" && !slices.Contains(copies[script], "stdout "+redirect) {
			t.Errorf("%s: %s runs %q without `cp stdout %s`", ex.where, script, ex.line, redirect)
		}
	}
}

func TestShellWordsSplitLikeAShell(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"poolsolve plan --fleet f.json", []string{"poolsolve", "plan", "--fleet", "f.json"}},
		{"poolsolve plan --status 'nodes/*.json'   # a comment", []string{"poolsolve", "plan", "--status", "nodes/*.json"}},
		{"poolsolve plan --pin 'a=b#c'", []string{"poolsolve", "plan", "--pin", "a=b#c"}},
		{"A=1 poolsolve x > out.json", []string{"A=1", "poolsolve", "x", ">", "out.json"}},
	}
	for _, tc := range tests {
		if got := shellWords(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("shellWords(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
