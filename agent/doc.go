// Package agent is the HTTP side of `poolsolve serve`: a small node agent
// that answers the read-only routes of a LLooM gateway a planner needs,
// in LLooM's own shapes (package lloom's NodeStatus and ClusterStatus), so
// a gateway client reads an agent and a gateway alike:
//
//	GET /gateway/node[?inventory=1]     this node: system, telemetry, and with
//	                                    inventory=1 its inventory and a machine
//	                                    profile derived from it
//	GET /gateway/cluster[?inventory=1]  every configured node, gathered in
//	                                    parallel from its agent or gateway
//	GET /gateway/profile                this machine's profile (LLooM's
//	                                    machine-profile v1), from its inventory
//	GET /gateway/metrics                the local LLooM gateway's metrics,
//	                                    relayed, when Config.LocalGateway is
//	                                    set; else 404
//	GET /health                         {"ok":true,"name":"poolsolve"}, no key
//
// They answer as a LLooM 0.2.3 gateway does. All are admin reads: the key,
// whose value is in the environment variable the config names
// (cluster.apiKeyEnv style), as a bearer token or else an x-api-key header
// (a bearer token wins, even a wrong one), compared in constant time; 401
// for a missing or a wrong key. GET /health and OPTIONS need no key. Any
// other method or path is 404 "unknown route", after the key check. Errors
// use LLooM's envelope {"error":{"message","type","code"}}. Serve listens
// on loopback unless told otherwise.
//
// What the agent adds to LLooM's answers is model-root paths, image names
// and fabric addresses. It never returns keys or backend URLs: remote
// answers pass through lloom's typed decoding (unknown fields are dropped)
// and Redacted, and its own error texts never quote an endpoint.
//
// Fetching a remote node is bounded: a per-node timeout, a body size cap,
// JSON content types only, no redirects to another host, no proxy. A node
// that fails any of these is reported as {reachable:false, error}; the rest
// of the cluster is still answered.
//
// The package does not collect the inventory (package inventory does),
// parse LLooM's config (the caller builds a Config; FromCluster helps), or
// plan anything. It is not the gateway client that reads live fleets for
// planning, though that client can parse these answers with lloom's
// ParseNodeStatus and ParseClusterStatus.
package agent
