package inventory

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// waitFor polls cond until it holds or a generous deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestConcurrentRequestsShareOneCollectionAndTheCacheExpires(t *testing.T) {
	t.Parallel()
	const n = 32
	p := spark()
	p.gate = make(chan struct{})
	clock := &fakeClock{t: fixedNow()}
	o := sparkOptions(p)
	o.Now = clock.Now
	c := NewCollector(o)

	var wg sync.WaitGroup
	results := make([]*Inventory, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { results[i], errs[i] = c.Inventory(context.Background()) })
	}
	// Hold the one collection until every caller has joined it.
	waitFor(t, "all callers to join the collection", func() bool { return c.inFlight() == n })
	close(p.gate)
	wg.Wait()

	if got := p.smi.Load(); got != 1 {
		t.Fatalf("%d concurrent requests ran %d collections, want 1", n, got)
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if !reflect.DeepEqual(results[i], results[0]) {
			t.Fatalf("caller %d got a different inventory", i)
		}
	}
	// Each caller owns its copy.
	results[0].Notes = append(results[0].Notes, "mine")
	results[0].MemoryDomains[0].DeviceIDs[0] = "changed"
	if again, _ := c.Inventory(context.Background()); len(again.Notes) != 0 || again.MemoryDomains[0].DeviceIDs[0] != "cpu:0" {
		t.Errorf("a caller's change reached the cache: %+v", again)
	}

	clock.Add(DefaultTTL - time.Second)
	if _, err := c.Inventory(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := p.smi.Load(); got != 1 {
		t.Errorf("a request within the TTL ran a collection (%d in all)", got)
	}
	clock.Add(time.Second)
	if _, err := c.Inventory(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := p.smi.Load(); got != 2 {
		t.Errorf("after the TTL there were %d collections, want 2", got)
	}
}

func TestACallerThatGivesUpDoesNotCancelTheSharedCollection(t *testing.T) {
	t.Parallel()
	p := spark()
	p.gate = make(chan struct{})
	c := NewCollector(sparkOptions(p))

	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() {
		_, err := c.Inventory(ctx)
		gaveUp <- err
	}()
	waitFor(t, "the first caller to start a collection", func() bool { return c.inFlight() == 1 })
	var second *Inventory
	var secondErr error
	done := make(chan struct{})
	go func() {
		second, secondErr = c.Inventory(context.Background())
		close(done)
	}()
	waitFor(t, "the second caller to join", func() bool { return c.inFlight() == 2 })
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller got %v, want context.Canceled", err)
	}
	close(p.gate)
	<-done
	if secondErr != nil || len(second.MemoryDomains) == 0 || len(second.ComputeArchs) == 0 {
		t.Fatalf("the caller that waited got %+v, %v", second, secondErr)
	}
}

func TestAPanickingProbeIsANoteAndTheRestIsReported(t *testing.T) {
	t.Parallel()
	p := spark()
	p.panicOn = "docker"
	inv, err := NewCollector(sparkOptions(p)).Inventory(context.Background())
	if err != nil {
		t.Fatalf("Inventory with a panicking docker probe = %v", err)
	}
	if !slices.Contains(inv.Notes, "docker probe: internal error: probe docker exploded") || len(inv.ComputeArchs) == 0 {
		t.Errorf("inventory = %+v, want the GPU facts and a note on docker", inv)
	}
}

func TestAPanicOutsideTheProbesIsAnErrorAndTheNextRequestTriesAgain(t *testing.T) {
	t.Parallel()
	p := spark()
	p.panicOn = "LookPath"
	c := NewCollector(sparkOptions(p))
	_, err := c.Inventory(context.Background())
	if err == nil || !strings.Contains(err.Error(), "internal error") {
		t.Fatalf("Inventory with a panicking LookPath = %v, want an internal error", err)
	}
	p.panicOn = ""
	if _, err := c.Inventory(context.Background()); err != nil {
		t.Fatalf("Inventory after the panic = %v", err)
	}
	if got := p.smi.Load(); got != 1 {
		t.Errorf("nvidia-smi runs = %d, want 1 (the failed collection is not cached)", got)
	}
}

func TestCloneCopiesEveryReference(t *testing.T) {
	t.Parallel()
	inv := Collect(context.Background(), sparkOptions(spark()))
	inv.Notes = []string{"n"}
	cp := clone(inv)
	if !reflect.DeepEqual(cp, inv) {
		t.Fatal("clone differs from the original")
	}
	// Every slice field of the copy must have its own backing array, so
	// a field added to Inventory later cannot be shared by accident.
	a, b := reflect.ValueOf(inv).Elem(), reflect.ValueOf(cp).Elem()
	for i := range a.NumField() {
		f := a.Type().Field(i)
		switch f.Type.Kind() {
		case reflect.Slice:
			if a.Field(i).Len() == 0 {
				t.Errorf("field %s is empty in the fixture; give it a value", f.Name)
				continue
			}
			if a.Field(i).Pointer() == b.Field(i).Pointer() {
				t.Errorf("clone shares field %s", f.Name)
			}
		case reflect.Map, reflect.Pointer:
			t.Errorf("field %s: clone does not know how to copy a %s", f.Name, f.Type.Kind())
		}
	}
	if inv.MemoryDomains[0].AvailableGb == cp.MemoryDomains[0].AvailableGb {
		t.Error("clone shares a domain's AvailableGb")
	}
}
