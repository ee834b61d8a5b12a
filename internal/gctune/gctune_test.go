package gctune

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestPercentFor(t *testing.T) {
	tests := []struct {
		name string
		live uint64
		want int
	}{
		{"an empty heap is collected rarely", 0, SmallPercent},
		{"a heap just under the bound is collected rarely", LiveMax - 1, SmallPercent},
		{"a heap at the bound is collected as Go does by default", LiveMax, defaultPercent},
		{"a large heap is collected as Go does by default", 4 << 30, defaultPercent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := PercentFor(tt.live); got != tt.want {
				t.Errorf("PercentFor(%d) = %d, want %d", tt.live, got, tt.want)
			}
		})
	}
}

// After a collection with a large live heap GOGC is the default again,
// and after one with a small heap it is SmallPercent: the cleanup re-arms.
func TestStartFollowsTheLiveHeapAcrossCollections(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	if !Start() {
		t.Fatal("Start did not start with GOGC and GOMEMLIMIT unset")
	}
	big := make([]byte, LiveMax+(8<<20))
	for i := range big {
		big[i] = 1
	}
	gcUntil(t, defaultPercent)
	runtime.KeepAlive(big)
	big = nil
	gcUntil(t, SmallPercent)
}

// gcUntil collects until the cleanup has set GOGC to want.
func gcUntil(t *testing.T, want int) {
	t.Helper()
	for range 50 {
		runtime.GC()
		runtime.Gosched()
		p := debug.SetGCPercent(want)
		debug.SetGCPercent(p)
		if p == want {
			return
		}
	}
	t.Fatalf("GOGC did not become %d after 50 collections", want)
}

func TestStartLeavesAChosenGOGCAlone(t *testing.T) {
	t.Setenv("GOGC", "150")
	if Start() {
		t.Error("Start started with GOGC set")
	}
}

func TestHoldKeepsItsPercentAcrossCollections(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer func() { mu.Lock(); held = false; mu.Unlock() }()
	if !Start() {
		t.Fatal("Start did not start with GOGC and GOMEMLIMIT unset")
	}
	Hold(50)
	for range 10 {
		runtime.GC()
		runtime.Gosched()
	}
	// The heap is small: without Hold a cleanup would have set
	// SmallPercent by now.
	if p := debug.SetGCPercent(50); p != 50 {
		t.Errorf("GOGC after Hold(50) and ten collections = %d, want 50", p)
	}
}
