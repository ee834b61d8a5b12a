package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/internal/safehttp"
	"github.com/poolsolve/poolsolve/lloom"
)

// Defaults for the zero fields of Options.
const (
	DefaultTimeout = 5 * time.Second
	DefaultMaxBody = 32 << 20
	// DefaultRetryBackoff is the wait before a refused connection is
	// tried again: long enough for a gateway that is restarting to bind.
	DefaultRetryBackoff = 250 * time.Millisecond
)

// Options say which gateway to read and how.
type Options struct {
	// URL is the gateway's base URL, http(s)://host[:port][/prefix]. It
	// may not carry credentials, a query or a fragment.
	URL string
	// APIKey is the admin bearer key, sent only as `Authorization: Bearer`
	// to the gateway and to nodes asked directly; empty sends none.
	APIKey string
	// Timeout bounds the whole fetch: every request, to the gateway or to
	// a node, ends by the time Timeout has passed since Fetch began;
	// default 5s.
	Timeout time.Duration
	// NodeTimeout is one node's budget: every request about that node
	// (its status asked directly, its profile, its metrics) ends within
	// NodeTimeout of the first, and by Timeout overall; default half of
	// Timeout. A node that hangs ends the wait for the gateway's cluster
	// answer, which a LLooM leader holds back for that node too, so the
	// fetch takes about NodeTimeout, not Timeout.
	NodeTimeout time.Duration
	// RetryBackoff is how long a refused connection waits before its one
	// retry; default 250ms.
	RetryBackoff time.Duration
	// MaxBody caps one answer, in bytes; default 32 MiB.
	MaxBody int64
	// HTTPClient sends the requests; default a client without proxy. Its
	// CheckRedirect is replaced: redirects stay on the host first asked.
	HTTPClient *http.Client
	// Config is the fleet's LLooM config: the nodes to expect and the
	// endpoints of those the gateway does not report. May be nil.
	Config *lloom.Config
	// MetricsPeriod asks /gateway/metrics for one window (today, 7d, 30d);
	// empty or "all" takes the gateway's default.
	MetricsPeriod string
}

// ErrBadURL is a gateway URL that cannot be used.
var ErrBadURL = errors.New("gateway: bad URL")

// ErrUnauthorized is a gateway that refused the key (HTTP 401 or 403).
var ErrUnauthorized = errors.New("unauthorized")

// HTTPError is an answer with a status other than 200.
type HTTPError struct {
	Code int
	// Message is the gateway's error message, URL-scrubbed and clipped;
	// empty when the body is not LLooM's error envelope.
	Message string
}

func (e *HTTPError) Error() string {
	detail := ""
	if e.Message != "" {
		detail = ": " + e.Message
	}
	switch {
	case e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden:
		return fmt.Sprintf("unauthorized (HTTP %d%s): set --api-key-env to the variable holding the gateway's admin key", e.Code, detail)
	case e.Code >= 300 && e.Code < 400:
		return fmt.Sprintf("HTTP %d redirect not followed", e.Code)
	}
	return fmt.Sprintf("HTTP %d%s", e.Code, detail)
}

// Is makes errors.Is(err, ErrUnauthorized) true for 401 and 403.
func (e *HTTPError) Is(target error) bool {
	return target == ErrUnauthorized && (e.Code == http.StatusUnauthorized || e.Code == http.StatusForbidden)
}

func (o Options) withDefaults() (Options, *url.URL, error) {
	base, err := parseBase(o.URL)
	if err != nil {
		return o, nil, err
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.NodeTimeout <= 0 {
		o.NodeTimeout = o.Timeout / 2
	}
	if o.RetryBackoff <= 0 {
		o.RetryBackoff = DefaultRetryBackoff
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	switch o.MetricsPeriod {
	case "", "all", "today", "7d", "30d":
	default:
		return o, nil, fmt.Errorf("gateway: metrics period %q: expected today, 7d, 30d or all", o.MetricsPeriod)
	}
	return o, base, nil
}

// parseBase checks a gateway or node base URL. Its errors quote nothing of
// the URL: a node endpoint is as private as a backend URL.
func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, fmt.Errorf("%w: expected http(s)://host[:port][/prefix]", ErrBadURL)
	case u.User != nil:
		return nil, fmt.Errorf("%w: it carries credentials; give the key through an environment variable instead", ErrBadURL)
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return nil, fmt.Errorf("%w: it may not have a query or a fragment", ErrBadURL)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// route is base with path appended and query set.
func route(base *url.URL, path, query string) *url.URL {
	u := *base
	u.Path = base.Path + path
	u.RawQuery = query
	return &u
}

// client fetches JSON documents within the limits of Options.
type client struct {
	hc      *http.Client
	key     string
	max     int64
	backoff time.Duration
}

func newClient(o Options) *client {
	var hc http.Client
	if o.HTTPClient != nil {
		hc = *o.HTTPClient
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// The bearer key goes straight to the gateway, never via a proxy.
		t.Proxy = nil
		t.MaxResponseHeaderBytes = 64 << 10
		hc.Transport = t
	}
	hc.CheckRedirect = safehttp.SameHostOnly
	return &client{hc: &hc, key: o.APIKey, max: o.MaxBody, backoff: o.RetryBackoff}
}

// get fetches one JSON document by the deadline; budget is the time the
// deadline stands for, for messages ("no answer within 5s"). A refused
// connection is tried once more after the backoff, while the deadline
// allows: a gateway that is restarting refuses for a moment. Its errors
// never quote the URL, the key or the body; an answer other than 200 is an
// *HTTPError.
func (c *client) get(ctx context.Context, u *url.URL, deadline time.Time, budget time.Duration) ([]byte, error) {
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	body, err := c.getOnce(ctx, u, budget)
	if errors.Is(err, errRefused) {
		t := time.NewTimer(c.backoff)
		select {
		case <-t.C:
			body, err = c.getOnce(ctx, u, budget)
			if errors.Is(err, errRefused) {
				err = fmt.Errorf("connection refused, and again %s later", c.backoff)
			}
		case <-ctx.Done():
			t.Stop()
		}
	}
	return body, err
}

// errRefused marks a refused connection, which get tries once more.
var errRefused = errors.New("connection refused")

type refusedError struct{ err error }

func (e refusedError) Error() string        { return e.err.Error() }
func (e refusedError) Is(target error) bool { return target == errRefused }

func (c *client) getOnce(ctx context.Context, u *url.URL, timeout time.Duration) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, errors.New("not a usable URL")
	}
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := c.hc.Do(req)
	if err != nil {
		if errors.Is(err, syscall.ECONNREFUSED) {
			return nil, refusedError{safehttp.Describe(err, timeout)}
		}
		return nil, safehttp.Describe(err, timeout)
	}
	defer resp.Body.Close()
	if resp.ContentLength > c.max {
		return nil, c.tooLarge()
	}
	body, tooLarge, err := safehttp.ReadCappedSize(resp.Body, c.max, resp.ContentLength)
	if err != nil {
		return nil, safehttp.Describe(err, timeout)
	}
	if tooLarge {
		return nil, c.tooLarge()
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &HTTPError{Code: resp.StatusCode, Message: envelopeMessage(body)}
	}
	ct := resp.Header.Get("Content-Type")
	if !safehttp.IsJSON(ct) {
		return nil, fmt.Errorf("answer is not JSON (content type %q)", clip(ct))
	}
	return body, nil
}

func (c *client) tooLarge() error {
	return fmt.Errorf("answer larger than the %s cap", sizeText(c.max))
}

func sizeText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d-byte", n)
}

// envelopeMessage is the message of LLooM's error envelope in body, or "".
func envelopeMessage(body []byte) string {
	_, err := lloom.ParseNodeStatus(body, "")
	var g *lloom.GatewayError
	if errors.As(err, &g) {
		return clip(lloom.RedactText(g.Message))
	}
	return ""
}

// clip makes remote text fit for a message: control characters (which
// could drive a terminal) become spaces, and it is cut short on a rune
// boundary.
func clip(s string) string {
	const max = 160
	var b strings.Builder
	for i, r := range s {
		if i >= max {
			b.WriteString("...")
			break
		}
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}
