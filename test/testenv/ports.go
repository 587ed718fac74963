package testenv

import (
	"net"
)

// FreePort returns a TCP port free on 127.0.0.1 now.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }() // the listener only found a free port
	return l.Addr().(*net.TCPAddr).Port, nil
}
