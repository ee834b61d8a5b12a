package apply

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Lock is held by one apply at a time per fleet: a file created
// exclusively next to the config, holding the holder's pid, host and
// start time.
type Lock struct{ path string }

type lockInfo struct {
	PID     int    `json:"pid"`
	Host    string `json:"host"`
	Started string `json:"started"`
}

// ErrLocked is a lock another apply holds.
var ErrLocked = errors.New("another apply holds the lock")

// Acquire takes the lock at path. A lock left by a process of this host
// that no longer runs is stale: it is taken over, and stale says so. A
// lock of another host, or of a process that runs, is refused.
func Acquire(path string, now time.Time) (l *Lock, stale string, err error) {
	host, _ := os.Hostname()
	me, _ := json.Marshal(lockInfo{PID: os.Getpid(), Host: host, Started: now.UTC().Format(time.RFC3339)})
	for try := 0; try < 2; try++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, werr := f.Write(append(me, '\n'))
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				os.Remove(path)
				return nil, "", werr
			}
			return &Lock{path: path}, stale, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return nil, "", err
		}
		data, rerr := os.ReadFile(path)
		var held lockInfo
		if rerr != nil || json.Unmarshal(data, &held) != nil || held.PID <= 0 {
			return nil, "", fmt.Errorf("%w: %s exists but does not say who holds it; remove it if no apply runs", ErrLocked, path)
		}
		if held.Host != host || alive(held.PID) {
			return nil, "", fmt.Errorf("%w: %s: pid %d on %s, since %s; wait for it, or remove the file if that apply is gone", ErrLocked, path, held.PID, held.Host, held.Started)
		}
		stale = fmt.Sprintf("took over the lock %s left by pid %d (since %s), which no longer runs", path, held.PID, held.Started)
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, "", err
		}
	}
	return nil, "", fmt.Errorf("%w: %s was taken while a stale lock was replaced", ErrLocked, path)
}

// alive reports whether pid runs on this host.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// Release removes the lock.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	return os.Remove(l.path)
}
