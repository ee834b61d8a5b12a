package agent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"time"

	"github.com/poolsolve/poolsolve/inventory"
	"github.com/poolsolve/poolsolve/lloom"
)

// DefaultAddr is where Serve listens when given no address: loopback
// only, so a node is not exposed until its operator says so.
const DefaultAddr = "127.0.0.1:8190"

// Defaults for the zero fields of Config.
const (
	DefaultNodeTimeout   = 10 * time.Second
	DefaultInventoryWait = 25 * time.Second
	DefaultMaxBodyBytes  = 8 << 20
)

// InventorySource gives this node's inventory; *inventory.Collector is
// one.
type InventorySource interface {
	Inventory(ctx context.Context) (*inventory.Inventory, error)
}

var _ InventorySource = (*inventory.Collector)(nil)

// Config is what the agent serves and whom it asks.
type Config struct {
	// NodeID is this node's id. Required.
	NodeID string
	// Name is this node's display name; default NodeID.
	Name string
	// ClusterID and LeaderNode are echoed in /gateway/cluster.
	ClusterID  string
	LeaderNode string
	// APIKeyEnv names the environment variable that holds the admin
	// bearer token. Required, and the variable must be set: the agent
	// does not serve without a key.
	APIKeyEnv string
	// Peers are the other nodes of the cluster. A peer with NodeID is
	// ignored: this node is answered locally.
	Peers []Peer
	// LocalGateway is the LLooM gateway on this node, if any: the agent
	// relays its /gateway/metrics. Its ID is ignored (this node's), its
	// APIKeyEnv defaults to APIKeyEnv. Empty Endpoint: no relay.
	LocalGateway Peer
	// Inventory is this node's inventory. Required.
	Inventory InventorySource
	// Prober reads telemetry and system facts; default inventory.OS{}.
	Prober inventory.Prober
	// NodeTimeout bounds one remote node's answer; default 10s.
	NodeTimeout time.Duration
	// InventoryWait bounds waiting for this node's inventory before
	// answering 503 (the collection goes on; a retry finds it); default
	// 25s.
	InventoryWait time.Duration
	// MaxBodyBytes caps one remote answer; default 8 MiB.
	MaxBodyBytes int64
	// Transport carries requests to peers; default a clone of
	// http.DefaultTransport with proxies off (the bearer key must go
	// straight to the node).
	Transport http.RoundTripper
	// Getenv reads the environment variables that hold keys (APIKeyEnv,
	// the peers'); the caller gives it (the CLI: os.Getenv), as the
	// package reads no environment of its own accord.
	Getenv func(string) string
	// Now is the clock for telemetry timestamps; default time.Now.
	Now func() time.Time
}

// Peer is one other node: its agent's or gateway's base URL and the
// environment variable with the key it accepts (default: Config.APIKeyEnv).
type Peer struct {
	ID        string
	Name      string
	Endpoint  string
	APIKeyEnv string
}

// FromCluster fills the cluster part of a Config from LLooM's cluster
// block as seen by node self: id, leader, key variable and every other
// node's endpoint. `${ENV}` placeholders are not expanded here; a peer
// whose endpoint is not a URL is reported as unreachable when asked.
func FromCluster(c *lloom.Cluster, self string) Config {
	cfg := Config{NodeID: self, ClusterID: c.ID, LeaderNode: c.LeaderNode, APIKeyEnv: c.APIKeyEnv}
	ids := make([]string, 0, len(c.Nodes))
	for id := range c.Nodes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		n := c.Nodes[id]
		if id == self {
			cfg.Name = n.Name
			continue
		}
		cfg.Peers = append(cfg.Peers, Peer{ID: id, Name: n.Name, Endpoint: n.Endpoint, APIKeyEnv: n.APIKeyEnv})
	}
	return cfg
}

// ErrNoKey is returned by NewHandler when the admin key is not configured.
var ErrNoKey = errors.New("agent: no admin key")

func (c Config) withDefaults() (Config, error) {
	if c.NodeID == "" {
		return c, errors.New("agent: Config.NodeID is empty")
	}
	if c.Inventory == nil {
		return c, errors.New("agent: Config.Inventory is nil")
	}
	if c.Name == "" {
		c.Name = c.NodeID
	}
	if c.Prober == nil {
		c.Prober = inventory.OS{}
	}
	if c.NodeTimeout <= 0 {
		c.NodeTimeout = DefaultNodeTimeout
	}
	if c.InventoryWait <= 0 {
		c.InventoryWait = DefaultInventoryWait
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.Transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		t.MaxResponseHeaderBytes = 64 << 10
		c.Transport = t
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.APIKeyEnv == "" {
		return c, fmt.Errorf("%w: set the name of the environment variable that holds it (cluster.apiKeyEnv)", ErrNoKey)
	}
	if c.Getenv == nil {
		return c, fmt.Errorf("%w: Config.Getenv is nil, so %s cannot be read", ErrNoKey, c.APIKeyEnv)
	}
	if c.Getenv(c.APIKeyEnv) == "" {
		return c, fmt.Errorf("%w: environment variable %s is empty", ErrNoKey, c.APIKeyEnv)
	}
	seen := []string{c.NodeID}
	for _, p := range c.Peers {
		if p.ID == "" {
			return c, errors.New("agent: a peer has no id")
		}
		if p.ID != c.NodeID && slices.Contains(seen, p.ID) {
			return c, fmt.Errorf("agent: peer %q is listed twice", p.ID)
		}
		seen = append(seen, p.ID)
	}
	return c, nil
}
