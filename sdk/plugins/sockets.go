package plugins

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	plugin "github.com/hashicorp/go-plugin"

	"github.com/zkhost/zkhost/sdk"
)

// Backend sockets. go-plugin's server creates its unix socket with
// os.CreateTemp in the directory PLUGIN_UNIX_SOCKET_DIR names, /tmp when unset,
// and removes it only when it exits cleanly: a backend killed with SIGKILL, or
// one whose host was, leaves a /tmp/pluginNNN behind. A host therefore points
// its backends' sockets into a directory of its own (SocketDir), removes a
// socket when it kills its backend (Process.Kill), and removes what a crashed
// run left there when it starts (ReapSockets), as it does with shared-memory
// files.

// socketPrefix begins the name of every socket go-plugin's server creates.
const socketPrefix = "plugin"

// socketNameRoom is what go-plugin adds to the directory: "/plugin" and
// os.CreateTemp's random decimal suffix (up to 10 digits).
const socketNameRoom = len("/"+socketPrefix) + 10

// SocketDir returns the directory for the backend sockets of a host whose state
// lives in stateDir, creating it (mode 0700). When the path would make socket
// paths longer than a unix socket allows, it returns "" and a reason, and the
// backends use go-plugin's default (the temporary directory).
func SocketDir(stateDir string) (string, error) {
	dir := filepath.Join(stateDir, "sockets")
	if len(dir)+socketNameRoom > sdk.MaxSocketPath {
		return "", fmt.Errorf("backend socket directory %s is too long for a unix socket path (%d bytes at most); backends use the temporary directory", dir, sdk.MaxSocketPath-socketNameRoom)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("backend socket directory: %w", err)
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return "", fmt.Errorf("backend socket directory: %w", err)
	}
	return dir, nil
}

// ReapSockets removes the backend sockets left in dir by a run that did not
// stop cleanly, and returns how many it removed. Only sockets named as
// go-plugin names them are touched. The caller must know no backend of its own
// uses dir (the daemon holds its journal's lock, so no other daemon shares its
// state directory).
func ReapSockets(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("reaping backend sockets: %w", err)
	}
	n := 0
	var errs []error
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), socketPrefix) || e.Type()&fs.ModeSocket == 0 {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
			continue
		}
		n++
	}
	return n, errors.Join(errs...)
}

// socketEnv returns the environment entry that points a backend's socket into
// dir.
func socketEnv(dir string) string { return plugin.EnvUnixSocketDir + "=" + dir }

// removeSocket removes the unix socket of a backend that is dead, when it lies
// in dir (a socket elsewhere is not the host's to remove).
func removeSocket(dir string, rc *plugin.ReattachConfig) {
	if dir == "" || rc == nil || rc.Addr == nil || rc.Addr.Network() != "unix" {
		return
	}
	path := rc.Addr.String()
	if filepath.Dir(path) != filepath.Clean(dir) || !strings.HasPrefix(filepath.Base(path), socketPrefix) {
		return
	}
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSocket != 0 {
		os.Remove(path)
	}
}
