// Package examples holds example fleets as fleet bundles
// (docs/fleet-bundle.md), and embeds them (Bundles) for benchmarks'
// fixture suite and for tests of any package.
//
// Each bundle's "description" says what it holds and what the planner must
// conclude; the planner's golden tests run on them, so their numbers
// matter and change only together with those goldens.
//
//   - spark-fleet.json: the three DGX Sparks. The SparkQwen TP2 pair runs
//     by hand on spark-node-01+02 (108 GiB each); spark-node-03 carries
//     embeddings, speech-to-text and TTS (always), the image model
//     (preferred) and the stopped 27B standalone slot; one cloud fallback.
//     Links 01-02 and 01-03, not 02-03. Profiles sparkqwen-pair-rc16 (the
//     layout today) and standalone.
//   - hetero-fleet.json: two Sparks and a Mac that is a federated gateway,
//     an embeddings alias with an optional Mac member and a cloud
//     fallback, and one recipe per platform.
//   - rule-unlinked-tp.json: a TP2 lane whose only pair is not linked.
//   - rule-arch-mismatch.json: a lane needing sm_90 on an sm_121 node.
//   - rule-headroom.json: a lane that fits LLooM's admission budget but not
//     budget minus headroom.
//   - gpu-packing.json: one 8xH100 box whose first four GPUs hold a kept
//     TP4 runtime; a TP4 recipe fits only on the other four, and a one-GPU
//     recipe only as an auto lane beside it.
//   - spark-fleet/: spark-fleet.json split into separate files (config.json,
//     profiles/, pool.toml, metrics.json, nodes/), for the examples that
//     read a fleet file by file; package fleet's tests keep it equal to the
//     bundle.
//
// The package holds data and imports nothing of poolsolve's; package
// fleet parses the bundles.
package examples
