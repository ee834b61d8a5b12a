package fleet

import (
	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// documentKinds names the documents poolsolve writes or reads by their
// schema, each with how to give it: a file given where another kind
// belongs is refused with what it is, not read as an empty one.
var documentKinds = map[string]string{
	BundleSchema:               "a fleet bundle (give it with --fleet)",
	"poolsolve.plan/v1":        "a plan (check reads it with --plan)",
	"poolsolve.inventory/v1":   "an inventory (give it with --inventory)",
	HistorySchema:              "a demand history (give it with --demand-history)",
	"poolsolve.instance/v1":    "an exported instance (an external solver reads it)",
	"poolsolve.resilience/v1":  "a resilience report",
	"poolsolve.explain/v1":     "an explain answer",
	"poolsolve.bench-suite/v1": "a benchmark suite (bench reads its folder with --suite)",
}

// configKeys are top-level keys only LLooM's config.json has.
var configKeys = []string{"cluster", "runtimes", "models", "backends", "aliases"}

// kindOf names what doc is when it is one of documentKinds, or LLooM's
// config.json (no schema, a config's blocks); "" otherwise.
func kindOf(doc *jsonpos.Value) string {
	if doc == nil || doc.Kind != jsonpos.Object {
		return ""
	}
	if s := doc.Get("schema"); s != nil && s.Kind == jsonpos.String {
		return documentKinds[s.Text]
	}
	if doc.Get("schema") != nil {
		return ""
	}
	for _, k := range configKeys {
		if doc.Get(k) != nil {
			return "LLooM's config.json (give it with --config)"
		}
	}
	return ""
}
