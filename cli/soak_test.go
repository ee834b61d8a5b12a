package cli

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/poolsolve/poolsolve/lloom"
)

// soakEnv runs TestAgentSoak; CI does not (it takes a minute).
const soakEnv = "POOLSOLVE_SOAK"

// TestAgentSoak holds `poolsolve serve`, a process of its own, under
// 10,000 authenticated requests from 50 clients on loopback, paced evenly
// over 60 s, a third each of /gateway/node, /gateway/node?inventory=1 and
// /gateway/cluster?inventory=1. Every answer must be a 200 that lloom
// reads, and the agent's resident memory must stay flat: its last ten
// seconds' mean within 25% of its mean after the first ten. It prints
// the latency quantiles and the memory samples for docs/reliability.md.
//
//	POOLSOLVE_SOAK=1 nice -n 19 go test -run TestAgentSoak -v ./cli/
func TestAgentSoak(t *testing.T) {
	if os.Getenv(soakEnv) == "" {
		t.Skip("a minute long: set " + soakEnv + "=1")
	}
	const (
		requests = 10000
		clients  = 50
		span     = 60 * time.Second
		key      = "soak-key-5e1f"
	)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SOAK_KEY="+key,
		helperArgs+"="+strings.Join([]string{"serve", "--listen", "127.0.0.1:0", "--node-id", "soak-node", "--api-key-env", "SOAK_KEY"}, "\n"))
	errPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	sc := bufio.NewScanner(errPipe)
	listening := regexp.MustCompile(`listening on (http://[0-9.:]+) `)
	var base string
	for base == "" && sc.Scan() {
		if m := listening.FindStringSubmatch(sc.Text()); m != nil {
			base = m[1]
		}
	}
	if base == "" {
		t.Fatal("serve never said where it listens")
	}
	go func() { _, _ = io.Copy(io.Discard, errPipe) }()

	routes := []string{"/gateway/node", "/gateway/node?inventory=1", "/gateway/cluster?inventory=1"}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients, Proxy: nil}}
	ask := func(route string) error {
		req, err := http.NewRequest(http.MethodGet, base+route, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", route, resp.Status)
		}
		if strings.HasPrefix(route, "/gateway/cluster") {
			_, err = lloom.ParseClusterStatus(body, route)
		} else {
			_, err = lloom.ParseNodeStatus(body, route)
		}
		return err
	}
	// The first inventory is collected on request (then cached): it is
	// not part of the soak.
	if err := ask(routes[1]); err != nil {
		t.Fatal(err)
	}

	var rss []int64 // kB, one a second
	stopSampling := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if kb, ok := residentKB(cmd.Process.Pid); ok {
				rss = append(rss, kb)
			}
			select {
			case <-tick.C:
			case <-stopSampling:
				return
			}
		}
	}()

	tokens := make(chan int)
	go func() {
		defer close(tokens)
		tick := time.NewTicker(span / requests)
		defer tick.Stop()
		for i := range requests {
			<-tick.C
			tokens <- i
		}
	}()
	lat := make([]time.Duration, requests)
	var failed atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range tokens {
				t0 := time.Now()
				err := ask(routes[i%len(routes)])
				lat[i] = time.Since(t0)
				if err != nil {
					failed.Add(1)
					firstErr.Do(func() { t.Errorf("request %d: %v", i, err) })
				}
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(stopSampling)
	<-sampled

	slices.Sort(lat)
	q := func(p float64) time.Duration { return lat[int(p*float64(len(lat)-1))] }
	t.Logf("%d requests from %d clients in %v: p50 %v, p99 %v, max %v, %d errors",
		requests, clients, took.Round(time.Millisecond), q(0.50).Round(10*time.Microsecond), q(0.99).Round(10*time.Microsecond), lat[len(lat)-1].Round(time.Microsecond), failed.Load())
	if failed.Load() > 0 {
		t.Errorf("%d of %d requests failed", failed.Load(), requests)
	}
	if len(rss) < 30 {
		t.Logf("resident memory not sampled (%d samples): no /proc here", len(rss))
		return
	}
	t.Logf("agent resident memory, kB, one a second: %v", rss)
	mean := func(xs []int64) float64 {
		var s int64
		for _, x := range xs {
			s += x
		}
		return float64(s) / float64(len(xs))
	}
	early, late := mean(rss[10:20]), mean(rss[len(rss)-10:])
	t.Logf("resident memory: %.1f MiB after 10-20 s, %.1f MiB in the last 10 s, peak %.1f MiB",
		early/1024, late/1024, float64(slices.Max(rss))/1024)
	if late > early*1.25 {
		t.Errorf("resident memory grew from %.1f MiB to %.1f MiB", early/1024, late/1024)
	}
}

// residentKB reads a process's resident set size from /proc (Linux).
func residentKB(pid int) (int64, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, false
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}
