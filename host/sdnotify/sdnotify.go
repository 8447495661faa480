package sdnotify

import (
	"fmt"
	"net"
	"os"
	"strings"
)

// Messages the daemon sends (sd_notify(3)).
const (
	Ready    = "READY=1"
	Stopping = "STOPPING=1"
)

// Notify sends state to the service manager when $NOTIFY_SOCKET names one, and
// reports whether it was sent. Outside systemd (no $NOTIFY_SOCKET) it does nothing
// and returns false, nil.
func Notify(state string) (bool, error) {
	return notify(os.Getenv("NOTIFY_SOCKET"), state)
}

func notify(socket, state string) (bool, error) {
	if socket == "" {
		return false, nil
	}
	name := socket
	switch {
	case strings.HasPrefix(socket, "@"):
		name = "\x00" + socket[1:] // an abstract socket
	case !strings.HasPrefix(socket, "/"):
		return false, fmt.Errorf("NOTIFY_SOCKET %q is neither an absolute path nor an abstract socket (@name)", socket)
	}
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		return false, fmt.Errorf("notifying systemd at %s: %w", socket, err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return false, fmt.Errorf("notifying systemd at %s: %w", socket, err)
	}
	return true, nil
}
