// Package lloom reads LLooM's own files exactly as LLooM writes them: the
// gateway config (config.json), fleet profiles (profiles/<name>.json),
// machine profiles (machine-profile v1), node and cluster status
// (/gateway/node, /gateway/cluster), metrics (/gateway/metrics and the
// persisted history file), benchmark suites (benchmark-suite v1) and
// recipes (recipe v1).
//
// Every parser takes the bytes and a file name and returns typed Go values
// or an error that names the file, the JSON path and, for problems found
// while reading, the line and column:
//
//	config.json:14:19: $.runtimes["qwen"].memoryGb: expected a number, got string "40"
//
// Parsing checks syntax and types only; the Validate methods check LLooM's
// rules (unknown runtimes, backends and nodes, alias cycles, route
// profiles, residency, negative memory, ...) and return every problem at
// once as a Problems. Numbers that may be absent are pointers, so "not
// set" differs from 0. Unknown fields are ignored. `${ENV}` placeholders
// are kept verbatim and never expanded.
//
// The package also restates the small pieces of LLooM semantics a planner
// must agree with: ModelTargets, RuntimePlacement, RuntimeMemoryGb,
// MaterializeFederated, MemoryDomains, the alias expansion, and the
// launch-argument inference used by the recipe catalog (NormalizeArch,
// InferFromLaunch).
//
// Secrets: configs and node status carry backend URLs and keys. They are
// kept on read so nothing is lost, but anything poolsolve prints, writes or
// serves goes through the one redaction pass in redact.go first: Redact
// (and the Redacted methods) on Go values, RedactJSON on JSON text,
// RedactText on free text.
//
// The package does not build the planner's model (package catalog does,
// from these types), does not talk to the network (callers fetch gateway
// answers and pass the bytes), does not expand environment variables, and
// never writes LLooM's files.
package lloom
