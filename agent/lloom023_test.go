package agent

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestTheAgentAnswersAsALLooM023GatewayDoes sends the requests captured
// from a real LLooM 0.2.3 gateway (testdata/README.md) to the agent. Error
// answers must match LLooM's byte for byte as JSON; a served route must
// have LLooM's status and top-level fields, with its own values.
func TestTheAgentAnswersAsALLooM023GatewayDoes(t *testing.T) {
	t.Parallel()
	metrics, err := os.ReadFile("testdata/gateway-0.2.3-metrics-x-api-key.json")
	if err != nil {
		t.Fatal(err)
	}
	local := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+adminKey {
			w.WriteHeader(401)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(metrics)
	}))
	t.Cleanup(local.Close)
	cfg := newConfig("spark-node-01", sparkInventory("spark-node-01"))
	cfg.LocalGateway = Peer{Endpoint: local.URL}
	h := mustHandler(t, cfg)

	bearer := func(k string) http.Header { return http.Header{"Authorization": {"Bearer " + k}} }
	xAPIKey := func(k string) http.Header { return http.Header{"X-Api-Key": {k}} }
	tests := []struct {
		name   string
		method string
		path   string
		header http.Header
		status int
		file   string
		exact  bool // an error answer: the whole body is LLooM's
	}{
		{"a request without a key is 401", "GET", "/gateway/node", nil, 401, "node-noauth", true},
		{"a wrong bearer key is 401, not 403", "GET", "/gateway/node", bearer("wrong-key-456"), 401, "node-noauth", true},
		{"a wrong x-api-key is 401", "GET", "/gateway/node", xAPIKey("wrong-key-456"), 401, "node-noauth", true},
		{"an empty bearer token is 401", "GET", "/gateway/node", bearer(""), 401, "node-noauth", true},
		{"a wrong bearer key wins over a right x-api-key", "GET", "/gateway/node",
			http.Header{"Authorization": {"Bearer wrong-key-456"}, "X-Api-Key": {adminKey}}, 401, "node-noauth", true},
		{"another scheme leaves the x-api-key to be read", "GET", "/gateway/node",
			http.Header{"Authorization": {"Basic Zm9vOmJhcg=="}, "X-Api-Key": {adminKey}}, 200, "node-x-api-key", false},
		{"the right key as x-api-key serves the node", "GET", "/gateway/node", xAPIKey(adminKey), 200, "node-x-api-key", false},
		{"the right key as a bearer token serves the node", "GET", "/gateway/node", bearer(adminKey), 200, "node-x-api-key", false},
		{"the cluster without a key is 401", "GET", "/gateway/cluster", nil, 401, "node-noauth", true},
		{"the cluster with a wrong bearer key is 401", "GET", "/gateway/cluster", bearer("wrong-key-456"), 401, "node-noauth", true},
		{"the cluster with a wrong x-api-key is 401", "GET", "/gateway/cluster", xAPIKey("wrong-key-456"), 401, "node-noauth", true},
		{"the right x-api-key serves the cluster", "GET", "/gateway/cluster", xAPIKey(adminKey), 200, "cluster-x-api-key", false},
		{"the profile without a key is 401", "GET", "/gateway/profile", nil, 401, "node-noauth", true},
		{"the profile with a wrong bearer key is 401", "GET", "/gateway/profile", bearer("wrong-key-456"), 401, "node-noauth", true},
		{"the profile with a wrong x-api-key is 401", "GET", "/gateway/profile", xAPIKey("wrong-key-456"), 401, "node-noauth", true},
		{"the right x-api-key serves the profile", "GET", "/gateway/profile", xAPIKey(adminKey), 200, "profile-x-api-key", false},
		{"the metrics without a key are 401", "GET", "/gateway/metrics", nil, 401, "node-noauth", true},
		{"the metrics with a wrong bearer key are 401", "GET", "/gateway/metrics", bearer("wrong-key-456"), 401, "node-noauth", true},
		{"the metrics with a wrong x-api-key are 401", "GET", "/gateway/metrics", xAPIKey("wrong-key-456"), 401, "node-noauth", true},
		{"the right x-api-key serves the metrics", "GET", "/gateway/metrics", xAPIKey(adminKey), 200, "metrics-x-api-key", false},
		{"health needs no key", "GET", "/health", nil, 200, "health", false},
		{"health ignores a wrong key", "GET", "/health", bearer("wrong-key-456"), 200, "health", false},
		{"health ignores a query", "GET", "/health?x=1", nil, 200, "health", false},
		{"a POST to health needs a key like any route", "POST", "/health", nil, 401, "unauthorized", true},
		{"healthz is no route of LLooM's and needs a key", "GET", "/healthz", nil, 401, "unauthorized", true},
		{"an unknown route without a key is 401", "GET", "/nope", nil, 401, "unauthorized", true},
		{"an unknown route with the key is 404", "GET", "/nope", xAPIKey(adminKey), 404, "unknown-route", true},
		{"an unknown gateway route without a key is 401 as an admin route", "GET", "/gateway/nope", nil, 401, "node-noauth", true},
		{"an unknown gateway route with the key is 404", "GET", "/gateway/nope", xAPIKey(adminKey), 404, "unknown-gateway-route", true},
		{"a POST to a served route is an unknown route", "POST", "/gateway/node", xAPIKey(adminKey), 404, "node-post", true},
		{"a preflight needs no key and has no body", "OPTIONS", "/gateway/node", nil, 204, "", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, tc.path, nil)
			for k, v := range tc.header {
				req.Header[k] = v
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.status {
				t.Fatalf("%s %s = %d, want LLooM's %d: %s", tc.method, tc.path, rec.Code, tc.status, rec.Body)
			}
			if tc.file == "" {
				if rec.Body.Len() != 0 {
					t.Errorf("body = %q, want none", rec.Body)
				}
				return
			}
			want, err := os.ReadFile("testdata/gateway-0.2.3-" + tc.file + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var lw, aw map[string]any
			if err := json.Unmarshal(want, &lw); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &aw); err != nil {
				t.Fatalf("the agent's answer is no JSON object: %v: %s", err, rec.Body)
			}
			if tc.exact {
				if !jsonEqual(lw, aw) {
					t.Errorf("body = %s, want LLooM's %s", rec.Body, want)
				}
				return
			}
			for k := range aw {
				// LLooM writes x-local-modelRoot only when it knows a
				// model root; the capture's host had none.
				if _, ok := lw[k]; !ok && !strings.HasPrefix(k, "x-local-") {
					t.Errorf("the agent answers field %q that LLooM's answer lacks", k)
				}
			}
			for _, k := range []string{"ok", "schemaVersion", "object"} {
				if lv, ok := lw[k]; ok && !jsonEqual(lv, aw[k]) {
					t.Errorf("%s = %v, want LLooM's %v", k, aw[k], lv)
				}
			}
			if lk, ak := sortedKeys(lw), sortedKeys(aw); tc.file != "profile-x-api-key" && !slices.Equal(lk, ak) {
				t.Errorf("top-level fields %v, want LLooM's %v", ak, lk)
			}
		})
	}
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
