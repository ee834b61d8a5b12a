package pb

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// The worker processes: started ahead of their jobs (pbSpares), given
// one job each (startPB), killed at their deadline or by stop.

// Run is a running worker.
type Run struct {
	id     int
	cancel context.CancelFunc
	Done   chan struct{} // closed when the worker and its reader ended
}

// Msg is an answer of worker id.
type Msg struct {
	ID     int
	Answer Answer
}

// errNoWorker is returned when the executable cannot be re-run, or does
// not serve as a worker (its main did not call ServeIfWorker).
var errNoWorker = errors.New("solver: pseudo-boolean worker unavailable")

// pbProc is a worker process started ahead of its job: it waits for the
// job on stdin, so that its exec and runtime start (15-20 ms) overlap
// the encoding instead of delaying the first answer.
type pbProc struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out io.ReadCloser
}

// spawnPB starts a worker process that waits for its job.
func spawnPB() (*pbProc, error) {
	if !workersServed.Load() {
		return nil, errNoWorker
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoWorker, err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(cmd.Environ(), WorkerEnv+"=1")
	cmd.SysProcAttr = workerAttr()
	cmd.Stderr = io.Discard
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		_ = in.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %w", errNoWorker, err)
	}
	return &pbProc{cmd: cmd, in: in, out: out}, nil
}

// kill ends a process that got no job, without waiting for it.
func (p *pbProc) kill() {
	_ = p.cmd.Process.Kill()
	go func() { _ = p.cmd.Wait() }()
}

// Spares keeps one worker process started ahead of the next job, for
// one solve; close kills it. A nil *Spares starts every process at
// its job.
type Spares struct {
	mu     sync.Mutex
	ready  chan *pbProc // holds at most one started process
	closed bool
}

// NewSpares starts none yet: the first is started when the parts are
// encoded (encodeAhead). Started with the solve, its exec and runtime
// start took a core from the warm start: 24x60-tight's took 45 ms
// instead of 25.
func NewSpares() *Spares {
	return &Spares{ready: make(chan *pbProc, 1)}
}

// Refill starts a spare process in the background, unless one is there.
func (s *Spares) Refill() {
	if s == nil {
		return
	}
	s.mu.Lock()
	idle := s.closed || len(s.ready) > 0
	s.mu.Unlock()
	if idle {
		return
	}
	go func() {
		p, err := spawnPB()
		if err != nil {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.closed {
			p.kill()
			return
		}
		select {
		case s.ready <- p:
		default:
			p.kill()
		}
	}()
}

// take returns the spare process, or a new one when none is ready. It
// starts no new spare: one started now would take a core from the job's
// first milliseconds (24x60-tight's proof took 152 ms with that, 142 ms
// without). A level's end starts the next one (pbLevel.stop).
func (s *Spares) take() (*pbProc, error) {
	if s == nil {
		return spawnPB()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return spawnPB()
	}
	select {
	case p := <-s.ready:
		return p, nil
	default:
		return spawnPB()
	}
}

// Close kills the spare, and any started later.
func (s *Spares) Close() {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	select {
	case p := <-s.ready:
		p.kill()
	default:
	}
}

// Start starts worker id on job, in a spare process when spares has
// one; it is killed at deadline, when ctx ends, or by stop. Its answers
// go to out, tagged with id, until it ends or is stopped.
func Start(ctx context.Context, spares *Spares, deadline time.Time, job *Job, id int, out chan<- Msg) (*Run, error) {
	if why := job.tooWide(); why != "" {
		return nil, errors.New(why) // no worker: the others prove without it
	}
	p, err := spares.take()
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithDeadline(ctx, deadline)
	pr := &Run{id: id, cancel: cancel, Done: make(chan struct{})}
	go func() { _ = NewJobWriter(p.in)(job) }()
	go func() {
		// The deadline, ctx or stop kills the process; its reader
		// below then sees the end of its output.
		select {
		case <-cctx.Done():
			_ = p.cmd.Process.Kill()
		case <-pr.Done:
		}
	}()
	go func() {
		defer close(pr.Done)
		dec := gob.NewDecoder(bufio.NewReader(p.out))
		for {
			var a Answer
			if err := dec.Decode(&a); err != nil {
				break
			}
			select {
			case out <- Msg{id, a}:
			case <-cctx.Done():
			}
			// After Done comes the canonical model, when the job has one.
			if (a.Done && job.Canon == nil) || a.Canonical || cctx.Err() != nil {
				break
			}
		}
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}()
	return pr, nil
}

// Stop kills the worker and waits for it.
func (pr *Run) Stop() {
	pr.cancel()
	<-pr.Done
}
