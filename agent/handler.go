package agent

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/poolsolve/poolsolve/internal/safehttp"
	"github.com/poolsolve/poolsolve/lloom"
)

// ErrorBody is LLooM's error envelope.
type ErrorBody struct {
	Error APIError `json:"error"`
}

// APIError is the inside of LLooM's error envelope.
type APIError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    string `json:"code"`
}

// NodeResponse is the answer to GET /gateway/node. The node is lloom's
// NodeStatus, so lloom.ParseNodeStatus reads it back.
type NodeResponse struct {
	OK   bool              `json:"ok"`
	Node *lloom.NodeStatus `json:"node"`
}

// ClusterResponse is the answer to GET /gateway/cluster; lloom's
// ParseClusterStatus reads it back.
type ClusterResponse struct {
	OK      bool                 `json:"ok"`
	Cluster *lloom.ClusterStatus `json:"cluster"`
}

type handler struct {
	cfg    Config
	keySum [sha256.Size]byte
	client *http.Client
}

// NewHandler returns the agent's HTTP handler. It fails when the config
// lacks a node id or an inventory source, or when the admin key's
// environment variable is unset or empty (ErrNoKey): an agent without a key
// would serve every caller.
func NewHandler(cfg Config) (http.Handler, error) {
	c, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	h := &handler{cfg: c, keySum: sha256.Sum256([]byte(c.Getenv(c.APIKeyEnv)))}
	h.client = &http.Client{Transport: c.Transport, CheckRedirect: safehttp.SameHostOnly}
	return h, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// As in LLooM: a preflight and GET /health need no key; every other
	// request is checked before its route is looked up, so an unknown
	// route tells nothing to a caller without the key.
	if r.Method == http.MethodOptions {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if r.Method == http.MethodGet && r.URL.Path == "/health" {
		writeJSON(w, http.StatusOK, healthBody{OK: true, Name: HealthName})
		return
	}
	if !h.authorized(w, r) {
		return
	}
	var route func(http.ResponseWriter, *http.Request)
	if r.Method == http.MethodGet {
		switch r.URL.Path {
		case "/gateway/node":
			route = h.node
		case "/gateway/cluster":
			route = h.cluster
		case "/gateway/profile":
			route = h.profile
		case "/gateway/metrics":
			route = h.metrics
		}
	}
	if route == nil {
		// LLooM matches method and path together: a POST or HEAD of a
		// served path is an unknown route too.
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found", "unknown route: "+clip(r.URL.Path))
		return
	}
	route(w, r)
}

// HealthName is the name GET /health gives; a LLooM gateway gives its
// config's name, "LLooM" by default.
const HealthName = "poolsolve"

type healthBody struct {
	OK   bool   `json:"ok"`
	Name string `json:"name"`
}

// authorized checks the admin key as LLooM does: a bearer token, else an
// x-api-key header; a missing and a wrong key are both 401, with LLooM's
// message for an admin route (under /gateway/) or any other. Both sides
// are hashed first so the comparison takes the same time whatever the
// key's length.
func (h *handler) authorized(w http.ResponseWriter, r *http.Request) bool {
	key := requestKey(r)
	sum := sha256.Sum256([]byte(key))
	if key != "" && subtle.ConstantTimeCompare(sum[:], h.keySum[:]) == 1 {
		return true
	}
	msg := "missing or invalid authorization token"
	if strings.HasPrefix(r.URL.Path, "/gateway/") {
		msg = "missing or invalid admin authorization token"
	}
	w.Header().Set("WWW-Authenticate", `Bearer realm="poolsolve"`)
	writeError(w, http.StatusUnauthorized, "authentication_error", "unauthorized", msg)
	return false
}

// requestKey is the key a request carries, read in LLooM's order: a
// bearer token wins over x-api-key, even a wrong one.
func requestKey(r *http.Request) string {
	auth := r.Header.Get("Authorization")
	if len(auth) > len("Bearer") && strings.EqualFold(auth[:len("Bearer")], "Bearer") {
		rest := auth[len("Bearer"):]
		if tok := strings.TrimLeft(rest, " \t"); tok != rest && tok != "" {
			return strings.TrimRight(tok, " \t")
		}
	}
	return r.Header.Get("X-Api-Key")
}

func wantInventory(r *http.Request) bool {
	switch r.URL.Query().Get("inventory") {
	case "1", "true", "yes":
		return true
	}
	return false
}

func (h *handler) node(w http.ResponseWriter, r *http.Request) {
	st, err := h.localStatus(r.Context(), wantInventory(r), h.cfg.InventoryWait)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client left
		}
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, "server_error", "inventory_unavailable", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, NodeResponse{OK: true, Node: st})
}

func (h *handler) cluster(w http.ResponseWriter, r *http.Request) {
	cs := h.gather(r.Context(), wantInventory(r))
	if r.Context().Err() != nil {
		return
	}
	writeJSON(w, http.StatusOK, ClusterResponse{OK: true, Cluster: cs})
}

// writeJSON serves v through lloom's redaction pass, the agent's one
// output boundary.
func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err == nil {
		body, err = lloom.RedactJSON(body)
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "server_error", "internal_error", "could not encode the answer")
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Content-Length", strconv.Itoa(len(body)+1))
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

func writeError(w http.ResponseWriter, status int, typ, code, msg string) {
	body, _ := json.Marshal(ErrorBody{Error: APIError{Message: lloom.RedactText(msg), Type: typ, Code: code}})
	hdr := w.Header()
	hdr.Set("Content-Type", "application/json; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// clip shortens text from a request or a remote answer before it goes
// into a message.
func clip(s string) string {
	const max = 120
	if len(s) <= max {
		return s
	}
	return s[:max] + "..."
}
