package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/poolsolve/poolsolve/internal/safehttp"
	"github.com/poolsolve/poolsolve/inventory"
	"github.com/poolsolve/poolsolve/lloom"
)

// maxParallel bounds how many peers are asked at once.
const maxParallel = 16

// gather answers /gateway/cluster: this node locally and every peer over
// HTTP, in parallel, each within the node timeout. It always answers; a
// peer that fails is reported as unreachable with the reason.
func (h *handler) gather(ctx context.Context, withInventory bool) *lloom.ClusterStatus {
	cs := &lloom.ClusterStatus{
		Enabled: true, ID: h.cfg.ClusterID, NodeID: h.cfg.NodeID, LeaderNode: h.cfg.LeaderNode,
		Nodes: map[string]lloom.NodeStatus{},
	}
	var peers []Peer
	for _, p := range h.cfg.Peers {
		if p.ID != h.cfg.NodeID {
			peers = append(peers, p)
		}
	}
	out := make([]lloom.NodeStatus, len(peers))
	var local *lloom.NodeStatus
	var localErr error
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxParallel)
	wg.Go(func() {
		// The whole answer stays within the node timeout, this node too.
		local, localErr = h.localStatus(ctx, withInventory, h.cfg.NodeTimeout)
	})
	for i, p := range peers {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
				out[i] = unreachable(p, errors.New("request cancelled"))
				return
			}
			out[i] = h.remote(ctx, p, withInventory)
		})
	}
	wg.Wait()
	if localErr != nil {
		// Reachable, and says why its inventory is missing.
		local.Error = lloom.Message(localErr.Error())
	}
	cs.Nodes[h.cfg.NodeID] = *local
	for i, p := range peers {
		cs.Nodes[p.ID] = out[i]
	}
	return cs
}

func unreachable(p Peer, err error) lloom.NodeStatus {
	return lloom.NodeStatus{ID: p.ID, Name: peerName(p), Reachable: false, Error: lloom.Message(err.Error())}
}

func peerName(p Peer) string {
	if p.Name != "" {
		return p.Name
	}
	return p.ID
}

// remote asks one peer for its node status.
func (h *handler) remote(ctx context.Context, p Peer, withInventory bool) lloom.NodeStatus {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.NodeTimeout)
	defer cancel()
	st, err := h.fetch(ctx, p, withInventory)
	if err != nil {
		u := unreachable(p, err)
		var mm *mismatchError
		if errors.As(err, &mm) {
			u.Identity = &lloom.NodeIdentity{ConfiguredID: p.ID, ClaimedID: mm.claimed, Mismatch: true}
		}
		return u
	}
	return *st
}

// mismatchError is a peer that answered as another node: its endpoint
// points at the wrong machine, and planning it as this node would count
// one machine twice.
type mismatchError struct{ claimed string }

func (e *mismatchError) Error() string {
	return fmt.Sprintf("endpoint answered as node %q", clip(e.claimed))
}

// fetch gets, checks and cleans one peer's answer. Its errors never quote
// the endpoint, the key, or the body.
func (h *handler) fetch(ctx context.Context, p Peer, withInventory bool) (*lloom.NodeStatus, error) {
	query := ""
	if withInventory {
		query = "inventory=1"
	}
	body, err := h.get(ctx, p, "/gateway/node", query)
	if err != nil {
		return nil, err
	}
	st, err := lloom.ParseNodeStatus(body, p.ID)
	if err != nil {
		return nil, fmt.Errorf("answer is not a node status: %s", clip(err.Error()))
	}
	return h.cleanRemote(p, st, withInventory)
}

// get fetches one JSON document from route under a peer's endpoint, with
// its key. Its errors never quote the endpoint, the key, or the body.
func (h *handler) get(ctx context.Context, p Peer, route, query string) ([]byte, error) {
	target, err := peerURL(p.Endpoint, route, query)
	if err != nil {
		return nil, err
	}
	keyEnv := p.APIKeyEnv
	if keyEnv == "" {
		keyEnv = h.cfg.APIKeyEnv
	}
	key := h.cfg.Getenv(keyEnv)
	if key == "" {
		return nil, fmt.Errorf("no key for this node: environment variable %s is empty", keyEnv)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return nil, errors.New("endpoint is not a usable URL")
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Accept", "application/json")
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, safehttp.Describe(err, h.cfg.NodeTimeout)
	}
	defer resp.Body.Close()
	body, tooLarge, err := safehttp.ReadCapped(resp.Body, h.cfg.MaxBodyBytes)
	if err != nil {
		return nil, safehttp.Describe(err, h.cfg.NodeTimeout)
	}
	if tooLarge {
		return nil, fmt.Errorf("answer larger than %d bytes", h.cfg.MaxBodyBytes)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, statusError(resp.StatusCode, body, p.ID, keyEnv)
	}
	if !safehttp.IsJSON(resp.Header.Get("Content-Type")) {
		return nil, fmt.Errorf("answer is not JSON (content type %q)", clip(resp.Header.Get("Content-Type")))
	}
	return body, nil
}

// cleanRemote checks and cleans one peer's node status.
func (h *handler) cleanRemote(p Peer, st *lloom.NodeStatus, withInventory bool) (*lloom.NodeStatus, error) {
	st = st.Redacted()
	if st.ID != "" && st.ID != p.ID {
		return nil, &mismatchError{claimed: st.ID}
	}
	st.ID, st.Local, st.Reachable, st.Error, st.Identity = p.ID, false, true, "", nil
	if st.Name == "" {
		st.Name = peerName(p)
	}
	if !withInventory || len(st.Inventory) == 0 {
		st.Inventory = nil
		return st, nil
	}
	// Re-encode through the schema: a broken inventory is dropped, and the
	// node stays reachable with the reason in its error.
	inv, err := inventory.Parse(st.Inventory, p.ID)
	switch {
	case err != nil:
		st.Inventory, st.Error = nil, lloom.Message("inventory dropped: "+clip(err.Error()))
	case inv.NodeID != p.ID:
		st.Inventory, st.Error = nil, lloom.Message(fmt.Sprintf("inventory dropped: it describes node %q", clip(inv.NodeID)))
	default:
		raw, err := json.Marshal(inv)
		if err != nil {
			st.Inventory, st.Error = nil, "inventory dropped: cannot re-encode it"
		} else {
			st.Inventory = raw
		}
	}
	return st, nil
}

// peerURL is route under the peer's endpoint, with query.
func peerURL(endpoint, route, query string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(endpoint))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", errors.New("endpoint is not an http(s) URL")
	}
	if u.User != nil {
		return "", errors.New("endpoint carries credentials; give the key through apiKeyEnv instead")
	}
	u.Path = strings.TrimRight(u.Path, "/") + route
	u.RawPath, u.RawQuery, u.Fragment = "", query, ""
	return u.String(), nil
}

// statusError words a non-200 answer, using LLooM's error envelope when
// the body is one.
func statusError(code int, body []byte, id, keyEnv string) error {
	var detail string
	if _, err := lloom.ParseNodeStatus(body, id); err != nil {
		var g *lloom.GatewayError
		if errors.As(err, &g) && g.Message != "" {
			detail = ": " + clip(lloom.RedactText(g.Message))
		}
	}
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("key refused (HTTP %d%s); check environment variable %s", code, detail, keyEnv)
	}
	if code >= 300 && code < 400 {
		return fmt.Errorf("HTTP %d redirect not followed", code)
	}
	return fmt.Errorf("HTTP %d%s", code, detail)
}
