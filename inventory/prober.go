package inventory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"
	"time"
)

// Prober is everything the inventory asks of the machine. The collector
// reaches the OS only through it, so tests inject a fake and the real
// implementation stays small enough to read in one sitting.
//
// Implementations must be safe for concurrent use.
type Prober interface {
	// Command runs name with args, directly and without a shell, and
	// returns its standard output. It must stop when ctx ends.
	Command(ctx context.Context, name string, args ...string) ([]byte, error)
	// LookPath reports where name is found on PATH.
	LookPath(name string) (string, error)
	// ReadFile reads a small system file such as /proc/meminfo.
	ReadFile(name string) ([]byte, error)
	// FreeBytes reports the bytes an unprivileged user may still write on
	// the filesystem holding path.
	FreeBytes(path string) (uint64, error)
	// FS is the filesystem model roots are read from, rooted at "/": the
	// path "/a/b" is "a/b" in it.
	FS() fs.FS
	// InterfaceAddrs lists the addresses of the local network interfaces.
	InterfaceAddrs() ([]InterfaceAddr, error)
	// Platform returns Go's GOOS and GOARCH for the machine.
	Platform() (goos, goarch string)
	// Hostname returns the machine's host name.
	Hostname() (string, error)
	// Getenv reads an environment variable ("" when unset).
	Getenv(key string) string
}

// InterfaceAddr is one address of one local interface.
type InterfaceAddr struct {
	Interface string
	Prefix    netip.Prefix // address and prefix length, e.g. 10.100.192.2/24
}

// OS is the Prober of the machine the program runs on.
type OS struct{}

var _ Prober = OS{}

// maxCommandOutput caps what a probe command may print; a probe that says
// more is broken and its answer is cut, then rejected by its parser.
const maxCommandOutput = 4 << 20

// Command runs name with args via exec.CommandContext: argv only, no shell,
// a minimal fixed locale so output parses the same everywhere. Standard
// error goes into the returned error, shortened.
func (OS) Command(ctx context.Context, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(cmd.Environ(), "LC_ALL=C", "LANG=C")
	var stdout, stderr limitedBuffer
	stdout.max, stderr.max = maxCommandOutput, 4096
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		if msg := firstLine(stderr.buf.String()); msg != "" {
			return nil, fmt.Errorf("%w: %s", err, msg)
		}
		return nil, err
	}
	if stdout.cut {
		return nil, fmt.Errorf("output over %d bytes", maxCommandOutput)
	}
	return stdout.buf.Bytes(), nil
}

// LookPath is exec.LookPath.
func (OS) LookPath(name string) (string, error) { return exec.LookPath(name) }

// ReadFile reads at most 1 MiB of name.
func (OS) ReadFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 1<<20))
}

// FreeBytes is statfs's blocks available to unprivileged users times the
// block size (see statfs_*.go).
func (OS) FreeBytes(path string) (uint64, error) { return freeBytes(path) }

// FS is os.DirFS("/").
func (OS) FS() fs.FS { return os.DirFS("/") }

// InterfaceAddrs lists every address of every interface that is up.
func (OS) InterfaceAddrs() ([]InterfaceAddr, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	var out []InterfaceAddr
	for _, ifc := range ifs {
		if ifc.Flags&net.FlagUp == 0 {
			continue
		}
		addrs, err := ifc.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			ipn, ok := a.(*net.IPNet)
			if !ok {
				continue
			}
			ip, ok := netip.AddrFromSlice(ipn.IP)
			if !ok {
				continue
			}
			ones, _ := ipn.Mask.Size()
			out = append(out, InterfaceAddr{Interface: ifc.Name, Prefix: netip.PrefixFrom(ip.Unmap(), ones)})
		}
	}
	return out, nil
}

// Platform is runtime.GOOS and runtime.GOARCH.
func (OS) Platform() (string, string) { return runtime.GOOS, runtime.GOARCH }

// Hostname is os.Hostname.
func (OS) Hostname() (string, error) { return os.Hostname() }

// Getenv is os.Getenv.
func (OS) Getenv(key string) string { return os.Getenv(key) }

// limitedBuffer keeps the first max bytes written and drops the rest, so a
// runaway command cannot fill memory; it never fails a write, so the
// command is not killed by a broken pipe mid-answer. The buffer is a field,
// not embedded: an embedded bytes.Buffer would lend its ReadFrom to
// io.Copy and bypass the cap.
type limitedBuffer struct {
	buf bytes.Buffer
	max int
	cut bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room < len(p) {
		b.cut = true
		if room > 0 {
			b.buf.Write(p[:room])
		}
		return len(p), nil
	}
	return b.buf.Write(p)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	s = urlPattern.ReplaceAllString(s, "[url]")
	return clip(strings.TrimSpace(s))
}

var urlPattern = regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s"'<>]*`)

// errTimeout is reported by run when a probe command overran its timeout.
var errTimeout = errors.New("timed out")

// run runs one probe command with its own timeout and says which command
// failed and why.
func run(ctx context.Context, p Prober, timeout time.Duration, name string, args ...string) ([]byte, error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := p.Command(cctx, name, args...)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			err = fmt.Errorf("%w after %s", errTimeout, timeout)
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}
