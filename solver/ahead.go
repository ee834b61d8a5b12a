package solver

import (
	"slices"
	"sync/atomic"
	"time"

	"github.com/poolsolve/poolsolve/eval"
	"github.com/poolsolve/poolsolve/model"
)

// encodeAhead encodes the parts on a goroutine of its own while the warm
// start runs on the caller's: on 256x1000 each takes about 0.65 s, and
// the search needs both. A part's encoding deadline depends on whether
// its warm plan is valid (startPart), known only later, so each part's
// deadline starts at the run's and is cut by limit when it is known.
type encodeAhead struct {
	parts []component
	by    []atomic.Int64 // per part: its encoding gives up past this (UnixNano)
	quit  atomic.Bool
	xs    []*exact
	errs  []error
	done  []chan struct{}
}

// encodeAhead splits the pool into parts and starts encoding them.
func (r *run) encodeAhead() *encodeAhead {
	a := &encodeAhead{parts: splitComponents(r.pool)}
	n := len(a.parts)
	a.by, a.xs, a.errs, a.done = make([]atomic.Int64, n), make([]*exact, n), make([]error, n), make([]chan struct{}, n)
	for pi := range a.done {
		a.done[pi] = make(chan struct{})
		a.by[pi].Store(r.deadline.UnixNano())
	}
	// The goroutine gets the deadline and the seed as values: the run's
	// deadline is the solving goroutine's to move (staticExplanations),
	// and a part's later cut reaches the encoding through by. The
	// solving goroutine gives each part the run's deadline when it takes
	// it (startPart).
	deadline, seed, spares := r.deadline, r.opts.Seed, r.spares
	if r.clock.Counted() {
		// Under a work limit the search is one goroutine's: each part is
		// encoded whole, here, with no deadline to race.
		for pi, c := range a.parts {
			a.xs[pi], a.errs[pi] = newExact(r, c.pool, deadline, time.Time{}, seed+uint64(pi), nil)
			close(a.done[pi])
		}
		return a
	}
	go func() {
		for pi, c := range a.parts {
			stop := func() bool { return a.quit.Load() || time.Now().UnixNano() > a.by[pi].Load() }
			a.xs[pi], a.errs[pi] = newExact(r, c.pool, deadline, deadline, seed+uint64(pi), stop)
			close(a.done[pi])
		}
		// The core is free: the first worker process starts here, when
		// a part is large enough to start one (small parts' LP goes
		// first, and usually proves them).
		if !a.quit.Load() && slices.ContainsFunc(a.xs, func(x *exact) bool { return x != nil && !x.small() }) {
			spares.Refill()
		}
	}()
	return a
}

// all closes once every part's encoding has ended: they are encoded in
// turn, so with the last.
func (a *encodeAhead) all() <-chan struct{} {
	if len(a.done) == 0 {
		return nil
	}
	return a.done[len(a.done)-1]
}

// limit makes part pi's encoding give up past by.
func (a *encodeAhead) limit(pi int, by time.Time) { a.by[pi].Store(by.UnixNano()) }

// skip makes part pi's encoding give up at once.
func (a *encodeAhead) skip(pi int) { a.by[pi].Store(0) }

// check is eval's report of a on part pi's pool, p: by the checker the
// part's search built when its encoding has ended, else by a new one.
// The warm start usually ends with the encoding, and on 256x1000 a
// checker costs three checks to build.
func (a *encodeAhead) check(pi int, p *model.Pool, asg model.Assignment) eval.Report {
	select {
	case <-a.done[pi]:
		if x := a.xs[pi]; x != nil {
			return x.chk.Check(asg)
		}
	default:
	}
	return eval.Check(p, asg)
}

// part waits for part pi's encoding.
func (a *encodeAhead) part(pi int) (*exact, error) {
	<-a.done[pi]
	return a.xs[pi], a.errs[pi]
}

// abandon stops the encodings still running and waits for them, so that
// none takes a core after Solve returns.
func (a *encodeAhead) abandon() {
	if a == nil {
		return
	}
	a.quit.Store(true)
	if n := len(a.done); n > 0 {
		<-a.done[n-1]
	}
}
