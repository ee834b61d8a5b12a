package fleet

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomicCreatesAndReplacesAFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fleet.json")
	if err := WriteFileAtomic(path, []byte("one")); err != nil {
		t.Fatalf("WriteFileAtomic (create): %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(path, []byte("two")); err != nil {
		t.Fatalf("WriteFileAtomic (replace): %v", err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "two" {
		t.Errorf("file holds %q (%v), want %q", got, err, "two")
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v (%v), want the replaced file's 0600", fi.Mode().Perm(), err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the file (no temporary left)", len(entries))
	}
}

func TestWriteFileAtomicGivesANewFileMode0644(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new.json")
	if err := WriteFileAtomic(path, nil); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode = %v (%v), want 0644", fi.Mode().Perm(), err)
	}
}

func TestWriteFileAtomicFailsInAMissingDirectory(t *testing.T) {
	if err := WriteFileAtomic(filepath.Join(t.TempDir(), "no", "such", "f.json"), []byte("x")); err == nil {
		t.Errorf("WriteFileAtomic into a missing directory = nil error")
	}
}

func TestWriteFileAtomicLeavesNoTemporaryWhenTheRenameFails(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(target, "keep"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	// A non-empty directory cannot be replaced by a file.
	if err := WriteFileAtomic(target, []byte("x")); err == nil {
		t.Fatalf("WriteFileAtomic over a directory = nil error")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want the temporary removed", len(entries))
	}
}
