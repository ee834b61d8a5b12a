package cli

import (
	"bytes"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal of cols columns: the terminal side to
// write to, and a reader of everything written to it.
func openPTY(t *testing.T, cols int) (*os.File, func() string) {
	t.Helper()
	ptm, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(ptm.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetInt(int(ptm.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Raw output: no \n to \r\n, so the bytes are the plan's.
	termios, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	termios.Oflag &^= unix.OPOST
	if err := unix.IoctlSetTermios(int(tty.Fd()), unix.TCSETS, termios); err != nil {
		t.Fatal(err)
	}
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: uint16(cols), Row: 40}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		io.Copy(&buf, ptm) // ends with EIO once the terminal side closes
		close(done)
	}()
	t.Cleanup(func() { ptm.Close(); tty.Close() })
	return tty, func() string {
		tty.Close()
		<-done
		return buf.String()
	}
}

func TestColourAndWidthFollowTheTerminal(t *testing.T) {
	tests := []struct {
		name      string
		noColor   string
		args      []string
		toTTY     bool
		wantColor bool
		wantWrap  bool
	}{
		{"a terminal gets colour and lines as wide as it", "", nil, true, true, true},
		{"NO_COLOR turns colour off on a terminal", "1", nil, true, false, true},
		{"--color always beats NO_COLOR", "1", []string{"--color", "always"}, true, true, true},
		{"--color never on a terminal", "", []string{"--color", "never"}, true, false, true},
		{"a pipe gets neither", "", nil, false, false, false},
		{"--color always on a pipe", "", []string{"--color", "always"}, false, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("NO_COLOR", tc.noColor)
			t.Setenv("COLUMNS", "")
			args := append([]string{"poolsolve", "plan", "--fleet", spark, "--cordon", "spark-node-02", "-q"}, tc.args...)
			var out string
			var code int
			if tc.toTTY {
				tty, read := openPTY(t, 72)
				code = Run(args, strings.NewReader(""), tty, io.Discard)
				out = read()
			} else {
				var buf bytes.Buffer
				code = Run(args, strings.NewReader(""), &buf, io.Discard)
				out = buf.String()
			}
			if code != ExitChanges {
				t.Fatalf("exit %d:\n%s", code, out)
			}
			if got := strings.Contains(out, "\x1b[31m- stop"); got != tc.wantColor {
				t.Errorf("coloured stop: %v, want %v:\n%s", got, tc.wantColor, out)
			}
			wide := false
			for _, l := range strings.Split(ansi.ReplaceAllString(out, ""), "\n") {
				if len([]rune(l)) > 72 && strings.Contains(strings.TrimSpace(l), " ") && !strings.HasPrefix(l, "  source") && !strings.Contains(l, " req ") {
					wide = true
				}
			}
			if wide == tc.wantWrap {
				t.Errorf("lines wider than the 72-column terminal: %v, want wrapping %v:\n%s", wide, tc.wantWrap, out)
			}
		})
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")
