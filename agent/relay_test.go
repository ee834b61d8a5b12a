package agent

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/poolsolve/poolsolve/lloom"
)

func TestTheProfileRouteServesLLooMsMachineProfile(t *testing.T) {
	t.Parallel()
	h := mustHandler(t, newConfig("spark-node-01", sparkInventory("spark-node-01")))
	rec := get(h, "GET", "/gateway/profile", "Bearer "+adminKey)
	if rec.Code != 200 {
		t.Fatalf("GET /gateway/profile = %d: %s", rec.Code, rec.Body)
	}
	p, err := lloom.ParseMachineProfile(rec.Body.Bytes(), "/gateway/profile")
	if err != nil {
		t.Fatalf("not a machine profile: %v\n%s", err, rec.Body)
	}
	if p.SchemaVersion != 1 || p.PlatformID != "linux-arm64" || p.Platform != "linux" || p.Arch != "arm64" || p.ID != "linux-arm64-121_7gb" {
		t.Errorf("profile = %+v", p)
	}
	if p.TotalMemoryGb == nil || *p.TotalMemoryGb != 121.7 || len(p.MemoryDomains) != 1 || p.MemoryDomains[0].ID != "unified:0" {
		t.Errorf("memory = %v, domains %+v", p.TotalMemoryGb, p.MemoryDomains)
	}
}

func TestAnX64HostsProfileSaysX64(t *testing.T) {
	t.Parallel()
	src := sparkInventory("box")
	src.inv.PlatformID, src.inv.ComputeArchs, src.inv.Accelerators = "linux-x64", nil, nil
	src.inv.MemoryDomains[0].ID, src.inv.MemoryDomains[0].Kind = "system:0", "system"
	h := mustHandler(t, newConfig("box", src))
	rec := get(h, "GET", "/gateway/profile", "Bearer "+adminKey)
	p, err := lloom.ParseMachineProfile(rec.Body.Bytes(), "/gateway/profile")
	if err != nil {
		t.Fatal(err)
	}
	if p.PlatformID != "linux-x64" || p.Arch != "x64" || p.IsAppleSilicon || len(p.Accelerators) != 0 {
		t.Errorf("profile = %+v, want an x64 Linux host and nothing invented", p)
	}
}

func TestTheMetricsRouteRelaysTheLocalGateway(t *testing.T) {
	t.Parallel()
	captured, err := os.ReadFile("testdata/gateway-0.2.3-metrics.json")
	if err != nil {
		t.Fatal(err)
	}
	var gotAuth, gotQuery string
	lloomGW := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotAuth, gotQuery = r.Header.Get("Authorization"), r.URL.RawQuery
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if r.URL.Path != "/gateway/metrics" {
			w.WriteHeader(404)
			return
		}
		w.Write(captured)
	}))
	defer lloomGW.Close()
	cfg := newConfig("spark-node-01", sparkInventory("spark-node-01"))
	cfg.LocalGateway = Peer{Endpoint: lloomGW.URL}
	h := mustHandler(t, cfg)

	rec := get(h, "GET", "/gateway/metrics?period=7d", "Bearer "+adminKey)
	if rec.Code != 200 {
		t.Fatalf("GET /gateway/metrics = %d: %s", rec.Code, rec.Body)
	}
	if gotAuth != "Bearer "+adminKey || gotQuery != "period=7d" {
		t.Errorf("the local gateway was asked with auth %q, query %q", gotAuth, gotQuery)
	}
	m, err := lloom.ParseMetrics(rec.Body.Bytes(), "relayed")
	if err != nil {
		t.Fatalf("the relayed answer is not metrics: %v", err)
	}
	if len(m.Recent) != 41 || lloom.Bucket(m.Models, "qwen3.8-flash-next").Requests != 18 {
		t.Errorf("relayed %d recent entries, models %+v", len(m.Recent), m.Models)
	}
	if strings.Contains(rec.Body.String(), adminKey) {
		t.Error("the key reached the answer")
	}

	// Without a local gateway the route says what it would need.
	bare := mustHandler(t, newConfig("n", sparkInventory("n")))
	rec = get(bare, "GET", "/gateway/metrics", "Bearer "+adminKey)
	var body ErrorBody
	json.Unmarshal(rec.Body.Bytes(), &body)
	if rec.Code != 404 || !strings.Contains(body.Error.Message, "--lloom URL") {
		t.Errorf("no local gateway: %d %s", rec.Code, rec.Body)
	}

	// A local gateway that is down is a 502 naming it, not the URL.
	lloomGW.Close()
	rec = get(h, "GET", "/gateway/metrics", "Bearer "+adminKey)
	if rec.Code != http.StatusBadGateway || !strings.Contains(rec.Body.String(), "the local LLooM gateway's metrics") || strings.Contains(rec.Body.String(), "127.0.0.1") {
		t.Errorf("a down local gateway: %d %s", rec.Code, rec.Body)
	}
}
