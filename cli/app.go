package cli

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/internal/printable"
	"github.com/poolsolve/poolsolve/lloom"
)

// Exit codes of every command; `poolsolve plan --help` documents them.
const (
	ExitOK         = 0 // done; for plan: a plan was found and it changes nothing
	ExitChanges    = 1 // plan: a plan was found and it changes what runs
	ExitBadInput   = 2 // bad flags or input files; nothing was written
	ExitInfeasible = 3 // plan: the hard constraints (pins, cordons) admit no plan
	ExitFailure    = 4 // anything else: I/O failure, internal error
	// With plan --detailed-exitcode only:
	ExitLosesCoverage = 5 // plan: a source that is served now loses all coverage
	ExitNotProved     = 6 // plan: some level is not proved optimal (the search was cut short)
)

// exitError carries an exit code through urfave/cli.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func badInput(format string, args ...any) error {
	return &exitError{ExitBadInput, fmt.Errorf(format, args...)}
}

// Run runs poolsolve with args (args[0] is the program name) and returns
// the exit code. It never calls os.Exit, so tests can drive it.
func Run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return RunSince(time.Now(), args, stdin, stdout, stderr)
}

// RunSince is Run for a process that started at start: a --time-limit
// counts from then, reading the inputs included.
func RunSince(start time.Time, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// Messages may quote what an input holds; they leave redacted.
	raw := stderr
	stderr = &redactingWriter{w: stderr}
	// "-" reads this stdin; each run starts with the default size limit.
	lloom.SetInputs(stdin, 0)
	app := newApp(stdin, stdout, stderr)
	app.Metadata = map[string]any{rawStderrKey: raw, startKey: start, rawArgsKey: args}
	if len(args) >= 1 && args[len(args)-1] == completeFlag {
		completeWords(app, args[1:len(args)-1], stdout)
		return ExitOK
	}
	err := app.Run(flagsFirst(app, args))
	if err == nil {
		return ExitOK
	}
	// urfave's help command reports a topic it does not know this way.
	if topic, ok := strings.CutPrefix(err.Error(), "No help topic for '"); ok {
		err = commandNotFound(app, strings.TrimSuffix(topic, "'"))
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintf(stderr, "poolsolve: %s\n", msg)
	}
	return exitCode(err)
}

// startKey holds, in the app's Metadata, when the process started.
const startKey = "start"

// started is when the process started (or Run was called).
func started(c *cli.Context) time.Time {
	if t, ok := c.App.Metadata[startKey].(time.Time); ok {
		return t
	}
	return time.Now()
}

func exitCode(err error) int {
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	// poolsolve's own code returns exitError; an ExitCoder comes from
	// urfave itself, for help on a command that does not exist.
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ExitBadInput
	}
	var ie *lloom.InputError
	var ps lloom.Problems
	if errors.As(err, &ie) || errors.As(err, &ps) {
		return ExitBadInput
	}
	return ExitFailure
}

func newApp(stdin io.Reader, stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:    "poolsolve",
		Usage:   "plan where model-serving lanes run across a pool of machines, and prove how good the plan is",
		Version: version(),
		Description: `poolsolve reads an LLooM fleet (config.json, fleet profiles, node status,
metrics, benchmarks, recipes, and its own pool.toml) and answers which model
lanes should run on which node, with which residency, how each alias should
route, and what that changes from what runs now. It is a dry run: nothing is
started, stopped or rerouted.

Give the inputs either as one fleet bundle (--fleet FILE) or as separate
files (--config, --profiles, --policy, --metrics, --status, ...). The common
flags also read POOLSOLVE_<FLAG> from the environment (POOLSOLVE_FLEET,
POOLSOLVE_TIME_LIMIT, ...); a flag on the command line wins.

'poolsolve help COMMAND' or 'poolsolve COMMAND -h' shows a command's flags,
examples and exit codes. Every command exits 2 on a usage error (an unknown
command or flag, a bad value) and on bad input files.

Examples:
   poolsolve plan --fleet examples/spark-fleet.json
   poolsolve help plan
   poolsolve --version`,
		Reader:    stdin,
		Writer:    stdout,
		ErrWriter: stderr,
		// --pin RUNTIME=NODE,NODE carries commas of its own; repeat a
		// flag instead of comma-separating it.
		DisableSliceFlagSeparator: true,
		// Errors are printed once, by Run, with their exit code; urfave's
		// own handler would exit the process.
		ExitErrHandler: func(*cli.Context, error) {},
		Commands: []*cli.Command{
			planCommand(),
			applyCommand(),
			resilienceCommand(),
			explainCommand(),
			catalogCommand(),
			validateCommand(),
			exportCommand(),
			checkCommand(),
			snapshotCommand(),
			inventoryCommand(),
			serveCommand(),
			benchCommand(),
			completionCommand(),
		},
		Action:       unknownCommand,
		OnUsageError: usageError,
	}
	for _, cmd := range app.Commands {
		cmd.OnUsageError = usageError
		if cmd.Before == nil && cmd.Name != "completion" {
			cmd.Before = noArguments
		}
	}
	return app
}

// rawStderrKey holds stderr without redaction, for the one line that must
// print a URL: where serve listens, the operator's own address; and for
// plan's progress line, which redraws itself with control characters.
const rawStderrKey = "poolsolve.rawStderr"

// rawStderr is stderr as given to Run, neither redacted nor escaped.
func rawStderr(c *cli.Context) io.Writer {
	if w, ok := c.App.Metadata[rawStderrKey].(io.Writer); ok {
		return w
	}
	return c.App.ErrWriter
}

// redactingWriter passes each write through lloom's free-text redaction,
// then escapes what a terminal would act on (messages quote ids from the
// inputs). Every write to stderr is whole lines, so a secret is never
// split. keep are strings the operator gave on the command line that
// messages name on purpose (the --gateway URL): they are no secret of
// the inputs.
type redactingWriter struct {
	w    io.Writer
	keep []string
}

func (r *redactingWriter) Write(p []byte) (int, error) {
	s := string(p)
	for i, k := range r.keep {
		s = strings.ReplaceAll(s, k, keepMark(i))
	}
	s = lloom.RedactText(s)
	for i, k := range r.keep {
		s = strings.ReplaceAll(s, keepMark(i), k)
	}
	if _, err := io.WriteString(r.w, printable.Lines(s)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func keepMark(i int) string { return "\x00keep" + strconv.Itoa(i) + "\x00" }

// keepInMessages lets messages name s, an operator's own flag value.
func keepInMessages(c *cli.Context, s string) {
	if rw, ok := c.App.ErrWriter.(*redactingWriter); ok && s != "" {
		rw.keep = append(rw.keep, s)
	}
}
