package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// ExitInterrupted: plan was stopped by SIGINT or SIGTERM (128 + SIGINT, as
// a shell reports a process Ctrl-C ended).
const ExitInterrupted = 130

// interrupts delivers SIGINT and SIGTERM to plan while it runs. Tests
// replace it with a channel of their own.
var interrupts = func() (<-chan os.Signal, func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	return ch, func() { signal.Stop(ch) }
}

// exitAtOnce ends the process; tests replace it.
var exitAtOnce = os.Exit

// interruption is plan's answer to SIGINT and SIGTERM. While the inputs
// are read there is nothing to keep, and a signal ends the process at
// once. During the search the first signal stops it (Solve returns the
// best plan it has, each level marked with what was proved) and a second
// ends the process at once. After the search a first signal lets the
// plan be written and makes the exit code 130. An -o file is written
// under a lock that ending the process waits for, so that no part of it,
// nor its temporary file, is left behind (stdout is not waited for: a
// reader that stopped reading must not keep the process alive).
type interruption struct {
	search context.Context // done at the first signal during the search
	cancel context.CancelFunc
	stderr io.Writer
	stop   func()
	done   chan struct{}

	mu        sync.Mutex
	phase     int // reading, searching or writing
	signals   int
	stopped   bool // a signal stopped the search
	writing   sync.Mutex
	closeOnce sync.Once
}

const (
	reading = iota
	searching
	writing
)

func watchInterrupts(stderr io.Writer) *interruption {
	ctx, cancel := context.WithCancel(context.Background())
	in := &interruption{search: ctx, cancel: cancel, stderr: stderr, done: make(chan struct{})}
	sigs, stop := interrupts()
	in.stop = stop
	go in.watch(sigs)
	return in
}

func (in *interruption) watch(sigs <-chan os.Signal) {
	for {
		var sig os.Signal
		select {
		case sig = <-sigs:
		case <-in.done:
			return
		}
		in.mu.Lock()
		in.signals++
		phase, n := in.phase, in.signals
		if phase == searching && n == 1 {
			in.stopped = true
		}
		in.mu.Unlock()
		switch {
		case phase == searching && n == 1:
			fmt.Fprintf(in.stderr, "poolsolve: %v: stopping the search; the best plan found so far follows (a second signal exits at once)\n", sig)
			in.cancel()
		case phase == writing && n == 1:
			// The plan is whole and being written: it finishes.
		default:
			in.writing.Lock() // a write under way finishes first
			fmt.Fprintf(in.stderr, "poolsolve: %v: exiting at once\n", sig)
			exitAtOnce(ExitInterrupted)
			in.writing.Unlock() // reached only where exitAtOnce returns (tests)
			return
		}
	}
}

// searchStarts enters the search; its context is done at a signal.
func (in *interruption) searchStarts() context.Context {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.phase = searching
	return in.search
}

// searchEnds leaves the search and says whether a signal stopped it.
func (in *interruption) searchEnds() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.phase = writing
	return in.stopped
}

// write runs w, which writes the -o file, so that no signal ends the
// process halfway through it.
func (in *interruption) write(w func() error) error {
	in.writing.Lock()
	defer in.writing.Unlock()
	return w()
}

// signalled says whether any signal came.
func (in *interruption) signalled() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.signals > 0
}

// close stops listening; signals then have their default effect again.
func (in *interruption) close() {
	in.closeOnce.Do(func() {
		in.stop()
		close(in.done)
		in.cancel()
	})
}
