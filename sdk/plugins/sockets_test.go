package plugins_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkhost/zkhost/sdk/plugins"
)

// socketsIn lists the entries of dir that are unix sockets.
// Deliberately parallel to e2e's socketFiles: see why there.
func socketsIn(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestSocketDirKilledBackend: a backend launched with a SocketDir makes its
// socket there, and the socket is gone once the host has killed the process,
// even when the backend died by SIGKILL and could not remove it itself.
func TestSocketDirKilledBackend(t *testing.T) {
	state := t.TempDir()
	dir, err := plugins.SocketDir(state)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("socket directory %s: %v, %v; want mode 0700", dir, fi, err)
	}
	proc, err := plugins.Launch(context.Background(), plugins.LaunchConfig{Path: fakeBackend, SocketDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	socks := socketsIn(t, dir)
	if len(socks) != 1 || !strings.HasPrefix(socks[0], "plugin") {
		t.Fatalf("sockets in %s while the backend runs: %v, want its one socket", dir, socks)
	}
	if err := syscall.Kill(proc.Pid(), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for !proc.Exited() {
		if time.Now().After(deadline) {
			t.Fatal("backend still running 10s after SIGKILL")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if socks := socketsIn(t, dir); len(socks) != 1 {
		t.Fatalf("sockets after SIGKILL, before Kill: %v; want the one the backend left", socks)
	}
	proc.Kill()
	if socks := socketsIn(t, dir); len(socks) != 0 {
		t.Errorf("sockets left after Kill: %v", socks)
	}
}

// TestReapSockets removes the sockets a crashed run left and nothing else.
func TestReapSockets(t *testing.T) {
	dir, err := plugins.SocketDir(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"plugin123", "plugin456"} {
		l, err := net.Listen("unix", filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		l.(*net.UnixListener).SetUnlinkOnClose(false) // as a killed process leaves it
		l.Close()
	}
	keep := []string{"plugin-notes.txt", "other.sock"}
	for _, name := range keep[:1] {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("unix", filepath.Join(dir, keep[1]))
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()

	n, err := plugins.ReapSockets(dir)
	if err != nil || n != 2 {
		t.Fatalf("ReapSockets: %d, %v; want 2 removed", n, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	if strings.Join(left, ",") != "other.sock,plugin-notes.txt" {
		t.Errorf("left in %s: %v, want only what go-plugin did not create", dir, left)
	}
}

func TestSocketDirTooLong(t *testing.T) {
	long := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if dir, err := plugins.SocketDir(long); err == nil || dir != "" || !strings.Contains(err.Error(), "too long") {
		t.Errorf("SocketDir of a long state path: %q, %v; want an error saying it is too long", dir, err)
	}
}
