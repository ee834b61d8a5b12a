package agent

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/poolsolve/poolsolve/lloom"
)

// profile answers GET /gateway/profile as LLooM does: this machine's
// profile (machine-profile v1), derived from its inventory. A gateway or
// planner that reads profiles, not inventories, then plans this node from
// what it is rather than from the config's claims.
func (h *handler) profile(w http.ResponseWriter, r *http.Request) {
	st, err := h.localStatus(r.Context(), true, h.cfg.InventoryWait)
	if err != nil || st.Profile == nil {
		if r.Context().Err() != nil {
			return
		}
		msg := "no machine profile"
		if err != nil {
			msg = err.Error()
		}
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, "server_error", "profile_unavailable", msg)
		return
	}
	writeJSON(w, http.StatusOK, st.Profile)
}

// metrics answers GET /gateway/metrics by relaying the local LLooM
// gateway's metrics (Config.LocalGateway), so a planner reading this agent
// sees the node's demand. The agent keeps no metrics of its own: without a
// local gateway the route says so.
func (h *handler) metrics(w http.ResponseWriter, r *http.Request) {
	gw := h.cfg.LocalGateway
	if gw.Endpoint == "" {
		writeError(w, http.StatusNotFound, "invalid_request_error", "not_found",
			"this agent has no metrics: it relays the local LLooM gateway's when serve is given --lloom URL")
		return
	}
	if gw.ID == "" {
		gw.ID = h.cfg.NodeID
	}
	query := ""
	if p := r.URL.Query().Get("period"); p != "" {
		switch p {
		case "today", "7d", "30d", "all":
			query = "period=" + p
		default:
			writeError(w, http.StatusBadRequest, "invalid_request_error", "bad_period", "period: expected today, 7d, 30d or all")
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), h.cfg.NodeTimeout)
	defer cancel()
	body, err := h.get(ctx, gw, "/gateway/metrics", query)
	if err != nil {
		if r.Context().Err() != nil {
			return
		}
		writeError(w, http.StatusBadGateway, "server_error", "local_gateway_unavailable", "the local LLooM gateway's metrics: "+err.Error())
		return
	}
	if _, err := lloom.ParseMetrics(body, "/gateway/metrics"); err != nil {
		writeError(w, http.StatusBadGateway, "server_error", "local_gateway_unavailable", "the local LLooM gateway answered no metrics document")
		return
	}
	// Relayed as LLooM wrote it (fields poolsolve does not model too),
	// through the one redaction pass.
	writeJSON(w, http.StatusOK, json.RawMessage(body))
}
