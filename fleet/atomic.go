package fleet

import (
	"bufio"
	"io"
	"os"
	"path/filepath"
)

// WriteFileAtomic writes data to path so that readers see the old file or
// the new one, never a part: it writes a temporary file in the same
// directory, syncs it, and renames it over path. The file gets mode 0644,
// or the mode of the file it replaces.
func WriteFileAtomic(path string, data []byte) error {
	return WriteFileAtomicWith(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// WriteFileAtomicWith is WriteFileAtomic for a file that write writes,
// through a buffer, so that a large file need not be held in memory
// first. When write fails the file is left as it was.
func WriteFileAtomicWith(path string, write func(w io.Writer) error) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	bw := bufio.NewWriterSize(f, 256<<10)
	if err = write(bw); err != nil {
		return err
	}
	if err = bw.Flush(); err != nil {
		return err
	}
	if err = f.Chmod(mode); err != nil {
		return err
	}
	if err = f.Sync(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp, path); err != nil {
		return err
	}
	// The rename is durable once the directory is synced; not every
	// platform can sync a directory, and the data is safe either way.
	if d, derr := os.Open(dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}
