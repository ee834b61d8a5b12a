package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEveryInputFileIsBoundedReadFromStandardInputAndMustBeUTF8(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, body []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bundle, err := os.ReadFile(spark)
	if err != nil {
		t.Fatal(err)
	}
	config, err := os.ReadFile("../examples/spark-fleet/config.json")
	if err != nil {
		t.Fatal(err)
	}
	// An id with a byte that is no UTF-8: read as U+FFFD, it would name
	// another node.
	badID := bytes.Replace(config, []byte(`"spark-node-03"`), []byte("\"spark-node-\xff3\""), 1)
	if bytes.Equal(badID, config) {
		t.Fatal("the example config has no spark-node-03")
	}
	badConfig := write("config.json", badID)
	badPolicy := write("pool.toml", []byte("headroomGb = 4\n# caf\xe9\n"))
	plain := write("spark.json", bundle)
	for _, tc := range []struct {
		name     string
		stdin    []byte
		args     []string
		code     int
		inStderr []string
	}{
		{"a bundle on standard input is read as a file", bundle,
			[]string{"validate", "--fleet", "-"}, ExitOK, nil},
		{"a config on standard input is read as a file", config,
			[]string{"validate", "--config", "-"}, ExitOK, nil},
		{"a file larger than the limit is refused with the flag that raises it", bundle,
			[]string{"validate", "--fleet", "-", "--max-input-size", "4KiB"}, ExitBadInput,
			[]string{"-: larger than the input size limit, 4KiB: give --max-input-size to raise it"}},
		{"a file on disk larger than the limit is refused too", nil,
			[]string{"validate", "--fleet", plain, "--max-input-size", "1000"}, ExitBadInput,
			[]string{plain + ": larger than the input size limit, 1000B"}},
		{"a raised limit reads the file", bundle,
			[]string{"validate", "--fleet", "-", "--max-input-size", "1GiB"}, ExitOK, nil},
		{"a size that is none is a usage error", nil,
			[]string{"validate", "--fleet", plain, "--max-input-size", "lots"}, ExitBadInput,
			[]string{`--max-input-size "lots": expected a positive size`}},
		{"standard input cannot be two inputs", config,
			[]string{"validate", "--config", "-", "--policy", "-"}, ExitBadInput,
			[]string{"standard input is given for two inputs"}},
		{"invalid UTF-8 in a config is refused at its line and column", nil,
			[]string{"validate", "--config", badConfig}, ExitBadInput,
			[]string{badConfig + ":", "invalid UTF-8 (byte 0xff)"}},
		{"invalid UTF-8 in pool.toml is refused at its line", nil,
			[]string{"validate", "--fleet", plain, "--policy", badPolicy}, ExitBadInput,
			[]string{badPolicy + ":2:6: invalid UTF-8 (byte 0xe9)"}},
		{"invalid UTF-8 in a plan to check is refused", []byte("{\"schema\": \"\xc3\"}"),
			[]string{"check", "--fleet", plain, "--plan", "-"}, ExitBadInput,
			[]string{"-:1:13: invalid UTF-8 (byte 0xc3)"}},
		{"a plan too large to check is refused", []byte(strings.Repeat(" ", 5000) + "{}"),
			[]string{"check", "--fleet", plain, "--plan", "-", "--max-input-size", "4KiB"}, ExitBadInput,
			[]string{"-: larger than the input size limit, 4KiB"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Run(append([]string{"poolsolve"}, tc.args...), bytes.NewReader(tc.stdin), &out, &errOut)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, errOut.String())
			}
			for _, s := range tc.inStderr {
				if !strings.Contains(errOut.String(), s) {
					t.Errorf("stderr lacks %q:\n%s", s, errOut.String())
				}
			}
		})
	}
}
