package inventory

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// These tests run real processes and a real filesystem: they check the
// part of OS that fakes stand in for elsewhere.

func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not on PATH", n)
		}
	}
}

func TestOSCommandReportsTheFirstLineOfStderrWithoutURLs(t *testing.T) {
	t.Parallel()
	needTools(t, "sh")
	_, err := OS{}.Command(context.Background(), "sh", "-c", "echo 'cannot reach tcp://admin:s3cret@10.0.0.1:2376 now' >&2; echo second >&2; exit 3")
	if err == nil {
		t.Fatal("a failing command gave no error")
	}
	got := err.Error()
	if !strings.Contains(got, "exit status 3") || !strings.Contains(got, "cannot reach [url] now") || strings.Contains(got, "s3cret") || strings.Contains(got, "second") {
		t.Errorf("error = %q", got)
	}
}

func TestOSCommandPassesArgumentsWithoutAShell(t *testing.T) {
	t.Parallel()
	needTools(t, "printf")
	out, err := OS{}.Command(context.Background(), "printf", "%s|", "$HOME", "{{.Repository}}", "a;b")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(out), "$HOME|{{.Repository}}|a;b|"; got != want {
		t.Errorf("printf output = %q, want %q (no expansion)", got, want)
	}
}

func TestOSCommandStopsAtItsTimeout(t *testing.T) {
	t.Parallel()
	needTools(t, "sleep")
	start := time.Now()
	_, err := run(context.Background(), OS{}, 50*time.Millisecond, "sleep", "30")
	if err == nil || !strings.Contains(err.Error(), "sleep: timed out after 50ms") {
		t.Errorf("run(sleep 30) = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the timeout took %s to bite", d)
	}
}

func TestOSCommandRejectsRunawayOutput(t *testing.T) {
	t.Parallel()
	needTools(t, "head")
	_, err := OS{}.Command(context.Background(), "head", "-c", "5000000", "/dev/zero")
	if err == nil || !strings.Contains(err.Error(), "output over") {
		t.Errorf("a 5 MB answer = %v, want an output cap error", err)
	}
}

func TestOSWeightsScanFollowsHuggingFaceSymlinks(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	repo := filepath.Join(root, "models--Qwen--Qwen3-Embedding-4B")
	write := func(p string, n int) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(repo, "blobs", "cfg"), 1<<10)
	write(filepath.Join(repo, "blobs", "weights"), 20<<20)
	snap := filepath.Join(repo, "snapshots", "0123abc")
	if err := os.MkdirAll(snap, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, blob := range map[string]string{"config.json": "cfg", "model.safetensors": "weights"} {
		if err := os.Symlink(filepath.Join("..", "..", "blobs", blob), filepath.Join(snap, name)); err != nil {
			t.Skipf("no symlinks here: %v", err)
		}
	}
	// A plain folder whose weights are symlinks into the cache, and a
	// symlinked model folder.
	write(filepath.Join(root, "org", "name", "config.json"), 10)
	if err := os.Symlink(filepath.Join(repo, "blobs", "weights"), filepath.Join(root, "org", "name", "model.safetensors")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "org", "name"), filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}

	s := &scanner{ctx: context.Background(), fsys: OS{}.FS()}
	got, err := s.root(root)
	if err != nil {
		t.Fatal(err)
	}
	repos := map[string]float64{}
	for _, w := range got {
		repos[w.Repo] = w.SizeGb
	}
	wantRepos := map[string]float64{"Qwen/Qwen3-Embedding-4B": 0.02, "linked": 0.02, "org/name": 0.02}
	if !reflect.DeepEqual(repos, wantRepos) {
		t.Errorf("root(%s) = %+v, want repos %v", root, got, wantRepos)
	}
	free, err := OS{}.FreeBytes(root)
	if err != nil || free == 0 {
		t.Errorf("FreeBytes(%s) = %d, %v", root, free, err)
	}
}
