package gctune

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

const (
	// SmallPercent is GOGC while the live heap is under LiveMax.
	SmallPercent = 400
	// LiveMax is the live heap past which GOGC is Go's default again.
	LiveMax        = 64 << 20
	defaultPercent = 100
)

// PercentFor is the GOGC for a live heap of live bytes.
func PercentFor(live uint64) int {
	if live < LiveMax {
		return SmallPercent
	}
	return defaultPercent
}

// Start sets GOGC for the heap now and again after every collection,
// unless GOGC or GOMEMLIMIT is in the environment. It reports whether it
// started.
func Start() bool {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return false
	}
	debug.SetGCPercent(PercentFor(Live()))
	arm()
	return true
}

// held is set by Hold: the cleanups stop setting GOGC.
var (
	mu   sync.Mutex
	held bool
)

// Hold sets GOGC to percent for the rest of the process: the collections
// that follow no longer set it from the live heap. It is for a process
// that knows its heap better than PercentFor does, such as a PB worker
// with a large job, whose own setting the next collection would
// otherwise undo.
func Hold(percent int) {
	mu.Lock()
	defer mu.Unlock()
	held = true
	debug.SetGCPercent(percent)
}

// arm leaves an object for the next collection to free; its cleanup,
// which runs once that collection has ended, sets GOGC by the live heap
// then and arms the next one, unless Hold has been called.
func arm() {
	sentinel := new([16]byte)
	runtime.AddCleanup(sentinel, func(struct{}) {
		mu.Lock()
		defer mu.Unlock()
		if held {
			return
		}
		debug.SetGCPercent(PercentFor(Live()))
		arm()
	}, struct{}{})
}

// Live is the heap the last collection marked live, in bytes.
func Live() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
