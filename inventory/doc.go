// Package inventory defines the node inventory document
// ("poolsolve.inventory/v1"): what one machine reports about itself beyond
// LLooM's machine profile — compute archs, memory domains with capacity,
// model roots with free disk, cached weights, installed commands and Docker
// images, and fabric links to peers. Parse reads it strictly, with errors
// that name the file and the JSON path; docs/inventory-json.md describes
// every field.
//
// Collect (and Collector, which caches) takes an inventory of the local
// machine through probes of the operating system, nvidia-smi, Docker and
// the model roots. Inventories reach the planner inside a fleet bundle, as
// separate files (see package fleet), or in a node status served by
// package agent. The package does not normalise values (arch spellings such
// as "12.1a" are catalog's business) and does not talk to gateways.
package inventory
