package safehttp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"time"
)

func TestDescribe(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&url.Error{Op: "Get", URL: "http://secret", Err: ErrRedirect}, "redirect to another host refused"},
		{fmt.Errorf("wrapped: %w", io.ErrUnexpectedEOF), "connection closed mid-answer"},
		{errors.New("http://secret/ odd"), "request failed"},
	} {
		if got := Describe(tc.err, time.Second).Error(); got != tc.want {
			t.Errorf("Describe(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

func TestSameHostOnly(t *testing.T) {
	first, _ := http.NewRequest("GET", "https://a/x", nil)
	same, _ := http.NewRequest("GET", "https://a/y", nil)
	other, _ := http.NewRequest("GET", "https://b/y", nil)
	if err := SameHostOnly(same, []*http.Request{first}); err != nil {
		t.Errorf("same host refused: %v", err)
	}
	if err := SameHostOnly(other, []*http.Request{first}); !errors.Is(err, ErrRedirect) {
		t.Errorf("other host: %v, want ErrRedirect", err)
	}
	if err := SameHostOnly(same, []*http.Request{first, first, first}); !errors.Is(err, ErrRedirect) {
		t.Errorf("fourth redirect: %v, want ErrRedirect", err)
	}
}
