package safehttp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"os"
	"strings"
	"syscall"
	"time"
)

// ErrRedirect is a redirect to another host, or too many redirects.
var ErrRedirect = errors.New("redirect refused")

// SameHostOnly is an http.Client CheckRedirect that follows at most three
// redirects, all to the scheme and host first asked: the bearer key must
// not travel anywhere else.
func SameHostOnly(req *http.Request, via []*http.Request) error {
	if len(via) >= 3 || req.URL.Host != via[0].URL.Host || req.URL.Scheme != via[0].URL.Scheme {
		return ErrRedirect
	}
	return nil
}

// ReadCapped reads r up to max bytes. tooLarge reports an answer longer
// than max, in which case body is nil.
func ReadCapped(r io.Reader, max int64) (body []byte, tooLarge bool, err error) {
	return ReadCappedSize(r, max, -1)
}

// ReadCappedSize is ReadCapped for an answer that announces its size
// (Content-Length; -1 when unknown). A body of tens of megabytes is read
// into one buffer of its size when the size is known, else into chunks
// copied once into a buffer of the size read: io.ReadAll grows its buffer
// a quarter at a time, copying it each time and leaving every old buffer
// to the collector (BenchmarkFetchLargeMetrics, a 31.4 MB answer without
// a Content-Length: 7.6 bytes allocated per byte of answer with
// io.ReadAll, 4.5 with chunks).
func ReadCappedSize(r io.Reader, max, size int64) (body []byte, tooLarge bool, err error) {
	r = io.LimitReader(r, max+1)
	next := int64(512)
	if size >= 0 {
		next = min(size, max) + 1 // +1 to see the end, or one byte more
	}
	var full [][]byte
	buf, total := make([]byte, 0, next), int64(0)
	for {
		if len(buf) == cap(buf) {
			full = append(full, buf)
			next = min(2*next, 4<<20)
			buf = make([]byte, 0, next)
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf, total = buf[:len(buf)+n], total+int64(n)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, false, err
		}
	}
	if total > max {
		return nil, true, nil
	}
	if len(full) == 0 {
		return buf, false, nil
	}
	body = make([]byte, 0, total)
	for _, b := range full {
		body = append(body, b...)
	}
	return append(body, buf...), false, nil
}

// IsJSON reports whether a Content-Type header names JSON
// (application/json or any +json type).
func IsJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasSuffix(mt, "+json"))
}

// Describe words a transport error without the URL, host or port the
// standard library puts in its messages.
func Describe(err error, timeout time.Duration) error {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var sysErr *os.SyscallError
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var recordErr tls.RecordHeaderError
	switch {
	case errors.Is(err, ErrRedirect):
		return errors.New("redirect to another host refused")
	case errors.Is(err, context.DeadlineExceeded) || os.IsTimeout(err):
		return fmt.Errorf("no answer within %s", timeout)
	case errors.Is(err, context.Canceled):
		return errors.New("request cancelled")
	case errors.Is(err, syscall.ECONNREFUSED):
		return errors.New("connection refused")
	case errors.As(err, &dnsErr):
		return errors.New("host name does not resolve")
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &recordErr):
		return errors.New("TLS handshake failed")
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return errors.New("connection closed mid-answer")
	case errors.As(err, &sysErr):
		return fmt.Errorf("network error: %s", sysErr.Err)
	case errors.As(err, &opErr):
		return fmt.Errorf("network error (%s)", opErr.Op)
	}
	return errors.New("request failed")
}
