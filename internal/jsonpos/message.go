package jsonpos

import (
	"strconv"
	"strings"
)

// Message is a problem as poolsolve's parsers print it, e.g.
// `config.json:12:19: $.runtimes["qwen"].memoryGb: expected a number`,
// leaving out the parts that are unknown (an empty file or path, a zero
// line); a position without a file reads `line 12:19`. lloom's InputError
// and eval's PlanError both print through it, so their problems read
// alike.
func Message(file string, line, col int, path, msg string) string {
	var b strings.Builder
	b.WriteString(file)
	if line > 0 {
		if file == "" {
			b.WriteString("line ")
		} else {
			b.WriteString(":")
		}
		b.WriteString(strconv.Itoa(line) + ":" + strconv.Itoa(col))
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if path != "" {
		b.WriteString(path + ": ")
	}
	b.WriteString(msg)
	return b.String()
}
