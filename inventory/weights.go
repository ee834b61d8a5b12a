package inventory

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// scanLimit bounds how many directory entries one collection may visit
// across all model roots, so a root pointed at a huge tree costs seconds,
// not minutes. The scan also stops when its context ends.
const scanLimit = 200_000

var errScanLimit = errors.New("scan limit reached")

// scanner finds cached weights under model roots in a filesystem rooted
// at "/".
type scanner struct {
	ctx     context.Context
	fsys    fs.FS
	visited int
}

// fsPath turns an absolute OS path into a path of the "/"-rooted FS.
func fsPath(abs string) string {
	p := strings.TrimPrefix(path.Clean("/"+abs), "/")
	if p == "" {
		return "."
	}
	return p
}

func (s *scanner) readDir(name string) ([]fs.DirEntry, error) {
	if err := s.ctx.Err(); err != nil {
		return nil, err
	}
	ents, err := fs.ReadDir(s.fsys, name)
	s.visited += len(ents)
	if s.visited > scanLimit {
		return nil, errScanLimit
	}
	return ents, err
}

// root lists the weights under one model root: Hugging Face cache entries
// (models--org--name with a usable snapshot) and plain org/name or name
// folders that hold config.json, *.safetensors or *.gguf. Repos come back
// sorted. A partial answer comes with the error that cut it short.
func (s *scanner) root(root string) ([]CachedWeight, error) {
	dir := fsPath(root)
	ents, err := s.readDir(dir)
	if err != nil {
		return nil, err
	}
	var out []CachedWeight
	add := func(repo string, bytes uint64) {
		out = append(out, CachedWeight{Repo: repo, Root: root, SizeGb: gib(bytes)})
	}
	for _, e := range ents {
		name := e.Name()
		if !s.isDir(dir, e) || strings.HasPrefix(name, ".") {
			continue
		}
		sub := path.Join(dir, name)
		if rest, ok := strings.CutPrefix(name, "models--"); ok {
			repo := strings.Replace(rest, "--", "/", 1)
			ok, size, err := s.hfRepo(sub)
			if err != nil {
				return out, err
			}
			if ok && repo != "" {
				add(repo, size)
			}
			continue
		}
		if strings.HasPrefix(name, "datasets--") || strings.HasPrefix(name, "spaces--") {
			continue
		}
		inner, err := s.readDir(sub)
		if err != nil {
			if isStop(err) {
				return out, err
			}
			continue
		}
		if hasWeights(inner) {
			size, err := s.size(sub)
			if err != nil {
				return out, err
			}
			add(name, size)
			continue
		}
		for _, e2 := range inner {
			if !s.isDir(sub, e2) || strings.HasPrefix(e2.Name(), ".") {
				continue
			}
			leaf := path.Join(sub, e2.Name())
			files, err := s.readDir(leaf)
			if err != nil {
				if isStop(err) {
					return out, err
				}
				continue
			}
			if hasWeights(files) {
				size, err := s.size(leaf)
				if err != nil {
					return out, err
				}
				add(name+"/"+e2.Name(), size)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Repo < out[j].Repo })
	return out, nil
}

// hfRepo checks a models--org--name folder: usable when some snapshot
// holds weights; its size is the sum of blobs/, which is what the repo
// takes on disk (snapshots are symlinks into it).
func (s *scanner) hfRepo(dir string) (ok bool, size uint64, err error) {
	snaps, err := s.readDir(path.Join(dir, "snapshots"))
	if err != nil {
		if isStop(err) {
			return false, 0, err
		}
		return false, 0, nil
	}
	for _, rev := range snaps {
		if !s.isDir(path.Join(dir, "snapshots"), rev) {
			continue
		}
		files, err := s.readDir(path.Join(dir, "snapshots", rev.Name()))
		if err != nil {
			if isStop(err) {
				return false, 0, err
			}
			continue
		}
		if hasWeights(files) {
			ok = true
			break
		}
	}
	if !ok {
		return false, 0, nil
	}
	blobs, err := s.readDir(path.Join(dir, "blobs"))
	if err != nil {
		if isStop(err) {
			return false, 0, err
		}
		// No blobs folder: a copied cache with real files in snapshots.
		size, err = s.size(path.Join(dir, "snapshots"))
		return true, size, err
	}
	for _, b := range blobs {
		if strings.HasSuffix(b.Name(), ".incomplete") || !b.Type().IsRegular() {
			continue
		}
		if info, err := b.Info(); err == nil {
			size += uint64(max(0, info.Size()))
		}
	}
	return true, size, nil
}

// size sums the regular files under dir, following file symlinks.
func (s *scanner) size(dir string) (uint64, error) {
	var total uint64
	err := fs.WalkDir(s.fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // unreadable corners do not fail the scan
		}
		if s.visited++; s.visited > scanLimit {
			return errScanLimit
		}
		if err := s.ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		var info fs.FileInfo
		if d.Type()&fs.ModeSymlink != 0 {
			info, err = fs.Stat(s.fsys, p)
		} else {
			info, err = d.Info()
		}
		if err == nil && info.Mode().IsRegular() {
			total += uint64(max(0, info.Size()))
		}
		return nil
	})
	return total, err
}

// isDir reports whether e is a directory, following a symlink.
func (s *scanner) isDir(parent string, e fs.DirEntry) bool {
	if e.IsDir() {
		return true
	}
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	info, err := fs.Stat(s.fsys, path.Join(parent, e.Name()))
	return err == nil && info.IsDir()
}

func hasWeights(ents []fs.DirEntry) bool {
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() {
			continue
		}
		if n == "config.json" || strings.HasSuffix(n, ".safetensors") || strings.HasSuffix(n, ".gguf") {
			return true
		}
	}
	return false
}

// isStop tells the errors that end the whole scan from a folder that
// cannot be read.
func isStop(err error) bool {
	return errors.Is(err, errScanLimit) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// scanNote words a scan that stopped early for the inventory's notes.
func scanNote(root string, err error) string {
	switch {
	case errors.Is(err, errScanLimit):
		return fmt.Sprintf("model root %s: stopped after %d entries; cached weights may be incomplete", root, scanLimit)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("model root %s: scan timed out; cached weights may be incomplete", root)
	}
	return fmt.Sprintf("model root %s: %v; cached weights may be incomplete", root, err)
}
