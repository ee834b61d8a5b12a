package jsonpos

import "testing"

func TestMessageLeavesOutWhatIsUnknown(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		line, col  int
		path, want string
	}{
		{"everything known", "config.json", 12, 19, `$.a["b"]`, `config.json:12:19: $.a["b"]: bad`},
		{"no position: found after reading", "config.json", 0, 0, "$.a", "config.json: $.a: bad"},
		{"a position without a file says line", "", 3, 4, "", "line 3:4: bad"},
		{"nothing but the message", "", 0, 0, "", "bad"},
		{"a path alone", "", 0, 0, "$.x", "$.x: bad"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Message(tc.file, tc.line, tc.col, tc.path, "bad"); got != tc.want {
				t.Errorf("Message = %q, want %q", got, tc.want)
			}
		})
	}
}
