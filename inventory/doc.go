// Package inventory defines the node inventory document
// ("poolsolve.inventory/v1"): what one machine reports about itself beyond
// LLooM's machine profile — compute archs, memory domains with capacity,
// model roots with free disk, cached weights, installed commands and Docker
// images, and fabric links to peers. Parse reads it strictly, with errors
// that name the file and the JSON path; docs/inventory-json.md describes
// every field.
//
// The package only holds the format. The probes that collect an inventory
// on a machine arrive with their own issue; until then inventories are
// written by hand or by other tools and handed to poolsolve inside a fleet
// bundle or as separate files (see package fleet). It does not normalise
// values (arch spellings such as "12.1a" are catalog's business) and does
// not talk to gateways.
package inventory
