package agent

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func FuzzPeerURL(f *testing.F) {
	for _, s := range []string{"http://10.100.192.2:8100", "https://gw.example/prefix/", "${SPARK}", "http://u:p@h", "http://h/a?b=c#d", "ftp://h", "http://[::1]:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, endpoint string) {
		got, err := peerURL(endpoint, "/gateway/node", "inventory=1")
		if err != nil {
			return
		}
		u, err := url.Parse(got)
		if err != nil {
			t.Fatalf("peerURL(%q) = %q, which does not parse: %v", endpoint, got, err)
		}
		if u.User != nil || (u.Scheme != "http" && u.Scheme != "https") || !strings.HasSuffix(u.Path, "/gateway/node") || u.RawQuery != "inventory=1" {
			t.Fatalf("peerURL(%q) = %q", endpoint, got)
		}
	})
}

// answer is a transport that returns one canned response, so the fuzzer
// reaches the decoding path without a network.
type answer struct {
	status int
	ctype  string
	body   []byte
}

func (a answer) RoundTrip(r *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: a.status, Header: http.Header{"Content-Type": {a.ctype}},
		Body: io.NopCloser(bytes.NewReader(a.body)), Request: r,
	}, nil
}

// FuzzRemoteAnswer feeds arbitrary peer answers to the cluster view: it
// must always answer, report the peer, and never echo a key.
func FuzzRemoteAnswer(f *testing.F) {
	f.Add(200, "application/json", []byte(`{"ok":true,"node":{"id":"b","reachable":true}}`))
	f.Add(200, "application/json", []byte(`{"ok":true,"node":{"id":"b","inventory":{"schema":"poolsolve.inventory/v1","nodeId":"b","notes":["x"]}}}`))
	f.Add(401, "application/json", []byte(`{"error":{"message":"no","type":"authentication_error","code":"unauthorized"}}`))
	f.Add(500, "text/plain", []byte("boom http://backend:9000/v1"))
	f.Add(200, "application/json", []byte(`{"ok":true,"node":{"id":"c"}}`))
	f.Add(200, "application/json", []byte(`[`))
	f.Fuzz(func(t *testing.T, status int, ctype string, body []byte) {
		if status < 100 || status > 999 || bytes.Contains(body, []byte(adminKey)) || bytes.Contains(body, []byte("peer.invalid")) {
			return // a peer that quotes them itself is not the agent leaking
		}
		cfg := newConfig("a", sparkInventory("a"))
		cfg.Peers = []Peer{{ID: "b", Endpoint: "http://peer.invalid:8100"}}
		cfg.Transport = answer{status, ctype, body}
		h := mustHandler(t, cfg)
		rec := get(h, "GET", "/gateway/cluster?inventory=1", "Bearer "+adminKey)
		if rec.Code != 200 {
			t.Fatalf("cluster answer = %d: %s", rec.Code, rec.Body)
		}
		out := rec.Body.String()
		if !strings.Contains(out, `"b":{`) || strings.Contains(out, adminKey) || strings.Contains(out, "peer.invalid") {
			t.Fatalf("cluster answer lacks peer b or leaks the key or endpoint: %s", out)
		}
	})
}

// FuzzRequestKey sends arbitrary keys, methods and paths: the agent
// answers with one of LLooM's statuses, serves a route only for the right
// key, and never echoes what the caller sent as a key.
func FuzzRequestKey(f *testing.F) {
	f.Add("GET", "/gateway/node", "Bearer "+adminKey, "")
	f.Add("GET", "/gateway/node", "", adminKey)
	f.Add("GET", "/gateway/node", "Bearer wrong-key-456", adminKey)
	f.Add("GET", "/gateway/node", "Basic Zm9vOmJhcg==", adminKey)
	f.Add("GET", "/gateway/node", "bearer \t"+adminKey+" ", "")
	f.Add("POST", "/health", "", "")
	f.Add("OPTIONS", "/x", "Bearer hunter2-long-secret", "hunter2-long-secret")
	f.Add("GET", "/nope", "Bearer", "eyJhbGciOiJIUzI1NiJ9.e30.sig")
	h := mustHandler(f, newConfig("a", sparkInventory("a")))
	f.Fuzz(func(t *testing.T, method, path, auth, xAPIKey string) {
		req, err := http.NewRequest(method, "http://agent.invalid/", nil)
		if err != nil || strings.ContainsAny(auth+xAPIKey, "\r\n\x00") {
			return // no client can send that
		}
		req.URL.Path = path
		req.Header.Set("Authorization", auth)
		req.Header.Set("X-Api-Key", xAPIKey)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		switch rec.Code {
		case 200, 204, 401, 404, 503:
		default:
			t.Fatalf("%s %q = %d", method, path, rec.Code)
		}
		given := requestKey(req) // an empty method is GET to net/http
		if rec.Code == 200 && given != adminKey && !(req.Method == "GET" && path == "/health") {
			t.Fatalf("%s %q served with key %q", method, path, given)
		}
		for _, k := range []string{auth, xAPIKey} {
			if len(k) >= 8 && k != adminKey && strings.Contains(rec.Body.String(), k) && !strings.Contains(path, k) {
				t.Fatalf("the answer echoes the key %q: %s", k, rec.Body)
			}
		}
	})
}
