package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/internal/suggest"
)

// This file holds what every command shares as a command line: the
// version, usage errors with suggestions, environment defaults, shell
// completion and file globs.

func init() {
	// --version only: -v reads as "verbose" to most operators.
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version (module version and commit) and exit"}
	cli.VersionPrinter = func(c *cli.Context) { fmt.Fprintln(c.App.Writer, "poolsolve "+c.App.Version) }
}

// version is the module version and commit the binary was built from, as
// the Go toolchain recorded them.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (no build information)"
	}
	return versionOf(bi)
}

// versionOf renders build information: "v1.2.0 (commit 0a1b2c3d4e5f,
// 2026-05-01T10:00:00Z)", with ", modified" for a dirty tree. go install
// pkg@version records the version; a build in a checkout records
// "(devel)" and, unless -buildvcs=false, the commit.
func versionOf(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, at string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	var parts []string
	switch {
	case rev != "":
		parts = append(parts, "commit "+rev[:min(len(rev), 12)])
	case v == "devel":
		parts = append(parts, "commit unknown")
	}
	if at != "" {
		parts = append(parts, at)
	}
	if modified {
		parts = append(parts, "modified")
	}
	if bi.GoVersion != "" {
		parts = append(parts, bi.GoVersion)
	}
	if len(parts) == 0 {
		return v
	}
	return v + " (" + strings.Join(parts, ", ") + ")"
}

// usageError turns a flag parse error into exit 2, naming the command's
// help and the nearest flag when the flag is mistyped.
func usageError(c *cli.Context, err error, _ bool) error {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: "); ok {
		name = strings.TrimLeft(name, "-")
		msg = fmt.Sprintf("unknown flag --%s", name)
		if s := nearest(name, flagNames(c)); s != "" {
			msg += fmt.Sprintf("; did you mean --%s?", s)
		}
	} else if name, ok := strings.CutPrefix(msg, "flag needs an argument: "); ok {
		msg = fmt.Sprintf("--%s needs a value", strings.TrimLeft(name, "-"))
	}
	return &exitError{ExitBadInput, fmt.Errorf("%s (%s --help lists every flag)", msg, commandPath(c))}
}

// commandPath is "poolsolve plan" for a command's context, "poolsolve" at
// the top.
func commandPath(c *cli.Context) string {
	if !atTop(c) {
		return "poolsolve " + c.Command.Name
	}
	return "poolsolve"
}

// atTop reports whether c is the top level's context, before any command.
func atTop(c *cli.Context) bool {
	return c.Command == nil || c.Command.Name == "" || c.Command.Name == c.App.Name
}

func flagNames(c *cli.Context) []string {
	flags := c.App.Flags
	if !atTop(c) {
		flags = c.Command.Flags
	}
	var names []string
	for _, f := range flags {
		names = append(names, f.Names()...)
	}
	return names
}

// unknownCommand is the top level's action: the first argument named no
// command (or there was none).
func unknownCommand(c *cli.Context) error {
	if !c.Args().Present() {
		cli.HelpPrinter(c.App.ErrWriter, cli.AppHelpTemplate, c.App)
		return &exitError{ExitBadInput, errors.New("no command given")}
	}
	return commandNotFound(c.App, c.Args().First())
}

// commandNotFound is the usage error for a command name that is none.
func commandNotFound(app *cli.App, name string) error {
	var names []string
	for _, cmd := range app.VisibleCommands() {
		names = append(names, cmd.Names()...)
	}
	msg := fmt.Sprintf("unknown command %q", name)
	if s := nearest(name, names); s != "" {
		msg += fmt.Sprintf("; did you mean %q?", s)
	}
	return &exitError{ExitBadInput, fmt.Errorf("%s (poolsolve --help lists every command)", msg)}
}

// noArguments refuses positional arguments: every command takes flags
// only, and a stray word is most often a flag without its dashes or a
// value without its flag.
func noArguments(c *cli.Context) error {
	if !c.Args().Present() {
		return nil
	}
	return &exitError{ExitBadInput, fmt.Errorf("unexpected argument %q: %s takes flags only (%s --help lists them)",
		c.Args().First(), commandPath(c), commandPath(c))}
}

// nearest is suggest.Nearest: the flag or command meant.
func nearest(s string, candidates []string) string { return suggest.Nearest(s, candidates) }

// envVar is the environment variable that gives a flag's default:
// POOLSOLVE_TIME_LIMIT for --time-limit.
func envVar(flag string) string {
	return "POOLSOLVE_" + strings.ToUpper(strings.ReplaceAll(flag, "-", "_"))
}

// envVars is envVar as urfave wants it.
func envVars(flag string) []string { return []string{envVar(flag)} }

// rawArgsKey holds, in the app's Metadata, the arguments Run was given.
const rawArgsKey = "poolsolve.args"

// onCommandLine reports whether the flag name (or an alias) was given on
// the command line, not only through its environment variable.
func onCommandLine(c *cli.Context, name string) bool {
	args, _ := c.App.Metadata[rawArgsKey].([]string)
	names := []string{name}
	if f := lookupFlag(c, name); f != nil {
		names = f.Names()
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		a, _, _ = strings.Cut(strings.TrimLeft(a, "-"), "=")
		if slices.Contains(names, a) {
			return true
		}
	}
	return false
}

func lookupFlag(c *cli.Context, name string) cli.Flag {
	if c.Command == nil {
		return nil
	}
	for _, f := range c.Command.Flags {
		if slices.Contains(f.Names(), name) {
			return f
		}
	}
	return nil
}

// flagLabel names where a flag's value came from, for messages: --config,
// or POOLSOLVE_CONFIG when only the environment gave it.
func flagLabel(c *cli.Context, name string) string {
	if !onCommandLine(c, name) && os.Getenv(envVar(name)) != "" {
		return envVar(name) + " (the environment)"
	}
	return "--" + name
}

// completionCommand prints a completion script for a shell. The scripts
// ask poolsolve itself for candidates (urfave's --generate-bash-completion
// protocol), so they stay right as commands and flags change.
func completionCommand() *cli.Command {
	return &cli.Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh or fish)",
		ArgsUsage: "SHELL",
		Description: `Prints a script that completes poolsolve's commands and flags in SHELL
(bash, zsh or fish). Load it in the shell's start-up file.

Exit codes:
   0  the script was printed
   2  no shell, or one that is not bash, zsh or fish

Examples:
   poolsolve completion bash > poolsolve.bash
   poolsolve completion zsh > _poolsolve
   poolsolve completion fish > poolsolve.fish`,
		OnUsageError: usageError,
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return badInput("completion: expected one shell, bash, zsh or fish (got %d arguments)", c.NArg())
			}
			var script string
			switch sh := c.Args().First(); sh {
			case "bash":
				script = bashCompletion
			case "zsh":
				script = zshCompletion
			case "fish":
				script = fishCompletion
			default:
				return badInput("completion %q: expected bash, zsh or fish", sh)
			}
			_, err := io.WriteString(c.App.Writer, script)
			return err
		},
	}
}

// completeFlag is the last argument of a completion request: the words
// typed so far, the word being typed last (empty for a new word), then
// this. Every shell's script asks this way, so all complete alike.
const completeFlag = "--generate-bash-completion"

// The scripts run the words typed so far with completeFlag and offer what
// poolsolve prints; with nothing offered, the shell completes file names.
const bashCompletion = `# bash completion for poolsolve: source this file, or copy it into
# /etc/bash_completion.d/ (generated by 'poolsolve completion bash').
_poolsolve_complete() {
  local IFS=$'\n' words
  words=$("${COMP_WORDS[0]}" "${COMP_WORDS[@]:1:$COMP_CWORD}" ` + completeFlag + ` 2>/dev/null)
  COMPREPLY=($(compgen -W "$words" -- "${COMP_WORDS[COMP_CWORD]}"))
}
complete -o bashdefault -o default -F _poolsolve_complete poolsolve
`

const zshCompletion = `#compdef poolsolve
# zsh completion for poolsolve: put this file on $fpath as _poolsolve
# (generated by 'poolsolve completion zsh').
_poolsolve() {
  local -a opts
  opts=("${(@f)$("${words[1]}" "${(@)words[2,CURRENT]}" ` + completeFlag + ` 2>/dev/null)}")
  opts=(${opts:#})
  if (( ${#opts} )); then
    compadd -a opts
  else
    _files
  fi
}
compdef _poolsolve poolsolve
`

const fishCompletion = `# fish completion for poolsolve: save as
# ~/.config/fish/completions/poolsolve.fish (generated by 'poolsolve
# completion fish').
function __poolsolve_candidates
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    set -l prog $tokens[1]
    set -e tokens[1]
    $prog $tokens "$cur" ` + completeFlag + ` 2>/dev/null
end
function __poolsolve_has_candidates
    test -n "$(__poolsolve_candidates | string collect)"
end
complete -c poolsolve -n __poolsolve_has_candidates -f -a '(__poolsolve_candidates)'
complete -c poolsolve -n 'not __poolsolve_has_candidates' -F
`

// flagChoices are the values of flags that take one of a fixed set, by
// command; "" holds the text-or-json --format most commands share.
var flagChoices = map[string]map[string][]string{
	"":           {"format": {"text", "json"}},
	"plan":       {"format": {"text", "json", "svg"}, "color": {"auto", "always", "never"}, "solver": {"exact", "greedy"}},
	"resilience": {"format": {"text", "json", "svg"}},
	"export":     {"format": {"opb", "lp", "wcnf", "cnf", "json"}},
	"bench":      {"format": {"text", "json", "markdown"}},
}

// choices are the fixed values of command cmd's flag, nil for any value.
func choices(cmd, flag string) []string {
	if c, ok := flagChoices[cmd][flag]; ok {
		return c
	}
	return flagChoices[""][flag]
}

// completeWords prints the candidates for the last of words (the
// arguments after the program's name, the word being typed last): the
// commands; a command's flags after a dash; a flag's fixed values after
// it; the shells after completion. Nothing printed lets the shell
// complete file names.
func completeWords(app *cli.App, words []string, w io.Writer) {
	if len(words) == 0 {
		words = []string{""}
	}
	cur, before := words[len(words)-1], words[:len(words)-1]
	offer := func(cands ...string) {
		for _, c := range cands {
			if strings.HasPrefix(c, cur) {
				fmt.Fprintln(w, c)
			}
		}
	}
	var cmd *cli.Command
	for _, word := range before {
		if strings.HasPrefix(word, "-") {
			continue
		}
		cmd = app.Command(word)
		break
	}
	if cmd == nil {
		if strings.HasPrefix(cur, "-") {
			offer("--help", "--version")
			return
		}
		for _, c := range app.VisibleCommands() {
			offer(c.Name)
		}
		return
	}
	switch cmd.Name {
	case "help":
		for _, c := range app.VisibleCommands() {
			offer(c.Name)
		}
		return
	case "completion":
		if !strings.HasPrefix(cur, "-") {
			offer("bash", "zsh", "fish")
			return
		}
	}
	if len(before) > 0 {
		if name, ok := strings.CutPrefix(before[len(before)-1], "--"); ok {
			if f := commandFlag(cmd, name); f != nil && f.TakesValue() {
				offer(choices(cmd.Name, name)...)
				return // a value: its choices, or file names
			}
		}
	}
	if strings.HasPrefix(cur, "-") {
		var names []string
		for _, f := range cmd.Flags {
			for _, n := range f.Names() {
				if len(n) > 1 {
					names = append(names, "--"+n)
				}
			}
		}
		names = append(names, "--help")
		slices.Sort(names)
		offer(slices.Compact(names)...)
	}
}

// commandFlag is cmd's flag called name, nil when there is none.
func commandFlag(cmd *cli.Command, name string) cli.DocGenerationFlag {
	for _, f := range cmd.Flags {
		if slices.Contains(f.Names(), name) {
			if d, ok := f.(cli.DocGenerationFlag); ok {
				return d
			}
		}
	}
	return nil
}

// expandGlobs expands the file part of repeated file flags: --status
// 'nodes/*.json' is every status file in nodes/. A value without glob
// characters is kept as given (a missing file is reported when it is
// read); a pattern that matches nothing is an error. With keyed values
// (NODE=FILE), a pattern must match exactly one file.
func expandGlobs(flag string, vals []string, keyed bool) ([]string, error) {
	var out []string
	for _, v := range vals {
		key, pattern, hasKey := "", v, false
		if keyed {
			if k, p, ok := strings.Cut(v, "="); ok {
				key, pattern, hasKey = k, p, true
			}
		}
		if !strings.ContainsAny(pattern, "*?[") {
			out = append(out, v)
			continue
		}
		matches, err := filepath.Glob(pattern)
		if err != nil {
			return nil, badInput("--%s %q: %w", flag, v, err)
		}
		if len(matches) == 0 {
			return nil, badInput("--%s %q: the pattern matches no file", flag, v)
		}
		if hasKey {
			if len(matches) > 1 {
				return nil, badInput("--%s %q: %s takes one file, the pattern matches %d (%s)", flag, v, key, len(matches), strings.Join(matches, ", "))
			}
			out = append(out, key+"="+matches[0])
			continue
		}
		out = append(out, matches...) // filepath.Glob sorts them
	}
	return out, nil
}
