package sdnotify

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// listen opens a datagram socket as systemd does for a Type=notify unit.
func listen(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func receive(t *testing.T, conn *net.UnixConn) string {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n])
}

func TestNotifyPath(t *testing.T) {
	dir, err := os.MkdirTemp("", "sdn") // short: a socket path is at most 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "notify")
	conn := listen(t, path)
	t.Setenv("NOTIFY_SOCKET", path)
	if sent, err := Notify(Ready + "\nSTATUS=serving"); !sent || err != nil {
		t.Fatalf("Notify = %v, %v", sent, err)
	}
	if got := receive(t, conn); got != "READY=1\nSTATUS=serving" {
		t.Errorf("systemd received %q", got)
	}
}

func TestNotifyAbstract(t *testing.T) {
	name := fmt.Sprintf("zkhost-sdnotify-test-%d", os.Getpid())
	conn := listen(t, "\x00"+name)
	if sent, err := notify("@"+name, Stopping); !sent || err != nil {
		t.Fatalf("notify = %v, %v", sent, err)
	}
	if got := receive(t, conn); got != Stopping {
		t.Errorf("systemd received %q", got)
	}
}

func TestNotifyOutsideSystemd(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if sent, err := Notify(Ready); sent || err != nil {
		t.Errorf("Notify without NOTIFY_SOCKET = %v, %v; want false, nil", sent, err)
	}
	if _, err := notify("relative/path", Ready); err == nil || !strings.Contains(err.Error(), "neither an absolute path") {
		t.Errorf("a relative NOTIFY_SOCKET = %v", err)
	}
	if _, err := notify("/nonexistent/notify", Ready); err == nil || !strings.Contains(err.Error(), "/nonexistent/notify") {
		t.Errorf("a missing socket = %v", err)
	}
}
