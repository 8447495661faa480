// Package client is the Go client of the zkhost daemon's API: Dial a unix socket (or a
// TCP address with TLS and a bearer token) and call the daemon with the plain Go types
// of host/api. Errors come back as the host/api sentinels (errors.Is(err,
// api.ErrNotFound)), and a daemon that is not running is one clear ErrUnavailable that
// names the socket.
package client
