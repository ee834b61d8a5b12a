package lloom

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"unicode/utf8"

	"github.com/poolsolve/poolsolve/internal/jsonpos"
)

// DefaultMaxInputBytes bounds each input file: far above any real fleet,
// and low enough that a stream of zeros given as a file is refused, not
// read until memory runs out.
const DefaultMaxInputBytes = 256 << 20

// Stdin is the name that reads standard input wherever a file is read.
const Stdin = "-"

var input = struct {
	sync.Mutex
	stdin    io.Reader
	max      int64
	stdinFor bool // standard input was read
}{stdin: os.Stdin, max: DefaultMaxInputBytes}

// SetInputs sets where "-" reads from and the size limit of every input
// file, for the command about to run.
func SetInputs(stdin io.Reader, maxBytes int64) {
	input.Lock()
	defer input.Unlock()
	if stdin == nil {
		stdin = os.Stdin
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxInputBytes
	}
	input.stdin, input.max, input.stdinFor = stdin, maxBytes, false
}

// MaxInputBytes is the size limit in force.
func MaxInputBytes() int64 {
	input.Lock()
	defer input.Unlock()
	return input.max
}

// ReadInput reads an input file ("-" for standard input, once) within the
// size limit, checks that it is UTF-8 text, and drops a byte order mark.
// A file too large or not UTF-8 is an *InputError naming the file (and
// where the first bad byte is).
func ReadInput(path string) ([]byte, error) {
	return readLimited(path, MaxInputBytes(), false)
}

// ReadProfileInput reads a fleet profile as ReadInput does, but at most
// one byte over LLooM's own limit, which ParseProfile then refuses with
// LLooM's message.
func ReadProfileInput(path string) ([]byte, error) {
	return readLimited(path, min(MaxInputBytes(), MaxProfileBytes), true)
}

// readLimited reads up to limit bytes of path; one more is an error, or,
// with over, is returned for the caller to refuse.
func readLimited(path string, limit int64, over bool) ([]byte, error) {
	var r io.Reader
	if path == Stdin {
		input.Lock()
		used := input.stdinFor
		input.stdinFor, r = true, input.stdin
		input.Unlock()
		if used {
			return nil, &InputError{File: path, Msg: "standard input is given for two inputs; it can be read once"}
		}
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		if over {
			return data, nil
		}
		return nil, &InputError{File: path, Msg: fmt.Sprintf("larger than the input size limit, %s: give --max-input-size to raise it", FormatBytes(limit))}
	}
	data = jsonpos.TrimBOM(data)
	if err := CheckUTF8(data, path); err != nil {
		return nil, err
	}
	return data, nil
}

// CheckUTF8 refuses data that is not UTF-8: a byte that is no character
// would be read as U+FFFD, and an id would silently change.
func CheckUTF8(data []byte, file string) error {
	if utf8.Valid(data) {
		return nil
	}
	off := 0
	for off < len(data) {
		r, n := utf8.DecodeRune(data[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	line := 1 + bytes.Count(data[:off], []byte{'\n'})
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return &InputError{File: file, Line: line, Col: col, Msg: fmt.Sprintf("invalid UTF-8 (byte 0x%02x): input files are UTF-8 text", data[off])}
}

// FormatBytes renders a size as the flag takes it: 256MiB, 1GiB, 1500B.
func FormatBytes(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%dB", n)
}

// ParseBytes reads a size: a number of bytes with an optional unit B, KiB,
// MiB or GiB (KB, MB, GB are read as the same powers of two).
func ParseBytes(s string) (int64, error) {
	num := s
	mult := int64(1)
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"GB", 1 << 30}, {"G", 1 << 30}, {"MiB", 1 << 20}, {"MB", 1 << 20}, {"M", 1 << 20}, {"KiB", 1 << 10}, {"KB", 1 << 10}, {"K", 1 << 10}, {"B", 1}} {
		if rest, ok := cutSuffixFold(s, u.name); ok {
			num, mult = rest, u.size
			break
		}
	}
	var n int64
	if _, err := fmt.Sscanf(num, "%d", &n); err != nil || fmt.Sprint(n) != num || n <= 0 {
		return 0, errors.New("expected a positive size such as 256MiB, 1GiB or 1000000 (bytes)")
	}
	if n > (1<<62)/mult {
		return 0, errors.New("size is too large")
	}
	return n * mult, nil
}

func cutSuffixFold(s, suffix string) (string, bool) {
	if len(s) > len(suffix) && bytes.EqualFold([]byte(s[len(s)-len(suffix):]), []byte(suffix)) {
		return s[:len(s)-len(suffix)], true
	}
	return s, false
}
