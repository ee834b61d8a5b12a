// Package testnet holds network fixtures shared by the tests of several
// packages. It is imported only from _test.go files.
package testnet

import (
	"net"
	"sync"
	"testing"
)

// Hung returns the URL of a listener that accepts connections and never
// answers, as a node whose process is stopped while the kernel still
// accepts on its socket. It closes everything when the test ends.
func Hung(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}
