package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
	"github.com/poolsolve/poolsolve/inventory"
	"github.com/poolsolve/poolsolve/lloom"
)

// Where a node's status came from (Node.From).
const (
	FromCluster = "cluster" // the gateway's /gateway/cluster
	FromNode    = "node"    // the gateway's /gateway/node (not a cluster)
	FromDirect  = "direct"  // the node's own endpoint, from the config
)

// What a node's hardware and memory are planned from (Node.Facts).
const (
	FactsInventory = "inventory"
	FactsProfile   = "profile" // a machine profile: in the status, or from /gateway/profile
	FactsStatus    = "status"  // status telemetry and the config only
	FactsNone      = "none"    // unreachable: nothing live
)

// Fleet is a live fleet as one gateway and the nodes it could not vouch
// for answered. Every status is redacted.
type Fleet struct {
	// Source names the gateway in messages and in fleet.Inputs sources:
	// "gateway <URL>".
	Source string
	// Mode is FromCluster or FromNode: which route of the gateway answered.
	Mode string
	// Nodes by id.
	Nodes map[string]*Node
	// Problems are what could not be fetched without failing the fetch,
	// one line each, sorted (unreachable nodes are in Nodes instead).
	Problems []string
}

// Node is one node of a live fleet.
type Node struct {
	ID string
	// Status is the node's status, redacted. A node that could not be
	// asked has {id, reachable: false, error}, as a LLooM cluster answer
	// reports a node it cannot reach.
	Status *lloom.NodeStatus
	// Profile is the machine profile from GET /gateway/profile, fetched
	// when the status had neither inventory nor profile; else nil.
	Profile    *lloom.MachineProfile
	profileRaw json.RawMessage
	// From is FromCluster, FromNode or FromDirect.
	From string
	// Facts is FactsInventory, FactsProfile, FactsStatus or FactsNone.
	Facts string
	// Fallback says why the node is planned from something other than
	// its inventory; empty for an inventory or an unreachable node.
	Fallback string
	// Unreachable is why the node could not be asked or is reported
	// unreachable; empty for a reachable node.
	Unreachable string
	// Metrics is the node's own /gateway/metrics answer, redacted; nil
	// when it gave none (see Fleet.Problems). Every LLooM gateway counts
	// only the requests sent to it, so demand is read from every node.
	Metrics json.RawMessage
	// metrics is Metrics as the fetch parsed it, so that a large answer
	// is read once (see ParsedMetrics); nil once Inputs has taken it.
	metrics *lloom.Metrics
}

// ParsedMetrics returns the node's metrics answer parsed, with file
// naming it in the result: as the fetch read it, else parsed again.
// Nothing in the Fleet changes it; a caller that changes the result
// changes what Inputs reads.
func (n *Node) ParsedMetrics(file string) (*lloom.Metrics, error) {
	if n.Metrics == nil {
		return nil, errors.New("no metrics")
	}
	if n.metrics == nil {
		return lloom.ParseMetrics(n.Metrics, file)
	}
	n.metrics.File = file
	return n.metrics, nil
}

// maxParallel bounds how many nodes are asked at once.
const maxParallel = 8

// Fetch reads the live fleet behind opts.URL. It fails only when the
// options are bad (ErrBadURL), when the gateway refuses the key
// (ErrUnauthorized), or when it answers neither /gateway/cluster nor
// /gateway/node usably; anything else that goes wrong is a node planned as
// unreachable or a line in Fleet.Problems. It never waits longer than the
// timeouts allow, and ctx can end it sooner.
func Fetch(ctx context.Context, opts Options) (*Fleet, error) {
	o, base, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	f := &fetcher{o: o, base: base, c: newClient(o), deadline: time.Now().Add(o.Timeout), nodeDeadline: map[string]time.Time{}}
	ctx, cancel := context.WithDeadline(ctx, f.deadline)
	defer cancel()
	f.fleet = &Fleet{Source: "gateway " + base.String(), Nodes: map[string]*Node{}}
	if err := f.statuses(ctx); err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	wg.Go(func() { f.metrics(ctx) })
	f.profiles(ctx)
	wg.Wait()
	sort.Strings(f.fleet.Problems)
	return f.fleet, nil
}

type fetcher struct {
	o     Options
	base  *url.URL
	c     *client
	fleet *Fleet
	// local is the id of the node the gateway itself runs on.
	local string
	// deadline ends the whole fetch: Options.Timeout after it began.
	deadline time.Time
	mu       sync.Mutex // guards fleet.Problems and nodeDeadline
	// nodeDeadline is each node's one budget, set by its first request.
	nodeDeadline map[string]time.Time
	// early are the nodes asked directly, by id.
	early map[string]directRead
}

// budget is the deadline of a request about node id (the gateway's own
// node shares the fetch's) and the time it stands for in messages.
func (f *fetcher) budget(id string) (time.Time, time.Duration) {
	if id == f.local || f.o.NodeTimeout >= f.o.Timeout {
		return f.deadline, f.o.Timeout
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.nodeDeadline[id]
	if !ok {
		d = time.Now().Add(f.o.NodeTimeout)
		if d.After(f.deadline) {
			d = f.deadline
		}
		f.nodeDeadline[id] = d
	}
	return d, f.o.NodeTimeout
}

func (f *fetcher) problem(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fleet.Problems = append(f.fleet.Problems, fmt.Sprintf(format, args...))
}

// errGaveUp is a cluster answer no longer waited for: a node that hung
// for the fetch holds a LLooM leader's answer back too (0.2.3 waits up to
// 5 s for each peer, all at once), so waiting on would spend the budget
// the nodes already answered in.
var errGaveUp = errors.New("not waited for past the nodes' own budgets: a node that did not answer holds it back (LLooM 0.2.3 waits up to 5s for such a peer)")

// directRead is one node's status asked at its own endpoint.
type directRead struct {
	st  *lloom.NodeStatus
	err error
	// hung is a node that did not answer within its budget.
	hung bool
	// What the node's endpoint answered next, right after its status and
	// within the same budget, so that a node need not wait for the
	// others: its metrics, and its machine profile when the status has
	// neither inventory nor profile (asked is false when it was not).
	metrics early[*lloom.Metrics]
	profile early[*lloom.MachineProfile]
}

// early is an answer read along with a node's status.
type early[T any] struct {
	asked bool
	raw   json.RawMessage
	v     T
	err   error
}

// statuses reads every node's status: the gateway's cluster answer and,
// at the same time, each node the config gives an endpoint for, directly,
// within its own budget. A node the gateway cannot vouch for is planned
// from its own answer, and one that answers neither is unreachable with
// its own reason: one hung or dead node never fails the fetch.
func (f *fetcher) statuses(ctx context.Context) error {
	var ids []string
	if f.o.Config != nil {
		ids = slices.Sorted(maps.Keys(f.o.Config.Cluster.Nodes))
	}
	type answer struct {
		body []byte
		err  error
	}
	cctx, giveUp := context.WithCancel(ctx)
	defer giveUp()
	clusterCh := make(chan answer, 1)
	go func() {
		body, err := f.c.get(cctx, route(f.base, "/gateway/cluster", "inventory=1"), f.deadline, f.o.Timeout)
		clusterCh <- answer{body, err}
	}()
	direct := make([]directRead, len(ids))
	directDone := make(chan struct{})
	go func() {
		defer close(directDone)
		f.parallel(ctx, len(ids), func(i int) { direct[i] = f.askNode(ctx, ids[i]) })
	}()
	var cl answer
	for waiting, done := true, directDone; waiting; {
		select {
		case cl = <-clusterCh:
			waiting = false
		case <-done:
			done = nil
			if slices.ContainsFunc(direct, func(d directRead) bool { return d.hung }) {
				giveUp()
				cl, waiting = answer{err: errGaveUp}, false
			}
		}
	}
	<-directDone // each ends within its node's budget
	byID := make(map[string]directRead, len(ids))
	for i, id := range ids {
		byID[id] = direct[i]
	}
	f.early = byID

	reported, broken, err := f.gatewayAnswer(ctx, cl.body, cl.err)
	if err != nil {
		return err
	}
	gaveUp := errors.Is(cl.err, errGaveUp)
	all := slices.Collect(maps.Keys(reported))
	all = append(all, slices.Collect(maps.Keys(broken))...)
	all = append(all, ids...)
	slices.Sort(all)
	for _, id := range slices.Compact(all) {
		rep, inRep := reported[id]
		d, asked := byID[id]
		switch {
		case inRep && (rep.Reachable || rep.Telemetry != nil):
			// A 0.2.3 leader reads a peer's /gateway/node without
			// ?inventory=1: the node's own answer adds what it has.
			if asked && d.err == nil && len(rep.Inventory) == 0 && len(d.st.Inventory) > 0 && (d.st.ID == "" || d.st.ID == id) {
				cp := *rep
				cp.Inventory = d.st.Inventory
				rep = &cp
			}
			f.accept(id, rep, f.fleet.Mode)
		case asked && d.err == nil:
			d.st.Reachable = true // it answered
			f.accept(id, d.st, FromDirect)
		case inRep && (!asked || errors.Is(d.err, errNoEndpoint)):
			f.accept(id, rep, f.fleet.Mode)
		case !validID(id):
			f.problem("%s answered a node with an unusable id (%q); it is left out", f.fleet.Mode, clip(id))
		case broken[id] != "" && (!asked || errors.Is(d.err, errNoEndpoint)):
			n := &Node{ID: id, From: f.fleet.Mode}
			n.unreachable(broken[id])
			f.fleet.Nodes[id] = n
		default:
			why := d.err.Error()
			switch {
			case inRep:
				why += "; " + lloom.PeerError(clip(lloom.RedactText(string(rep.Error))))
			case broken[id] != "":
				why += "; " + broken[id]
			case !gaveUp:
				why = "not in the gateway's answer, and " + why
			}
			n := &Node{ID: id, From: FromDirect}
			n.unreachable(why)
			f.fleet.Nodes[id] = n
		}
	}
	return nil
}

// gatewayAnswer reads the gateway's cluster answer (body, or err when it
// gave none), else asks for its own node. It sets the fleet's mode and
// the gateway's own node, and fails only when the gateway refuses the key
// or answers neither usably.
func (f *fetcher) gatewayAnswer(ctx context.Context, body []byte, err error) (map[string]*lloom.NodeStatus, map[string]string, error) {
	name := f.fleet.Source
	var clusterErr error
	if err == nil {
		cs, broken, perr := readCluster(body)
		switch {
		case perr != nil:
			clusterErr = perr
		case cs.Enabled && len(cs.Nodes)+len(broken) > 0:
			f.fleet.Mode = FromCluster
			f.local = cs.NodeID
			reported := map[string]*lloom.NodeStatus{}
			for _, id := range slices.Sorted(maps.Keys(cs.Nodes)) {
				st := cs.Nodes[id]
				if st.Local && f.local == "" {
					f.local = id
				}
				reported[id] = &st
			}
			return reported, broken, nil
		}
	} else {
		var he *HTTPError
		switch {
		case errors.Is(err, ErrUnauthorized):
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		case errors.As(err, &he) && (he.Code == http.StatusNotFound || he.Code == http.StatusMethodNotAllowed):
			// Not a cluster gateway: its node answers for it.
		default:
			clusterErr = err
		}
	}

	body, err = f.c.get(ctx, route(f.base, "/gateway/node", "inventory=1"), f.deadline, f.o.Timeout)
	if err != nil {
		if errors.Is(err, ErrUnauthorized) {
			return nil, nil, fmt.Errorf("%s: %w", name, err)
		}
		if clusterErr != nil {
			return nil, nil, fmt.Errorf("%s: /gateway/cluster: %w; /gateway/node: %w", name, clusterErr, err)
		}
		return nil, nil, fmt.Errorf("%s: /gateway/node: %w", name, err)
	}
	st, err := lloom.ParseNodeStatus(body, "/gateway/node")
	if err != nil {
		err = parseProblem("node status", err)
		if clusterErr != nil {
			return nil, nil, fmt.Errorf("%s: /gateway/cluster: %w; /gateway/node: %w", name, clusterErr, err)
		}
		return nil, nil, fmt.Errorf("%s: /gateway/node: %w", name, err)
	}
	if clusterErr != nil {
		f.problem("/gateway/cluster: %v; read the gateway's own node, and every other node directly, instead", clusterErr)
	}
	id := st.ID
	if id == "" && f.o.Config != nil {
		id = f.o.Config.CurrentNodeID("")
	}
	if id == "" {
		return nil, nil, fmt.Errorf("%s: its /gateway/node answer names no node, and the config's cluster.nodeId does not either", name)
	}
	f.fleet.Mode, f.local = FromNode, id
	st.Reachable = true // it answered
	return map[string]*lloom.NodeStatus{id: st}, nil, nil
}

// readCluster reads a /gateway/cluster answer. When the whole answer does
// not parse but its envelope does, each node is read on its own: a node
// whose entry is broken comes back in broken with the reason, and the
// others are still read.
func readCluster(body []byte) (*lloom.ClusterStatus, map[string]string, error) {
	cs, err := lloom.ParseClusterStatus(body, "/gateway/cluster")
	if err == nil {
		return cs, nil, nil
	}
	var g *lloom.GatewayError
	if errors.As(err, &g) {
		return nil, nil, parseProblem("cluster status", err)
	}
	type cluster struct {
		Enabled bool                       `json:"enabled"`
		NodeID  string                     `json:"nodeId"`
		Nodes   map[string]json.RawMessage `json:"nodes"`
	}
	var env struct {
		Cluster *cluster `json:"cluster"`
	}
	nodesAt := jsonpos.Field(jsonpos.Field(jsonpos.Root, "cluster"), "nodes")
	if json.Unmarshal(body, &env) != nil || env.Cluster == nil {
		var bare cluster
		if json.Unmarshal(body, &bare) != nil || bare.Nodes == nil {
			return nil, nil, parseProblem("cluster status", err)
		}
		env.Cluster = &bare
		nodesAt = jsonpos.Field(jsonpos.Root, "nodes")
	}
	c := env.Cluster
	// json.Unmarshal keeps the last of two equal keys: only a duplicate
	// inside one node's entry may be left to that node's own parse.
	if dup := jsonpos.Duplicates(body); dup != nil && !insideNode(dup, nodesAt, c.Nodes) {
		se := dup.(*jsonpos.SyntaxError)
		return nil, nil, parseProblem("cluster status", &lloom.InputError{Path: se.Path, Msg: se.Msg})
	}
	cs = &lloom.ClusterStatus{Enabled: c.Enabled, NodeID: c.NodeID, Nodes: map[string]lloom.NodeStatus{}}
	broken := map[string]string{}
	for id, raw := range c.Nodes {
		// The envelope form reads a node object whether or not it has an id.
		st, err := lloom.ParseNodeStatus(append(append([]byte(`{"node":`), raw...), '}'), id)
		if err != nil {
			var ie *lloom.InputError
			if errors.As(err, &ie) {
				cp := *ie
				if rest, ok := strings.CutPrefix(cp.Path, "$.node"); ok {
					cp.Path = "$" + rest
				}
				err = &cp
			}
			broken[id] = fmt.Sprintf("its entry in the cluster answer is unreadable (%v)", parseProblem("node status", err))
			continue
		}
		cs.Nodes[id] = *st
	}
	return cs, broken, nil
}

// insideNode reports whether a duplicate key lies within one node's entry
// of the cluster answer (nodesAt is the path of its nodes object).
func insideNode(dup error, nodesAt string, nodes map[string]json.RawMessage) bool {
	se := dup.(*jsonpos.SyntaxError)
	for id := range nodes {
		at := jsonpos.Field(nodesAt, id)
		if rest, ok := strings.CutPrefix(se.Path, at); ok && rest != "" && (rest[0] == '.' || rest[0] == '[') {
			return true
		}
	}
	return false
}

// parseProblem words a parse error of a remote answer: LLooM's error
// envelope by its message, anything else by what was wrong, never by the
// body.
func parseProblem(what string, err error) error {
	var g *lloom.GatewayError
	if errors.As(err, &g) {
		return fmt.Errorf("the gateway answered an error instead of its %s: %s", what, clip(lloom.RedactText(g.Message)))
	}
	var ie *lloom.InputError
	if errors.As(err, &ie) {
		return fmt.Errorf("answer is not a %s: %s%s", what, clip(lloom.RedactText(ie.Msg)), pathText(ie.Path))
	}
	return fmt.Errorf("answer is not a %s", what)
}

// inputText is a parse error without the file name, which here would be
// only the node id again.
func inputText(err error) string {
	var ie *lloom.InputError
	if errors.As(err, &ie) {
		if ie.Path == "" || ie.Path == "$" {
			return ie.Msg
		}
		return ie.Path + ": " + ie.Msg
	}
	return err.Error()
}

func pathText(p string) string {
	if p == "" || p == "$" {
		return ""
	}
	return " at " + clip(p)
}

// accept records one node's status as answered by from.
func (f *fetcher) accept(id string, st *lloom.NodeStatus, from string) {
	if !validID(id) {
		f.problem("%s answered a node with an unusable id (%q); it is left out", from, clip(id))
		return
	}
	st = st.Redacted()
	n := &Node{ID: id, From: from}
	f.fleet.Nodes[id] = n
	if st.ID != "" && st.ID != id {
		n.unreachable(fmt.Sprintf("its status names another node (%q)", clip(st.ID)))
		return
	}
	st.ID = id
	n.Status = cleanStatus(st)
	if !st.Reachable && st.Telemetry == nil {
		reason := lloom.PeerError(clip(lloom.RedactText(string(st.Error))))
		n.Unreachable, n.Facts = reason, FactsNone
		n.Status.Error = lloom.Message(reason)
		return
	}
	why := "gateway predates inventory"
	if st.Error != "" {
		why = clip(lloom.RedactText(string(st.Error)))
	}
	if len(st.Inventory) > 0 {
		inv, err := inventory.Parse(st.Inventory, id)
		switch {
		case err != nil:
			why = "its inventory is unreadable: " + clip(lloom.RedactText(inputText(err)))
		case inv.NodeID != id:
			why = fmt.Sprintf("its inventory describes node %q", clip(inv.NodeID))
		default:
			if raw, err := json.Marshal(inv); err == nil {
				n.Status.Inventory, n.Facts = raw, FactsInventory
				return
			}
			why = "its inventory cannot be re-encoded"
		}
		n.Status.Inventory = nil
	}
	if st.Profile != nil {
		n.Facts, n.Fallback = FactsProfile, "machine profile ("+why+")"
		return
	}
	// profiles() asks /gateway/profile and settles Facts and Fallback.
	n.Facts, n.Fallback = FactsStatus, why
}

// validID accepts a node id fit to print and to key a bundle: not empty,
// not too long, no control characters.
func validID(id string) bool {
	if id == "" || len(id) > 256 || !utf8.ValidString(id) {
		return false
	}
	for _, r := range id {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// cleanStatus drops what a status could still carry of a secret after
// Redacted: URLs and secret-looking values anywhere in it. The inventory
// is left to inventory.Parse, whose schema holds no URLs.
func cleanStatus(st *lloom.NodeStatus) *lloom.NodeStatus {
	bare := *st
	bare.Inventory = nil
	raw, err := json.Marshal(&bare)
	if err == nil {
		raw, err = lloom.RedactJSON(raw)
	}
	var out *lloom.NodeStatus
	if err == nil {
		out, err = lloom.ParseNodeStatus(raw, st.ID)
	}
	if err != nil {
		// Not expected for a value lloom just encoded; keep only the
		// facts that carry no text.
		out = &lloom.NodeStatus{ID: st.ID, Reachable: st.Reachable, Telemetry: st.Telemetry}
	}
	out.Inventory = st.Inventory
	return out
}

func (n *Node) unreachable(reason string) {
	n.Status = &lloom.NodeStatus{ID: n.ID, Reachable: false, Error: lloom.Message(reason)}
	n.Unreachable, n.Facts, n.Fallback = reason, FactsNone, ""
}

// errNoEndpoint marks a node the config gives no usable endpoint for.
var errNoEndpoint = errors.New("no endpoint")

type endpointError struct{ msg string }

func (e endpointError) Error() string        { return e.msg }
func (e endpointError) Is(target error) bool { return target == errNoEndpoint }

// askNode gets one node's status from its configured endpoint, within the
// node's budget.
func (f *fetcher) askNode(ctx context.Context, id string) directRead {
	base, err := f.endpoint(id)
	if err != nil {
		return directRead{err: err}
	}
	deadline, budget := f.budget(id)
	body, err := f.c.get(ctx, route(base, "/gateway/node", "inventory=1"), deadline, budget)
	if err != nil {
		return directRead{err: fmt.Errorf("asked directly: %w", err), hung: !time.Now().Before(deadline)}
	}
	st, err := lloom.ParseNodeStatus(body, id)
	if err != nil {
		return directRead{err: fmt.Errorf("asked directly: %w", parseProblem("node status", err))}
	}
	d := directRead{st: st}
	var wg sync.WaitGroup
	wg.Go(func() {
		d.metrics.asked = true
		d.metrics.raw, d.metrics.v, d.metrics.err = f.metricsAt(ctx, id, base)
	})
	if len(st.Inventory) == 0 && st.Profile == nil {
		d.profile.asked = true
		d.profile.v, d.profile.raw, d.profile.err = f.profileAt(ctx, id, base)
	}
	wg.Wait()
	return d
}

// endpoint is node id's base URL from the config.
func (f *fetcher) endpoint(id string) (*url.URL, error) {
	ep := f.o.Config.Cluster.Nodes[id].Endpoint
	if ep == "" || lloom.IsPlaceholder(ep) {
		return nil, endpointError{"the config gives no endpoint to ask it directly"}
	}
	u, err := parseBase(ep)
	if err != nil {
		return nil, endpointError{fmt.Sprintf("its configured endpoint is unusable (%s)", strings.TrimPrefix(err.Error(), ErrBadURL.Error()+": "))}
	}
	return u, nil
}

// profiles asks GET /gateway/profile of every reachable node whose status
// has neither inventory nor profile: the gateway's for its own node, the
// node's endpoint for the others.
func (f *fetcher) profiles(ctx context.Context) {
	var ids []string
	for _, id := range slices.Sorted(maps.Keys(f.fleet.Nodes)) {
		if f.fleet.Nodes[id].Facts == FactsStatus {
			ids = append(ids, id)
		}
	}
	errs := make([]error, len(ids))
	f.parallel(ctx, len(ids), func(i int) {
		errs[i] = f.askProfile(ctx, f.fleet.Nodes[ids[i]])
	})
	for i, id := range ids {
		n := f.fleet.Nodes[id]
		if errs[i] != nil {
			n.Fallback = fmt.Sprintf("status telemetry and config only (%s; no machine profile: %v)", n.Fallback, errs[i])
			continue
		}
		n.Facts, n.Fallback = FactsProfile, "machine profile ("+n.Fallback+")"
	}
}

func (f *fetcher) askProfile(ctx context.Context, n *Node) error {
	base := f.base
	if n.ID != f.local {
		if f.o.Config == nil {
			return errors.New("no config to find its endpoint")
		}
		u, err := f.endpoint(n.ID)
		if err != nil {
			return errors.New("the config gives no usable endpoint")
		}
		base = u
	}
	var p *lloom.MachineProfile
	var raw json.RawMessage
	var err error
	if d := f.early[n.ID]; d.profile.asked {
		p, raw, err = d.profile.v, d.profile.raw, d.profile.err
	} else {
		p, raw, err = f.profileAt(ctx, n.ID, base)
	}
	if err != nil {
		return err
	}
	n.Profile, n.profileRaw = p, raw
	return nil
}

// profileAt asks base for node id's machine profile, redacted.
func (f *fetcher) profileAt(ctx context.Context, id string, base *url.URL) (*lloom.MachineProfile, json.RawMessage, error) {
	deadline, budget := f.budget(id)
	body, err := f.c.get(ctx, route(base, "/gateway/profile", ""), deadline, budget)
	if err != nil {
		return nil, nil, err
	}
	p, err := lloom.ParseMachineProfile(body, "/gateway/profile")
	if err != nil {
		return nil, nil, parseProblem("machine profile", err)
	}
	raw, err := lloom.RedactJSON(body)
	if err != nil {
		return nil, nil, parseProblem("machine profile", err)
	}
	return p, raw, nil
}

// metrics reads /gateway/metrics of every reachable node in parallel: the
// gateway's own for its node, each other node's at its endpoint. A node
// that gives none is left out of demand, with a problem line; without any,
// demand is zero, which the catalog notes.
func (f *fetcher) metrics(ctx context.Context) {
	var ids []string
	for _, id := range slices.Sorted(maps.Keys(f.fleet.Nodes)) {
		if f.fleet.Nodes[id].Unreachable == "" {
			ids = append(ids, id)
		}
	}
	errs := make([]error, len(ids))
	raws := make([]json.RawMessage, len(ids))
	parsed := make([]*lloom.Metrics, len(ids))
	f.parallel(ctx, len(ids), func(i int) {
		if d := f.early[ids[i]]; d.metrics.asked {
			raws[i], parsed[i], errs[i] = d.metrics.raw, d.metrics.v, d.metrics.err
			return
		}
		raws[i], parsed[i], errs[i] = f.askMetrics(ctx, ids[i])
	})
	got := 0
	for i, id := range ids {
		if errs[i] != nil {
			f.problem("%s: /gateway/metrics: %v; its requests are left out of demand", id, errs[i])
			continue
		}
		f.fleet.Nodes[id].Metrics, f.fleet.Nodes[id].metrics = raws[i], parsed[i]
		got++
	}
	if got == 0 && len(ids) > 0 {
		f.problem("no node gave its metrics: planning without demand")
	}
}

// askMetrics returns node id's metrics answer redacted, and parsed from
// the redacted text. The answer as received is not kept past its
// redaction: an answer can be tens of megabytes.
func (f *fetcher) askMetrics(ctx context.Context, id string) (json.RawMessage, *lloom.Metrics, error) {
	base := f.base
	if id != f.local {
		if f.o.Config == nil {
			return nil, nil, errors.New("no config to find its endpoint")
		}
		u, err := f.endpoint(id)
		if err != nil {
			return nil, nil, errors.New("the config gives no usable endpoint")
		}
		base = u
	}
	return f.metricsAt(ctx, id, base)
}

// metricsAt asks base for node id's metrics, within the node's budget.
func (f *fetcher) metricsAt(ctx context.Context, id string, base *url.URL) (json.RawMessage, *lloom.Metrics, error) {
	q := ""
	if p := f.o.MetricsPeriod; p != "" && p != "all" {
		q = "period=" + url.QueryEscape(p)
	}
	deadline, budget := f.budget(id)
	body, err := f.c.get(ctx, route(base, "/gateway/metrics", q), deadline, budget)
	if err != nil {
		return nil, nil, err
	}
	// body is not used past this line, so the collector may take it
	// while the redacted copy is parsed.
	raw, err := lloom.RedactJSON(body)
	var m *lloom.Metrics
	if err == nil {
		m, err = lloom.ParseMetrics(raw, "/gateway/metrics")
	}
	if err != nil {
		return nil, nil, parseProblem("metrics document", err)
	}
	return raw, m, nil
}

// parallel runs do(0..n-1), at most maxParallel at once.
func (f *fetcher) parallel(ctx context.Context, n int, do func(i int)) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxParallel)
	for i := range n {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
				defer func() { <-sem }()
			case <-ctx.Done():
			}
			do(i)
		})
	}
	wg.Wait()
}

// Unreachable returns the nodes that could not be asked or are reported
// unreachable, with the reason: what catalog.Options.Unreachable takes.
func (fl *Fleet) Unreachable() map[string]string {
	out := map[string]string{}
	for id, n := range fl.Nodes {
		if n.Unreachable != "" {
			out[id] = n.Unreachable
		}
	}
	return out
}

// LLooMVersion is the LLooM release the gateway reports for its own node,
// or "" when it reports none (LLooM 0.2.3 does not).
func (fl *Fleet) LLooMVersion() string {
	for _, id := range slices.Sorted(maps.Keys(fl.Nodes)) {
		if n := fl.Nodes[id]; n.From != FromDirect && n.Status != nil && n.Status.Local && n.Status.Version != "" {
			return n.Status.Version
		}
	}
	return ""
}

// MetricsFrom lists the nodes that gave their metrics, sorted.
func (fl *Fleet) MetricsFrom() []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(fl.Nodes)) {
		if fl.Nodes[id].Metrics != nil {
			out = append(out, id)
		}
	}
	return out
}

// Fallbacks returns one line per node planned from something other than
// its inventory, sorted by node:
// "spark-node-02: planned from machine profile (gateway predates inventory)".
func (fl *Fleet) Fallbacks() []string {
	var out []string
	for _, id := range slices.Sorted(maps.Keys(fl.Nodes)) {
		if n := fl.Nodes[id]; n.Fallback != "" {
			out = append(out, fmt.Sprintf("%s: planned from %s", id, n.Fallback))
		}
	}
	return out
}
