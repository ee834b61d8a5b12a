package inventory

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Collector serves this machine's inventory on request. A collection is
// cached for the TTL; requests that arrive while one runs wait for it and
// share its result, so a burst of status calls runs the probes once.
//
// A Collector is safe for concurrent use.
type Collector struct {
	opts Options

	mu       sync.Mutex
	cached   *Inventory
	cachedAt time.Time
	flight   *flight
}

// flight is one collection in progress and, once done is closed, its
// result.
type flight struct {
	done    chan struct{}
	inv     *Inventory
	err     error
	waiters int // callers sharing it; read by tests
}

// NewCollector returns a Collector with opts (see Options for defaults).
// It collects nothing until asked.
func NewCollector(opts Options) *Collector {
	return &Collector{opts: opts.withDefaults()}
}

// Inventory returns the cached inventory while it is younger than the TTL,
// else joins the collection in progress or starts one. The collection
// itself is not cancelled with ctx, since other callers may share it; ctx
// only bounds how long this caller waits. The result is the caller's own
// copy. The error is ctx's when the caller gave up, or an internal error
// if a probe panicked; a probe that fails is a note, not an error.
func (c *Collector) Inventory(ctx context.Context) (*Inventory, error) {
	c.mu.Lock()
	if c.cached != nil {
		age := c.opts.Now().Sub(c.cachedAt)
		if age >= 0 && age < c.opts.TTL {
			inv := c.cached
			c.mu.Unlock()
			return clone(inv), nil
		}
	}
	f := c.flight
	if f == nil {
		f = &flight{done: make(chan struct{})}
		c.flight = f
		go c.collect(context.WithoutCancel(ctx), f)
	}
	f.waiters++
	c.mu.Unlock()

	select {
	case <-f.done:
		if f.err != nil {
			return nil, f.err
		}
		return clone(f.inv), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// collect runs one collection for every caller of f.
func (c *Collector) collect(ctx context.Context, f *flight) {
	start := c.opts.Now()
	defer func() {
		// A panic in a probe must not take the agent down with it; the
		// waiters get an error and the next request tries again.
		if r := recover(); r != nil {
			f.inv, f.err = nil, fmt.Errorf("inventory: internal error: collection panicked: %v", r)
		}
		c.mu.Lock()
		if f.err == nil {
			c.cached, c.cachedAt = f.inv, start
		}
		c.flight = nil
		c.mu.Unlock()
		close(f.done)
	}()
	f.inv = Collect(ctx, c.opts)
}

// inFlight reports how many callers share the collection in progress, or
// -1 when none runs. Tests use it to release a blocked probe only once
// every caller has joined.
func (c *Collector) inFlight() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.flight == nil {
		return -1
	}
	return c.flight.waiters
}

// clone deep-copies an inventory so callers may change theirs freely.
func clone(inv *Inventory) *Inventory {
	if inv == nil {
		return nil
	}
	out := *inv
	out.ComputeArchs = slices.Clone(inv.ComputeArchs)
	out.Accelerators = slices.Clone(inv.Accelerators)
	out.MemoryDomains = slices.Clone(inv.MemoryDomains)
	for i := range out.MemoryDomains {
		d := &out.MemoryDomains[i]
		if d.AvailableGb != nil {
			v := *d.AvailableGb
			d.AvailableGb = &v
		}
		d.DeviceIDs = slices.Clone(d.DeviceIDs)
	}
	out.ModelRoots = slices.Clone(inv.ModelRoots)
	out.CachedWeights = slices.Clone(inv.CachedWeights)
	out.Commands = slices.Clone(inv.Commands)
	out.DockerImages = slices.Clone(inv.DockerImages)
	out.Links = slices.Clone(inv.Links)
	out.Notes = slices.Clone(inv.Notes)
	return &out
}
