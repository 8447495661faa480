package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/cli"
)

// TestServeRefusesAtStart: settings the config alone cannot judge (a socket
// under a missing directory, a token file with a line break inside, a
// timeout outside its range) stop `zkhost serve` before it starts anything,
// naming the setting; the missing directories are not created.
func TestServeRefusesAtStart(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	token := filepath.Join(dir, "alice.token")
	if err := os.WriteFile(token, []byte("0123456789abcdef\n0123456789abcdef\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, toml, want string
	}{
		{"socket under a missing directory", fmt.Sprintf("[api]\nsocket = %q\n", filepath.Join(dir, "run", "zk", "zk.sock")),
			"api.socket: the directory of " + filepath.Join(dir, "run", "zk", "zk.sock") + " does not exist"},
		{"token file with a line break", fmt.Sprintf("[[client]]\nname = \"alice\"\ntoken_file = %q\n", token),
			`client[0].token_file (client "alice"): token file ` + token + ": the token has a line break inside it"},
		{"prove_timeout of 1ns", "[retry]\nprove_timeout = \"1ns\"\n", "retry.prove_timeout: 1ns is below the least allowed, 1s"},
		{"reserve of 1TiB", "[journal]\nreserve = \"1TiB\"\n", "journal.reserve: 1TiB is above the most allowed, 64GiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "zkhost.toml")
			text := fmt.Sprintf("state_dir = %q\n", state) + tc.toml
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
			// A daemon that started anyway is stopped by the deadline.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			var stdout, stderr bytes.Buffer
			err := cmdServe(ctx, cli.Invocation{Command: cli.Command{Name: "serve"}, Args: []string{"--config", path}, Stdout: &stdout, Stderr: &stderr})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("serve: %v; want an error saying %q\nstderr:\n%s", err, tc.want, stderr.String())
			}
			for _, p := range []string{state, filepath.Join(dir, "run")} {
				if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s was created (or %v)", p, err)
				}
			}
		})
	}
}
