package inventory

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkScanModelRoot measures the weights scan over a Hugging Face
// cache of n repos (three blobs and a snapshot each) on the real
// filesystem, the part of a collection that grows with the machine.
// (fstest.MapFS would measure itself: its ReadDir walks the whole map.)
func BenchmarkScanModelRoot(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("repos=%d", n), func(b *testing.B) {
			root := b.TempDir()
			for i := range n {
				dir := filepath.Join(root, fmt.Sprintf("models--org--model-%04d", i))
				for _, f := range []string{"snapshots/rev/config.json", "snapshots/rev/model.safetensors", "blobs/0", "blobs/1", "blobs/2"} {
					p := filepath.Join(dir, f)
					if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
						b.Fatal(err)
					}
					if err := os.WriteFile(p, make([]byte, 64), 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
			s := &scanner{ctx: context.Background(), fsys: OS{}.FS()}
			if got, err := s.root(root); err != nil || len(got) != n {
				b.Fatalf("root = %d repos, %v; want %d", len(got), err, n)
			}
			for b.Loop() {
				s.visited = 0
				s.root(root)
			}
		})
	}
}

// BenchmarkCachedInventory is the cost of a status request that finds the
// inventory in the cache: a lock and a deep copy.
func BenchmarkCachedInventory(b *testing.B) {
	c := NewCollector(sparkOptions(spark()))
	if _, err := c.Inventory(context.Background()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		c.Inventory(context.Background())
	}
}
