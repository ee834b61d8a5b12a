package cli

import (
	"context"
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/poolsolve/poolsolve/agent"
	"github.com/poolsolve/poolsolve/internal/printable"
	"github.com/poolsolve/poolsolve/inventory"
	"github.com/poolsolve/poolsolve/lloom"
)

const serveHelp = `Runs a small node agent that answers the read-only routes of a LLooM
gateway a planner needs, in LLooM's own shapes:

   GET /gateway/node[?inventory=1]      this node: system, memory telemetry, and with
                                        inventory=1 its inventory and a machine profile
   GET /gateway/cluster[?inventory=1]   every node of --config's cluster, asked in
                                        parallel, each within --node-timeout
   GET /gateway/profile                 this machine's profile (machine-profile v1)
   GET /gateway/metrics                 with --lloom URL, the local LLooM gateway's
                                        metrics, relayed (its key: the same variable)

so 'poolsolve plan --gateway URL' reads a node without LLooM, or a newer
inventory next to an older gateway. The inventory is collected on request
and cached for 5 minutes.

It answers as a LLooM 0.2.3 gateway does. All routes are admin reads: the
key, from the environment variable named by --api-key-env (else the
config's cluster.apiKeyEnv), as a bearer token or else an x-api-key header,
compared in constant time; 401 for a missing or a wrong key. GET /health
answers {"ok":true,"name":"poolsolve"} without a key; any other method or
path is 404 "unknown route" once the key is right. The agent refuses to
start without a key, unless --insecure-no-auth is given, which is allowed
on a loopback address only. It listens on loopback unless told otherwise
and stops gracefully on SIGINT or SIGTERM.

The node id is picked as LLooM picks it: --node-id, else $LLOOM_NODE_ID,
else the config's cluster.nodeId (its ${ENV} references expanded), else the
host name. So an agent started beside a gateway with the same environment
and config takes the same id.

Exit codes:
   0  stopped by SIGINT or SIGTERM
   2  bad flags or config, no key, or --insecure-no-auth off loopback
   4  the address cannot be listened on, or the server failed

Examples:
   LLOOM_CLUSTER_KEY=... poolsolve serve --config examples/spark-fleet/config.json
   LLOOM_CLUSTER_KEY=... poolsolve serve --listen 0.0.0.0:8101 --config examples/spark-fleet/config.json --model-root /srv/models
   LLOOM_CLUSTER_KEY=... poolsolve serve --config examples/spark-fleet/config.json --lloom http://127.0.0.1:8100
   poolsolve serve --insecure-no-auth --node-id mac-studio
   LLOOM_CLUSTER_KEY=... poolsolve plan --gateway http://127.0.0.1:8101 --config examples/spark-fleet/config.json`

// DefaultListen is where serve listens without --listen.
const DefaultListen = "127.0.0.1:8101"

// serveUntil is the context serve runs in: until SIGINT or SIGTERM. Tests
// replace it to stop the server themselves.
var serveUntil = func(ctx context.Context) (context.Context, context.CancelFunc) {
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

func serveCommand() *cli.Command {
	return &cli.Command{
		Name:        "serve",
		Usage:       "run a node agent that serves this machine's status and inventory as a LLooM gateway does",
		Description: serveHelp,
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "listen", Value: DefaultListen, Usage: "listen on `ADDR` (host:port)"},
			&cli.StringFlag{Name: "config", EnvVars: envVars("config"), Usage: "LLooM config.json (`FILE`): this node's id, the cluster's other nodes and their endpoints, the key variable", TakesFile: true},
			&cli.StringFlag{Name: "node-id", Usage: "this node's `ID` (default, as LLooM picks it: $LLOOM_NODE_ID, else the config's cluster.nodeId, else the host name)"},
			&cli.StringFlag{Name: "api-key-env", EnvVars: envVars("api-key-env"), Usage: "environment variable `NAME` holding the admin bearer key (default: the config's cluster.apiKeyEnv)"},
			&cli.BoolFlag{Name: "insecure-no-auth", Usage: "serve without a key; allowed on a loopback address only"},
			&cli.StringSliceFlag{Name: "model-root", Usage: "also scan `DIR` for weights, on top of the Hugging Face cache (repeatable)", TakesFile: true},
			&cli.DurationFlag{Name: "node-timeout", Value: agent.DefaultNodeTimeout, Usage: "give up on another node's answer after `DURATION`"},
			&cli.StringFlag{Name: "lloom", Usage: "the LLooM gateway on this node, at `URL`: /gateway/metrics relays its metrics (asked with the same key variable)"},
		},
		OnUsageError: usageError,
		Action:       runServe,
	}
}

func runServe(c *cli.Context) error {
	addr := c.String("listen")
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return badInput("--listen %q: expected host:port", addr)
	}
	insecure := c.Bool("insecure-no-auth")
	if insecure && !isLoopback(host) {
		return badInput("--insecure-no-auth serves without a key, so on loopback only; --listen %q is not a loopback address", addr)
	}
	if c.Duration("node-timeout") <= 0 {
		return badInput("--node-timeout %s: expected a positive duration", c.Duration("node-timeout"))
	}
	opts, cfg, err := inventoryOptions(c)
	if err != nil {
		return err
	}
	self := opts.NodeID
	if self == "" {
		if self, err = os.Hostname(); err != nil || self == "" {
			return badInput("no node id: give --node-id, set LLOOM_NODE_ID, or set cluster.nodeId in the config")
		}
		opts.NodeID = self
		if cfg != nil {
			opts.Links, opts.FabricPeers = inventory.FabricFromCluster(&cfg.Cluster, self)
		}
	}
	acfg := agent.Config{NodeID: self}
	if cfg != nil {
		acfg = agent.FromCluster(&cfg.Cluster, self)
	}
	acfg.NodeTimeout = c.Duration("node-timeout")
	acfg.Getenv = os.Getenv
	if u := c.String("lloom"); u != "" {
		if !isHTTPURL(u) {
			return badInput("--lloom %q: expected http(s)://host[:port] of the LLooM gateway on this node", u)
		}
		acfg.LocalGateway = agent.Peer{ID: self, Endpoint: u}
	}
	acfg.Inventory = inventory.NewCollector(opts)
	keyEnv := c.String("api-key-env")
	if keyEnv != "" {
		// The value is never printed: it may be the key itself.
		if err := checkKeyEnv(keyEnv); err != nil && !(insecure && envName.MatchString(keyEnv)) {
			return err
		}
	} else if cfg != nil && envName.MatchString(cfg.Cluster.APIKeyEnv) {
		keyEnv = cfg.Cluster.APIKeyEnv
	}
	auth := "admin key from $" + keyEnv
	acfg.APIKeyEnv = keyEnv
	if acfg.LocalGateway.Endpoint != "" {
		acfg.LocalGateway.APIKeyEnv = keyEnv
	}
	if keyEnv == "" || os.Getenv(keyEnv) == "" {
		if !insecure {
			what := "no --api-key-env and no cluster.apiKeyEnv in the config"
			if keyEnv != "" {
				what = "environment variable " + keyEnv + " is unset or empty"
			}
			return badInput("serve needs an admin key (%s): set it, or give --insecure-no-auth to serve on loopback without one", what)
		}
		noAuth(&acfg, keyEnv)
		auth = "NO KEY (--insecure-no-auth, loopback only)"
	}
	h, err := agent.NewHandler(acfg)
	if err != nil {
		return badInput("serve: %w", err)
	}
	if insecure && acfg.APIKeyEnv == insecureKeyEnv {
		h = withKey(h, acfg.Getenv(insecureKeyEnv))
	}
	ctx, stop := serveUntil(c.Context)
	defer stop()
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return errorf("listen on %s: %w", addr, err)
	}
	// Not redacted: the listen address is the operator's, and tools read it.
	routes := "GET /gateway/node, /gateway/cluster, /gateway/profile"
	if acfg.LocalGateway.Endpoint != "" {
		routes += ", /gateway/metrics (relayed)"
	}
	fmt.Fprintf(rawStderr(c), "poolsolve serve: node %s listening on http://%s (%s; %s); SIGINT or SIGTERM stops it\n", printable.String(lloom.RedactText(self)), ln.Addr(), routes, auth)
	if err := agent.ServeListener(ctx, ln, h); err != nil {
		return errorf("serve: %w", err)
	}
	fmt.Fprintf(c.App.ErrWriter, "poolsolve serve: stopped\n")
	return nil
}

// insecureKeyEnv is the variable the agent is told holds its key under
// --insecure-no-auth; only the agent's own Getenv knows its value.
const insecureKeyEnv = "POOLSOLVE_INSECURE_LOCAL_KEY"

// noAuth sets the agent up to serve without a key: the agent always wants
// one, so it gets a random key that withKey puts on every request. Other
// nodes are still asked with the real key variable, never with this one.
func noAuth(acfg *agent.Config, keyEnv string) {
	token := rand.Text()
	peerEnv := keyEnv
	if peerEnv == "" {
		peerEnv = "LLOOM_CLUSTER_KEY"
	}
	for i := range acfg.Peers {
		if acfg.Peers[i].APIKeyEnv == "" {
			acfg.Peers[i].APIKeyEnv = peerEnv
		}
	}
	if acfg.LocalGateway.Endpoint != "" && acfg.LocalGateway.APIKeyEnv == "" {
		acfg.LocalGateway.APIKeyEnv = peerEnv
	}
	acfg.APIKeyEnv = insecureKeyEnv
	acfg.Getenv = func(k string) string {
		if k == insecureKeyEnv {
			return token
		}
		return os.Getenv(k)
	}
}

// withKey authorises every request with key before h sees it.
func withKey(h http.Handler, key string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+key)
		h.ServeHTTP(w, r)
	})
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.User == nil && u.RawQuery == ""
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
