package config

import (
	"testing"
)

// TestPackagedConfig: the config `make install` puts in /etc/zkhost loads, and
// says what the systemd unit assumes (StateDirectory=zkhost, RuntimeDirectory=zkhost,
// the socket for group zkhost).
func TestPackagedConfig(t *testing.T) {
	cfg, err := Load("../../packaging/zkhost.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"state_dir", cfg.StateDir, "/var/lib/zkhost"},
		{"api.socket", cfg.API.Socket, "/run/zkhost/zkhost.sock"},
		{"api.socket_group", cfg.API.SocketGroup, "zkhost"},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if cfg.API.SocketMode != 0o660 {
		t.Errorf("api.socket_mode = %o, want 0660", cfg.API.SocketMode)
	}
}
