package gateway

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/poolsolve/poolsolve/fleet"
)

// memGateway answers from memory, so the fuzzer needs no sockets.
type memGateway map[string][]byte

func (m memGateway) RoundTrip(r *http.Request) (*http.Response, error) {
	body, ok := m[r.URL.Path]
	status := http.StatusOK
	if !ok {
		status, body = http.StatusNotFound, notFound
	}
	return &http.Response{
		StatusCode: status, Request: r, ContentLength: int64(len(body)),
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   io.NopCloser(bytes.NewReader(body)),
	}, nil
}

// FuzzFetch: whatever a gateway answers, Fetch does not panic, and a
// fleet it returns merges into inputs or says why not.
func FuzzFetch(f *testing.F) {
	f.Add(readTestdata("gateway-0.2.3-cluster-inventory.json"), readTestdata("gateway-0.2.3-node-inventory.json"), readTestdata("gateway-0.2.3-metrics.json"))
	f.Add([]byte(`{"ok":true,"cluster":{"enabled":true,"nodes":{"a":{"id":"b"},"":{}}}}`), []byte(`{}`), []byte(`{"object":"gateway.metrics"}`))
	f.Add([]byte(`{"ok":true,"cluster":{"enabled":true,"nodes":{"a":{"reachable":true,"inventory":{"schema":"poolsolve.inventory/v1","nodeId":"a"}}}}}`), []byte(`null`), []byte(`[]`))
	f.Add([]byte(`{"error":{"message":"no"}}`), []byte(`{"ok":true,"node":{"id":"x","reachable":true}}`), []byte(`{"version":1,"metrics":{}}`))
	base, err := fleet.Load(fleet.Sources{Config: configFile})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(readTestdata("gateway-0.2.3-cluster-hung-and-dead-peer.json"), readTestdata("gateway-0.2.3-node-peer.json"), readTestdata("gateway-0.2.3-metrics.json"))
	f.Fuzz(func(t *testing.T, cluster, node, metrics []byte) {
		gw := memGateway{"/gateway/cluster": cluster, "/gateway/node": node, "/gateway/metrics": metrics, "/gateway/profile": node}
		// Every node is also asked directly, and answers as the gateway's
		// own node does: the merge of both answers is fuzzed too.
		cfg := base.Config
		if len(cluster)%2 == 0 {
			cfg = nil
		}
		fl, err := Fetch(context.Background(), Options{
			URL: "http://gateway.test", HTTPClient: &http.Client{Transport: gw}, MaxBody: 1 << 20, Config: cfg,
		})
		if err != nil {
			return
		}
		for id, n := range fl.Nodes {
			if n.Status == nil || n.Status.ID != id {
				t.Fatalf("node %q has status %+v", id, n.Status)
			}
		}
		if in, err := fl.Inputs(base); err == nil {
			if _, err := in.Bundle(true); err != nil {
				t.Fatalf("inputs that loaded cannot be written: %v", err)
			}
		}
	})
}
