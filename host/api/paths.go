package api

import (
	"fmt"
	"os"
	"path/filepath"
)

// DefaultSocketPath returns where the daemon listens when the config names no socket:
// $XDG_STATE_HOME/zkhost/zkhost.sock, or ~/.local/state/zkhost/zkhost.sock when
// XDG_STATE_HOME is unset (the XDG base directory rule).
func DefaultSocketPath() (string, error) {
	if dir := os.Getenv("XDG_STATE_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "zkhost", "zkhost.sock"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("default socket path: neither XDG_STATE_HOME nor a home directory is set: %w", err)
	}
	return filepath.Join(home, ".local", "state", "zkhost", "zkhost.sock"), nil
}
