package apply

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/poolsolve/poolsolve/lloom"
	"github.com/poolsolve/poolsolve/model"
	"github.com/poolsolve/poolsolve/plan"
)

// Defaults for the zero fields of Options.
const (
	DefaultPoll           = time.Second
	DefaultRequestTimeout = 10 * time.Second
	// MinStartTimeout is the least a start is given to become healthy.
	MinStartTimeout = 60 * time.Second
	// StopTimeout bounds a stop until the gateway no longer counts the
	// lane as loaded.
	StopTimeout = 60 * time.Second
	// ConfigTimeout bounds a config change until every gateway shows it:
	// LLooM polls its config file every 500 ms.
	ConfigTimeout = 30 * time.Second
)

// StartTimeout is how long a start may take until the lane is healthy:
// twice its load time plus 30 s, at least MinStartTimeout. LLooM itself
// gives a start up to the runtime's startupTimeoutMs (300 s by default).
func StartTimeout(loadMs float64) time.Duration {
	return max(MinStartTimeout, 2*time.Duration(loadMs*float64(time.Millisecond))+30*time.Second)
}

// Options say what to apply and where.
type Options struct {
	Plan *plan.Plan
	// Done is how many steps the fleet already shows done (Match).
	Done int
	// Nodes are each node's gateway base URL.
	Nodes map[string]*url.URL
	// APIKey is the admin key, sent only as a bearer header.
	APIKey     string
	HTTPClient *http.Client
	// ConfigPath is the config file the gateways read; empty: config
	// changes are manual steps.
	ConfigPath string
	Log        *Log
	// Progress receives one line per step and its waits (stderr).
	Progress io.Writer
	// Confirm asks the operator whether a manual step is done; nil in a
	// non-interactive run, where the apply stops at a manual step.
	Confirm func(prompt string) bool
	// Poll is the interval between two status reads; default 1 s.
	Poll time.Duration
	// RequestTimeout bounds each request but a start; default 10 s.
	RequestTimeout time.Duration
	// StepTimeout, when set, replaces each step's own timeout (tests).
	StepTimeout time.Duration
	Now         func() time.Time
}

// Result is what a run did.
type Result struct {
	// Done are the steps this run carried out, by number.
	Done []int
	// Failed is the step that failed or waits for the operator, 0 when
	// every step is done; Err says why.
	Failed int
	Err    error
	// Left are the steps not done, Failed first.
	Left []plan.Step
	// Backups are the previous configs kept.
	Backups []string
}

// ErrManual marks a step left to the operator.
var ErrManual = errors.New("left to the operator")

type runner struct {
	o   Options
	c   *client
	out io.Writer
}

// Run carries out the rollout's steps after o.Done, one after the other,
// verifying each, and stops at the first that fails.
func Run(ctx context.Context, o Options) Result {
	if o.Poll <= 0 {
		o.Poll = DefaultPoll
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	r := &runner{o: o, out: o.Progress}
	if r.out == nil {
		r.out = io.Discard
	}
	r.c = newClient(o.HTTPClient, o.APIKey, o.Log.write)
	var res Result
	if o.Plan.Rollout == nil {
		return res
	}
	steps := o.Plan.Rollout.Steps
	for i := o.Done; i < len(steps); i++ {
		st := steps[i]
		r.printf("step %d/%d (wave %d): %s", st.Step, len(steps), st.Wave, Describe(st))
		o.Log.write(entry{Event: "step", Step: st.Step, Action: st.Action, Subject: st.Subject, Message: Describe(st)})
		backup, err := r.step(ctx, st)
		if backup != "" {
			res.Backups = append(res.Backups, backup)
		}
		if err != nil {
			res.Failed, res.Err, res.Left = st.Step, err, slices.Clone(steps[i:])
			ev := "failed"
			if errors.Is(err, ErrManual) {
				ev = "manual"
			}
			o.Log.write(entry{Event: ev, Step: st.Step, Action: st.Action, Subject: st.Subject, Error: err.Error()})
			return res
		}
		res.Done = append(res.Done, st.Step)
		o.Log.write(entry{Event: "done", Step: st.Step, Action: st.Action, Subject: st.Subject})
		r.printf("step %d/%d: done", st.Step, len(steps))
	}
	return res
}

func (r *runner) printf(format string, args ...any) {
	fmt.Fprintln(r.out, "poolsolve: apply: "+lloom.RedactText(fmt.Sprintf(format, args...)))
}

// Describe says what a step does, in a line.
func Describe(st plan.Step) string {
	on := ""
	if len(st.Nodes) > 0 {
		on = " on " + strings.Join(st.Nodes, ",")
	}
	switch st.Action {
	case "start":
		return fmt.Sprintf("start %s%s (%s), load time %s", st.Subject, on, orNone(string(st.Residency)), ms(float64(st.WaitMs)))
	case "stop":
		return fmt.Sprintf("stop %s%s", st.Subject, on)
	case "residency":
		return fmt.Sprintf("residency of %s%s: %s -> %s", st.Subject, on, st.From, st.To)
	case "reroute":
		return fmt.Sprintf("re-route %s: %s -> %s", st.Subject, orNone(st.From), orNone(st.To))
	case "manual-start":
		return fmt.Sprintf("manual: start %s%s (%s lane: LLooM does not start it)", st.Subject, on, st.LaneKind)
	case "manual-stop":
		return fmt.Sprintf("manual: stop %s%s (%s lane: LLooM does not stop it)", st.Subject, on, st.LaneKind)
	}
	return st.Action + " " + st.Subject
}

func ms(v float64) string {
	return (time.Duration(v) * time.Millisecond).Round(100 * time.Millisecond).String()
}

// step carries out one step and verifies it.
func (r *runner) step(ctx context.Context, st plan.Step) (backup string, err error) {
	switch st.Action {
	case "start":
		if err := r.start(ctx, st); err != nil {
			return "", err
		}
		if st.Residency != model.Always {
			return "", nil
		}
		return r.keepWarm(ctx, st, true)
	case "stop":
		backup := ""
		if st.Residency == model.Always {
			// keepWarm first: LLooM starts keepWarm runtimes again
			// (at boot, on /gateway/runtimes/keep-warm).
			b, err := r.keepWarm(ctx, st, false)
			if err != nil {
				return b, err
			}
			backup = b
		}
		return backup, r.stop(ctx, st)
	case "residency":
		if len(st.Nodes) == 0 {
			return "", fmt.Errorf("step %d: a residency change names no node", st.Step)
		}
		if model.Residency(st.To) != model.Always {
			return r.keepWarm(ctx, st, false)
		}
		// Loaded first, then kept warm: a start that fails leaves the
		// lane as it was, with no keepWarm for LLooM to act on.
		if err := r.start(ctx, st); err != nil {
			return "", err
		}
		return r.keepWarm(ctx, st, true)
	case "reroute":
		if strings.HasPrefix(st.Subject, "model:") {
			return "", nil // a model asked by its own id has no route to write
		}
		if st.To == "" {
			return "", r.manual(ctx, st, fmt.Sprintf("alias %s loses its last model: LLooM 0.2.3 needs a target; remove the alias from the config, or leave it failing", st.Subject), nil)
		}
		return r.config(ctx, st, ConfigChange{Alias: st.Subject, Target: st.To}, func(ctx context.Context, node string) (bool, error) {
			rt, err := r.c.routing(ctx, node, r.o.Nodes[node], r.o.RequestTimeout)
			return err == nil && rt[st.Subject] == st.To, err
		}, r.allNodes())
	case "manual-start", "manual-stop":
		up := st.Action == "manual-start"
		return "", r.manual(ctx, st, Describe(st), func(ctx context.Context) error {
			return r.wait(ctx, st, StopTimeout, func(ctx context.Context) (bool, string, error) { return r.lanePhase(ctx, st, up) })
		})
	}
	return "", fmt.Errorf("step %d: unknown action %q", st.Step, st.Action)
}

// keepWarm writes the lane's keepWarm and waits until its nodes show it.
func (r *runner) keepWarm(ctx context.Context, st plan.Step, want bool) (string, error) {
	return r.config(ctx, st, ConfigChange{Runtime: st.Subject, KeepWarm: want}, func(ctx context.Context, node string) (bool, error) {
		row, ok, err := r.row(ctx, node, st.Subject)
		return ok && row.KeepWarm == want, err
	}, st.Nodes)
}

func (r *runner) allNodes() []string {
	out := make([]string, 0, len(r.o.Nodes))
	for n := range r.o.Nodes {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

func (r *runner) base(node string) (*url.URL, error) {
	if u := r.o.Nodes[node]; u != nil {
		return u, nil
	}
	return nil, fmt.Errorf("node %s: no gateway to ask (no endpoint in the config's cluster.nodes)", node)
}

// start asks LLooM's admission first: a start goes ahead only when LLooM
// would start the runtime alone, evicting nothing. A start that does not
// become healthy in time is stopped again, leaving the state before it.
func (r *runner) start(ctx context.Context, st plan.Step) error {
	if strings.HasPrefix(st.Subject, "recipe:") {
		return fmt.Errorf("%w: %s is a recipe not in the config: install it as a runtime of %s's config first, then run apply again", ErrManual, st.Subject, strings.Join(st.Nodes, ","))
	}
	if len(st.Nodes) == 0 {
		return fmt.Errorf("step %d: a start names no node", st.Step)
	}
	node := st.Nodes[0]
	base, err := r.base(node)
	if err != nil {
		return err
	}
	a, err := r.c.do(ctx, node, base, http.MethodGet, "/gateway/runtimes/plan", url.Values{"runtime": {st.Subject}}, nil, r.o.RequestTimeout)
	if err != nil {
		return fmt.Errorf("LLooM's admission plan: %w", err)
	}
	var adm admission
	if err := json.Unmarshal(a.Body, &adm); err != nil {
		return fmt.Errorf("GET /gateway/runtimes/plan on %s: not LLooM's admission plan", node)
	}
	if len(adm.Errors) > 0 {
		return fmt.Errorf("LLooM's admission plan for %s on %s reports config errors: %s", st.Subject, node, clip(lloom.RedactText(string(adm.Errors[0]))))
	}
	if !adm.Admission.Allowed {
		return fmt.Errorf("LLooM's admission refuses %s on %s: %.1f GB over its budget (keepWarm lanes are never evicted); the rollout counted it within budget, so the fleet differs from the plan: run plan again", st.Subject, node, adm.Admission.OverBudgetGb)
	}
	var evicts []string
	starts := false
	for _, act := range adm.Actions {
		switch {
		case act.Type == "stop":
			evicts = append(evicts, act.RuntimeID)
		case act.Type == "start" && act.RuntimeID == st.Subject:
			starts = true
		}
	}
	if len(evicts) > 0 {
		return fmt.Errorf("LLooM would stop %s to admit %s on %s, which the rollout did not order: not started; the fleet's memory differs from the plan's (run plan again)", strings.Join(evicts, ","), st.Subject, node)
	}
	timeout := StartTimeout(float64(st.WaitMs))
	if r.o.StepTimeout > 0 {
		timeout = r.o.StepTimeout
	}
	if !starts {
		// Already loaded: LLooM plans nothing; the wait below checks it is healthy.
		r.printf("step %d: LLooM plans no start for %s: already loaded", st.Step, st.Subject)
	} else {
		r.printf("step %d: LLooM admits %s on %s without evicting anything; starting (at most %s)", st.Step, st.Subject, node, timeout)
		// LLooM answers a start once the runtime is healthy.
		_, err := r.c.do(ctx, node, base, http.MethodPost, "/gateway/runtimes/"+url.PathEscape(st.Subject)+"/start", nil, map[string]any{}, timeout)
		if err != nil {
			return r.undoStart(ctx, st, fmt.Errorf("start: %w", err))
		}
	}
	if err := r.wait(ctx, st, timeout, func(ctx context.Context) (bool, string, error) { return r.lanePhase(ctx, st, true) }); err != nil {
		return r.undoStart(ctx, st, err)
	}
	return nil
}

// undoStart stops a lane whose start failed, so the fleet is left in the
// state before the step, which the rollout proved valid.
func (r *runner) undoStart(ctx context.Context, st plan.Step, cause error) error {
	r.printf("step %d: %s; stopping %s again", st.Step, cause, st.Subject)
	if err := r.stopLane(ctx, st); err != nil {
		return fmt.Errorf("%w; stopping it again failed too: %v", cause, err)
	}
	return fmt.Errorf("%w; %s stopped again, the fleet is as before the step", cause, st.Subject)
}

func (r *runner) stop(ctx context.Context, st plan.Step) error { return r.stopLane(ctx, st) }

func (r *runner) stopLane(ctx context.Context, st plan.Step) error {
	if len(st.Nodes) == 0 {
		return fmt.Errorf("step %d: a stop names no node", st.Step)
	}
	node := st.Nodes[0]
	base, err := r.base(node)
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx) // a stop, once asked, is seen through
	if _, err := r.c.do(ctx, node, base, http.MethodPost, "/gateway/runtimes/"+url.PathEscape(st.Subject)+"/stop", nil, map[string]any{}, StopTimeout); err != nil {
		return fmt.Errorf("stop: %w", err)
	}
	timeout := StopTimeout
	if r.o.StepTimeout > 0 {
		timeout = r.o.StepTimeout
	}
	return r.wait(ctx, st, timeout, func(ctx context.Context) (bool, string, error) { return r.lanePhase(ctx, st, false) })
}

// row is runtime id's row in node's GET /gateway/node.
func (r *runner) row(ctx context.Context, node, id string) (lloom.RuntimeStatus, bool, error) {
	base, err := r.base(node)
	if err != nil {
		return lloom.RuntimeStatus{}, false, err
	}
	ns, err := r.c.node(ctx, node, base, r.o.RequestTimeout)
	if err != nil {
		return lloom.RuntimeStatus{}, false, err
	}
	row, ok := ns.RuntimeManager.Runtimes[id]
	return row, ok, nil
}

// lanePhase reports whether the lane is up (healthy on a node it spans)
// or down (loaded on none of them), as wanted, with what the rows say.
func (r *runner) lanePhase(ctx context.Context, st plan.Step, up bool) (bool, string, error) {
	var seen []string
	loaded := false
	for _, n := range st.Nodes {
		row, ok, err := r.row(ctx, n, st.Subject)
		if err != nil {
			return false, "", err
		}
		if !ok {
			seen = append(seen, n+": no row")
			continue
		}
		seen = append(seen, n+": "+orNone(row.Reading()))
		if up && row.ShowsHealthy() {
			return true, strings.Join(seen, "; "), nil
		}
		loaded = loaded || row.Loaded()
	}
	return !up && !loaded, strings.Join(seen, "; "), nil
}

// wait polls check until it holds, the timeout passes or ctx ends, with
// a progress line every few polls.
func (r *runner) wait(ctx context.Context, st plan.Step, timeout time.Duration, check func(context.Context) (bool, string, error)) error {
	began := r.o.Now()
	deadline := began.Add(timeout)
	var last string
	var lastErr error
	for polls := 0; ; polls++ {
		ok, seen, err := check(ctx)
		if ok {
			return nil
		}
		last, lastErr = seen, err
		if polls%5 == 4 {
			what := seen
			if err != nil {
				what = err.Error()
			}
			r.printf("step %d: waiting %s of at most %s: %s", st.Step, r.o.Now().Sub(began).Round(time.Second), timeout, what)
		}
		if !r.o.Now().Add(r.o.Poll).Before(deadline) {
			break
		}
		t := time.NewTimer(r.o.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	if lastErr != nil {
		return fmt.Errorf("not verified within %s: %w", timeout, lastErr)
	}
	return fmt.Errorf("not verified within %s: the gateway reports %s", timeout, orNone(last))
}

// config writes one change to the config file and waits until every
// node in nodes shows it. Nodes that do not (a gateway reading another
// file) make the step a manual one, with the exact change.
func (r *runner) config(ctx context.Context, st plan.Step, ch ConfigChange, shows func(context.Context, string) (bool, error), nodes []string) (string, error) {
	if model.Residency(st.To) == model.Preferred {
		r.printf("step %d: LLooM 0.2.3 has no preferred residency: %s is written as not keepWarm", st.Step, st.Subject)
	}
	if r.o.ConfigPath == "" {
		return "", fmt.Errorf("%w: set %s in every node's config.json (no config file given)", ErrManual, ch.Key())
	}
	backup, changed, err := writeConfig(r.o.ConfigPath, ch, r.o.Now())
	if err != nil {
		return "", fmt.Errorf("write the config: %w", err)
	}
	r.o.Log.write(entry{Event: "config", Step: st.Step, Subject: st.Subject, Message: fmt.Sprintf("%s (changed: %t, previous kept as %s)", ch.Key(), changed, backup)})
	if changed {
		r.printf("step %d: config: %s; previous kept as %s", st.Step, ch.Key(), backup)
	}
	timeout := ConfigTimeout
	if r.o.StepTimeout > 0 {
		timeout = r.o.StepTimeout
	}
	deadline := r.o.Now().Add(timeout)
	pending := slices.Clone(nodes)
	for {
		var still []string
		for _, n := range pending {
			if ok, _ := shows(ctx, n); !ok {
				still = append(still, n)
			}
		}
		pending = still
		if len(pending) == 0 {
			return backup, nil
		}
		if !r.o.Now().Add(r.o.Poll).Before(deadline) {
			return backup, fmt.Errorf("%w: %s did not show %s within %s: make that change in the config each of them reads, then run apply again", ErrManual, strings.Join(pending, ","), ch.Key(), timeout)
		}
		select {
		case <-ctx.Done():
			return backup, ctx.Err()
		case <-time.After(r.o.Poll):
		}
	}
}

// manual shows a step the operator makes and, on a terminal, waits for
// the answer and checks it; otherwise the apply stops there.
func (r *runner) manual(ctx context.Context, st plan.Step, what string, verify func(context.Context) error) error {
	if r.o.Confirm == nil || verify == nil {
		return fmt.Errorf("%w: %s", ErrManual, what)
	}
	if !r.o.Confirm(fmt.Sprintf("step %d: %s. Done? [y/N] ", st.Step, what)) {
		return fmt.Errorf("%w: %s (not confirmed)", ErrManual, what)
	}
	return verify(ctx)
}
