package eval_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
)

func TestReportErr(t *testing.T) {
	if err := eval.Check(basePool(), good()).Err(); err != nil {
		t.Fatalf("a valid plan's Err() = %v, want nil", err)
	}
	bad := with(func(a *model.Assignment) { a.Lanes = append(a.Lanes, lane("nope", model.Auto, "mac-01")) })
	rep := eval.Check(basePool(), bad)
	wrapped := fmt.Errorf("solve: %w", rep.Err())

	var vs eval.Violations
	if !errors.As(wrapped, &vs) {
		t.Fatalf("errors.As(%v, *Violations) = false, want the violations", wrapped)
	}
	if len(vs) != len(rep.Violations) || !rep.Has(eval.RuleUnknownVariant) || vs[0].Rule != rep.Violations[0].Rule {
		t.Errorf("violations through the error = %v, want %v", vs, rep.Violations)
	}
	if want := "eval: nope: "; !strings.HasPrefix(rep.Err().Error(), want) || !strings.HasSuffix(rep.Err().Error(), "(unknown-variant)") {
		t.Errorf("message = %q, want %q... (unknown-variant)", rep.Err(), want)
	}
	vs[0].Subject = "changed"
	if rep.Violations[0].Subject == "changed" {
		t.Error("the error shares the report's violations: changing one changes the other")
	}
}
