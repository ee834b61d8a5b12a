package lloom

import (
	"fmt"
	"strings"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// InputError is one problem with one input file: a JSON syntax error, a
// value of the wrong type, or a value that breaks one of LLooM's rules.
//
// Path is a JSON path from the document root, such as
// `$.runtimes["qwen"].memoryGb` or `$.models[2].targets[0].backend`; it is
// empty for syntax errors. Line and Col (1-based, in bytes) are set when the
// problem was found while reading the bytes, and are zero for problems found
// later on the decoded values.
type InputError struct {
	File string
	Path string
	Line int
	Col  int
	Msg  string
}

// Error reads like `config.json:12:19: $.runtimes["qwen"].memoryGb: expected
// a number, got string "x"`, leaving out the parts that are unknown.
func (e *InputError) Error() string {
	return jsonpos.Message(e.File, e.Line, e.Col, e.Path, e.Msg)
}

// Problems is every problem a Validate method found, in a stable order
// (section by section, map keys sorted). A Validate method returns either
// nil or a non-empty Problems; errors.As finds each *InputError in it.
type Problems []*InputError

func (p Problems) Error() string {
	lines := make([]string, len(p))
	for i, e := range p {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.As find the individual *InputError values.
func (p Problems) Unwrap() []error {
	errs := make([]error, len(p))
	for i, e := range p {
		errs[i] = e
	}
	return errs
}

// GatewayError is the error envelope a gateway answers with instead of the
// document asked for: `{"error":{"message","type","code"}}`.
type GatewayError struct {
	File    string
	Message string
	Type    string
	Code    string
}

func (e *GatewayError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	b.WriteString("gateway error")
	if e.Code != "" {
		b.WriteString(" ")
		b.WriteString(e.Code)
	}
	if e.Type != "" {
		fmt.Fprintf(&b, " (%s)", e.Type)
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(e.Message)
	}
	return b.String()
}

// problems collects validation problems for one file.
type problems struct {
	file string
	list Problems
}

func (p *problems) add(path, format string, args ...any) {
	p.list = append(p.list, &InputError{File: p.file, Path: path, Msg: fmt.Sprintf(format, args...)})
}

func (p *problems) err() error {
	if len(p.list) == 0 {
		return nil
	}
	return p.list
}
