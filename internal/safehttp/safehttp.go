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
	body, err = io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, false, err
	}
	if int64(len(body)) > max {
		return nil, true, nil
	}
	return body, false, nil
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
