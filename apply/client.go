package apply

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/poolsolve/poolsolve/internal/safehttp"
	"github.com/poolsolve/poolsolve/lloom"
)

// maxAnswer caps one admin answer.
const maxAnswer = 8 << 20

// client asks the admin routes of LLooM gateways. Its errors quote
// neither URL nor key, only the route and a redacted gateway message.
type client struct {
	hc  *http.Client
	key string
	log func(entry)
}

func newClient(hc *http.Client, key string, log func(entry)) *client {
	var c http.Client
	if hc != nil {
		c = *hc
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil // the key goes straight to the gateway
		c.Transport = t
	}
	c.CheckRedirect = safehttp.SameHostOnly
	return &client{hc: &c, key: key, log: log}
}

// answer is a gateway's answer: its HTTP status and JSON body.
type answer struct {
	Code int
	Body []byte
}

// do sends one request to node at base and reads the answer; timeout
// bounds it. An answer other than 200 is returned with an error.
func (c *client) do(ctx context.Context, node string, base *url.URL, method, path string, query url.Values, body any, timeout time.Duration) (answer, error) {
	u := *base
	u.Path = strings.TrimRight(base.Path, "/") + path
	u.RawQuery = query.Encode()
	var rd *bytes.Reader
	var sent []byte
	if body != nil {
		sent, _ = json.Marshal(body)
		rd = bytes.NewReader(sent)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var req *http.Request
	var err error
	if rd != nil {
		req, err = http.NewRequestWithContext(ctx, method, u.String(), rd)
	} else {
		req, err = http.NewRequestWithContext(ctx, method, u.String(), nil)
	}
	if err != nil {
		return answer{}, fmt.Errorf("%s %s on %s: not a usable URL", method, path, node)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.key != "" {
		req.Header.Set("Authorization", "Bearer "+c.key)
	}
	e := entry{Event: "request", Node: node, Method: method, Route: path, Query: query.Encode()}
	if sent != nil {
		e.Sent = sent
	}
	c.log(e)
	resp, err := c.hc.Do(req)
	if err != nil {
		err = fmt.Errorf("%s %s on %s: %w", method, path, node, safehttp.Describe(err, timeout))
		c.log(entry{Event: "answer", Node: node, Method: method, Route: path, Error: err.Error()})
		return answer{}, err
	}
	defer resp.Body.Close()
	data, tooLarge, err := safehttp.ReadCappedSize(resp.Body, maxAnswer, resp.ContentLength)
	if err == nil && tooLarge {
		err = fmt.Errorf("answer larger than %d MiB", maxAnswer>>20)
	}
	if err != nil {
		err = fmt.Errorf("%s %s on %s: %w", method, path, node, safehttp.Describe(err, timeout))
		c.log(entry{Event: "answer", Node: node, Method: method, Route: path, Code: resp.StatusCode, Error: err.Error()})
		return answer{}, err
	}
	a := answer{Code: resp.StatusCode, Body: data}
	e = entry{Event: "answer", Node: node, Method: method, Route: path, Code: resp.StatusCode}
	if json.Valid(data) {
		e.Answer = data
	}
	if resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s %s on %s: HTTP %d%s", method, path, node, resp.StatusCode, gatewayMessage(data))
		e.Error = err.Error()
	}
	c.log(e)
	return a, err
}

// gatewayMessage is ": message" of LLooM's error envelope in body, or "".
func gatewayMessage(body []byte) string {
	var env struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || len(env.Error) == 0 {
		return ""
	}
	var msg string
	if json.Unmarshal(env.Error, &msg) != nil {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(env.Error, &obj) != nil {
			return ""
		}
		msg = obj.Message
	}
	if msg == "" {
		return ""
	}
	return ": " + clip(lloom.RedactText(msg))
}

func clip(s string) string {
	const max = 200
	var b strings.Builder
	for i, r := range s {
		if i >= max {
			b.WriteString("...")
			break
		}
		if r < 0x20 || r == 0x7f {
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

// node reads GET /gateway/node.
func (c *client) node(ctx context.Context, id string, base *url.URL, timeout time.Duration) (*lloom.NodeStatus, error) {
	a, err := c.do(ctx, id, base, http.MethodGet, "/gateway/node", nil, nil, timeout)
	if err != nil {
		return nil, err
	}
	st, err := lloom.ParseNodeStatus(a.Body, id+" /gateway/node")
	if err != nil {
		return nil, errors.New(lloom.RedactText(err.Error()))
	}
	return st, nil
}

// admission is the part of LLooM's runtime policy plan apply reads.
type admission struct {
	Admission struct {
		Allowed      bool    `json:"allowed"`
		OverBudgetGb float64 `json:"overBudgetGb"`
	} `json:"admission"`
	Actions []struct {
		Type      string `json:"type"`
		RuntimeID string `json:"runtimeId"`
		Reason    string `json:"reason"`
	} `json:"actions"`
	Protected []json.RawMessage `json:"protected"`
	Warnings  []json.RawMessage `json:"warnings"`
	Errors    []json.RawMessage `json:"validationErrors"`
}

// routing reads GET /gateway/routing: the aliases as the gateway loaded
// them, by alias: its target.
func (c *client) routing(ctx context.Context, id string, base *url.URL, timeout time.Duration) (map[string]string, error) {
	a, err := c.do(ctx, id, base, http.MethodGet, "/gateway/routing", nil, nil, timeout)
	if err != nil {
		return nil, err
	}
	var r struct {
		Aliases map[string]json.RawMessage `json:"aliases"`
	}
	if err := json.Unmarshal(a.Body, &r); err != nil {
		return nil, fmt.Errorf("GET /gateway/routing on %s: not LLooM's routing answer", id)
	}
	out := map[string]string{}
	for k, v := range r.Aliases {
		var t struct {
			Target string `json:"target"`
		}
		var s string
		if json.Unmarshal(v, &s) == nil {
			out[k] = s
		} else if json.Unmarshal(v, &t) == nil {
			out[k] = t.Target
		}
	}
	return out, nil
}
