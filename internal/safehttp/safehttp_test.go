package safehttp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"
	"testing/iotest"
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

func TestReadCappedReadsWholeBodiesAndRefusesLongOnes(t *testing.T) {
	body := make([]byte, 3<<20+17)
	for i := range body {
		body[i] = byte(i * 7)
	}
	for _, size := range []int64{-1, int64(len(body)), 10, int64(len(body)) + 100} {
		got, tooLarge, err := ReadCappedSize(iotest.HalfReader(bytes.NewReader(body)), 4<<20, size)
		if err != nil || tooLarge || !bytes.Equal(got, body) {
			t.Errorf("size %d: %d bytes, tooLarge %v, %v; want the %d bytes", size, len(got), tooLarge, err, len(body))
		}
		got, tooLarge, err = ReadCappedSize(bytes.NewReader(body), int64(len(body))-1, size)
		if err != nil || !tooLarge || got != nil {
			t.Errorf("size %d, cap one byte short: %d bytes, tooLarge %v, %v; want tooLarge", size, len(got), tooLarge, err)
		}
		got, tooLarge, err = ReadCappedSize(bytes.NewReader(body), int64(len(body)), size)
		if err != nil || tooLarge || !bytes.Equal(got, body) {
			t.Errorf("size %d, cap exactly the body: %d bytes, tooLarge %v, %v", size, len(got), tooLarge, err)
		}
	}
	cut := io.MultiReader(bytes.NewReader(body[:1000]), iotest.ErrReader(io.ErrUnexpectedEOF))
	if _, _, err := ReadCapped(cut, 4<<20); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a cut body read with %v, want unexpected EOF", err)
	}
	if got, tooLarge, err := ReadCapped(bytes.NewReader(nil), 10); err != nil || tooLarge || len(got) != 0 {
		t.Errorf("an empty body: %q, %v, %v", got, tooLarge, err)
	}
}
