// Package gateway reads a live fleet from a running LLooM gateway (or a
// `poolsolve serve` agent, which answers the same routes) for planning:
//
//	GET /gateway/cluster?inventory=1   every node's status, with inventory
//	GET /gateway/node?inventory=1      when the gateway is not a cluster
//	GET /gateway/profile               a node whose status has neither
//	                                   inventory nor machine profile
//	GET /gateway/metrics               of every reachable node: each LLooM
//	                                   gateway counts only its own requests
//
// Fetch asks those routes and returns a Fleet: one status and metrics
// document per node, with what the node's facts come from (its inventory,
// or a fallback for gateways that predate inventory) and, for a node that
// could not be asked, why. Fleet.Inputs merges it with the documents read from local
// files (the config, which a gateway does not serve, and any policy,
// profiles, benchmarks or recipes) into fleet.Inputs, through the fleet
// bundle format, so a live fleet and its snapshot plan alike.
//
// Every request is bounded: the whole fetch ends within Options.Timeout and
// each node has one budget within it, a refused connection is tried once
// more after a short backoff, a body size cap, JSON content types only, no
// redirects to another host, no proxy by default. A node that
// fails any of these is planned as unreachable with the reason; the rest
// of the fleet is still planned. Only a gateway that answers nothing
// usable, or refuses the key, fails the fetch.
//
// Secrets: the key is sent only as an Authorization bearer header and never
// appears in an error. Statuses pass through lloom's typed decoding, which
// drops fields it does not model (launch arguments, environment), and
// every answer then goes through lloom's one redaction pass (Redacted,
// RedactJSON) before the Fleet holds it. Errors quote neither node
// endpoints nor bodies, only short, redacted gateway messages.
//
// The package does not read files or environment variables (the caller
// passes the key and the config), build the pool, or plan.
package gateway
